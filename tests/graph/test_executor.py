"""The graph executor: same results as the interpreter and the VM on every static program,
a pool allocated once, counters, and located failures."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph_helpers import (EXAMPLES, GRAPH_PROGRAMS, PROGRAMS, load_path, load_text, run_graph,
                           run_interp, run_vm, same_value)
from program_cases import CASES, matches
from rvmdbg.args import parse_program_args
from rvmdbg.graph import GraphExecutor, GraphRunError, PlanError, lower_to_graph, plan_memory
from rvmdbg.graph.plan import MemoryPlan
from rvmdbg.limits import Limits
from rvmdbg.values import make_tuple, to_json

STATIC_PROGRAMS = [PROGRAMS / "mlp.relay", EXAMPLES / "reshape_chain.relay",
                   *sorted(GRAPH_PROGRAMS.glob("*.relay"))]


@pytest.mark.parametrize("zero_copy", [True, False], ids=["zero-copy", "copy-in"])
@pytest.mark.parametrize("path", STATIC_PROGRAMS, ids=lambda p: p.name)
def test_static_program_matches_interpreter_and_vm(path, zero_copy):
    mod, args = load_path(path)
    graph = lower_to_graph(mod)
    got = GraphExecutor(graph, plan_memory(graph), zero_copy=zero_copy).run(args)
    assert same_value(got, run_interp(mod, args))
    vm = run_vm(mod, args)
    if vm is not None:
        assert same_value(got, vm)


@pytest.mark.parametrize("args,expected", [(a, e) for f, a, e in CASES if f == "mlp.relay"])
def test_mlp_cases(args, expected):
    mod, defaults = load_path(PROGRAMS / "mlp.relay")
    values = defaults if args is None else parse_program_args(mod, "main", args)
    assert matches(expected, to_json(run_graph(mod, values)))


def test_reshape_chain_example_result():
    cases = json.loads((EXAMPLES / "expected.json").read_text())["cases"]
    case = next(c for c in cases if c["file"] == "reshape_chain.relay")
    mod, _ = load_path(EXAMPLES / case["file"])
    args = parse_program_args(mod, "main", case["args"])
    assert matches(case["result"], to_json(run_graph(mod, args)))


# ---------------------------------------------------------------------------- the pool

@pytest.fixture
def mlp():
    mod, args = load_path(PROGRAMS / "mlp.relay")
    graph = lower_to_graph(mod)
    return graph, plan_memory(graph), args


def test_pool_is_allocated_once_and_reused_across_runs(mlp):
    graph, plan, args = mlp
    ex = GraphExecutor(graph, plan)
    blocks = [b.ctypes.data for b in ex.blocks]
    first = ex.run(args)
    other = [np.zeros_like(a) for a in args]
    second = ex.run(other)
    assert [b.ctypes.data for b in ex.blocks] == blocks
    assert ex.stats.allocations == plan.num_blocks == 7
    assert ex.stats.peak_bytes == ex.stats.pool_bytes == plan.pool_bytes
    # results are copies: the second run did not change the first result
    assert same_value(first, run_interp(load_path(PROGRAMS / "mlp.relay")[0], args))
    assert not np.allclose(first, second)
    first[...] = 0
    assert same_value(ex.run(args), run_interp(load_path(PROGRAMS / "mlp.relay")[0], args))


def test_entries_are_views_of_their_planned_block(mlp):
    graph, plan, _ = mlp
    ex = GraphExecutor(graph, plan)
    for e, view in enumerate(ex.views):
        block = ex.blocks[plan.storage_ids[e]]
        assert np.shares_memory(view, block)
        assert view.shape == graph.shapes[e] and str(view.dtype) == graph.dtypes[e]


def test_counters(mlp):
    graph, plan, args = mlp
    ex = GraphExecutor(graph, plan)
    ex.run(args, profile=True)
    s = ex.stats
    assert s.runs == 1 and s.dispatches == 3 and s.nops == 0
    assert 0 < s.kernel_seconds <= s.total_seconds
    assert s.copies == 1  # the result out; the inputs are read in place
    assert "dispatches 3" in s.summary()
    copying = GraphExecutor(graph, plan, zero_copy=False)
    copying.run(args)
    assert copying.stats.copies == 5 + 1


def test_zero_copy_rebinds_inputs_each_run(mlp):
    graph, plan, args = mlp
    ex = GraphExecutor(graph, plan)
    mod = load_path(PROGRAMS / "mlp.relay")[0]
    x = args[0].copy()
    first = ex.run([x, *args[1:]])
    x *= -2  # the caller changes its array: the next run must see it, and only then
    assert same_value(first, run_interp(mod, args))
    second = ex.run([x, *args[1:]])
    assert same_value(second, run_interp(mod, [x, *args[1:]]))
    assert not np.allclose(first, second)


def test_inputs_that_must_be_copied_are():
    # %x is aliased by a reshape: it has to sit in its planned block
    mod, args = load_path(GRAPH_PROGRAMS / "reshape_alias.relay")
    ex = GraphExecutor(lower_to_graph(mod))
    assert same_value(ex.run(args), run_interp(mod, args))
    assert ex.stats.copies == 1 + 2   # %x in; two results out
    assert ex.views[0].tolist() == args[0].tolist()


def test_reshape_only_kernels_are_not_dispatched():
    mod, args = load_path(GRAPH_PROGRAMS / "reshape_alias.relay")
    graph = lower_to_graph(mod)
    ex = GraphExecutor(graph)
    out = ex.run(args)
    # four reshapes and the expand_dims standing alone before the dense (TVM's grouping)
    assert ex.stats.nops == 5 and ex.stats.dispatches == len(graph.kernel_nodes) - 5
    assert same_value(out, run_interp(mod, args))
    # the head aliasing input %x is still a copy
    assert not np.shares_memory(out.fields[1], ex.blocks[0])


def test_executor_refuses_an_unsafe_plan(mlp):
    graph, plan, _ = mlp
    bad = list(plan.storage_ids)
    bad[6] = bad[5]  # layer 2's output over layer 1's, which it reads
    with pytest.raises(PlanError):
        GraphExecutor(graph, MemoryPlan(bad, plan.block_sizes, plan.entry_bytes))


def test_pool_over_the_byte_limit_is_refused(mlp):
    graph, plan, _ = mlp
    with pytest.raises(GraphRunError, match="over the limit of 100") as info:
        GraphExecutor(graph, plan, Limits(max_bytes=100))
    assert info.value.limit == "max_bytes"


# ---------------------------------------------------------------------------- failures

def test_wrong_input_shape_and_count(mlp):
    graph, plan, args = mlp
    ex = GraphExecutor(graph, plan)
    with pytest.raises(GraphRunError, match=r"input %x must be \[1, 8\] float32"):
        ex.run([np.zeros((2, 8), np.float32), *args[1:]])
    with pytest.raises(GraphRunError, match="takes 5 arguments, got 1"):
        ex.run(args[:1])


def test_kernel_failure_names_the_kernel_and_place():
    mod = load_text("""
