"""The launch request's message when the program's arguments are missing (issue 28, item
14): in an editor there is no PROGRAM to give them after, so the hint names the launch
configuration's `args` and `inputs` settings."""
from __future__ import annotations

import numpy as np
import pytest

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


def test_command_line_keeps_its_own_hint(tmp_path):
    from rvmdbg.args import ArgumentError
    from rvmdbg.program import load_program, program_arguments
    prog = tmp_path / "two.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main(%a: int32, %b: int32) -> int32 {\n'
                    '  add(%a, %b)\n}\n', encoding="utf-8")
    program = load_program(str(prog))
    with pytest.raises(ArgumentError) as info:
        program_arguments(program, "main", [])
    assert info.value.message.endswith("; give them after PROGRAM (the program has no "
                                       "`// args:` line)")
    with pytest.raises(ArgumentError) as info:
        program_arguments(program, "main", ["1"])          # some given: no hint at all
    assert "after PROGRAM" not in info.value.message
    assert program_arguments(load_program(str(PROGRAMS / "fib.relay")), "main", [])  # // args:
