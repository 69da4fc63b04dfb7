"""The ONNX importer's skeleton: names, spans, constants or parameters, opset choice, errors."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvmdbg.onnx import OnnxImportError, import_model  # noqa: E402
from rvmdbg.onnx import registry  # noqa: E402
from rvmdbg.relay.ast import Call, Constant, Var, walk  # noqa: E402
from rvmdbg.relay.printer import print_module  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def conv_model(opset=13, unnamed=True):
    x = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 3, "H", 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3)
                                / 100, "W")
    nodes = [helper.make_node("Conv", ["input.1", "W"], ["c"], pads=[1, 1, 1, 1],
                              name="" if unnamed else "conv1"),
             helper.make_node("Relu", ["c"], ["r"], name="" if unnamed else "relu1"),
             helper.make_node("Add", ["r", "r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(mod, *args):
    return VirtualMachine(compile_module(check_module(mod))).invoke("main", list(args))


def reference(x, w):
    from numpy.lib.stride_tricks import sliding_window_view
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(2, 3))  # n c h w kh kw
    out = np.einsum("nchwij,ocij->nohw", win, w)
    r = np.maximum(out, 0)
    return r + r


def test_inputs_keep_legal_names_and_unknown_dims_are_question_marks():
    imp = import_model(conv_model())
    (p,) = imp.module.functions["main"].params
    assert p.name == "input_1"
    assert str(p.type_annotation) == "Tensor[(1, 3, ?, 6), float32]"
    assert imp.inputs == ["input.1"]


def test_shape_option_fixes_unknown_dims_and_the_result_matches_numpy():
    imp = import_model(conv_model(), shapes={"input.1": [1, 3, 5, 6]})
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 6)).astype("float32")
    w = np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3) / 100
    got = run(imp.module, x)
    np.testing.assert_allclose(got, reference(x, w), rtol=1e-5, atol=1e-5)


def test_initializers_are_constants_or_parameters_with_keep_params():
    frozen = import_model(conv_model(), shapes={"input.1": [1, 3, 5, 6]})
    assert len(frozen.module.functions["main"].params) == 1
    assert any(isinstance(n, Constant) and n.data.shape == (4, 3, 3, 3)
               for n in walk(frozen.module.functions["main"].body))
    assert "meta[relay.Constant][0]" in print_module(frozen.module)
    kept = import_model(conv_model(), shapes={"input.1": [1, 3, 5, 6]}, keep_params=True)
    params = kept.module.functions["main"].params
    assert [p.name for p in params] == ["input_1", "W"]
    assert kept.inputs == ["input.1", "W"] and kept.params["W"].shape == (4, 3, 3, 3)


def test_every_call_carries_its_nodes_line_and_unnamed_nodes_get_tvms_names():
    imp = import_model(conv_model(), shapes={"input.1": [1, 3, 5, 6]})
    assert list(imp.nodes) == ["Conv_0", "Relu_0", "Add_0"]
    lines = imp.node_lines.split("\n")
    assert lines[imp.nodes["Conv_0"] - 1].startswith("Conv_0  Conv  [input.1, W] -> [c]")
    calls = [n for n in walk(imp.module.functions["main"].body) if isinstance(n, Call)]
    by_op = {n.op.name: n.span.line for n in calls}
    assert by_op == {"nn.conv2d": imp.nodes["Conv_0"], "nn.relu": imp.nodes["Relu_0"],
                     "add": imp.nodes["Add_0"]}
    named = import_model(conv_model(unnamed=False), shapes={"input.1": [1, 3, 5, 6]})
    assert list(named.nodes)[:2] == ["conv1", "relu1"]
    assert isinstance(named.tensors["input.1"], Var)


def test_the_converter_is_the_highest_since_at_or_below_the_opset():
    assert registry.lookup("Reshape", "", 4).since == 1
    assert registry.lookup("Reshape", "", 13).since == 5
    assert registry.lookup("Reshape", "ai.onnx", 5).since == 5
    assert registry.lookup("NoSuchOp", "", 13) is None


def test_unsupported_nodes_are_all_listed_at_once_at_the_first():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Frobnicate", ["x"], ["a"], name="f1"),
             helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Frobnicate", ["b"], ["y"], name="f2", domain="com.example")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 13),
                                         helper.make_opsetid("com.example", 1)])
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    msg = e.value.format()
    assert "f1 (ai.onnx::Frobnicate, opset 13)" in msg
    assert "f2 (com.example::Frobnicate, opset 1)" in msg
    assert e.value.span.line == 3


def test_not_an_onnx_file_is_a_clear_error(tmp_path):
    p = tmp_path / "x.onnx"
    p.write_bytes(b"\xff\xfe not a protobuf at all \x00\x01")
    with pytest.raises(OnnxImportError) as e:
        import_model(str(p))
    assert "not an ONNX model" in e.value.message
    good = conv_model().SerializeToString()
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(OnnxImportError):
        import_model(str(p))


def _save(tmp_path, model, name="m.onnx"):
    p = tmp_path / name
    onnx.save(model, str(p))
    return str(p)


def test_import_command_writes_relay_that_checks_and_runs_identically(tmp_path, capsys):
    from rvmdbg.cli import main
    from rvmdbg.relay.loader import load_module
    path = _save(tmp_path, conv_model())
    out = tmp_path / "m.relay"
    assert main(["import", path, "--shape", "input.1=1,3,5,6", "-o", str(out)]) == 0
    text = out.read_text()
    assert "#[metadata]" in text and "meta[relay.Constant][0]" in text
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 6)).astype("float32")
    direct = run(import_model(path, shapes={"input.1": [1, 3, 5, 6]}).module, x)
    reread = run(load_module(text, str(out)), x)
    np.testing.assert_array_equal(direct, reread)
    assert main(["check", str(out)]) == 0
    assert "Tensor[(1, 4, 5, 6), float32]" in capsys.readouterr().out


def test_import_keep_params_writes_the_initializers_beside_the_module(tmp_path):
    from rvmdbg.cli import main
    path = _save(tmp_path, conv_model())
    out = tmp_path / "k.relay"
    assert main(["import", path, "--shape", "input.1=1,3,5,6", "--keep-params",
                 "-o", str(out)]) == 0
    assert "%W: Tensor[(4, 3, 3, 3), float32]" in out.read_text()
    params = np.load(tmp_path / "k.npz")
    assert params["W"].shape == (4, 3, 3, 3)


@pytest.mark.parametrize("case_name", ["test_conv_with_strides_padding", "test_gemm_all_attributes",
                                       "test_reduce_mean_keepdims_example", "test_split_equal_parts_1d_opset18",
                                       "test_softmax_axis_1", "test_matmul_4d"])
def test_conformance_models_print_and_read_back_the_same(case_name):
    from rvmdbg.onnx import conformance
    from rvmdbg.relay.equal import structural_equal
    from rvmdbg.relay.loader import load_module
    case = next(c for c in conformance.cases() if c.name == case_name)
    names = [vi.name for vi in case.model.graph.input]
    feeds = dict(zip(names, case.data_sets[0][0]))
    imp = None
    bound = {}
    for _attempt in range(3):
        try:
            imp = import_model(case.model, bind=bound)
            break
        except Exception as e:  # NeedsValue: bind what it names
            bound.update({n: feeds[n] for n in getattr(e, "inputs", [])})
    mod = check_module(imp.module)
    text = print_module(mod)
    back = check_module(load_module(text, "back.relay"))
    assert structural_equal(back.functions["main"], mod.functions["main"])
    args = [np.asarray(feeds[n]) for n in imp.inputs]
    a = VirtualMachine(compile_module(mod)).invoke("main", args)
    b = VirtualMachine(compile_module(back)).invoke("main", args)
    outs_a, outs_b = conformance._outputs(a), conformance._outputs(b)
    assert len(outs_a) == len(outs_b) == len(case.data_sets[0][1])
    for x, y in zip(outs_a, outs_b):
        np.testing.assert_array_equal(x, y)


def test_import_command_bad_input_is_a_located_message_and_exit_2(tmp_path, capsys):
    from rvmdbg.cli import main
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"#[version]\x00\xff\xff")
    assert main(["import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: error: not an ONNX model") and "Traceback" not in err
    path = _save(tmp_path, conv_model())
    assert main(["import", path, "--shape", "nope=1"]) == 2
    assert "not an input of the graph" in capsys.readouterr().err
    assert main(["import", path, "--shape", "input.1=1,x"]) == 2
    assert "is no dimension" in capsys.readouterr().err
