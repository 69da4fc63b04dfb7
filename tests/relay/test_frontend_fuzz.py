"""Fuzzing the front end: random text, token soup and mutated real programs either parse or fail
with a RelayError that formats cleanly and points inside the input; never any other exception.
Seeded and brief by default; `pytest -m fuzz` runs each campaign long with new draws."""
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.parser import parse, parse_expr, parse_type

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'

SEEDS = [p.read_text() for p in sorted((ROOT / "programs").glob("*.relay"))] + [
    HEADER + "type List[A] { Cons(A, List[A]), Nil }\n"
    "def @main(%l: List[(int32, float32)]) -> int32 {\n"
    "  %0 = fn (%p: (int32, float32), Primitive=1) -> int32 { %p.0 };\n"
    "  let %r = ref(0);\n"
    "  match? (%l) { Cons(%h, _) => { ref_write(%r, %0(%h)); ref_read(%r) } }\n"
    "}\n",
    HEADER + "def @main(%x: Tensor[(1, ?), float32]) {\n"
    "  /* nested /* comment */ */ reshape(nn.dense(%x, %x, units=3), newshape=[-1, 3])\n"
    "  // trailing\n}\n",
]

TOKENS = [
    "def", "@main", "@f", "(", ")", "{", "}", "[", "]", "%x", "%y", "%0", "%1", "=", "==", ";",
    ",", ".", ":", "->", "=>", "let", "fn", "if", "else", "match", "match?", "type", "extern",
    "_", "ref", "ref_read", "ref_write", "free_var", "0", "1", "-1", "--1", "1.5", "2.5f", "1e-3f",
    "5i64", "300i8", "inff", "True", "False", "Cons", "Nil", "Some", "None", "List", "int32",
    "float32", "Tensor", "?", "add", "nn.dense", "units=3", 'dtype="int32"', "+", "-", "*", "/",
    "<", "<=", ">", ">=", "!=", "/*", "*/", "//", "\n", "#[version = \"0.0.5\"]", "#[metadata]",
    '"s"', "meta[relay.Constant][0]", "%", "@", "#", "!", "$", "\t", "\r\n",
]


def check(text: str) -> None:
    lines = text.count("\n") + 1
    for run in (lambda: parse(text, "fuzz.relay"), lambda: parse_expr(text),
                lambda: load_module(text, "fuzz.relay"), lambda: parse_type(text)):
        try:
            run()
        except RelayError as e:
            out = e.format()
            assert isinstance(out, str) and e.message
            if e.span is not None and e.span.file == "fuzz.relay":
                assert 1 <= e.span.line <= lines and e.span.col >= 1, (e.span, text)
                assert (e.span.end_line, e.span.end_col) >= (e.span.line, e.span.col)


_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
# the suite's campaign: the same 40 draws every run; the long one draws 1,000 new ones
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=_QUIET)
LONG = settings(max_examples=1000, deadline=None, suppress_health_check=_QUIET)


@FUZZ
@given(st.text(max_size=200))
def test_random_text(text):
    check(text)
    check(HEADER + text)


@pytest.mark.fuzz
@LONG
@given(st.text(max_size=200))
def test_random_text_long(text):
    check(text)
    check(HEADER + text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=60), st.sampled_from([" ", "", "\n"]))
def test_token_soup(tokens, sep):
    text = sep.join(tokens)
    check(text)
    check(HEADER + "def @main(%x, %y) {\n" + text + "\n}")


@pytest.mark.fuzz
@LONG
@given(st.lists(st.sampled_from(TOKENS), max_size=60), st.sampled_from([" ", "", "\n"]))
def test_token_soup_long(tokens, sep):
    text = sep.join(tokens)
    check(text)
    check(HEADER + "def @main(%x, %y) {\n" + text + "\n}")


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 12)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "swap"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS + [" ", "(", ")"])) + text[i:]
        elif kind == "replace":
            text = text[:i] + draw(st.text(max_size=3)) + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif j - i >= 2:
            text = text[:i] + text[j - 1] + text[i + 1:j - 1] + text[i] + text[j:]
    return text


@FUZZ
@given(mutated())
def test_mutated_programs(text):
    check(text)


@pytest.mark.fuzz
@LONG
@given(mutated())
def test_mutated_programs_long(text):
    check(text)


def test_seeds_are_valid_programs():
    for text in SEEDS:
        load_module(text, "seed.relay")
