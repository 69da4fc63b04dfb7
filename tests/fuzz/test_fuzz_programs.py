"""A mutation fuzzer of programs and arguments: real programs (programs/ and TVM's printed
corpus) with tokens deleted, duplicated or swapped, numbers replaced by extreme literals,
dtypes and shapes changed, run through every command that reads a program, with arguments
drawn from extreme and malformed texts. Each case runs in a child process under a memory cap
(tests/fuzz/child.py): no traceback, an exit code of the contract (0, 1, 2), never a hang or
an out-of-memory kill.

Hypothesis draws the mutations; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from harness import assert_clean, brief, long, run_cases

ROOT = Path(__file__).resolve().parents[2]
# programs/ run with the arguments of their `// args:` line; TVM's printed corpus (no such
# line) is read, checked and compiled
RUNNABLE = {p.name: p.read_text() for p in sorted((ROOT / "programs").glob("*.relay"))}
PRINTED = {p.name: p.read_text()
           for p in sorted((ROOT / "tests" / "corpus" / "tvm").glob("*.relay"))[:25]}

TOKEN = re.compile(r"%?[A-Za-z_][\w.]*|@\w+|-?\d+(?:\.\d+)?(?:e-?\d+)?[a-z]*\d*|\S")
NUMBER = re.compile(r"(?<![\w%@.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?:f|i|u)?\d*")
DTYPE = re.compile(r"\b(?:float(?:16|32|64)|u?int(?:8|16|32|64)|bool)\b")
EXTREME_LITERALS = ["inff", "-inff", "nanf", "0", "-0", "2147483648", "-2147483649",
                    "99999999999999999999999", "300i8", "65536u16", "1e309", "1e39f", "3e-46f",
                    "0.5f16", "True", "1" * 5000, "4294967296i64", "-9223372036854775809i64"]
DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
DIMS = ["0", "1", "?", "2147483648", "-1", "1000000", "65536"]
ARGUMENTS = ["0", "1", "-1", "17", "inff", "nanf", "2147483648", "99999999999999999999",
             "True", "()", "(1, 2f)", "[]", "[[]]", "[1, [2]]", "[[1, 2], [3]]", "[1e309]",
             "[" + ",".join(["1"] * 300) + "]", "Cons(1, Nil)", "Nil", "Some(3)", "@none.npy",
             "@x.npz:NAME", "\x1b[2J", "[" * 200 + "]" * 200, "ref(1)", "fn () { 1 }",
             "(" * 300 + "1" + ")" * 300, "-", "--", "@/dev/zero", "@/dev/null"]
LIMITS = ["--max-steps", "20000", "--max-depth", "200", "--max-bytes", "16000000"]
RUNNING = [["run", *LIMITS], ["run", "--json", *LIMITS], ["run", "--executor", "interp", *LIMITS],
           ["run", "--executor", "graph", *LIMITS], ["trace", *LIMITS]]
READING = [["check"], ["compile"], ["compile", "--passes"], ["compile", "--reuse-registers"],
           ["graph"]]


def mutate(draw, text: str) -> str:
    """One to three edits of a program's text (after its version header, which has tests of
    its own)."""
    header, _, text = text.partition("\n")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "number", "dtype", "dim",
                                     "line"]))
        tokens = [m.span() for m in TOKEN.finditer(text)]
        if not tokens:
            break
        if kind in ("delete", "duplicate", "swap"):
            i = draw(st.integers(0, len(tokens) - 1))
            j = min(len(tokens) - 1, i + draw(st.integers(0, 3)))
            a, b = tokens[i][0], tokens[j][1]
            if kind == "delete":
                text = text[:a] + text[b:]
            elif kind == "duplicate":
                text = text[:b] + " " + text[a:b] + text[b:]
            else:
                k = draw(st.integers(0, len(tokens) - 1))
                c, d = tokens[k]
                if d <= a:
                    text = text[:c] + text[a:b] + text[d:a] + text[c:d] + text[b:]
        elif kind == "number":
            spots = [m.span() for m in NUMBER.finditer(text)]
            if spots:
                a, b = draw(st.sampled_from(spots))
                text = text[:a] + draw(st.sampled_from(EXTREME_LITERALS)) + text[b:]
        elif kind == "dtype":
            spots = [m.span() for m in DTYPE.finditer(text)]
            if spots:
                a, b = draw(st.sampled_from(spots))
                text = text[:a] + draw(st.sampled_from(DTYPES)) + text[b:]
        elif kind == "dim":
            spots = [m.span() for m in re.finditer(r"(?<=[(,\s])\d+(?=[,)])", text)]
            if spots:
                a, b = draw(st.sampled_from(spots))
                text = text[:a] + draw(st.sampled_from(DIMS)) + text[b:]
        else:
            lines = text.split("\n")
            i, j = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return header + "\n" + text


@st.composite
def cases(draw, n: int):
    out = []
    for _ in range(n):
        runs = draw(st.integers(0, 3)) > 0
        texts = RUNNABLE if runs else PRINTED
        name = draw(st.sampled_from(sorted(texts)))
        text = mutate(draw, texts[name]) if draw(st.integers(0, 3)) else texts[name]
        command = draw(st.sampled_from(RUNNING if runs else READING))
        # mostly the program's own arguments (its `// args:` line), sometimes drawn ones
        args = draw(st.lists(st.sampled_from(ARGUMENTS), max_size=3)) \
            if runs and draw(st.integers(0, 3)) == 0 else []
        out.append({"argv": [*command, name, *(["--", *args] if args else [])],
                    "files": {name: text}})
    return out


def _campaign(batch, tmp_path):
    outcomes = run_cases(batch, tmp_path / "config")
    return assert_clean(batch, outcomes)


@brief()
@given(batch=cases(20))
def test_mutated_programs_and_arguments_fail_cleanly(batch, tmp_path):
    _campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(60)
@given(batch=cases(50))
def test_mutated_programs_and_arguments_long(batch, tmp_path):
    _campaign(batch, tmp_path)
