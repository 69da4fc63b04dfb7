"""Tests of the Pygments lexer for Relay: every shipped program lexes cleanly, tokens get the
right kinds, and Pygments finds the lexer through its entry point."""
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import (Comment, Error, Keyword, Name, Number, Operator, Punctuation,
                            String)

from rvmdbg.relay.highlight import GRAPH_VAR, RelayLexer, declared_names

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("*.relay"))
PRELUDE = ROOT / "rvmdbg" / "relay" / "prelude.relay"


def tokens(text: str) -> list:
    """(token type, value) pairs without whitespace."""
    return [(t, v) for t, v in RelayLexer().get_tokens(text) if v.strip()]


def kind_of(text: str, value: str):
    """The token type of the first token whose text is value."""
    for t, v in tokens(text):
        if v == value:
            return t
    raise AssertionError(f"{value!r} not among the tokens of {text!r}")


def test_programs_exist():
    assert len(PROGRAMS) >= 13


@pytest.mark.parametrize("path", PROGRAMS + [PRELUDE], ids=lambda p: p.name)
def test_program_lexes_without_errors(path):
    text = path.read_text()
    toks = list(RelayLexer().get_tokens(text))
    errors = [(t, v) for t, v in toks if t in Error]
    assert errors == []
    # the lexer loses nothing: the token texts spell the input back
    assert "".join(v for _, v in toks).rstrip("\n") == text.rstrip("\n")


def test_pygments_finds_the_lexer():
    assert isinstance(get_lexer_by_name("relay"), RelayLexer)
    assert isinstance(get_lexer_for_filename("prog.relay"), RelayLexer)
    assert isinstance(get_lexer_for_filename("prelude.rly"), RelayLexer)


@pytest.mark.parametrize("word", ["def", "type", "extern"])
def test_declaration_keywords(word):
    text = "def @f() { 0 }\ntype T { A }\nextern type U\n"
    assert kind_of(text, word) in Keyword.Declaration


@pytest.mark.parametrize("word", ["fn", "let", "if", "else", "match", "match?", "ref",
                                  "ref_read", "ref_write"])
def test_keywords(word):
    text = ("def @f(%x) { let %r = ref(%x); ref_write(%r, ref_read(%r)); "
            "let %g = fn (%y) { if (%y) { 1 } else { 2 } }; "
            "let %m = (match (%x) { _ => 0 }); match? (%x) { _ => 1 } }")
    assert kind_of(text, word) in Keyword
    assert kind_of(text, word) not in Keyword.Type


def test_names_and_variables():
    text = "def @main(%x: int32) { %0 = add(%x, 1); @main(%0) }"
    assert kind_of(text, "@main") in Name.Function
    assert kind_of(text, "%x") in Name.Variable
    assert kind_of(text, "%0") is GRAPH_VAR
    assert kind_of(text, "add") in Name.Builtin
    assert kind_of(text, "int32") in Keyword.Type


def test_local_names_may_hold_slashes_but_not_dots():
    toks = tokens("%tf/embeddings.0")
    assert toks[0] == (Name.Variable, "%tf/embeddings")
    assert toks[1] == (Punctuation, ".")
    assert toks[2] == (Number.Integer, "0")


def test_constructors_and_types():
    text = ("type nat { zero, succ(nat) }\n"
            "type Pair[A] { MkPair(A, A) }\n"
            "def @f(%n: nat, %l: List[Tensor[(?, 3), float32]]) -> Pair[nat] {\n"
            "  MkPair(succ(zero), Nil)\n}")
    assert kind_of(text, "nat") in Name.Class
    assert kind_of(text, "List") in Name.Class
    assert kind_of(text, "Pair") in Name.Class
    assert kind_of(text, "A") in Name.Class
    assert kind_of(text, "Tensor") in Keyword.Type
    assert kind_of(text, "float32") in Keyword.Type
    assert kind_of(text, "?") in Operator
    for ctor in ("zero", "succ", "MkPair", "Nil"):
        assert kind_of(text, ctor) in Name.Constant, ctor


def test_declared_names_reads_constructor_lists():
    types, ctors = declared_names(
        "type T[A] {\n  Leaf, // a comment, with a comma\n  Node(T[A], (A, A), fn(A) -> A),\n}")
    assert {"T", "A"} <= types
    assert {"Leaf", "Node"} <= ctors
    assert "fn" not in ctors and "comment" not in ctors


@pytest.mark.parametrize("literal, kind", [
    ("7", Number.Integer), ("5i64", Number.Integer), ("3u8", Number.Integer),
    ("2.5f", Number.Float), ("1f", Number.Float), ("1e-3f", Number.Float),
    ("3f64", Number.Float), ("2f16", Number.Float),
])
def test_number_literals_keep_their_suffix(literal, kind):
    toks = tokens(f"add({literal}, 1)")
    assert (kind, literal) in toks


def test_booleans_and_strings():
    text = 'cast(True, dtype="float32")'
    assert kind_of(text, "True") in Keyword.Constant
    assert kind_of(text, '"float32"') in String
    assert kind_of(text, "dtype") in Name.Attribute


def test_single_quoted_strings_of_an_objects_repr():
    text = "fn (%x, t=Target(kind='llvm', keys={'cpu'})) { %x }"
    assert kind_of(text, "'llvm'") in String
    assert kind_of(text, "'cpu'") in String


def test_operators():
    text = "%a + %b - %c * %d / %e < %f <= %g > %h >= %i == %j != %k"
    ops = [v for t, v in tokens(text) if t in Operator]
    assert ops == ["+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!="]
    arrows = [v for t, v in tokens("fn (%x) -> int32 { match (%x) { _ => 1 } }") if t in Operator]
    assert arrows == ["->", "=>"]


def test_comments_nest():
    text = "/* outer /* inner */ still comment */ 1 // rest\n2"
    toks = tokens(text)
    comment = "".join(v for t, v in toks if t in Comment.Multiline)
    assert comment == "/* outer /* inner */ still comment */"
    assert (Comment.Single, "// rest") in toks
    assert [v for t, v in toks if t in Number] == ["1", "2"]


def test_attributes_and_metadata():
    text = '#[version = "0.0.5"]\ndef @f() { 1 }\n#[metadata]\n{"root": 1, "nodes": []}\n'
    toks = tokens(text)
    assert toks[0] == (Comment.Preproc, "#[")
    assert (Name.Attribute, "version") in toks
    assert (String.Double, '"0.0.5"') in toks
    assert toks[-1][0] in Comment.Preproc and "nodes" in toks[-1][1]
    assert not any(t in Error for t, _ in toks)


def test_unknown_characters_are_errors():
    assert any(t in Error for t, _ in tokens("%x $ %y"))
