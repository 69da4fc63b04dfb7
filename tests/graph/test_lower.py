"""Lowering to a static graph: the node list, TVM's JSON layout, and located refusals."""
from __future__ import annotations

import json

import numpy as np
import pytest

from graph_helpers import (EXAMPLES, GRAPH_PROGRAMS, PROGRAMS, load_path, load_text, run_graph,
                           run_interp, same_value)
from rvmdbg.graph import GraphRefusal, find_refusal, lower_to_graph
from rvmdbg.graph.graph import CONSTANT, INPUT, KERNEL
from rvmdbg.relay.loader import load_file
from rvmdbg.relay.typecheck import check_module


# ---------------------------------------------------------------------------- the MLP's graph

@pytest.fixture(scope="module")
def mlp_graph():
    mod, _ = load_path(PROGRAMS / "mlp.relay")
    return lower_to_graph(mod)


def test_mlp_nodes_in_execution_order(mlp_graph):
    g = mlp_graph
    assert [n.name for n in g.nodes[:5]] == ["x", "w1", "b1", "w2", "b2"]
    assert all(n.op == "null" and n.kind == INPUT for n in g.nodes[:5])
    kernels = [g.nodes[i] for i in g.kernel_nodes]
    assert [k.func_name for k in kernels] == [
        "fused_nn_dense_nn_bias_add_nn_relu", "fused_nn_dense_nn_bias_add", "fused_nn_softmax"]
    assert [k.inputs for k in kernels] == [[(0, 0), (1, 0), (2, 0)],
                                          [(5, 0), (3, 0), (4, 0)], [(6, 0)]]
    # every input comes from an earlier node: topological order
    for nid, node in enumerate(g.nodes):
        assert all(src < nid for src, _ in node.inputs)


def test_mlp_entries_and_heads(mlp_graph):
    g = mlp_graph
    assert g.node_row_ptr == list(range(9))
    assert g.arg_nodes == [0, 1, 2, 3, 4]
    assert g.heads == [(7, 0)]
    assert g.shapes == [(1, 8), (4, 8), (4,), (3, 4), (3,), (1, 4), (1, 3), (1, 3)]
    assert set(g.dtypes) == {"float32"}
    assert g.result_form is None


