"""Regression tests for the command-line defects of issue 12 ("a screen a user can trust"):
each test is named after what it checks and reproduces the defect as it was reported."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rvmdbg import cli
from rvmdbg.program import executable_of, load_program, program_arguments

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "programs"


def _process(*argv, stdin=subprocess.DEVNULL, input=None, env=None):
    """`rvmdbg ARGV` as a process with no terminal (stdin and stdout are pipes or files)."""
    full = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    if input is not None:
        stdin = None
    return subprocess.run([sys.executable, "-m", "rvmdbg", *map(str, argv)], stdin=stdin,
                          input=input, capture_output=True, text=True, env=full, timeout=120,
                          cwd=ROOT)


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return code, out, err


# 1. an unknown value of an environment setting: one line naming the valid values
@pytest.mark.parametrize("name, value", [("TEXTUAL_COLOR_SYSTEM", "16"),
                                         ("TEXTUAL_ANIMATIONS", "some"),
                                         ("TEXTUAL_THEME", "nope"), ("ESCDELAY", "fast")])
def test_an_unknown_environment_value_is_a_one_line_error(monkeypatch, capsys, name, value):
    from rvmdbg.tui.app import run_screen
    monkeypatch.setenv(name, value)
    code = run_screen(str(PROGRAMS / "minivm.relay"), [])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: {name}=") and "use one of" in err or "whole number" in err


def test_valid_environment_values_pass():
    from rvmdbg.tui.terminal import environment_error
    assert environment_error({"TEXTUAL_COLOR_SYSTEM": "standard", "TEXTUAL_ANIMATIONS": "none",
                              "TEXTUAL_THEME": "nord", "ESCDELAY": "25", "NO_COLOR": "1"}) is None


# 2. no terminal: exit 2 with a message, or batch mode when commands come on stdin
@pytest.mark.parametrize("argv", [("debug", "programs/fib.relay"), ("programs/fib.relay",)])
def test_without_a_terminal_the_screen_does_not_open(argv):
    proc = _process(*argv)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "needs a terminal" in proc.stderr and "\x1b[" not in proc.stderr


def test_commands_on_stdin_without_a_terminal_run_as_batch():
    proc = _process("debug", "programs/fib.relay", input="step\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("(rvmdbg) step\n[step 1] ") and "\x1b[" not in proc.stdout


# 3. batch mode neither reads nor writes saved breakpoints unless asked; one breakpoint per place
README_BATCH = "break @fib\ncontinue\nstep 3\ndeps\nrcontinue\ninfo breakpoints\n"


def test_batch_results_do_not_depend_on_earlier_runs(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    runs = [_process("debug", "programs/fib.relay", "4", "--batch", "-", input=README_BATCH,
                     env=env) for _ in range(3)]
    assert all(r.returncode == 0 for r in runs) and runs[0].stdout == runs[2].stdout
    assert not (tmp_path / "rvmdbg").exists()


def test_saved_breakpoints_are_merged_not_repeated(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    for _ in range(3):
        proc = _process("debug", "programs/fib.relay", "4", "--batch", "-", "--saved-breakpoints",
                        input=README_BATCH, env=env)
        assert proc.returncode == 0, proc.stderr
    table = proc.stdout.split("(rvmdbg) info breakpoints\n")[1].splitlines()
    assert len(table) == 2 and "@fib" in table[1]
    assert "breakpoint 1 at @fib (already set)" in proc.stdout


def test_identical_breakpoints_are_one():
    from rvmdbg.debug import DebugSession
    exe = executable_of(load_program(str(PROGRAMS / "fib.relay")))
    s = DebugSession(exe, program_arguments(load_program(str(PROGRAMS / "fib.relay")),
                                                "main", ["3"]))
    a = s.breakpoints.add("@fib")
    assert s.breakpoints.add("@fib") is a and len(s.breakpoints) == 1
    assert s.breakpoints.add("@fib", "$0 == 1") is not a and len(s.breakpoints) == 2


# 9. last-write follows the frame of the register asked about and says which frame
def test_last_write_of_a_parameter_names_the_callee_and_the_call():
    proc = _process("debug", "programs/fib.relay", "--batch", "-",
                    input="goto 14\nlast-write $0\ngoto 20\nlast-write $2\n")
    out = proc.stdout.split("(rvmdbg) ")
    assert out[2].splitlines()[2].strip() == (
        "$0 of @fib (frame #0 at step 14) is a parameter, set by this call in @fib: "
        "its $10 becomes $0")
    assert out[2].startswith("last-write $0\n[step 13] @fib pc=14: invoke $11")
    assert "$2 of @fib (frame #0 at step 20) is written by this instruction" in out[4]


# 10. a saved executable takes the `// args:` line as its default; a wrong count is exit 2
def test_a_saved_executable_uses_its_args_line(tmp_path, capsys):
    rvmx = tmp_path / "fib.rvmx"
    assert rvmdbg(capsys, "compile", PROGRAMS / "fib.relay", "-o", rvmx)[0] == 0
    assert rvmdbg(capsys, "run", rvmx)[:2] == (0, "55\n")
    code, out, err = rvmdbg(capsys, "run", rvmx, "3", "4")
    assert code == 2 and err == "error: @main takes 1 argument, got 2\n"


# 11. options anywhere on the command line, also before PROGRAM or the command
@pytest.mark.parametrize("argv, command, ascii_", [
    (["--ascii", "programs/fib.relay"], "screen", True),
    (["--no-mouse", "programs/fib.relay", "3"], "screen", None),
    (["programs/fib.relay", "--unicode"], "screen", False),
    (["--history-mb", "8", "debug", "programs/fib.relay"], "debug", None)])
def test_options_go_anywhere(argv, command, ascii_):
    ns = cli.parse_command_line(cli._command_first(argv))
    assert ns.command == command and ns.program == "programs/fib.relay"
    assert getattr(ns, "ascii", None) is ascii_


def test_an_option_before_the_command(capsys):
    assert rvmdbg(capsys, "--json", "run", PROGRAMS / "fib.relay", "5")[1].startswith('{"result"')


# 15. ASCII glyphs where the locale is not UTF-8 or on the Linux console
@pytest.mark.parametrize("env, ascii_", [
    ({"LANG": "C", "LC_ALL": "C", "TERM": "xterm"}, True),
    ({"LANG": "en_US.UTF-8", "TERM": "linux"}, True),
    ({"LANG": "en_US.UTF-8", "TERM": "xterm-256color"}, False),
    ({"LC_ALL": "de_DE.utf8", "LANG": "C"}, False),
    ({"LC_ALL": "", "LC_CTYPE": "C.UTF-8", "TERM": "screen"}, False),
    ({"LANG": "en_US.ISO-8859-1"}, True),
    ({}, True)])
def test_ascii_glyphs_are_chosen_from_the_locale_and_terminal(env, ascii_):
    from rvmdbg.tui.terminal import wants_ascii
    assert wants_ascii(env) is ascii_


# 16. a trimmed history says so and how to keep more
def test_the_start_of_a_trimmed_history_says_why():
    from rvmdbg.debug import DebugSession
    program = load_program(str(PROGRAMS / "fib.relay"))
    s = DebugSession(executable_of(program), program_arguments(program, "main", ["14"]),
                     history_bytes=40_000, interval=64)
    s.cont()
    assert s.history_start > 0
    ev = s.goto(0)
    assert ev.reason == "start of history" and ev.step == s.history_start
    assert "dropped to stay within" in ev.message and "--history-mb" in ev.message
    full = DebugSession(executable_of(program), program_arguments(program, "main", ["5"]))
    full.cont()
    assert full.goto(0).message is None


# 17. messages: plurals, one prefix, a hint that agrees, a header-only file
def test_messages_count_in_the_singular(capsys, tmp_path):
    from rvmdbg.debug import CommandInterpreter, DebugSession
    program = load_program(str(PROGRAMS / "fib.relay"))
    s = DebugSession(executable_of(program), program_arguments(program, "main", ["3"]))
    i = CommandInterpreter(s)
    i.execute("break @fib")
    assert i.execute("delete") == "deleted 1 breakpoint"
    assert i.execute("delete") == "no breakpoints or watchpoints to delete"
    i.execute("break @fib")
    i.execute("watch $0")
    assert i.execute("delete") == "deleted 1 breakpoint and 1 watchpoint"


def test_a_file_without_main_says_so(capsys, tmp_path):
    path = tmp_path / "header.relay"
    path.write_text('#[version = "0.0.5"]\n')
    code, _, err = rvmdbg(capsys, "run", path)
    assert code == 2 and "no function @main to run; the program defines no functions" in err
    assert "args:" not in err


def test_an_unfused_kernel_error_names_the_op_once(capsys, tmp_path):
    path = tmp_path / "div.relay"
    path.write_text('#[version = "0.0.5"]\n// args: 1\ndef @main(%x: int32) -> int32 {\n'
                    '  divide(%x, 0)\n}\n')
    code, _, err = rvmdbg(capsys, "run", path)
    assert code == 1 and "divide: divide:" not in err and "integer division by zero" in err


def test_a_dtype_hint_agrees_with_its_error(capsys, tmp_path):
    path = tmp_path / "mixed.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: int32) -> int32 {\n  divide(%x, 1f)\n}\n')
    code, _, err = rvmdbg(capsys, "check", path)
    assert code == 2 and "hint: write 1 for an int32 literal" in err
    assert "f suffix" not in err


def test_a_motion_at_the_end_says_nothing_moved_and_restart_says_restarted():
    proc = _process("debug", "programs/fib.relay", "3", "--batch", "-",
                    input="continue\nstep\nrestart\n")
    out = proc.stdout.split("(rvmdbg) ")
    assert out[2].splitlines()[1].endswith("(finished)")
    assert "nothing more runs forward" in out[2]
    assert out[3].splitlines()[1].endswith("(restarted)")


def test_the_screen_also_says_a_file_has_no_main(tmp_path):
    path = tmp_path / "header.relay"
    path.write_text('#[version = "0.0.5"]\n')
    proc = _process(path)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("no function @main to run; the program defines no functions")
