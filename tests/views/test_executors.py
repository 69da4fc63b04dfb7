"""View 2's data: both executors on the same inputs, their memory, and measurements."""
from __future__ import annotations

import pytest

from rvmdbg.views.executors import (ExecutorMeasurement, compare_executors, measure_executors,
                                    node_storage, storage_strip, trace_vm)
from rvmdbg.vm.machine import VirtualMachine
from view_helpers import context


@pytest.fixture(scope="module")
def mlp():
    ctx = context("programs/mlp.relay")
    return ctx, compare_executors(ctx.module, ctx.run_exe(), ctx.session_args())


def test_static_program_runs_on_both_and_agrees(mlp):
    ctx, c = mlp
    assert c.static and c.refusal is None
    assert c.results_equal is True
    vm = VirtualMachine(ctx.exe)
    vm.invoke("main", ctx.session_args())
    assert c.stream_total == vm.steps == len(c.stream)
    assert [d.step for d in c.stream] == list(range(vm.steps))
    assert c.vm_allocations == sum(1 for d in c.stream if d.text.startswith("alloc_storage"))
    assert c.vm_allocated_bytes == sum(d.allocated for d in c.stream)
    assert 0 < c.vm_peak_bytes <= c.vm_allocated_bytes
    assert c.graph_dispatches == len([n for n in c.nodes if n.kind == "kernel"])


def test_node_storage_follows_the_plan(mlp):
    _, c = mlp
    plan, graph = c.plan, c.graph
    for n in c.nodes:
        assert n.storage_id == plan.storage_ids[graph.entry_id(n.node, 0)]
        if n.reuses is not None:
            prev = c.nodes[n.reuses]
            assert prev.storage_id == n.storage_id and prev.node < n.node
    assert any(n.reuses is not None for n in c.nodes), "the MLP's softmax reuses a block"
    strips = storage_strip(graph, plan, c.nodes)
    for n, strip in zip(c.nodes, strips):
        cells = "".join(t for t, _ in strip)
        assert len(cells) == len(plan.block_sizes)
        assert cells[n.storage_id] == "█"


def test_dynamic_program_is_refused_with_its_place():
    ctx = context("tests/examples/list_length.relay")
    c = compare_executors(ctx.module, ctx.run_exe(), ctx.session_args())
    assert not c.static and c.graph is None
    assert "match" in c.refusal and c.refusal_span.line == 9
    assert c.vm_error is None and int(c.vm_result) == 3
    assert c.results_equal is None


def test_stream_is_cut_but_counted():
    ctx = context("programs/fib.relay")
    out = trace_vm(ctx.run_exe(), "main", ctx.session_args(), max_dispatches=50)
    assert len(out["stream"]) == 50 and out["total"] > 50
    assert out["error"] is None


def test_vm_errors_are_part_of_the_comparison():
    ctx = context("tests/examples/list_length.relay")
    out = trace_vm(ctx.run_exe(), "main", [])   # wrong number of arguments
    assert out["error"] and out["result"] is None


def test_measurement_record_arithmetic():
    m = ExecutorMeasurement("VM", 20, 50e-6, 30e-6, 3, 28, 2e-3)
    assert m.overhead_seconds == pytest.approx(20e-6)
    assert m.per_dispatch_seconds == pytest.approx(1e-6)
    assert m.kernel_share == pytest.approx(0.6)
    assert ExecutorMeasurement("graph", 0, 0.0, 0.0, 0, 0).per_dispatch_seconds == 0.0


def test_measuring_does_not_touch_the_session_executable(mlp):
    ctx, c = mlp
    impls = [k.impl for k in ctx.exe.kernels]
    ms = measure_executors(ctx.module, ctx.run_exe(), ctx.session_args(), rounds=1,
                           comparison=c)
    assert [k.impl for k in ctx.exe.kernels] == impls
    vm, g = ms["VM"], ms["graph"]
    assert vm.dispatches == c.stream_total and g.dispatches == c.graph_dispatches
    assert 0 < vm.kernel_seconds <= vm.total_seconds
    assert 0 < g.kernel_seconds <= g.total_seconds
    assert vm.compile_seconds > 0 and g.compile_seconds > 0
    assert g.allocations == len(c.plan.block_sizes) and g.peak_bytes == c.plan.pool_bytes
    assert vm.allocations == c.vm_allocations


def test_node_storage_marks_reshape_aliases():
    ctx = context("tests/graph/programs/reshape_alias.relay", args=None)
    from rvmdbg.graph import lower_to_graph, plan_memory
    graph = lower_to_graph(ctx.module)
    plan = plan_memory(graph)
    nodes = node_storage(graph, plan)
    aliases = [n for n in nodes if n.alias]
    assert aliases and all(n.reuses is None for n in aliases)


def test_argument_copies_for_reruns_keep_reference_cell_contents():
    import numpy as np
    from rvmdbg.values import ADTValue, RefCell
    from rvmdbg.views.context import copy_args
    cell = RefCell(np.array(5, dtype="int32"))
    out = copy_args([ADTValue(0, None, (cell, cell))])[0]
    assert out.fields[0] is out.fields[1] and out.fields[0] is not cell
    assert int(out.fields[0].value) == 5
