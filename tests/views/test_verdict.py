"""View 2, honest (issue 17, part 5): the verdict is computed from the figures shown, in both
directions; memory counts inputs the same way on both executors; the cost model measures the
program on screen (scaled where its arguments carry a size, else at its own size)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.views.costmodel import (RUNS, SCALES, CostModel, fit_cost_model, measure_program,
                                    one_run_measurements, program_workload)
from rvmdbg.views.executors import (ExecutorMeasurement, compare_executors, measure_executors,
                                    tensor_bytes)
from rvmdbg.views.plot import format_number
from rvmdbg.views.verdict import TIE, cheaper, executor_verdict, model_verdict
from view_helpers import context


def M(executor, dispatches, total, kernel, compile_s):
    return ExecutorMeasurement(executor, dispatches, total, kernel, 0, 0, compile_s)


def test_the_dearer_dispatch_can_win_the_run_and_the_verdict_says_why():
    # the figures View 2 showed when it said the graph executor costs less per dispatch
    vm, graph = M("VM", 13, 34e-6, 22e-6, 1.2e-3), M("graph", 2, 27e-6, 22e-6, 0.8e-3)
    assert graph.per_dispatch_seconds > vm.per_dispatch_seconds
    v = executor_verdict(vm, graph)
    assert v.per_dispatch == "VM" and v.per_run == "graph" and v.compile == "graph"
    assert v.lines[0].startswith("per dispatch (time outside kernels / dispatches): the VM "
                                 "costs less, 923ns against 2.5us")
    assert v.lines[1].endswith("because it makes 2 dispatches to the VM's 13")
    assert v.lines[3] == "over any number of runs: the graph executor costs less outside kernels"


def test_the_vm_wins_everything():
    v = executor_verdict(M("VM", 10, 20e-6, 15e-6, 1e-3), M("graph", 10, 80e-6, 15e-6, 3e-3))
    assert (v.per_dispatch, v.per_run, v.compile) == ("VM", "VM", "VM")
    assert "because" not in v.lines[1]
    assert v.lines[3] == "over any number of runs: the VM costs less outside kernels"


def test_break_even_when_compile_and_run_disagree():
    # graph: 2 ms more to compile, 10 us less a run: the VM leads for 200 runs
    v = executor_verdict(M("VM", 100, 30e-6, 10e-6, 1e-3), M("graph", 5, 20e-6, 10e-6, 3e-3))
    assert v.per_run == "graph" and v.compile == "VM"
    assert v.break_even_runs == pytest.approx(200)
    assert v.lines[3] == ("over many runs: the VM costs less up to 200 runs (its faster "
                          "compile), the graph executor after that")


def test_close_figures_are_about_the_same():
    v = executor_verdict(M("VM", 10, 20e-6, 10e-6, 1e-3), M("graph", 10, 20.2e-6, 10e-6, 1e-3))
    assert v.per_dispatch is None and v.per_run is None and v.compile is None
    assert "about the same" in v.lines[0] and "about the same" in v.lines[1]


_TIMES = st.floats(1e-7, 1e-2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500), st.integers(1, 500), _TIMES, _TIMES, _TIMES, _TIMES)
def test_verdict_follows_from_the_figures(nv, ng, over_v, over_g, comp_v, comp_g):
    vm = M("VM", nv, 1e-3 + over_v, 1e-3, comp_v)
    graph = M("graph", ng, 1e-3 + over_g, 1e-3, comp_g)
    v = executor_verdict(vm, graph)
    for got, a, b in ((v.per_dispatch, vm.per_dispatch_seconds, graph.per_dispatch_seconds),
                      (v.per_run, vm.overhead_seconds, graph.overhead_seconds),
                      (v.compile, vm.compile_seconds, graph.compile_seconds)):
        if abs(a - b) <= TIE * max(a, b):
            assert got is None
        else:
            assert got == ("VM" if a < b else "graph")
    # each line names the cheaper side with its own figure first, as the table prints it
    for line, winner, a, b in ((v.lines[0], v.per_dispatch, vm.per_dispatch_seconds,
                                graph.per_dispatch_seconds),
                               (v.lines[1], v.per_run, vm.overhead_seconds,
                                graph.overhead_seconds)):
        if winner is not None:
            win, lose = (a, b) if winner == "VM" else (b, a)
            assert f"costs less, {format_number(win, 's')} against {format_number(lose, 's')}" \
                in line
    if v.break_even_runs is not None:
        # at the break-even point the totals outside kernels are equal
        k = v.break_even_runs
        assert comp_v + k * vm.overhead_seconds == pytest.approx(
            comp_g + k * graph.overhead_seconds, rel=1e-6)


def test_cheaper():
    assert cheaper(1.0, 2.0) == "VM" and cheaper(2.0, 1.0) == "graph"
    assert cheaper(1.0, 1.01) is None and cheaper(0.0, 0.0) is None


def test_model_verdict_reads_the_models_figures():
    vm, graph = CostModel("VM", 1e-3, 1e-6, 1.0, 4), CostModel("graph", 2e-3, 4e-6, 1.0, 4)
    v = model_verdict(vm, 20, graph, 3)   # per run: 20 us against 12 us
    assert v.per_dispatch == "VM" and v.per_run == "graph" and v.compile == "VM"
    assert v.break_even_runs == pytest.approx(125)


# ---------------------------------------------------------------- the user's program

@pytest.fixture(scope="module")
def mlp():
    ctx = context("programs/mlp.relay")
    return ctx, compare_executors(ctx.module, ctx.run_exe(), ctx.session_args())


def test_memory_counts_inputs_the_same_on_both_sides(mlp):
    ctx, c = mlp
    args = ctx.session_args()
    assert c.input_bytes == sum(a.nbytes for a in args) == tensor_bytes(args)
    assert c.vm_memory.inputs == c.graph_memory.inputs == c.input_bytes
    assert c.graph_memory.working == c.plan.intermediate_bytes()[0]
    assert c.vm_memory.working == c.vm_peak_bytes
    assert c.vm_memory.total == c.input_bytes + c.vm_constant_bytes + c.vm_peak_bytes
    # the pool's input blocks are reported apart, not hidden in either side's working memory
    assert c.graph_input_buffers == sum(b for b, k in zip(c.plan.block_sizes, c.plan.block_kinds)
                                        if k == "input")


def test_measured_verdicts_follow_from_the_measurements_on_real_programs(mlp):
    ctx, c = mlp
    ms = measure_executors(ctx.module, ctx.run_exe(), ctx.session_args(), rounds=1,
                           comparison=c)
    vm, graph = ms["VM"], ms["graph"]
    assert vm.dispatches == c.stream_total and graph.dispatches == c.graph_dispatches
    assert c.vm_kernel_calls == graph.dispatches   # the same fused kernels on both
    v = executor_verdict(vm, graph)
    assert v.per_run == cheaper(vm.overhead_seconds, graph.overhead_seconds)
    assert v.per_dispatch == cheaper(vm.per_dispatch_seconds, graph.per_dispatch_seconds)


def test_a_fixed_shape_program_is_measured_at_its_own_size(mlp):
    ctx, c = mlp
    samples, wl = measure_program(ctx.module, ctx.run_exe(), ctx.session_args(), rounds=1,
                                  comparison=c)
    assert wl.fixed and "at its own size" in wl.description and "fixed shapes" in wl.description
    assert [p[2] for p in wl.points] == list(RUNS)
    vm = sorted((s for s in samples if s.executor == "VM"), key=lambda s: s.size)
    assert [s.dispatches for s in vm] == [c.stream_total * s.size for s in vm]
    ms = one_run_measurements(samples, wl, c)
    assert ms["VM"].dispatches == c.stream_total and ms["graph"].dispatches == 3
    model = fit_cost_model(vm, compile_known=True)
    assert model.compile_seconds == vm[0].compile_seconds


def test_a_list_argument_is_scaled():
    ctx = context("tests/examples/list_length.relay")
    args = ctx.session_args()
    wl = program_workload(ctx.module, "main", args, static=False)
    assert not wl.fixed and "length of %xs" in wl.description
    from rvmdbg.relay.interpreter import Interpreter
    for (n, a, runs), f in zip(wl.points, SCALES):
        assert n == max(1, round(3 * f)) and runs == 1
        assert int(Interpreter(ctx.module).run("main", a)) == n   # the list has that length


def test_a_question_mark_dimension_is_scaled():
    from rvmdbg.views.context import ViewContext
    ctx = ViewContext.from_text('#[version = "0.0.5"]\n'
                                'def @main(%x: Tensor[(?, 2), float32]) { %x + %x }\n')
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    wl = program_workload(ctx.module, "main", [x], static=False)
    assert wl.size_label == "dimension 0 of %x"
    assert [a[0].shape for _, a, _ in wl.points] == [(1, 2), (2, 2), (4, 2), (8, 2), (16, 2)]


def test_scalar_inputs_count_their_bytes():
    assert tensor_bytes([np.int32(7), np.array(2.0, dtype=np.float32),
                         np.zeros(3, dtype=np.int64)]) == 4 + 4 + 24
    ctx = context("programs/fib.relay")
    c = compare_executors(ctx.module, ctx.run_exe(), ctx.session_args())
    assert c.input_bytes == 4 == c.vm_memory.inputs


def test_a_program_without_a_size_says_so():
    ctx = context("programs/fib.relay")
    wl = program_workload(ctx.module, "main", ctx.session_args(), static=False)
    assert wl.fixed and "no argument carries a size" in wl.description
