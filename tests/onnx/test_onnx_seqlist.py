"""Loop-carried sequences as run-time Lists (rvmdbg/onnx/seqlist.py): a `Loop` whose body
inserts into a sequence carries a prelude `List` (Cons/Nil), and `SequenceAt`,
`SequenceLength` and `ConcatFromSequence` work on it; each model made by onnx.helper and
checked against onnx's ReferenceEvaluator on the VM and the interpreter; the conformance
cases that need it; the module printed and read back runs the same."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvmdbg.onnx import OnnxImportError, conformance, import_model  # noqa: E402
from rvmdbg.onnx.seqlist import list_items  # noqa: E402
from rvmdbg.relay.printer import print_module  # noqa: E402
from rvmdbg.relay.interpreter import Interpreter, call_with_deep_stack  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def _const(name, value, dtype=I64):
    a = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, list(a.shape), a.reshape(-1).tolist()))


def growing_loop_model(tail_nodes, tail_outputs, insert_position=False):
    """A Loop that, at iteration i, appends x[:i+1] (a (i+1, 2) slice of x) to a sequence
    that starts empty; then `tail_nodes` read the loop's sequence `seq`."""
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        _const("one", [1]), _const("zero", [0]),
        helper.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
        helper.make_node("Add", ["i1", "one"], ["end"]),
        helper.make_node("Slice", ["x", "zero", "end", "zero"], ["part"]),
        helper.make_node("SequenceInsert", ["seq_in", "part"] + (["i"] if insert_position
                                                                 else []), ["seq_out"]),
    ]
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_sequence_value_info("seq_in", F, None)],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_tensor_sequence_value_info("seq_out", F, None)])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             _const("go", True, B),
             helper.make_node("Loop", ["n", "go", "empty"], ["seq"], body=body)] + tail_nodes
    g = helper.make_graph(nodes, "grow",
                          [helper.make_tensor_value_info("x", F, [4, 2]),
                           helper.make_tensor_value_info("n", I64, [])], tail_outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


X = np.arange(8, dtype="float32").reshape(4, 2)
N = np.asarray(3, "int64")


def _run_both(model, args):
    imp = import_model(model)
    mod = check_module(imp.module)
    vm = VirtualMachine(compile_module(mod)).invoke("main", list(args))
    it = call_with_deep_stack(lambda: Interpreter(mod).run("main", list(args)))
    return imp, mod, vm, it


def _fields(value, n):
    return [value] if n == 1 else list(value.fields)


def test_a_loop_carried_sequence_is_a_run_time_list_and_reads_like_onnx():
    m = growing_loop_model(
        [helper.make_node("ConcatFromSequence", ["seq"], ["joined"], axis=0),
         helper.make_node("SequenceLength", ["seq"], ["count"]),
         _const("last", -1),
         helper.make_node("SequenceAt", ["seq", "last"], ["final"])],
        [helper.make_tensor_value_info("joined", F, None),
         helper.make_tensor_value_info("count", I64, None),
         helper.make_tensor_value_info("final", F, None)])
    want = ReferenceEvaluator(m).run(None, {"x": X, "n": N})
    imp, mod, vm, it = _run_both(m, [X, N])
    text = print_module(mod)
    # the loop's parameter is a List; reading it goes through the prelude's functions
    assert "List[Tensor[(?, ?), float32]]" in text and "type List[A]" in text
    assert all(f"@{f}(" in text for f in ("foldl", "length", "nth", "concat"))
    for got in (vm, it):
        outs = _fields(got, 3)
        for a, b in zip(outs, want):
            assert np.asarray(a).dtype == b.dtype
            np.testing.assert_array_equal(np.asarray(a), b)
    assert int(np.asarray(_fields(vm, 3)[1])) == 3   # a count no import-time tuple knew


def test_the_loops_sequence_as_a_graph_output_is_a_list_of_the_grown_tensors():
    m = growing_loop_model([], [helper.make_tensor_sequence_value_info("seq", F, None)])
    want = ReferenceEvaluator(m).run(None, {"x": X, "n": N})[0]
    _imp, mod, vm, it = _run_both(m, [X, N])
    assert "List[" in str(mod.functions["main"].checked_type)
    for got in (vm, it):
        items = list_items(got)
        assert items is not None and len(items) == len(want) == 3
        for a, b in zip(items, want):
            np.testing.assert_array_equal(np.asarray(a), b)   # shapes (1,2), (2,2), (3,2)


def test_concat_from_sequence_with_new_axis_stacks_the_list():
    # each iteration appends x[:1] (a fixed (1, 2) slice): stacking gives (n, 1, 2)
    m = growing_loop_model([helper.make_node("ConcatFromSequence", ["seq"], ["st"], axis=1,
                                             new_axis=1)],
                           [helper.make_tensor_value_info("st", F, None)])
    for node in m.graph.node[2].attribute[0].g.node:
        if node.op_type == "Add":
            node.input[0] = "one"    # end = 1 + 1: slices x[:2] each time
    want = ReferenceEvaluator(m).run(None, {"x": X, "n": N})[0]
    _imp, _mod, vm, it = _run_both(m, [X, N])
    for got in (vm, it):
        assert np.asarray(got).shape == want.shape == (2, 3, 2)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_a_run_time_position_reads_a_tuple_as_a_list():
    # SequenceAt(s, p) with p a graph input: the tuple is consed into a List, @nth reads it
    m = helper.make_model(helper.make_graph(
        [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
         helper.make_node("SequenceAt", ["s", "p"], ["y"])], "at",
        [helper.make_tensor_value_info(n, F, [2]) for n in "abc"]
        + [helper.make_tensor_value_info("p", I64, [])],
        [helper.make_tensor_value_info("y", F, None)]),
        opset_imports=[helper.make_opsetid("", 17)])
    vals = [np.full(2, k, "float32") for k in (1, 2, 3)]
    for p in (0, 2, -1, -3):
        _imp, _mod, vm, it = _run_both(m, vals + [np.asarray(p, "int64")])
        for got in (vm, it):
            np.testing.assert_array_equal(np.asarray(got), vals[p])


def test_insert_at_a_position_into_a_run_time_list_is_a_clear_error():
    m = growing_loop_model([], [helper.make_tensor_sequence_value_info("seq", F, None)],
                           insert_position=True)
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    assert "position" in e.value.message and "run time" in e.value.message


def test_the_module_prints_and_reads_back_with_its_list_type_and_runs_the_same():
    from rvmdbg.relay.loader import load_module
    m = growing_loop_model([helper.make_node("ConcatFromSequence", ["seq"], ["joined"],
                                             axis=0)],
                           [helper.make_tensor_value_info("joined", F, None)])
    mod = check_module(import_model(m).module)
    back = check_module(load_module(print_module(mod), "back.relay"))
    a = VirtualMachine(compile_module(mod)).invoke("main", [X, N])
    b = VirtualMachine(compile_module(back)).invoke("main", [X, N])
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


LIST_CASES = ["test_loop13_seq",
              "test_sequence_map_add_1_sequence_1_tensor_expanded",
              "test_sequence_map_add_2_sequences_expanded",
              "test_sequence_map_extract_shapes_expanded",
              "test_sequence_map_identity_1_sequence_1_tensor_expanded",
              "test_sequence_map_identity_1_sequence_expanded",
              "test_sequence_map_identity_2_sequences_expanded"]


def test_the_conformance_cases_with_loop_carried_sequences_pass():
    cases = {c.name: c for c in conformance.cases() if c.name in LIST_CASES}
    assert set(cases) == set(LIST_CASES)
    for name in LIST_CASES:
        o = conformance.run_case(cases[name])
        assert o.passed, (name, o.reason)
