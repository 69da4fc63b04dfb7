"""The loader: the prelude's definitions a program reaches are merged in, the program's own
definitions win, unreadable files are clean errors, and `// args:` defaults are read."""
from pathlib import Path

import pytest

from rvmdbg.relay import loader
from rvmdbg.relay.ast import Call, ConstructorRef, GlobalVar
from rvmdbg.relay.diagnostics import NameResolutionError, RelayError
from rvmdbg.relay.loader import load_file, load_module, program_default_args
from rvmdbg.relay.types import TypeCall, scalar

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'

# A small prelude of known shape, so these tests do not depend on the shipped prelude's details.
MINI_PRELUDE = HEADER + """
type List[A] { Cons(A, List[A]), Nil }
type Option[A] { Some(A), None }
type Tree[A] { Rose(A, List[Tree[A]]) }
type nat { zero, succ(nat) }
def @id[A](%x: A) -> A { %x }
def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %xs: List[B]) -> A {
  match (%xs) { Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t), Nil => %acc }
}
def @sum(%xs: List[int32]) -> int32 { @foldl(fn (%a: int32, %b: int32) { %a + %b }, 0, %xs) }
def @size[A](%t: Tree[A]) -> int32 {
  match (%t) { Rose(_, %kids) => @foldl(fn (%n: int32, %k: Tree[A]) { %n + @size(%k) }, 1, %kids) }
}
def @hd[A](%xs: List[A]) -> A { match? (%xs) { Cons(%h, _) => %h } }
def @get[A](%o: Option[A], %d: A) -> A { match (%o) { Some(%v) => %v, None => %d } }
def @nat_to_int(%n: nat) -> int32 { match (%n) { zero => 0, succ(%m) => 1 + @nat_to_int(%m) } }
"""


@pytest.fixture
def mini_prelude(tmp_path, monkeypatch):
    path = tmp_path / "prelude.relay"
    path.write_text(MINI_PRELUDE)
    monkeypatch.setattr(loader, "PRELUDE_PATH", path)
    return path


def load(text, **kw):
    return load_module(HEADER + text, "p.relay", **kw)


def test_only_reached_prelude_definitions_are_merged(mini_prelude):
    m = load("def @main(%l: List[int32]) -> int32 { @sum(%l) }")
    assert list(m.functions) == ["foldl", "sum", "main"]
    assert list(m.type_defs) == ["List"]
    assert set(m.constructors) == {"Cons", "Nil"}
    assert m.functions["sum"].span.file == str(mini_prelude)
    assert m.source.name == "p.relay"


def test_reachability_is_transitive_through_types_and_functions(mini_prelude):
    m = load("def @main(%t: Tree[int32]) -> int32 { @size(%t) }")
    assert set(m.functions) == {"size", "foldl", "main"}
    assert list(m.type_defs) == ["List", "Tree"]  # Tree's constructor uses List
    m = load("def @main() -> int32 { @nat_to_int(succ(zero)) }")
    assert set(m.type_defs) == {"nat"} and set(m.functions) == {"nat_to_int", "main"}


def test_constructor_use_brings_its_type(mini_prelude):
    m = load("def @main() { Some(1) }")
    assert list(m.type_defs) == ["Option"] and set(m.constructors) == {"Some", "None"}
    body = m.functions["main"].body
    assert isinstance(body.op, ConstructorRef) and body.op.constructor is m.constructors["Some"]
    assert m.functions.keys() == {"main"}


def test_nothing_reached_nothing_merged(mini_prelude):
    m = load("def @main() -> int32 { 1 }")
    assert list(m.functions) == ["main"] and m.type_defs == {} and m.constructors == {}


def test_programs_own_definitions_take_precedence(mini_prelude):
    m = load("type List[A] { Cons(A, List[A]), Nil }\n"
             "def @id(%x: int32) -> int32 { %x + 1 }\n"
             "def @main(%l: List[int32]) -> int32 { @id(1) }")
    assert m.functions["id"].span.file == "p.relay"
    assert m.type_defs["List"].span.file == "p.relay"
    assert m.constructors["Cons"] is m.type_defs["List"].constructors[0]
    assert set(m.functions) == {"id", "main"}


def test_prelude_function_calls_the_programs_redefinition_by_name(mini_prelude):
    m = load("def @foldl(%f: fn (int32, int32) -> int32, %acc: int32, %xs: List[int32]) -> int32 "
             "{ %acc }\ndef @main(%l: List[int32]) -> int32 { @sum(%l) }")
    assert m.functions["foldl"].span.file == "p.relay"
    assert m.functions["sum"].span.file == str(mini_prelude)
    assert set(m.functions) == {"foldl", "sum", "main"}


def test_prelude_function_on_a_redefined_type_is_left_out(mini_prelude):
    with pytest.raises(NameResolutionError) as info:
        load("type List[A] { Cons(A, List[A]), Nil }\n"
             "def @main(%l: List[int32]) -> int32 {\n  @sum(%l)\n}")
    e = info.value
    assert e.message == "the prelude function @sum is not available here"
    assert "this program defines its own type List" in e.hint
    assert e.format().splitlines()[0] == "p.relay:4:3: error: the prelude function @sum is not available here"


