"""An `.onnx` program launched over DAP (issue 26, items 2 and 4): `inputs` / `args`, the
`shape` / `dtype` / `opset` launch settings, stepping and reading variables."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx"))
from test_onnx_import import conv_model  # noqa: E402


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "model.onnx"
    onnx.save(conv_model(unnamed=False), str(p))
    return str(p)


def _variables(dap, scope: str) -> dict:
    frame = dap.top_frame()["id"]
    scopes = {s["name"]: s for s in
              dap.request("scopes", {"frameId": frame})["body"]["scopes"]}
    ref = scopes[scope]["variablesReference"]
    return {v["name"]: v for v in
            dap.request("variables", {"variablesReference": ref})["body"]["variables"]}


def test_launch_an_onnx_model_with_inputs_step_and_read_variables(dap, model, tmp_path):
    x = np.full((1, 3, 4, 6), 0.5, "float32")
    np.savez(tmp_path / "x.npz", **{"input.1": x})
    ev = dap.launch(model, stop_on_entry=True, inputs=str(tmp_path / "x.npz"))
    assert ev["body"]["reason"] == "entry"
    top = dap.top_frame()
    # the source shown is the node listing: the frame points into the model's file
    assert top["source"]["path"] == model
    args = _variables(dap, "Arguments")
    assert "%input_1" in args and "Tensor[(1, 3, 4, 6), float32]" in args["%input_1"]["value"]
    before = _variables(dap, "Registers")
    # the model's one fused kernel (its `?` dim sized by a shape kernel first) is one node
    # line, so step by instruction until the kernel's output is written
    for _ in range(60):
        ev = dap.motion("next", {"granularity": "instruction"})
        if ev["event"] == "terminated":
            break
        regs = _variables(dap, "Registers")
        if any("Tensor[(1, 4, 4, 6), float32]" in v["value"] for v in regs.values()):
            break
    assert ev["event"] == "stopped" and ev["body"]["reason"] == "step"
    assert regs != before
    assert any("Tensor[(1, 4, 4, 6), float32]" in v["value"] for v in regs.values()), regs
    # the ONNX tensor name reads the value (`print y`)
    r = dap.request("evaluate", {"expression": "print y", "context": "repl"})
    assert "Tensor[(1, 4, 4, 6), float32]" in r["body"]["result"], r


def test_shape_dtype_and_opset_launch_settings(dap, model, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 5, 6), "float64"))
    ev = dap.launch(model, stop_on_entry=True, args=[str("@" + str(tmp_path / "x.npy"))],
                    shape={"input.1": [1, 3, 5, 6]}, dtype={"input.1": "float64"}, opset=13)
    assert ev["body"]["reason"] == "entry"
    args = _variables(dap, "Arguments")
    assert "Tensor[(1, 3, 5, 6), float64]" in args["%input_1"]["value"]


def test_bad_launch_settings_are_named(dap, model, tmp_path):
    dap.request("initialize", {"adapterID": "rvmdbg"})
    r = dap.request("launch", {"program": model, "shape": {"input.1": "1,3"}}, ok=False)
    assert "'shape'" in r["message"]
    r = dap.request("launch", {"program": model, "dtype": {"input.1": "float7"}}, ok=False)
    assert "is not a Relay dtype" in r["message"]
    relay = tmp_path / "t.relay"
    relay.write_text('#[version = "0.0.5"]\ndef @main() { 1 }\n')
    r = dap.request("launch", {"program": str(relay), "opset": 13}, ok=False)
    assert "--opset applies only to an ONNX model" in r["message"]
