"""A Relax VM program (a `.relax.py` TVMScript module, built by TVM) launched over DAP: a
function breakpoint on a kernel's name stops at its Call, stepping and stepping over a VM
function call, and the registers read as TVM tensors shown as rvmdbg shows tensors."""
from __future__ import annotations

import pytest

pytest.importorskip("tvm")

from tests.relax import programs  # noqa: E402


def _variables(dap, scope: str) -> dict:
    frame = dap.top_frame()["id"]
    scopes = {s["name"]: s for s in
              dap.request("scopes", {"frameId": frame})["body"]["scopes"]}
    ref = scopes[scope]["variablesReference"]
    return {v["name"]: v for v in
            dap.request("variables", {"variablesReference": ref})["body"]["variables"]}


def test_launch_a_relax_program_break_step_and_read_variables(dap, tmp_path):
    path = tmp_path / "fact.relax.py"
    path.write_text(programs.source("fact"))
    ev = dap.launch(str(path), stop_on_entry=True, args=["3"])
    assert ev["body"]["reason"] == "entry"
    r = dap.request("setFunctionBreakpoints", {"breakpoints": [{"name": "multiply"}]})
    assert r["body"]["breakpoints"][0]["verified"]
    ev = dap.motion("continue")
    assert ev["body"]["reason"] in ("breakpoint", "function breakpoint")
    top = dap.top_frame()
    assert top["name"].startswith("@fact") or "fact" in top["name"]
    frames = dap.request("stackTrace", {"threadId": 1})["body"]["stackFrames"]
    assert len(frames) == 3
    regs = _variables(dap, "Registers")
    values = {name: v["value"] for name, v in regs.items()}
    assert any("2i64" in v for v in values.values()), values     # %0 of the innermost @fact
    # one instruction: the multiply Call writes its output tensor %8 in place
    ev = dap.motion("next", {"granularity": "instruction"})
    assert ev["event"] == "stopped" and ev["body"]["reason"] == "step"
    r = dap.request("evaluate", {"expression": "print $8", "context": "repl"})
    assert "2i64" in r["body"]["result"], r
    ev = dap.motion("continue")
    assert ev["event"] == "stopped"
    dap.request("setFunctionBreakpoints", {"breakpoints": []})
    ev = dap.motion("continue")
    assert ev["event"] == "terminated"