def test_mlp_json_has_tvm_layout(mlp_graph):
    data = json.loads(mlp_graph.to_json())
    assert set(data) == {"nodes", "arg_nodes", "heads", "attrs", "node_row_ptr"}
    assert data["nodes"][0] == {"op": "null", "name": "x", "inputs": []}
    k = data["nodes"][5]
    assert k["op"] == "tvm_op" and k["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    assert k["attrs"]["func_name"] == "fused_nn_dense_nn_bias_add_nn_relu"
    assert k["attrs"]["num_inputs"] == "3" and k["attrs"]["num_outputs"] == "1"
    assert data["heads"] == [[7, 0, 0]]
    attrs = data["attrs"]
    assert attrs["dltype"][0] == "list_str" and attrs["shape"][0] == "list_shape"
    assert attrs["storage_id"][0] == "list_int" and len(attrs["storage_id"][1]) == 8
    assert attrs["shape"][1][5] == [1, 4]


def test_mlp_graph_text_lists_ops_inputs_shapes_and_storage(mlp_graph):
    text = mlp_graph.format()
    assert "5: tvm_op fused_nn_dense_nn_bias_add_nn_relu(0, 1, 2) -> [1, 4] float32 sid 5" in text
    assert "7: tvm_op fused_nn_softmax(6) -> [1, 3] float32 sid 5 head" in text
    assert "0: null   %x (input) -> [1, 8] float32 sid 0" in text


# ---------------------------------------------------------------------------- plumbing

def test_folded_constants_become_named_null_nodes():
    mod, _ = load_path(GRAPH_PROGRAMS / "dense_layers.relay")
    g = lower_to_graph(mod)
    consts = [n for n in g.nodes if n.kind == CONSTANT]
    assert [c.name for c in consts] == ["p0", "p1"]
    assert consts[0].value.tolist() == [1.0, 1.0]
    assert consts[1].value.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert set(g.params()) == {"p0", "p1"}
    assert all(i in g.arg_nodes for i, n in enumerate(g.nodes) if n.kind == CONSTANT)


def test_split_outputs_and_nested_tuple_result():
    mod, _ = load_path(GRAPH_PROGRAMS / "concat_split.relay")
    g = lower_to_graph(mod)
    split = next(g.nodes[i] for i in g.kernel_nodes if "split" in g.nodes[i].func_name)
    assert split.num_outputs == 3
    # the result (concat, (%1.0, %b)) has three heads in a nested form
    assert len(g.heads) == 3 and g.result_form == (0, (1, 2))
    assert g.heads[2] == (1, 0)  # %b is the input node itself
    assert g.node_row_ptr[-1] == g.num_entries == len(g.shapes)


def test_tuple_parameter_flattens_and_globals_inline():
    mod, _ = load_path(GRAPH_PROGRAMS / "inline_global.relay")
    g = lower_to_graph(mod)
    assert [g.nodes[i].name for i in g.input_nodes] == ["x", "w", "p.0", "p.1"]
    assert g.input_forms == [None, None, (None, None)]
    names = [g.nodes[i].func_name for i in g.kernel_nodes]
    # @layer is inlined twice; both calls share one function (equal primitive text)
    assert names.count("fused_nn_dense_nn_relu") == 2


def test_global_primitive_function_is_one_kernel():
    # TVM's partitioned functions (Primitive=1, Compiler=...) are globals called from @main;
    # FuseOps leaves their bodies alone, so the graph calls each as one kernel
    mod = load_text("""
def @part(%i1: Tensor[(2, 3), int8], Inline=1, Compiler="cmsis-nn", Primitive=1) -> Tensor[(2, 3), int8] {
  add(%i1, %i1)
}
def @main(%data: Tensor[(2, 3), int8]) -> Tensor[(2, 3), int8] {
  @part(%data)
}
""")
    g = lower_to_graph(mod)
    assert [g.nodes[i].func_name for i in g.kernel_nodes] == ["fused_add"]
    data = np.arange(6, dtype=np.int8).reshape(2, 3)
    np.testing.assert_array_equal(run_graph(mod, [data]), data + data)


def test_reshape_only_kernels_are_marked():
    mod, _ = load_path(GRAPH_PROGRAMS / "reshape_alias.relay")
    g = lower_to_graph(mod)
    marked = [g.nodes[i] for i in g.kernel_nodes if g.nodes[i].reshape_only]
    # four reshapes and the expand_dims standing alone before the dense (TVM's grouping)
    assert len(marked) == 5
    assert sorted(n.func_name.split("_")[1] for n in marked) == ["expand"] + ["reshape"] * 4
    assert not any(g.nodes[i].reshape_only for i in g.kernel_nodes
                   if "dense" in g.nodes[i].func_name)
    assert '"reshape_only": "1"' in g.to_json()


def test_reverse_reshape_is_reshape_only_as_every_tvm_reshape_op():
    mod = load_text("""
def @main(%x: Tensor[(2, 3, 4), float32]) -> Tensor[(4, 6), float32] {
  contrib_reverse_reshape(%x, newshape=[4, -1])
}
""")
    g = lower_to_graph(mod)
    (kernel,) = [g.nodes[i] for i in g.kernel_nodes]
    assert kernel.reshape_only
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run_graph(mod, [data]), data.reshape(4, 6))


