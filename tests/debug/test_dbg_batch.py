"""Batch mode through the real command line: `rvmdbg debug PROGRAM ARGS --batch -` with the
commands on stdin. Every command of the language appears at least once; stop lines, errors
that do not end the session, breakpoints that survive a restart of the process."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dbg_helpers import PROGRAMS, ROOT

SUM_UP = str(PROGRAMS / "sum_up.relay")
STOP = re.compile(r"^\[step (\d+)\] @(\w+)(?: pc=(\d+))?: (.*)    \(([^)]*)\)$")


def debug(tmp_path, program: str, args: list[str], commands: str, *extra: str):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", program, *args,
                           "--batch", "-", *extra],
                          input=commands, capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)
    return proc


def outputs(stdout: str) -> dict[str, list[str]]:
    """Command -> the lines it printed (in order; repeated commands get #2, #3 suffixes)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines():
        if line.startswith("(rvmdbg) "):
            cmd = line[len("(rvmdbg) "):]
            key, n = cmd, 2
            while key in out:
                key = f"{cmd} #{n}"
                n += 1
            out[key] = []
            current = key
        elif current is not None:
            out[current].append(line)
    return out


def stop(lines: list[str]):
    m = STOP.match(lines[0])
    assert m, lines
    step, func, pc, text, why = m.groups()
    return int(step), func, None if pc is None else int(pc), text, why


def test_every_command(tmp_path):
    script = """
help
break @sum_up
b @sum_up:15 if $0 == 1
break 9
break op:AllocADT
info breakpoints
continue
step
s 3
next
finish
c
bt
backtrace 1
info registers
info frame
print $0
p $99
deps
list
source
heap
frame 1
up
down
watch $7
watch $7 change
disable 1 3
enable 3
delete 5 6
condition 2 $0 == 2
condition 2
rstep
rs 2
rnext
rfinish
rcontinue
goto 30
run-to @sum_up:26
last-write $7
info history
restart
delete
c
nonsense
goto
"""
    proc = debug(tmp_path, SUM_UP, ["3"], script)
    # as gdb's batch mode: a command that reported an error makes the exit status non-zero
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) >= 2
    assert proc.stderr == f"rvmdbg: {len(errors)} commands reported an error\n"
    out = outputs(proc.stdout)
    assert out["help"][0].startswith("Forward:")
    assert out["break @sum_up"] == ["breakpoint 1 at @sum_up"]
    assert out["b @sum_up:15 if $0 == 1"] == ["breakpoint 2 at @sum_up:15 if $0 == 1"]
    assert out["break 9"][0].startswith("breakpoint 3 at ")
    assert out["break op:AllocADT"] == ["breakpoint 4 at op:AllocADT (0 locations)"]
    table = out["info breakpoints"]
    assert table[0].split() == ["Num", "Type", "Enb", "Where", "Hits", "Condition"]
    assert len(table) == 5 and "if $0 == 1" in table[2]
    step, func, pc, text, why = stop(out["continue"])
    assert (func, pc, why) == ("sum_up", 0, "breakpoint 1") and step == 1
    assert stop(out["step"])[0] == 2 and stop(out["step"])[4] == "step"
    assert stop(out["s 3"])[0] == 5
    assert stop(out["next"])[0] == 6
    # finish from the first sum_up frame stops at a breakpoint inside the recursion first
    assert stop(out["finish"])[4].startswith("breakpoint")
    assert stop(out["c"])[4].startswith("breakpoint")
    assert out["bt"][0].startswith("#0  @sum_up") and out["bt"][-1].startswith("#")
    assert any("@main pc=0" in line for line in out["bt"])
    assert len(out["backtrace 1"]) == 2 and out["backtrace 1"][1].startswith("(more frames")
    assert out["info registers"][0].startswith("registers of @sum_up")
    assert any(line.lstrip("* ").startswith("$0") for line in out["info registers"])
    assert out["info frame"][0].startswith("frame #0 of ")
    assert re.match(r"\$0 = \d+    \(int32\)", out["print $0"][0])
    assert out["p $99"][0].startswith("error:")
    assert out["deps"][0].startswith("@sum_up pc=")
    assert any(line.startswith("writes:") for line in out["deps"])
    assert any(line.startswith("=>") for line in out["list"])
    assert any(line.startswith("=>") for line in out["source"][1:])
    assert out["heap"] == ["no ADT values, tuples, closures or references in this frame's registers"]
    assert out["frame 1"][0].startswith("#1  @")
    assert out["up"][0].startswith("#2  @main pc=0")
    assert out["down"][0].startswith("#")
    assert out["watch $7"][0].startswith("watchpoint 5: $7 of @sum_up")
    assert out["watch $7 change"][0].startswith("watchpoint 6:") and "on change" in out["watch $7 change"][0]
    assert out["disable 1 3"] == ["disabled 1, 3"]
    assert out["enable 3"] == ["enabled 3"]
    assert out["delete 5 6"] == ["deleted 5, 6"]
    assert out["condition 2 $0 == 2"] == ["breakpoint 2 stops if $0 == 2"]
    assert out["condition 2"] == ["breakpoint 2 is now unconditional"]
    here = stop(out["c"])[0]
    assert stop(out["rstep"])[0] == here - 1
    assert stop(out["rs 2"])[0] == here - 3
    assert stop(out["rnext"])[0] < here - 3
    # back to the invoke that made this frame, or a breakpoint hit inside the frame before that
    rf = stop(out["rfinish"])
    assert rf[0] < here - 4 and (rf[4] == "step" and rf[2] == 15 or rf[4] == "breakpoint 3")
    assert stop(out["rcontinue"])[4] == "start of history"
    assert stop(out["goto 30"])[0] == 30
    assert stop(out["run-to @sum_up:26"])[4] == "breakpoint 3"  # line 9 comes first
    assert out["last-write $7"] == ["error: $7 has not been written in this frame"]
    assert out["info history"][0].startswith("step ")
    assert stop(out["restart"])[0] == 0
    assert out["delete"][0].startswith("deleted ")
    step, func, pc, text, why = stop(out["c #2"])
    assert why == "finished" and text == "returned 6" and pc is None
    assert out["nonsense"] == ["error: unknown command 'nonsense' (try `help`)"]
    assert out["goto"] == ["error: usage: goto STEP"]


def test_gdb_short_forms_and_aliases(tmp_path):
    script = "b @sum_up\nc\ns\nn\nf\nbt\np $0\nreverse-step\nreverse-continue\nwhere\n"
    proc = debug(tmp_path, SUM_UP, ["2"], script)
    assert proc.returncode == 0
    out = outputs(proc.stdout)
    assert stop(out["c"])[4] == "breakpoint 1"
    assert stop(out["s"])[4] == "step"
    assert out["bt"] == out["where"] or out["where"][0].startswith("#0")
    assert out["p $0"][0].startswith("$0 = ")
    assert stop(out["reverse-continue"])[4] in ("breakpoint 1", "start of history")


def test_stop_reasons_error_and_finished(tmp_path):
    prog = str(PROGRAMS / "option.relay")
    proc = debug(tmp_path, prog, ["17", "0"], "c\nrstep\nc\ninfo registers\n")
    assert proc.returncode == 1  # the program failed, every command succeeded
    assert proc.stderr == "rvmdbg: the program failed while running\n"
    out = outputs(proc.stdout)
    step, func, pc, text, why = stop(out["c"])
    assert why == "error" and func == "expect"
    assert any("match" in line for line in out["c"][1:])
    assert stop(out["rstep"])[0] == step - 1
    assert stop(out["c #2"])[0] == step
    assert out["info registers"][0].startswith("registers of @expect")


def test_watchpoint_and_start_of_history(tmp_path):
    proc = debug(tmp_path, SUM_UP, ["2"], "rstep\nb @sum_up\nc\nwatch $7\nc\nrc\nrc\nrc\n")
    out = outputs(proc.stdout)
    assert stop(out["rstep"])[4] == "start of history"
    why = stop(out["c #2"])[4]
    assert why.startswith("watchpoint") or why.startswith("breakpoint")
    assert stop(out["rc #3"])[4] in ("start of history",) or stop(out["rc #3"])[4].startswith(("breakpoint", "watchpoint"))


def test_batch_from_file_and_history_flag(tmp_path):
    script = tmp_path / "cmds.txt"
    script.write_text("# a comment\n\ncontinue\ninfo history\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", SUM_UP, "4", "--batch",
                           str(script), "--history-mb", "1"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = outputs(proc.stdout)
    assert list(out) == ["continue", "info history"]
    assert "of 1 MB" in out["info history"][0]


def test_usage_errors(tmp_path):
    proc = debug(tmp_path, str(tmp_path / "missing.relay"), [], "c\n")
    assert proc.returncode == 2
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", SUM_UP, "--batch",
                           str(tmp_path / "no-such-script.txt")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert proc.returncode == 2 and "no-such-script.txt" in proc.stderr
    proc = debug(tmp_path, SUM_UP, ["3"], "c\n", "--entry", "nope")
    assert proc.returncode == 2 and "nope" in proc.stderr


@pytest.mark.parametrize("line", ["continue 0", "next 0", "rnext 0", "step 0", "rstep -2"])
def test_a_motion_count_below_one_is_an_error_line(tmp_path, line):
    proc = debug(tmp_path, SUM_UP, ["3"], f"{line}\ninfo frame\n")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error: the count must be at least 1" in proc.stdout


def test_rvmx_executable(tmp_path):
    rvmx = tmp_path / "sum_up.rvmx"
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "compile", SUM_UP, "-o", str(rvmx)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    proc = debug(tmp_path, str(rvmx), ["5"], "b @sum_up:15\nc\nc\nrc\nf\n")
    assert proc.returncode == 0, proc.stderr
    out = outputs(proc.stdout)
    assert stop(out["c"])[4] == "breakpoint 1"
    assert stop(out["rc"])[0] == stop(out["c"])[0]


def test_breakpoints_survive_a_restart_of_the_process(tmp_path):
    proc = debug(tmp_path, SUM_UP, ["3"], "break 9 if $0 == 1\nbreak @sum_up:15\ndisable 2\n",
                 "--saved-breakpoints")
    assert proc.returncode == 0
    files = list((tmp_path / "config" / "rvmdbg" / "breakpoints").glob("*.json"))
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    assert [b["kind"] for b in data["breakpoints"]] == ["line", "instruction"]
    proc = debug(tmp_path, SUM_UP, ["3"], "info breakpoints\nc\np $0\n", "--saved-breakpoints")
    out = proc.stdout.splitlines()
    assert out[0].startswith("note: restored breakpoint 1") and "if $0 == 1" in out[0]
    assert out[1].startswith("note: restored breakpoint 2") and "(disabled)" in out[1]
    got = outputs(proc.stdout)
    assert stop(got["c"])[4] == "breakpoint 1"
    assert got["p $0"] == ["$0 = 1    (int32)"]


def test_line_breakpoint_follows_its_line_after_an_edit(tmp_path):
    prog = tmp_path / "sum_up.relay"
    text = (PROGRAMS / "sum_up.relay").read_text()
    prog.write_text(text)
    line = next(i + 1 for i, s in enumerate(text.split("\n")) if "@sum_up(%n - 1)" in s)
    proc = debug(tmp_path, str(prog), ["3"], f"break {line}\n", "--saved-breakpoints")
    assert proc.returncode == 0 and f"at {prog}:{line}" in proc.stdout
    # insert three comment lines above the function: the line moves down by three
    lines = text.split("\n")
    at = next(i for i, s in enumerate(lines) if s.startswith("def @sum_up"))
    lines[at:at] = ["// added", "// more", "// lines"]
    prog.write_text("\n".join(lines))
    proc = debug(tmp_path, str(prog), ["3"], "info breakpoints\n", "--saved-breakpoints")
    assert f"moved to line {line + 3}" in proc.stdout
    assert f"{prog}:{line + 3}" in proc.stdout


def test_limit_reason(tmp_path):
    proc = debug(tmp_path, SUM_UP, ["30"], "continue\nrstep\n", "--max-steps", "50")
    out = outputs(proc.stdout)
    assert stop(out["continue"])[0] == 50 and stop(out["continue"])[4] == "limit"
    assert any("max_steps" in line for line in out["continue"][1:])
    assert stop(out["rstep"])[0] == 49


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_interrupts_a_running_continue(tmp_path):
    import signal
    import time
    script = tmp_path / "cmds.txt"
    script.write_text("continue\ninfo history\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.Popen([sys.executable, "-m", "rvmdbg", "debug",
                             str(PROGRAMS / "fib.relay"), "32", "--batch", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)
    deadline = time.time() + 60
    # wait until the continue is running (its echo is printed first)
    first = proc.stdout.readline()
    assert first == "(rvmdbg) continue\n"
    time.sleep(0.5)
    assert time.time() < deadline
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    lines = rest.splitlines()
    assert stop(lines)[4] == "interrupted" and "info history" not in rest


def test_quit_ends_a_batch_script_early(tmp_path):
    import os, subprocess, sys
    script = "step\nquit\nstep\n"
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))  # no saved breakpoints
    out = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", "programs/fib.relay", "3",
                          "--batch", "-"], input=script, capture_output=True, text=True, env=env,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("(step)") == 1 and "(rvmdbg) quit" in out.stdout


@pytest.mark.parametrize("program, args, script, code", [
    ("sum_up.relay", ["3"], "b @sum_up\nc\nc\n", 0),   # all succeeded, the program finished
    ("sum_up.relay", ["3"], "rstep\n", 0),               # a stop at the start is no error
    ("option.relay", ["17", "0"], "c\n", 1),             # the program failed
    ("option.relay", ["17", "0"], "c\nprint $999\n", 2),  # a command failed too: it comes first
])
def test_batch_exit_status_says_whether_everything_succeeded(tmp_path, program, args, script,
                                                             code):
    proc = debug(tmp_path, str(PROGRAMS / program), args, script)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
