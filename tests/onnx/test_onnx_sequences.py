"""ONNX sequences as TVM's frontend made them: Relay tuples of tensors, their length known at
import. Each op with a model made by onnx.helper, checked against onnx's ReferenceEvaluator
on the VM; the conformance harness's sequence cases; a sequence-typed graph input; the
networks `simple/test_sequence_model*`; `rvmdbg debug` stopping at the tuple's AllocADT."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvmdbg.onnx import OnnxImportError, import_model  # noqa: E402
from rvmdbg.onnx import conformance, networks  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.values import ADTValue, make_tuple  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "seq", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _run(model, feeds, shapes=None):
    imp = import_model(model, shapes=shapes)
    exe = compile_module(check_module(imp.module))
    args = [make_tuple(tuple(feeds[n])) if isinstance(feeds[n], list) else feeds[n]
            for n in imp.inputs]
    return imp, exe, VirtualMachine(exe).invoke("main", args)


def _seq_out(name):
    return helper.make_tensor_sequence_value_info(name, F, None)


def _ints(name, values):
    return helper.make_tensor(name, I64, [len(values)] if len(values) != 1 else [], values)


X = helper.make_tensor_value_info("x", F, [2, 3])
Y = helper.make_tensor_value_info("y", F, [2, 3])
Z = helper.make_tensor_value_info("z", F, [2, 3])
xs = np.arange(6, dtype="float32").reshape(2, 3)
ys = xs + 10
zs = xs + 20
FEEDS = {"x": xs, "y": ys, "z": zs}


def _check_against_reference(model, feeds=FEEDS):
    expected = ReferenceEvaluator(model).run(None, feeds)
    _imp, _exe, got = _run(model, feeds)
    outs = ([got] if len(model.graph.output) == 1 else list(got.fields))
    for g_, e in zip(outs, expected):
        why = conformance.compare_value("t", g_, e)
        assert why is None, why
    return got


def test_sequence_construct_at_and_length():
    m = _model([helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]),
                helper.make_node("SequenceAt", ["s", "pos"], ["a"]),
                helper.make_node("SequenceLength", ["s"], ["n"])],
               [X, Y, Z], [helper.make_tensor_value_info("a", F, None),
                           helper.make_tensor_value_info("n", I64, [])],
               [helper.make_tensor("pos", I64, [], [-2])])
    got = _check_against_reference(m)
    np.testing.assert_array_equal(got.fields[0], ys)
    assert np.asarray(got.fields[1]).dtype == np.int64 and int(got.fields[1]) == 3


def test_sequence_empty_insert_erase_and_concat():
    m = _model([helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
                helper.make_node("SequenceInsert", ["e", "x"], ["s1"]),
                helper.make_node("SequenceInsert", ["s1", "y", "zero"], ["s2"]),  # front
                helper.make_node("SequenceInsert", ["s2", "z"], ["s3"]),           # back
                helper.make_node("SequenceErase", ["s3", "one"], ["s4"]),          # drops x
                helper.make_node("ConcatFromSequence", ["s4"], ["c"], axis=1)],
               [X, Y, Z], [helper.make_tensor_value_info("c", F, None)],
               [helper.make_tensor("zero", I64, [], [0]), helper.make_tensor("one", I64, [], [1])])
    got = _check_against_reference(m)
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([ys, zs], axis=1))


def test_sequence_erase_without_position_drops_the_last_and_concat_new_axis_stacks():
    m = _model([helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]),
                helper.make_node("SequenceErase", ["s"], ["t"]),
                helper.make_node("ConcatFromSequence", ["t"], ["c"], axis=0, new_axis=1)],
               [X, Y, Z], [helper.make_tensor_value_info("c", F, None)])
    got = _check_against_reference(m)
    assert np.asarray(got).shape == (2, 2, 3)


@pytest.mark.parametrize("split,keepdims", [(None, 1), (None, 0), ([1, 2], 1), (2, 1)])
def test_split_to_sequence(split, keepdims):
    inputs = ["x"] + (["sp"] if split is not None else [])
    inits = ([helper.make_tensor("sp", I64, [len(split)] if isinstance(split, list) else [],
                                 split if isinstance(split, list) else [split])]
             if split is not None else [])
    m = _model([helper.make_node("SplitToSequence", inputs, ["s"], axis=1, keepdims=keepdims)],
               [X], [_seq_out("s")], inits)
    got = _check_against_reference(m, {"x": xs})
    assert isinstance(got, ADTValue) and got.is_tuple


def test_sequence_map_runs_its_body_once_per_element():
    body = helper.make_graph([helper.make_node("Add", ["a", "b"], ["o"])], "body",
                             [helper.make_tensor_value_info("a", F, [2, 3]),
                              helper.make_tensor_value_info("b", F, [2, 3])],
                             [helper.make_tensor_value_info("o", F, [2, 3])])
    m = _model([helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
                helper.make_node("SequenceMap", ["s", "z"], ["r"], body=body),
                helper.make_node("ConcatFromSequence", ["r"], ["c"], axis=0)],
               [X, Y, Z], [helper.make_tensor_value_info("c", F, None)])
    got = _check_against_reference(m)
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([xs + zs, ys + zs]))


def test_an_if_whose_branches_make_sequences_is_a_relay_if_over_tuples():
    def branch(name, src):
        return helper.make_graph([helper.make_node("SequenceConstruct", [src, src], [name])],
                                 name + "_g", [], [_seq_out(name)])
    m = _model([helper.make_node("If", ["c"], ["s"], then_branch=branch("t", "x"),
                                 else_branch=branch("e", "y")),
                helper.make_node("ConcatFromSequence", ["s"], ["o"], axis=0)],
               [helper.make_tensor_value_info("c", TensorProto.BOOL, []), X, Y],
               [helper.make_tensor_value_info("o", F, None)])
    for cond, src in ((True, xs), (False, ys)):
        feeds = {"c": np.asarray(cond), "x": xs, "y": ys}
        imp, exe, got = _run(m, feeds)
        np.testing.assert_array_equal(np.asarray(got), np.concatenate([src, src]))
    from rvmdbg.relay.ast import If, walk
    assert any(isinstance(n, If) for n in walk(imp.module.functions["main"].body))


def test_a_sequence_graph_input_is_a_tuple_parameter_whose_shapes_must_be_given():
    seq_in = helper.make_tensor_sequence_value_info("s", F, None)
    m = _model([helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0)],
               [seq_in], [helper.make_tensor_value_info("c", F, None)])
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    assert "graph input s is a sequence" in e.value.message
    imp, _exe, got = _run(m, {"s": [xs, ys]}, shapes={"s": [(2, 3), (2, 3)]})
    (param,) = imp.module.functions["main"].params
    assert str(param.type_annotation) == "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])"
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([xs, ys]))


def test_a_position_from_a_graph_input_is_read_at_run_time_or_bound():
    # unbound, the tuple becomes a run-time List read by @nth (rvmdbg/onnx/seqlist.py);
    # bound as a constant, it is the tuple's field, as TVM's converter required
    m = _model([helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
                helper.make_node("SequenceAt", ["s", "p"], ["a"])],
               [X, Y, helper.make_tensor_value_info("p", I64, [])],
               [helper.make_tensor_value_info("a", F, None)])
    _imp, _exe, out = _run(m, {"x": xs, "y": ys, "p": np.asarray(-2, "int64")})
    np.testing.assert_array_equal(np.asarray(out), xs)
    imp = import_model(m, bind={"p": np.asarray(1, "int64")})
    out = VirtualMachine(compile_module(check_module(imp.module))).invoke("main", [xs, ys])
    np.testing.assert_array_equal(np.asarray(out), ys)


def test_a_position_out_of_range_is_a_located_error():
    m = _model([helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
                helper.make_node("SequenceAt", ["s", "p"], ["a"])],
               [X, Y], [helper.make_tensor_value_info("a", F, None)],
               [helper.make_tensor("p", I64, [], [5])])
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    assert "position 5 is outside a sequence of 2" in e.value.message
    assert e.value.node == "SequenceAt_1" or "SequenceAt" in (e.value.node or "")


SEQUENCE_CASES_PASSING = [
    "test_identity_sequence", "test_if_seq", "test_optional_get_element_sequence",
    "test_sequence_insert_at_back", "test_sequence_insert_at_front",
    "test_sequence_map_add_1_sequence_1_tensor", "test_sequence_map_add_2_sequences",
    "test_sequence_map_extract_shapes", "test_sequence_map_identity_1_sequence",
    "test_sequence_map_identity_1_sequence_1_tensor", "test_sequence_map_identity_2_sequences",
    "test_split_to_sequence_1", "test_split_to_sequence_2", "test_split_to_sequence_nokeepdims"]


@pytest.fixture(scope="module")
def sequence_cases():
    return {c.name: c for c in conformance.cases() if conformance.is_sequence_case(c)}


def test_the_conformance_harness_counts_and_runs_sequence_cases(sequence_cases):
    assert set(SEQUENCE_CASES_PASSING) <= set(sequence_cases)
    for name in SEQUENCE_CASES_PASSING:
        o = conformance.run_case(sequence_cases[name])
        assert o.passed and o.sequence and not o.in_scope, (name, o.reason)
    # the in-scope definition is unchanged: a sequence case stays out of it
    assert not any(conformance.in_scope(c) for c in sequence_cases.values())


@pytest.mark.parametrize("name", [f"simple/test_sequence_model{i}" for i in range(1, 9)])
def test_the_simple_sequence_networks_pass(name):
    net = next((n for n in networks.networks() if n.name == name), None)
    if net is None:
        pytest.skip(f"{name} is not in this onnx package")
    o = networks.run_network(net)
    assert o.passed, o.reason
    assert "vm" in o.ran


def test_rvmdbg_debug_batch_stops_at_the_sequences_alloc_adt(tmp_path):
    m = _model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, name="split_rows"),
                helper.make_node("SequenceInsert", ["s", "y"], ["t"], name="append_y"),
                helper.make_node("ConcatFromSequence", ["t"], ["c"], axis=0, name="join")],
               [helper.make_tensor_value_info("x", F, [2, 3]),
                helper.make_tensor_value_info("y", F, [1, 3])],
               [_seq_out("t"), helper.make_tensor_value_info("c", F, [3, 3])])
    path = tmp_path / "seq.onnx"
    onnx.save(m, str(path))
    np.save(tmp_path / "x.npy", xs)
    np.save(tmp_path / "y.npy", np.full((1, 3), 7, "float32"))
    cmds = tmp_path / "cmds.txt"
    cmds.write_text("break op:AllocADT\ncontinue\nstep\ncontinue\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", str(path),
                           f"@{tmp_path / 'x.npy'}", f"@{tmp_path / 'y.npy'}",
                           "--batch", str(cmds)],
                          capture_output=True, text=True, timeout=120, cwd=root)
    out = proc.stdout
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (out, proc.stderr)
    assert "(breakpoint 1)" in out and "AllocADT" in out, out
    assert "[append_y]" in out, out  # the tuple SequenceInsert made, named by its node


def test_rvmdbg_import_takes_a_sequence_inputs_element_shapes_and_the_file_runs(tmp_path):
    seq_in = helper.make_tensor_sequence_value_info("s", F, None)
    m = _model([helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0)],
               [seq_in], [helper.make_tensor_value_info("c", F, None)])
    path = tmp_path / "seq_in.onnx"
    onnx.save(m, str(path))
    root = Path(__file__).resolve().parents[2]

    def rvmdbg(*args):
        return subprocess.run([sys.executable, "-m", "rvmdbg", *args], capture_output=True,
                              text=True, timeout=120, cwd=root)
    refused = rvmdbg("import", str(path))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "graph input s is a sequence" in refused.stderr
    assert "--shape s=2,3;2,3" in refused.stderr
    out = tmp_path / "seq_in.relay"
    made = rvmdbg("import", str(path), "--shape", "s=2,3;1,3", "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert "%s: (Tensor[(2, 3), float32], Tensor[(1, 3), float32])" in out.read_text()
    ran = rvmdbg("run", str(out), "([[1,2,3],[4,5,6]], [[7,8,9]])", "--json")
    assert ran.returncode == 0, ran.stderr
    assert '"shape": [3, 3]' in ran.stdout and "9.0" in ran.stdout
