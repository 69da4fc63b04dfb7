"""`.onnx` through the front door: every command that loads a program takes the model."""
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from rvmdbg.cli import main  # noqa: E402
from rvmdbg.program import LoadOptions, kind_for, load_program  # noqa: E402

sys.path.insert(0, __import__("os").path.dirname(__file__))
from test_onnx_import import conv_model, reference  # noqa: E402


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(conv_model(unnamed=False), str(p))
    return str(p)


def test_the_onnx_kind_claims_the_suffix_and_loads_a_checked_module(model, tmp_path):
    assert kind_for(model).name == "onnx"
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(open(model, "rb").read())
    assert kind_for(str(renamed)).name == "onnx"  # told by its first bytes
    text = tmp_path / "t.relay"
    text.write_text('#[version = "0.0.5"]\ndef @main() { 1 }\n')
    assert kind_for(str(text)).name == "relay"
    program = load_program(model)
    assert str(program.module.functions["main"].checked_type.ret) == \
        "Tensor[(1, 4, ?, 6), float32]"


def test_check_run_and_compile_take_an_onnx_file(model, tmp_path, capsys):
    assert main(["check", model]) == 0
    assert "def @main(%input_1: Tensor[(1, 3, ?, 6), float32])" in capsys.readouterr().out
    x = np.random.default_rng(3).standard_normal((1, 3, 5, 6)).astype("float32")
    np.savez(tmp_path / "x.npz", input_1=x)
    assert main(["run", model, "--inputs", str(tmp_path / "x.npz"), "--json"]) == 0
    import json
    got = np.asarray(json.loads(capsys.readouterr().out)["result"]["data"], "float32")
    w = np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3) / 100
    np.testing.assert_allclose(got.reshape(1, 4, 5, 6), reference(x, w), rtol=1e-5, atol=1e-5)
    assert main(["compile", model]) == 0
    assert "invoke_packed" in capsys.readouterr().out


def test_the_debugger_shows_the_node_listing_and_calls_point_at_their_nodes(model):
    d = kind_for(model).debuggable(model, "main", LoadOptions())
    lines = d.source_text.split("\n")
    assert any(line.startswith("conv1  Conv  [input.1, W] -> [c]") for line in lines)
    spans = {d.exe.span_at(0, pc) for pc in range(len(d.exe.functions[0].instructions))}
    shown = {lines[s.line - 1].split()[0] for s in spans if s is not None and s.file == model}
    # conv1, relu1 and Add_0 fuse into one kernel, which carries its root's (Add_0's) line
    assert shown == {"Add_0"}


def test_without_the_onnx_package_the_message_names_the_extra(model, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert main(["check", model]) == 2
    err = capsys.readouterr().err
    assert "rvmdbg[onnx]" in err and "Traceback" not in err


def test_inputs_bind_by_the_onnx_input_name(model, tmp_path, capsys):
    x = np.ones((1, 3, 4, 6), "float32")
    np.savez(tmp_path / "x.npz", **{"input.1": x})
    assert main(["run", model, "--inputs", str(tmp_path / "x.npz")]) == 0
    assert capsys.readouterr().out.strip()