def test_device_annotations_pass_their_value_on_in_a_static_graph():
    # TVM's printed plan-devices stages hold on_device and device_copy; one device here
    mod = load_text("""
def @main(%a: Tensor[(2,), float32]) {
  (device_copy(%a), on_device(add(%a, 1f), constrain_result=True), %a)
}
""")
    g = lower_to_graph(mod)
    assert [g.nodes[i].func_name for i in g.kernel_nodes] == ["fused_add"]
    data = np.array([1, 2], dtype=np.float32)
    out = run_graph(mod, [data]).fields
    np.testing.assert_array_equal(out[0], data)
    np.testing.assert_array_equal(out[1], data + 1)


def test_same_name_different_kernels_get_suffixes():
    mod = load_text("""
def @main(%x: Tensor[(2, 2), float32]) -> (Tensor[(2, 2), float32], Tensor[(4,), float32]) {
  %0 = nn.softmax(%x);
  (nn.softmax(%0, axis=0), reshape(nn.softmax(%0), newshape=[4]))
}
""")
    g = lower_to_graph(mod)
    names = [g.nodes[i].func_name for i in g.kernel_nodes]
    # softmax on axis -1 twice is one function; on axis 0 it is another with the same ops
    assert names == ["fused_nn_softmax", "fused_nn_softmax_1", "fused_nn_softmax",
                     "fused_reshape"]


def test_whole_program_folds_to_a_constant():
    mod = load_text("""
def @main() -> Tensor[(3,), float32] {
  add(ones(shape=[3], dtype="float32"), 2f)
}
""")
    g = lower_to_graph(mod)
    assert [n.kind for n in g.nodes] == [CONSTANT]
    assert g.heads == [(0, 0)] and g.kernel_nodes == []


def test_parameter_returned_directly_is_a_head():
    mod = load_text("""
def @main(%x: Tensor[(2,), int32], %y: Tensor[(2,), int32]) -> (Tensor[(2,), int32], Tensor[(2,), int32]) {
  (%y, %x * %y)
}
""")
    g = lower_to_graph(mod)
    assert g.heads[0] == (1, 0)
    assert g.nodes[g.heads[1][0]].kind == KERNEL


# ---------------------------------------------------------------------------- refusals

REFUSALS = [
    ("if", """
def @main(%x: int32) -> int32 {
  let %y = %x + 1;
  if (%y > 0) { %y } else { 0 }
}
""", "`if` at prog.relay:4:3 needs a branch at run time"),
    ("match", """
def @main(%o: Option[int32]) -> int32 {
  match (%o) {
    Some(%v) => %v,
    None => 0,
  }
}
""", "parameter %o at prog.relay:2:11 has the ADT type Option[int32]"),
    ("match-on-built-value", """
def @main(%x: int32) -> int32 {
  %0 = %x * 2;
  match ((%0, %x)) {
    (%a, %b) => %a + %b,
  }
}
""", "`match` at prog.relay:4:3 takes its value apart with pattern tests at run time"),
    ("recursion", """
def @down(%n: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @down(%n * 2f)
}

def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @down(%x)
}
""", "`@down` calls itself at prog.relay:3:3 (recursion)"),
    ("mutual-recursion", """
def @ping(%n: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @pong(%n + 1f)
}

def @pong(%n: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @ping(%n * 2f)
}

def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @ping(%x)
}
""", "`@ping` calls `@pong` at prog.relay:3:3, which calls back into `@ping` (recursion)"),
    ("closure", """
def @main(%x: float32) -> float32 {
  let %f = fn (%y: float32) -> float32 { %y * %x };
  %f(%x)
}
""", "a closure (`fn`) at prog.relay:3:12 is a function value made at run time"),
    ("global-as-value", """
def @twice(%y: float32) -> float32 { %y * 2f }

def @main(%x: float32) -> float32 {
  let %f = @twice;
  %f(%x)
}
""", "`@twice` used as a value at prog.relay:5:12 makes a closure at run time"),
    ("adt-constructor", """
def @main(%x: int32) -> Option[int32] {
  %0 = %x + 1;
  Some(%0)
}
""", "ADT constructor `Some` at prog.relay:4:3 builds a data value"),
    ("ref", """
def @main(%x: int32) -> int32 {
  %0 = %x + 1;
  let %r = ref(%0);
  ref_read(%r)
}
""", "`ref(...)` at prog.relay:4:12 makes a mutable reference"),
    ("dynamic-shape", """
def @main(%x: Tensor[(?, 4), float32]) -> Tensor[(?, 4), float32] {
  nn.relu(%x)
}
""", "the shape of %x at prog.relay:2:11 is known only at run time (Tensor[(?, 4), float32])"),
]


