"""--shape / --dtype / --opset on every command that loads a program (issue 26, item 2),
`@FILE.pb` TensorProto arguments, and the hint naming an ONNX test folder's inputs."""
import io
import json
import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

from rvmdbg.cli import main  # noqa: E402
from rvmdbg.program import LoadOptions  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from test_onnx_import import conv_model, reference  # noqa: E402

W = np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3) / 100


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "model.onnx"
    onnx.save(conv_model(unnamed=False), str(p))
    return str(p)


@pytest.fixture
def relay(tmp_path):
    p = tmp_path / "t.relay"
    p.write_text('#[version = "0.0.5"]\ndef @main() { 1 }\n')
    return str(p)


def test_shape_and_dtype_reach_check_compile_graph_and_trace(model, capsys):
    assert main(["check", model, "--shape", "input.1=1,3,5,6"]) == 0
    assert "Tensor[(1, 3, 5, 6), float32]) -> Tensor[(1, 4, 5, 6), float32]" in \
        capsys.readouterr().out
    assert main(["check", model, "--dtype", "input.1=float64"]) == 0
    assert "Tensor[(1, 3, ?, 6), float64]" in capsys.readouterr().out
    # static once the shape is given: the graph executor's JSON has no dynamic shapes
    assert main(["graph", model, "--shape", "input.1=1,3,5,6", "--json"]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert [1, 4, 5, 6] in graph["attrs"]["shape"][1]
    assert main(["compile", model, "--shape", "input.1=1,3,5,6", "--opset", "13"]) == 0
    listing = capsys.readouterr().out
    assert "invoke_packed" in listing and "shape_func" not in listing.lower()
    assert main(["trace", model, "--shape", "input.1=1,3,2,6", "[[[[0,0,0,0,0,0],"
                 "[0,0,0,0,0,0]],[[0,0,0,0,0,0],[0,0,0,0,0,0]],[[0,0,0,0,0,0],"
                 "[0,0,0,0,0,0]]]]"]) == 0
    assert capsys.readouterr().out.strip()


def test_a_shape_the_arguments_do_not_fit_is_refused(model, tmp_path, capsys):
    x = np.zeros((1, 3, 4, 6), "float32")
    np.save(tmp_path / "x.npy", x)
    assert main(["run", model, "--shape", "input.1=1,3,5,6", f"@{tmp_path / 'x.npy'}"]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "run", "compile", "trace", "debug", "graph",
                                     "quiz", "screen"])
@pytest.mark.parametrize("option", [["--shape", "x=1,2"], ["--dtype", "x=float32"],
                                    ["--opset", "13"]])
