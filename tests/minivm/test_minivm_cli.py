"""`rvmdbg run|debug|check|trace PROGRAM.mvm`: the MiniVM from the command line, with the exit
codes of the CLI contract (0 ok, 1 the program failed, 2 bad input)."""
from __future__ import annotations

import json
from pathlib import Path

from rvmdbg import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "programs/demo.mvm"
SPIN = ROOT / "programs/demo_spin.mvm"


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, out, err


def test_run(capsys):
    assert rvmdbg(capsys, "run", DEMO) == (0, "r0=5 r1=3 r2=2\n", "")
    code, out, _ = rvmdbg(capsys, "run", DEMO, "--json")
    assert code == 0 and json.loads(out) == {"result": [5, 3, 2], "steps": 5}


def test_run_of_a_program_that_never_halts_fails(capsys):
    code, out, err = rvmdbg(capsys, "run", SPIN)
    assert code == 1 and out == ""
    assert "never halts: step 5 repeats the state of step 4" in err
    assert "demo_spin.mvm:11:9" in err and "^~" in err


def test_step_limit(capsys):
    code, _, err = rvmdbg(capsys, "run", SPIN, "--max-steps", "3")
    assert code == 1 and "max_steps=3" in err


def test_syntax_error_is_located(capsys, tmp_path):
    bad = tmp_path / "bad.mvm"
    bad.write_text("LD r1 3\nADD r1 r2\n")
    code, out, err = rvmdbg(capsys, "run", bad)
    assert code == 2 and out == ""
    lines = err.split("\n")
    assert lines[0] == f"{bad}:2:10: error: ADD takes 3 operands, got 2: expected ADD a b dst"
    assert lines[1].endswith("| ADD r1 r2") and lines[2].index("^") == lines[1].index("|") + 11


def test_refusals(capsys):
    code, _, err = rvmdbg(capsys, "run", DEMO, "1")
    assert code == 2 and "takes no arguments" in err
    code, _, err = rvmdbg(capsys, "run", DEMO, "--executor", "graph")
    assert code == 2 and "MiniVM only" in err
    code, _, err = rvmdbg(capsys, "graph", DEMO)
    assert code == 2 and "no dataflow graph" in err


def test_check_and_trace(capsys):
    code, out, _ = rvmdbg(capsys, "check", SPIN)
    assert code == 0 and "7 instructions and 3 registers (HL leaves the pc where it is)" in out
    code, out, _ = rvmdbg(capsys, "trace", DEMO)
    assert code == 0
    assert out.split("\n")[2] == "[step 2] @main pc=2: CH r1 5    -> pc=5"


def test_batch(capsys, tmp_path):
    script = tmp_path / "cmds"
    script.write_text("break @main:5\ncontinue\ndeps\nrstep 2\ncontinue\ncontinue\n")
    code, out, _ = rvmdbg(capsys, "debug", DEMO, "--batch", script)
    assert code == 0
    assert "[step 3] @main pc=5: ADD r1 r2 r0    (breakpoint 1)" in out
    assert "written at step 0 by @main pc=0: LD r1 3" in out
    assert "[step 1] @main pc=1: LD r2 2    (reverse step)" in out
    assert "[step 5] @main: halted: r0=5 r1=3 r2=2    (finished)" in out


def test_batch_stops_at_the_repeated_state(capsys, tmp_path):
    script = tmp_path / "cmds"
    script.write_text("continue\nrstep\nprint r0\nlast-write r0\n")
    code, out, err = rvmdbg(capsys, "debug", SPIN, "--batch", script)
    assert code == 1     # every command succeeded; the program failed (it never halts)
    assert "the program failed while running" in err
    assert "[step 5] @main pc=6: HL    (repeated state)" in out
    assert "error: never halts" in out
    assert "[step 4] @main pc=6: HL    (reverse step)" in out
    assert "r0 = 5" in out and "$0" not in out  # registers as the program names them (issue 28)
    assert "[step 3] @main pc=5: ADD r1 r2 r0    (back to the last write)" in out


def test_registers_keep_the_programs_names_in_every_command(capsys, tmp_path):
    """Issue 28 (9): the listing says r0..r2, so do deps, print, watch, display, info and
    the watchpoint's stop; `$1` is still read, and answered as `r1`."""
    batch = tmp_path / "cmds"
    batch.write_text("s 3\ndeps\nprint r1\nprint $1\nprint r9\nwatch r0\ninfo registers\n"
                     "info frame\ndisplay r0\ns\ninfo breakpoints\nlast-write r2\n")
    code, out, _ = rvmdbg(capsys, "debug", DEMO, "--batch", batch)
    assert "  r1   = 3            written at step 0 by @main pc=0: LD r1 3" in out
    assert "writes: r0" in out
    assert out.count("r1 = 3    (int)") == 2
    assert "r9 is outside the register file (size 3)" in out
    assert "watchpoint 1: r0 of @main (at depth 0)" in out
    assert " r2    int   2" in out and "1: r0 = 0" in out and "1: r0 = 5" in out
    assert "  r0 of @main: 0 -> 5" in out
    assert "1    watchpoint  y    r0 of @main (at depth 0)  1" in out
    assert "$" not in out.replace("print $1", "")


def test_completion_offers_the_programs_register_names():
    from rvmdbg.debug import CommandInterpreter, DebugSession
    from rvmdbg.debug.completion import complete
    from rvmdbg.minivm.parser import load_mvm
    interp = CommandInterpreter(DebugSession(load_mvm(str(DEMO)), []))
    assert complete(interp, "print r")[1] == ["r0", "r1", "r2"]
    assert complete(interp, "print r1")[1] == ["r1"]
    assert complete(interp, "watch $")[1] == ["r0", "r1", "r2"]


def test_reverse_steps_say_so_and_mark_changes_against_the_state_before(capsys, tmp_path):
    """Issue 28 (13): `S` from the end says `(reverse step)` and marks nothing changed (the
    state before it was the end, with the same registers); at step 0 nothing is marked; a
    second `S` marks what it undid."""
    batch = tmp_path / "cmds"
    batch.write_text("info registers\ncontinue\nrstep\ninfo registers\nrstep\n"
                     "info registers\nrnext\ngoto 1\nstep\n")
    code, out, _ = rvmdbg(capsys, "debug", DEMO, "--batch", batch)
    assert code == 0
    blocks = out.split("(rvmdbg) ")
    assert "changed" not in blocks[1] and "*" not in blocks[1]          # step 0
    assert "[step 4] @main pc=6: HL    (reverse step)" in blocks[3]
    assert "*" not in blocks[4]                                         # S from the end
    assert "[step 3] @main pc=5: ADD r1 r2 r0    (reverse step)" in blocks[5]
    assert "* r0    int   0" in blocks[6] and "* r1" not in blocks[6]   # it undid r0's write
    assert "(reverse next)" in blocks[7]
    assert "[step 1] @main pc=1: LD r2 2    (back to an earlier step)" in blocks[8]
    assert "[step 2] @main pc=2: CH r1 5    (step)" in blocks[9]        # forward stays `step`