def test_prelude_type_whose_constructor_is_redefined_is_left_out(mini_prelude):
    m = load("type Maybe { Some(int32), Nothing }\ndef @main() { Some(1) }")
    assert m.constructors["Some"].type_name == "Maybe" and "Option" not in m.type_defs
    with pytest.raises(NameResolutionError) as info:
        load("type Maybe { Some(int32), Nothing }\ndef @main(%o: Option[int32]) { 1 }")
    assert "type Option is not available" in info.value.message
    assert "its own constructor Some" in info.value.hint


def test_type_depending_on_a_redefined_type_is_left_out(mini_prelude):
    with pytest.raises(NameResolutionError) as info:
        load("type List[A] { Cons(A, List[A]), Nil }\ndef @main() { Rose(1, Nil) }")
    assert "Rose (of type Tree)" in info.value.message
    assert "uses the prelude type List" in info.value.hint


def test_without_the_prelude_its_names_are_unknown(mini_prelude):
    with pytest.raises(NameResolutionError, match="undefined global function @sum"):
        load("def @main(%l) { @sum(%l) }", prelude=False)
    with pytest.raises(NameResolutionError, match="unknown type List"):
        load("def @main(%l: List[int32]) { 1 }", prelude=False)


def test_missing_prelude_file_loads_without_it(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "PRELUDE_PATH", tmp_path / "nope.relay")
    assert list(load("def @main() { 1 }").functions) == ["main"]
    with pytest.raises(NameResolutionError):
        load("def @main() { Nil }")


def test_errors_in_the_program_still_point_at_the_program(mini_prelude):
    with pytest.raises(RelayError) as info:
        load("def @main() {\n  @sum(Cons(1, Nill))\n}")
    assert info.value.span.file == "p.relay" and info.value.span.line == 3


def test_shipped_prelude_provides_the_documented_names():
    m = load_module(HEADER + "def @main(%l: List[int32]) { (@map(Some, %l), @sum(%l), "
                    "@length(%l), @hd(%l), Rose(1, Nil), succ(zero)) }", "p.relay")
    assert {"map", "sum", "length", "hd"} <= set(m.functions)
    assert {"List", "Option", "Tree", "nat"} <= set(m.type_defs)
    args = m.functions["main"].body.fields[0].args
    assert isinstance(args[0], ConstructorRef) and args[0].constructor is m.constructors["Some"]
    assert m.functions["main"].params[0].type_annotation == TypeCall("List", (scalar("int32"),))


@pytest.mark.parametrize("path", sorted((ROOT / "programs").glob("*.relay")), ids=lambda p: p.name)
def test_program_files_load(path):
    m = load_file(path)
    assert "main" in m.functions
    for f in m.functions.values():
        assert f.span is not None


def test_load_file_reads_and_names_the_file(tmp_path, mini_prelude):
    p = tmp_path / "prog.relay"
    p.write_text(HEADER + "def @main() -> int32 { @nat_to_int(zero) }\n")
    m = load_file(p)
    assert m.source.name == str(p) and m.functions["main"].span.file == str(p)
    assert "nat_to_int" in m.functions


def test_load_file_errors_have_no_span(tmp_path):
    missing = tmp_path / "missing.relay"
    with pytest.raises(RelayError) as info:
        load_file(missing)
    e = info.value
    assert e.span is None and e.message == "file not found"
    assert e.format() == f"{missing}: error: file not found"
    with pytest.raises(RelayError, match="directory"):
        load_file(tmp_path)
    bad = tmp_path / "bad.relay"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RelayError, match="not UTF-8"):
        load_file(bad)


def test_load_file_without_prelude_reports_unknown_names(tmp_path):
    p = tmp_path / "prog.relay"
    p.write_text(HEADER + "def @main() { Nil }\n")
    with pytest.raises(NameResolutionError):
        load_file(p, prelude=False)


@pytest.mark.parametrize("text, expected", [
    (HEADER + "// args: 4\ndef @main(%k: int32) { %k }", ["4"]),
    (HEADER + "// args: Cons(5, Cons(6, Nil)) [[1, 2], [3, 4]]\n", ["Cons(5, Cons(6, Nil))",
                                                                 "[[1, 2], [3, 4]]"]),
    (HEADER + "// a program\n//   args:   1   2.5f  \n", ["1", "2.5f"]),
    (HEADER + "\n/* x */\n// args: 1\n", None),  # the opening comment block ended
    (HEADER + "// args:\n", []),
    (HEADER + "// args: \"a b\" (1, 2)\n", ['"a b"', "(1, 2)"]),
    ("// args: 7\n" + HEADER, ["7"]),
    (HEADER + "def @main() { 1 }\n// args: 3\n", None),
    ("", None),
])
def test_program_default_args(text, expected):
    assert program_default_args(text) == expected


def test_default_args_of_the_examples():
    texts = {p.name: p.read_text() for p in (ROOT / "programs").glob("*.relay")}
    for name, text in texts.items():
        args = program_default_args(text)
        assert args is not None, name
        for a in args:
            assert a.count("(") == a.count(")") and a.count("[") == a.count("]"), (name, a)


def test_global_uses_keep_their_names(mini_prelude):
    m = load("def @main(%l: List[int32]) { @sum(%l) }")
    call = m.functions["main"].body
    assert isinstance(call, Call) and isinstance(call.op, GlobalVar) and call.op.name == "sum"