def test_on_a_relay_program_the_options_are_a_usage_error(command, option, relay, capsys,
                                                          monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # debug, quiz, screen: no terminal
    assert main([command, relay, *option]) == 2
    err = capsys.readouterr().err
    assert f"{option[0]} applies only to an ONNX model" in err and "Traceback" not in err


def test_a_bad_shape_or_dtype_is_a_usage_error(model, capsys):
    assert main(["run", model, "--shape", "input.1=1,x"]) == 2
    assert "'x' is no dimension" in capsys.readouterr().err
    assert main(["check", model, "--dtype", "input.1=float7"]) == 2
    assert "is not a Relay dtype" in capsys.readouterr().err


def test_the_screen_loads_with_the_options(model):
    from rvmdbg.tui.program import ProgramLoadError, load_program
    prog = load_program(model, "main", LoadOptions(shapes={"input.1": [1, 3, 5, 6]}))
    assert str(prog.module.functions["main"].params[0].type_annotation) == \
        "Tensor[(1, 3, 5, 6), float32]"
    with pytest.raises(ProgramLoadError, match="--opset applies only"):
        load_program(model.replace("model.onnx", "none.relay"), "main", LoadOptions(opset=3))


def test_serve_passes_the_options_on_to_each_tab(model):
    from rvmdbg.cli import build_parser
    from rvmdbg.serve import child_argv
    ns = build_parser()[0].parse_args(["serve", model, "--shape", "input.1=1,3,5,6",
                                    "--dtype", "input.1=float32", "--opset", "13"])
    argv = child_argv(ns)
    assert argv[argv.index("--shape") + 1] == "input.1=1,3,5,6"
    assert argv[argv.index("--opset") + 1] == "13"
    assert argv[argv.index("--dtype") + 1] == "input.1=float32"


def test_debug_and_quiz_take_the_options(model, tmp_path, monkeypatch, capsys):
    x = np.random.default_rng(5).standard_normal((1, 3, 5, 6)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    batch = tmp_path / "cmds"
    batch.write_text("c\n")
    assert main(["debug", model, "--shape", "input.1=1,3,5,6", f"@{tmp_path / 'x.npy'}",
                 "--batch", str(batch)]) == 0
    out = capsys.readouterr().out
    assert "returned Tensor[(1, 4, 5, 6), float32]" in out, out
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n" * 3))
    assert main(["quiz", model, "--shape", "input.1=1,3,5,6", f"@{tmp_path / 'x.npy'}",
                 "--questions", "2"]) == 0


# ------------------------------------------------------------------------ @FILE.pb arguments

def _pb(path, array, name="input.1"):
    path.write_bytes(numpy_helper.from_array(array, name).SerializeToString())
    return str(path)


def test_a_tensorproto_file_is_an_argument(model, tmp_path, capsys):
    x = np.random.default_rng(3).standard_normal((1, 3, 5, 6)).astype("float32")
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    pb = _pb(folder / "input_0.pb", x)
    assert main(["run", model, "@" + pb, "--json"]) == 0
    got = np.asarray(json.loads(capsys.readouterr().out)["result"]["data"], "float32")
    np.testing.assert_allclose(got.reshape(1, 4, 5, 6), reference(x, W), rtol=1e-5, atol=1e-5)


def test_with_no_args_the_hint_names_the_test_folder_inputs(model, tmp_path, capsys):
    assert main(["run", model]) == 2
    assert "test folder" not in capsys.readouterr().err  # no folder yet
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    for i in (1, 0):
        _pb(folder / f"input_{i}.pb", np.zeros((1, 3, 2, 6), "float32"))
    (folder / "output_0.pb").write_bytes(b"")
    assert main(["run", model]) == 2
    err = capsys.readouterr().err
    assert ("the ONNX test folder beside the model holds inputs: "
            f"@{folder / 'input_0.pb'} @{folder / 'input_1.pb'}") in err


def test_bad_tensorproto_files_are_clear_messages(model, tmp_path, capsys):
    cases = {
        "garbage.pb": b"\xff\xff\xff\x07garbage",
        "empty.pb": b"",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    big = _pb(tmp_path / "big.pb", np.zeros((1, 3, 5, 6), "float32"))
    # external data names another file: refused, never read
    t = numpy_helper.from_array(np.zeros((1, 3, 5, 6), "float32"), "input.1")
    t.ClearField("raw_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    t.external_data.add(key="location", value="/etc/passwd")
    (tmp_path / "ext.pb").write_bytes(t.SerializeToString())
    # dims declaring far more than the data (and than --max-bytes)
    huge = onnx.TensorProto(data_type=onnx.TensorProto.FLOAT, dims=[1 << 20, 1 << 20])
    (tmp_path / "huge.pb").write_bytes(huge.SerializeToString())
    short = onnx.TensorProto(data_type=onnx.TensorProto.FLOAT, dims=[1, 3, 5, 6],
                             raw_data=b"\0" * 8)
    (tmp_path / "short.pb").write_bytes(short.SerializeToString())
    expect = {
        "garbage.pb": "not a TensorProto file",
        "empty.pb": "is empty, not a TensorProto file",
        "ext.pb": "external data",
        "huge.pb": "more than --max-bytes",
        "short.pb": "not a valid TensorProto",
        "missing.pb": "file not found",
    }
    for name, words in expect.items():
        assert main(["run", model, f"@{tmp_path / name}"]) == 2, name
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (name, err)
    # the file's size is checked against --max-bytes before it is read
    assert main(["run", model, "@" + big, "--max-bytes", "100"]) == 2
    assert "larger than the 100 bytes" in capsys.readouterr().err
