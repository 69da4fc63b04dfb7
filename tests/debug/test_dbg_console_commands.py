"""The console's commands in the shared command language (so batch mode has them too):
display / undisplay / info display, search across every function, set logging, and the
completion of commands, @functions, $registers and op: names."""
from __future__ import annotations

import pytest

from rvmdbg.debug import CommandInterpreter, DebugSession
from rvmdbg.debug.commands import search_bytecode

from dbg_helpers import program


@pytest.fixture
def interp():
    exe, args = program("fib.relay", ["5"])
    return CommandInterpreter(DebugSession(exe, args))


def test_display_is_shown_at_every_stop_until_undisplayed(interp):
    assert interp.execute("display $0") == "1: $0 = 5"
    assert interp.execute("display $0 + 1") == "2: $0 + 1 = 6"
    out = interp.execute("step 2").splitlines()
    assert out[1:] == ["1: $0 = 5", "2: $0 + 1 = 6"]
    assert interp.execute("info display") == "1: $0\n2: $0 + 1"
    assert interp.execute("undisplay 1") == "deleted display 1"
    assert interp.execute("next").splitlines()[1:] == ["2: $0 + 1 = 6"]
    assert interp.execute("undisplay 7").startswith("error: no display 7")
    assert interp.execute("undisplay") == "deleted 1 display"
    assert len(interp.execute("step").splitlines()) == 1


def test_a_display_that_cannot_be_shown_says_why(interp):
    assert interp.execute("display $1 == ").startswith("error:")  # refused at once
    interp.execute("display $40")
    assert "not in this frame" in interp.execute("display")
    interp.execute("step")
    interp.execute("display $3")
    assert "2: $3 = <empty>" in interp.execute("display")  # a refused one takes no number


def test_search_counts_matches_across_functions(interp):
    out = interp.execute("search invoke").splitlines()
    assert out[0] == "7 matches for 'invoke' in 2 functions"
    assert "  @main:0: invoke $1 VMFunc[0]($0)  // @fib" in out
    assert interp.execute("search nothing-like-this") == \
        "no match for 'nothing-like-this' in any function"
    assert search_bytecode(interp.session.exe, "INVOKE $11")[0][:2] == (0, 14)


def test_set_logging_keeps_the_commands_and_their_output(interp, tmp_path):
    log = tmp_path / "session.txt"
    assert interp.execute(f"set logging {log}").startswith(f"logging to {log}")
    interp.execute("step")
    assert interp.execute("set logging off") == f"done logging to {log}"
    interp.execute("step")
    text = log.read_text()
    assert "(rvmdbg) step\n[step 1] @fib pc=0" in text and "[step 2]" not in text
    assert interp.execute("set logging on").startswith(f"logging to {log}")  # same file again
    interp.execute("set logging off")
    assert interp.execute("set logging file").startswith("error: usage")
    assert interp.execute(f"set logging on {tmp_path}/no/such/dir/x").startswith("error: cannot log")


@pytest.mark.parametrize("text, start, words", [
    ("b", 0, ["backtrace", "break"]),
    ("break @f", 6, ["@fib"]),
    ("print $", 6, ["$0", "$1"]),
    ("info di", 5, ["display"]),
    ("set logging o", 12, ["off", "on"]),
    ("break op:allocs", 6, ["op:AllocStorage"]),
    ("step 3 x", 7, []),
])
def test_completion(interp, text, start, words):
    assert interp.complete(text) == (start, words)
