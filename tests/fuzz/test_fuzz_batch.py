"""A batch-command fuzzer: scripts of random debugger commands (every command of the language
with arguments drawn from valid, extreme and malformed values: huge numbers and ranges, deep
conditions, control characters, registers that do not exist), run by `rvmdbg debug PROGRAM
--batch -` in a child process under a memory cap. The script always ends with an exit code
of the contract (0 all succeeded, 1 the program failed, 2 a command failed), no traceback,
never a hang; the interpreter answers each line.

Hypothesis draws the scripts; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from harness import assert_clean, brief, long, run_cases

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ["sum_up.relay", "list_ops.relay", "option.relay", "refs.relay", "closures.relay",
            "quicksort.relay", "tuples.relay", "mlp.relay"]
TEXTS = {name: (ROOT / "programs" / name).read_text() for name in PROGRAMS}

WORDS = ["break", "b", "delete", "d", "disable", "enable", "condition", "step", "s", "next",
         "n", "finish", "f", "continue", "c", "rstep", "rs", "rnext", "rfinish", "rcontinue",
         "goto", "run-to", "info", "backtrace", "bt", "print", "p", "heap", "deps",
         "last-write", "watch", "list", "l", "source", "frame", "up", "down", "restart", "help",
         "display", "undisplay", "search", "set", "bogus", "quit"]
ARGS = ["1", "0", "-1", "3", "2-5", "1-100000000000", "9" * 30, "1" * 5000, "$0", "$1", "$3",
        "$99999", "$-1", "$x", "$" + "9" * 40, "@main", "@sum_up", "@map:2", "@nope",
        "@main:999", "@main:-1", "op:AllocADT", "op:Nope", "registers", "frame", "breakpoints",
        "history", "display", "if", "$0 == 1", "$0 == inff", "$0 < 2147483648", "==", "and",
        "or", "not", "Nil", "Cons(1, Nil)", "(", ")", "(" * 500 + "1" + ")" * 500,
        "change", "read", "7", "x", "", "\t", "é", "#", "\x1b[2J", "[0, :, 3]", "[" * 100,
        "logging", "on", "off", "file", "/dev/full", "9:9:9", "-0", "0x10", "1e3", "nanf"]


@st.composite
def scripts(draw, n: int):
    out = []
    for _ in range(n):
        name = draw(st.sampled_from(PROGRAMS))
        lines = []
        for _ in range(draw(st.integers(1, 12))):
            word = draw(st.sampled_from(WORDS))
            args = draw(st.lists(st.sampled_from(ARGS), max_size=4))
            lines.append(" ".join([word, *args]))
        out.append({"argv": ["debug", "--max-steps", "50000", "--max-depth", "300", name,
                             "--batch", "-"],
                    "files": {name: TEXTS[name]}, "stdin": "\n".join(lines) + "\n"})
    return out


def _campaign(batch, tmp_path):
    outcomes = run_cases(batch, tmp_path / "config")
    seen = assert_clean(batch, outcomes)
    for case, out in zip(batch, outcomes):
        # as gdb's batch mode: exit 2 exactly when a command printed an `error:` line
        assert (out["code"] == 2) == (out["error_lines"] > 0), (case, out)
    return seen


@brief()
@given(batch=scripts(15))
def test_random_batch_scripts_end_with_a_contract_exit_code(batch, tmp_path):
    _campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(60)
@given(batch=scripts(40))
def test_random_batch_scripts_long(batch, tmp_path):
    _campaign(batch, tmp_path)
