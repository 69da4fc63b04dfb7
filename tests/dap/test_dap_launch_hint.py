"""The launch request's message when the program's arguments are missing (issue 28, item
14): in an editor there is no PROGRAM to give them after, so the hint names the launch
configuration's `args` and `inputs` settings."""
from __future__ import annotations

import numpy as np

from dap_client import PROGRAMS


def test_missing_arguments_name_the_launch_settings(dap, tmp_path):
    prog = tmp_path / "two.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main(%a: int32, %b: int32) -> int32 {\n'
                    '  add(%a, %b)\n}\n', encoding="utf-8")
    dap.request("initialize", {"adapterID": "rvmdbg"})
    r = dap.request("launch", {"program": str(prog)}, ok=False)
    assert "takes 2 arguments (%a: int32, %b: int32), got 0" in r["message"]
    assert "`args`" in r["message"] and "`inputs`" in r["message"], r["message"]
    assert "after PROGRAM" not in r["message"]
    # what the hint says works: `inputs` binds them by name
    np.savez(tmp_path / "ab.npz", a=np.array(2, np.int32), b=np.array(3, np.int32))
    dap.request("launch", {"program": str(prog), "inputs": str(tmp_path / "ab.npz"),
                           "stopOnEntry": True})
    dap.request("configurationDone")
    assert dap.event("stopped")["body"]["reason"] == "entry"


def test_command_line_keeps_its_own_hint():
    from rvmdbg import cli
    from rvmdbg.args import ArgumentError
    program = cli.load_program(str(PROGRAMS / "mlp.relay"))
    try:
        cli.program_arguments(program, "main", ["1"])
    except ArgumentError as e:
        assert "after PROGRAM" not in e.message   # given arguments: no hint at all
    prog_noargs = cli.load_program(str(PROGRAMS / "fib.relay"))
    assert cli.program_arguments(prog_noargs, "main", [])   # its // args: line