@pytest.mark.parametrize("name,body,expected", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusal_names_construct_and_place(name, body, expected):
    mod = load_text(body)
    with pytest.raises(GraphRefusal) as info:
        lower_to_graph(mod)
    err = info.value
    assert err.message.startswith("graph executor: ")
    assert expected in err.message
    assert err.message.endswith("; run it on the VM")
    # the span is the place the message names, and format() quotes that line
    assert f"prog.relay:{err.span.line}:{err.span.col}" in err.message
    text = err.format()
    assert f"{err.span.line:>4} | " in text and "^" in text


def test_first_construct_in_source_order_wins():
    # @helper's `if` comes first in the file, though main's `match` is reached first
    mod = load_text("""
def @helper(%x: int32) -> int32 {
  if (%x > 0) { %x } else { 0 - %x }
}

def @main(%x: int32) -> int32 {
  match ((%x, %x)) {
    (%a, _) => @helper(%a),
  }
}
""")
    refusal = find_refusal(mod)
    assert refusal is not None and "`if` at prog.relay:3:3" in refusal.message


def test_unused_dynamic_parameter_is_refused():
    mod = load_text("""
def @main(%x: Tensor[(4,), float32], %y: Tensor[(?,), float32]) -> Tensor[(4,), float32] {
  %x
}
""")
    refusal = find_refusal(mod)
    assert "the shape of %y at prog.relay:2:38 is known only at run time" in refusal.message


def test_dynamic_shape_inside_a_called_global_is_refused():
    mod = load_text("""
def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  %x
}

def @grow(%v: Tensor[(?,), float32]) -> Tensor[(?,), float32] {
  nn.relu(%v)
}

def @entry(%x: Tensor[(4,), float32]) -> float32 {
  sum(@grow(%x))
}
""")
    assert find_refusal(mod, "main") is None
    refusal = find_refusal(mod, "entry")
    assert "the shape of %v at prog.relay:6:11 is known only at run time" in refusal.message


def test_unknown_entry_is_refused():
    mod = load_text("def @main() -> int32 { 1 }")
    with pytest.raises(GraphRefusal, match="no function @nope"):
        lower_to_graph(mod, "nope")


def test_fib_refusal_points_at_its_if():
    mod = check_module(load_file("programs/fib.relay"))
    refusal = find_refusal(mod)
    assert refusal.message == ("graph executor: `if` at programs/fib.relay:6:3 needs a branch "
                               "at run time; run it on the VM")


def _all_programs():
    return sorted(PROGRAMS.glob("*.relay")) + sorted(EXAMPLES.glob("*.relay"))


@pytest.mark.parametrize("path", _all_programs(), ids=lambda p: p.name)
def test_every_program_lowers_or_is_refused_with_a_place(path):
    mod, args = load_path(path)
    refusal = find_refusal(mod)
    if refusal is None:
        # a static program: the graph computes what the reference interpreter does
        assert same_value(run_graph(mod, args), run_interp(mod, args))
    else:
        assert refusal.span is not None
        assert f"{refusal.span.line}:{refusal.span.col}" in refusal.message
        with pytest.raises(GraphRefusal):
            lower_to_graph(mod)


def test_static_programs_in_the_repository_lower():
    lowered = {p.name for p in _all_programs()
               if find_refusal(check_module(load_file(str(p)))) is None}
    assert {"mlp.relay", "reshape_chain.relay"} <= lowered
    assert "fib.relay" not in lowered and "policy.relay" not in lowered