def @main(%x: Tensor[(2,), int32], %y: Tensor[(2,), int32]) -> Tensor[(2,), int32] {
  %0 = add(%x, 1);
  divide(%0, %y)
}
""")
    graph = lower_to_graph(mod)
    ex = GraphExecutor(graph)
    ok = ex.run([np.array([4, 9], np.int32), np.array([2, 3], np.int32)])
    assert ok.tolist() == [2, 3]  # (4 + 1) / 2, (9 + 1) / 3, truncated
    with pytest.raises(GraphRunError) as info:
        ex.run([np.array([4, 9], np.int32), np.array([2, 0], np.int32)])
    err = info.value
    # the kernel's place is its output operator's call (the fused group's root)
    assert "kernel fused_add_divide (node 2 at prog.relay:4:3)" in err.message
    assert "division by zero" in err.message.lower()
    assert "   4 |   divide(%0, %y)\n         ^~~~~~~~~~~~~~" in err.format(mod.source)


def test_tuple_arguments_flatten_into_inputs():
    mod, args = load_path(GRAPH_PROGRAMS / "inline_global.relay")
    graph = lower_to_graph(mod)
    ex = GraphExecutor(graph)
    assert same_value(ex.run(args), run_interp(mod, args))
    with pytest.raises(GraphRunError, match="expected a tuple of 2 fields"):
        ex.run([args[0], args[1], make_tuple([np.array(1, np.float32)])])


# ---------------------------------------------------------------------------- random programs

UNARY = ["negative", "tanh", "sigmoid", "nn.relu", "abs"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@st.composite
def random_programs(draw):
    """A random dataflow graph over (2, 3) tensors: elementwise ops, dense layers, reshapes
    there and back, a concatenate-and-split; graph bindings and lets; one or two results."""
    values = ["%x", "%y"]
    lines = []
    count = [0]

    def pick():
        return draw(st.sampled_from(values))

    def bind(expr: str) -> str:
        if draw(st.booleans()):
            name = f"%{count[0]}"
            count[0] += 1
            lines.append(f"  {name} = {expr};")
        else:
            name = f"%v{len(lines)}"
            lines.append(f"  let {name} = {expr};")
        return name
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.integers(0, 5))
        if kind <= 1:
            expr = f"{draw(st.sampled_from(UNARY))}({pick()})"
        elif kind == 2:
            expr = f"{draw(st.sampled_from(BINARY))}({pick()}, {pick()})"
        elif kind == 3:
            expr = f"nn.dense({pick()}, %w, units=3)"
        elif kind == 4:
            flat = bind(f"reshape({pick()}, newshape=[6])")
            expr = f"reshape(multiply({flat}, 0.5f), newshape=[2, 3])" if draw(st.booleans()) \
                else f"reshape({flat}, newshape=[2, 3])"
        else:
            halves = bind(f"split(concatenate(({pick()}, {pick()}), axis=0), "
                          f"indices_or_sections=2, axis=0)")
            expr = f"add({halves}.{draw(st.integers(0, 1))}, {halves}.{draw(st.integers(0, 1))})"
        values.append(bind(expr))
    results = draw(st.lists(st.sampled_from(values), min_size=1, max_size=2))
    t = "Tensor[(2, 3), float32]"
    if len(results) == 1:
        ret, body = t, results[0]
    else:
        ret, body = f"({t}, {t})", f"({results[0]}, {results[1]})"
    return (f"def @main(%x: {t}, %y: {t}, %w: Tensor[(3, 3), float32]) -> {ret} {{\n"
            + "\n".join(lines) + f"\n  {body}\n}}\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_programs(), st.integers(0, 2 ** 32 - 1))
def test_random_programs_match_the_interpreter(text, seed):
    mod = load_text(text)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal((2, 3)).astype(np.float32),
            rng.standard_normal((2, 3)).astype(np.float32),
            rng.standard_normal((3, 3)).astype(np.float32)]
    graph = lower_to_graph(mod)
    plan = plan_memory(graph)
    plan.check(graph)
    ex = GraphExecutor(graph, plan)
    expected = run_interp(mod, args)
    assert same_value(ex.run(args), expected), text
    assert same_value(ex.run(args), expected), text  # again, over the reused pool


def test_tuple_parameter_passed_whole_to_a_kernel():
    mod = load_text("""
def @main(%p: (Tensor[(2,), float32], Tensor[(2,), float32]), %q: Tensor[(2,), float32]) -> Tensor[(4,), float32] {
  %0 = concatenate(%p, axis=0);
  add(%0, concatenate((%q, %p.1), axis=0))
}
""")
    graph = lower_to_graph(mod)
    kernel = graph.nodes[graph.kernel_nodes[0]]
    assert kernel.arg_shape[0] == (None, None)   # the tuple regroups for the kernel
    args = [make_tuple([np.array([1, 2], np.float32), np.array([3, 4], np.float32)]),
            np.array([5, 6], np.float32)]
    ex = GraphExecutor(graph)
    assert ex.run(args).tolist() == [6.0, 8.0, 6.0, 8.0]
    assert ex.stats.copies == 3 + 1  # inputs of a regrouped kernel are copied in
