"""The Relay parser: every construct of the text format, spans, name resolution, located errors
with hints for TVM's traps, and deep or long input."""
from pathlib import Path

import numpy as np
import pytest

from rvmdbg.relay.ast import (
    Call, children, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    Tuple, TupleGetItem, Var,
)
from rvmdbg.relay.diagnostics import (
    LexError, NameResolutionError, ParseError, RelayError, RelayTypeError,
)
from rvmdbg.relay.parser import MAX_NESTING, parse, parse_expr, parse_type
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall, TypeVar, scalar,
)

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil }\n"
OPTION = "type Option[A] { Some(A), None }\n"


def mod(text, filename="t.relay"):
    return parse(HEADER + text, filename)


def body(text, params="", filename="t.relay"):
    """The body of `def @main(params) { text }`."""
    return mod(f"def @main({params}) {{\n{text}\n}}", filename).functions["main"].body


def error(text, cls=RelayError, filename="t.relay"):
    with pytest.raises(cls) as info:
        parse(HEADER + text, filename)
    return info.value


def op_name(e):
    assert isinstance(e, Call) and isinstance(e.op, OpRef), e
    return e.op.name


def value(c):
    assert isinstance(c, Constant) and c.data.ndim == 0
    return c.data.dtype.name, c.data.item()


def caret_line(err):
    """The caret line of a formatted error, without its leading gutter spaces."""
    return err.format().splitlines()[2]


# ---- whole programs ----

def example_files():
    for d in (ROOT / "tests" / "examples", Path("/work/shared/examples")):
        if d.is_dir():
            return sorted(d.glob("*.relay"))
    return []


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_examples_parse(path):
    m = parse(path.read_text(), str(path))
    assert "main" in m.functions
    assert m.source.name == str(path)


def test_examples_exist():
    assert example_files() or not (ROOT / "tests" / "examples").exists()


def test_prelude_parses_on_its_own():
    m = parse((ROOT / "rvmdbg" / "relay" / "prelude.relay").read_text(), "prelude.relay")
    assert {"List", "Option", "Tree", "nat"} <= set(m.type_defs)
    assert m.constructors["Cons"].tag == 0 and m.constructors["Nil"].tag == 1


def test_definitions_in_source_order_with_spans():
    m = mod("def @f(%x: int32) -> int32 {\n  %x\n}\n\ndef @main() -> int32 {\n  @f(1)\n}\n",
            "prog.relay")
    assert list(m.functions) == ["f", "main"]
    f = m.functions["f"]
    assert (f.span.line, f.span.col, f.span.end_line, f.span.end_col) == (2, 1, 4, 2)
    assert f.span.file == "prog.relay"
    assert f.params[0].span.line == 2 and f.params[0].span.col == 8
    assert f.ret_type == scalar("int32") and f.body is f.params[0]


def test_every_node_has_a_span():
    m = mod(LIST + "def @g(%l: List[int32]) -> fn (int32) -> int32 { fn (%y: int32) { %y } }\n"
            "def @main() {\n  let %t = (1, 2f);\n"
            "  if (True) { %t.0 } else { -(%t.0) + 3 * @g(Nil)(4) }\n}", "s.relay")
    seen = []

    def walk(e):
        assert e.span is not None and e.span.file == "s.relay", e
        seen.append(e)
        for c in children(e):
            walk(c)

    walk(m.functions["main"])
    assert len(seen) > 15


# ---- types ----

@pytest.mark.parametrize("text, expected", [
    ("int32", scalar("int32")), ("int", scalar("int32")), ("float", scalar("float32")),
    ("uint", scalar("uint32")), ("bool", scalar("bool")), ("float16", scalar("float16")),
    ("Tensor[(2, 3), float32]", TensorType((2, 3), "float32")),
    ("Tensor[(1, ?), int64]", TensorType((1, None), "int64")),
    ("Tensor[(), int32]", TensorType((), "int32")),
    ("Tensor[(4,), float]", TensorType((4,), "float32")),
    ("()", TupleType(())), ("(int32,)", TupleType((scalar("int32"),))),
    ("(int32)", TupleType((scalar("int32"),))),
    ("(int32, (bool, float32))",
     TupleType((scalar("int32"), TupleType((scalar("bool"), scalar("float32")))))),
    ("fn (int32, bool) -> float32", FuncType((scalar("int32"), scalar("bool")), scalar("float32"))),
    ("fn () -> ()", FuncType((), TupleType(()))),
    ("fn (fn (int32) -> int32) -> fn (int32) -> int32",
     FuncType((FuncType((scalar("int32"),), scalar("int32")),),
              FuncType((scalar("int32"),), scalar("int32")))),
    ("ref(int32)", RefType(scalar("int32"))),
])
def test_types(text, expected):
    assert parse_type(text) == expected


def test_incomplete_type_and_type_parameters():
    assert isinstance(parse_type("_"), IncompleteType)
    f = mod("def @id[A, B](%x: A, %y: (B, _)) -> A { %x }").functions["id"]
    assert f.type_params == [TypeVar("A"), TypeVar("B")]
    assert f.params[0].type_annotation == TypeVar("A")
    assert isinstance(f.params[1].type_annotation.fields[1], IncompleteType)
    assert f.ret_type == TypeVar("A")


def test_polymorphic_function_type_extension():
    t = parse_type("fn [A](A) -> A")
    assert t == FuncType((TypeVar("A"),), TypeVar("A"), (TypeVar("A"),))


def test_adt_types_resolve_and_check_arity():
    m = mod(LIST + "def @f(%l: List[List[int32]]) -> List[int32] { Nil }")
    assert m.functions["f"].params[0].type_annotation == \
        TypeCall("List", (TypeCall("List", (scalar("int32"),)),))
    e = error(LIST + "def @f(%l: List) { 1 }", RelayTypeError)
    assert "List takes 1 type argument, given 0" in e.message


def test_unknown_type_is_a_name_error_with_suggestion():
    e = error(LIST + "def @f(%l: Lst[int32]) { 1 }", NameResolutionError)
    assert e.message == "unknown type Lst" and e.hint == "did you mean List?"
    assert (e.span.line, e.span.col) == (3, 12)
    e = error("def @f(%x: A) { 1 }", NameResolutionError)
    assert e.message == "unknown type A"
    e = error("def @f[A](%x: A[int32]) { 1 }", ParseError)
    assert "type parameter A takes no arguments" in e.message


def test_type_definitions():
    m = mod("type nat { zero, succ(nat) }\n"
            "type Tree[A] { Rose(A, List[Tree[A]]) }\n"
            + LIST +
            "type Pair[A, B] { MkPair(A, B), }\n"
            "extern type Handle[T]\n"
            "type Empty\n")
    assert list(m.type_defs) == ["nat", "Tree", "List", "Pair", "Handle", "Empty"]
    succ = m.constructors["succ"]
    assert succ.inputs == [TypeCall("nat")] and succ.tag == 1 and succ.type_name == "nat"
    rose = m.constructors["Rose"]
    # Tree is defined over List before List's own definition: type names are known up front
    assert rose.inputs == [TypeVar("A"), TypeCall("List", (TypeCall("Tree", (TypeVar("A"),)),))]
    assert m.type_defs["Pair"].type_params == [TypeVar("A"), TypeVar("B")]
    assert m.type_defs["Handle"].extern and m.type_defs["Handle"].constructors == []
    assert m.type_defs["Empty"].constructors == []
    assert m.type_defs["List"].span.line == 4


def test_mutually_recursive_types():
    m = mod("type Even { EZero, ESucc(Odd) }\ntype Odd { OSucc(Even) }\n")
    assert m.constructors["ESucc"].inputs == [TypeCall("Odd")]


def test_extern_type_cannot_have_constructors():
    e = error("extern type T { A }", ParseError)
    assert "extern type has no constructors" in e.message


# ---- expressions ----

def test_literals():
    b = body("(7, 5i64, 2.5f, 1e-3f, 3f64, 2f16, True, False, 4000000000, 1u8, -7i16, 0f)")
    assert [value(f) for f in b.fields] == [
        ("int32", 7), ("int64", 5), ("float32", 2.5), ("float32", np.float32(1e-3).item()),
        ("float64", 3.0), ("float16", 2.0), ("bool", True), ("bool", False),
        ("int64", 4000000000), ("uint8", 1), ("int16", -7), ("float32", 0.0)]


def test_negative_literals_and_unary_minus():
    b = body("(-1, --1, - 1, -2.5f, -%x, --%x, -(1))", "%x: int32")
    assert value(b.fields[0]) == ("int32", -1)
    assert value(b.fields[1]) == ("int32", 1)
    assert value(b.fields[2]) == ("int32", -1)
    assert value(b.fields[3]) == ("float32", -2.5)
    neg = b.fields[4]
    assert op_name(neg) == "negative" and isinstance(neg.args[0], Var)
    assert op_name(b.fields[5]) == "negative" and op_name(b.fields[5].args[0]) == "negative"
    assert op_name(b.fields[6]) == "negative" and value(b.fields[6].args[0]) == ("int32", 1)


def test_binary_operators_precedence_and_associativity():
    b = body("1 + 2 * 3")
    assert op_name(b) == "add" and op_name(b.args[1]) == "multiply"
    b = body("1 - 2 - 3")
    assert op_name(b) == "subtract" and op_name(b.args[0]) == "subtract"
    assert value(b.args[1]) == ("int32", 3)
    b = body("8 / 4 * 2")
    assert op_name(b) == "multiply" and op_name(b.args[0]) == "divide"
    b = body("1 < 2 == 3 >= 4")
    assert op_name(b) == "equal"
    assert op_name(b.args[0]) == "less" and op_name(b.args[1]) == "greater_equal"
    b = body("1 + 2 <= 3 * 4 != False")
    assert op_name(b) == "not_equal" and op_name(b.args[0]) == "less_equal"
    assert [op_name(a) for a in b.args[0].args] == ["add", "multiply"]
    b = body("1 > 2")
    assert op_name(b) == "greater"
    b = body("(1 + 2) * 3")
    assert op_name(b) == "multiply" and op_name(b.args[0]) == "add"


def test_locals_params_and_let():
    f = mod("def @main(%x: int32, %y) { let %z: int32 = %x; let %w = %y; %z }").functions["main"]
    x, y = f.params
    assert y.type_annotation is None
    let = f.body
    assert isinstance(let, Let) and let.var.name == "z" and let.var.type_annotation == scalar("int32")
    assert let.value is x
    assert let.body.value is y and let.body.body is let.var


def test_let_shadowing_and_scope_end():
    b = body("let %x = 1; let %x = (%x, 2); %x")
    outer, inner = b, b.body
    assert inner.value.fields[0] is inner.var  # TVM binds the let variable before its value
    assert inner.body is inner.var
    f = mod("def @main(%x: int32) { (let %x = 2f; %x, %x) }").functions["main"]
    tup = f.body
    assert tup.fields[1] is f.params[0]


def test_recursive_let():
    b = body("let %f = fn (%n: int32) -> int32 { if (%n == 0) { 0 } else { %f(%n - 1) } };\n%f(3)")
    fn = b.value
    assert isinstance(fn, Function)
    call = fn.body.false_branch
    assert isinstance(call, Call) and call.op is b.var


def test_graph_bindings_share_one_node():
    b = body("%0 = add(%x, 1);\n%1 = (%0, %0);\n%1.0", "%x: int32")
    assert isinstance(b, TupleGetItem)
    tup = b.tuple_value
    assert isinstance(tup, Tuple) and tup.fields[0] is tup.fields[1]
    assert op_name(tup.fields[0]) == "add"


def test_graph_binding_scope_is_lexical():
    e = error("def @main() { (%0 = 1; %0, %0) }", NameResolutionError)
    assert "graph variable %0 is not bound" in e.message
    b = body("%0 = 1; %1 = fn () { %0 = 2f; %0 }; (%0, %1)")
    assert value(b.fields[0]) == ("int32", 1)
    assert value(b.fields[1].body) == ("float32", 2.0)


def test_sequencing_is_let_of_underscore():
    b = body("ref_write(%r, 1); ref_write(%r, 2); ref_read(%r)", "%r")
    assert isinstance(b, Let) and b.var.name == "_" and isinstance(b.value, RefWrite)
    assert isinstance(b.body, Let) and b.body.var.name == "_"
    assert isinstance(b.body.body, RefRead)
    assert b.var is not b.body.var


def test_long_let_chain_in_order():
    b = body("let %a = 1; %0 = 2; 3; let %c = %0; %c")
    assert [b.var.name, b.body.var.name, b.body.body.var.name] == ["a", "_", "c"]
    assert value(b.body.value) == ("int32", 3)
    assert value(b.body.body.value) == ("int32", 2)


def test_if_and_blocks():
    b = body("if (%c) { 1 } else { { 2 } }", "%c: bool")
    assert isinstance(b, If) and value(b.false_branch) == ("int32", 2)
    b = body("if (let %z = True; %z) { 1 } else { 2 }")
    assert isinstance(b.cond, Let)
    b = body("{ let %q = 1; %q } + 1")
    assert op_name(b) == "add" and isinstance(b.args[0], Let)


def test_tuples_and_projection():
    b = body("((), (1,), (1, 2), (1, 2,), %t.1, (%t.0).1, %t.0(1))", "%t")
    unit, one, two, trailing, proj, double, call = b.fields
    assert isinstance(unit, Tuple) and unit.fields == []
    assert isinstance(one, Tuple) and len(one.fields) == 1
    assert len(two.fields) == 2 and len(trailing.fields) == 2
    assert isinstance(proj, TupleGetItem) and proj.index == 1
    assert isinstance(double.tuple_value, TupleGetItem) and double.index == 1
    assert isinstance(call, Call) and isinstance(call.op, TupleGetItem)
    assert value(body("(1)")) == ("int32", 1)


def test_functions_with_type_params_and_attributes():
    b = body("fn [A](%a: A, Primitive=1, Compiler=\"x\") -> A { %a }")
    assert isinstance(b, Function) and b.type_params == [TypeVar("A")]
    assert b.attrs == {"Primitive": 1, "Compiler": "x"} and b.is_primitive
    b = body("fn (Primitive=1) { 1 }")
    assert b.params == [] and b.attrs == {"Primitive": 1}
    b = body("fn () { 1 }")
    assert b.params == [] and b.attrs == {} and b.ret_type is None


def test_calls_curried_and_with_attributes():
    b = parse_expr("@f(1)(2)(3)")
    assert isinstance(b, Call) and isinstance(b.op, Call) and isinstance(b.op.op, Call)
    assert isinstance(b.op.op.op, GlobalVar)
    m = mod("def @f(%a) { fn (%b) { fn (%c) { %c } } }\ndef @main(%x, %w) {\n"
            "  (cast(%x, dtype=\"int32\"), nn.dense(%x, %w, units=3),\n"
            "   reshape(%x, newshape=[2, 4]), sum(%x, axis=[1], keepdims=True, exclude=False),\n"
            "   @f(1)(2)(3))\n}")
    cast, dense, reshape, total, _ = m.functions["main"].body.fields
    assert cast.op.name == "cast" and cast.attrs == {"dtype": "int32"}
    assert dense.op.name == "nn.dense" and dense.attrs == {"units": 3} and len(dense.args) == 2
    assert reshape.attrs == {"newshape": [2, 4]}
    assert total.attrs == {"axis": [1], "keepdims": True, "exclude": False}


def test_attribute_value_forms():
    b = body("nn.dense(%x, %x, a=1, b=-2, c=1.5, d=2.5f, e=\"s\", f=True, g=[1, [2, 3], []], "
             "h=None, i=null, j=(4), k=1e-3, l=[1.5, 2f,])", "%x")
    assert b.attrs == {"a": 1, "b": -2, "c": 1.5, "d": 2.5, "e": "s", "f": True,
                       "g": [1, [2, 3], []], "h": None, "i": None, "j": 4, "k": 1e-3,
                       "l": [1.5, 2.0]}
    assert type(b.attrs["a"]) is int and type(b.attrs["c"]) is float


def test_non_operator_call_attributes_need_their_type_key():
    # TVM's parser refuses them without attrs_type_key, with this reason
    e = error("def @f(%x) { %x }\ndef @main() { @f(1, k=2) }", ParseError)
    assert e.message == ("unable to determine the 'attrs_type_key' with which to represent "
                         "the call attributes")
    assert (e.span.line, e.span.col) == (3, 21)


def test_refs():
    b = body("let %r = ref(0); ref_write(%r, ref_read(%r) + 1); ref_read(%r)")
    assert isinstance(b.value, RefCreate) and value(b.value.value) == ("int32", 0)
    assert isinstance(b.body.value, RefWrite) and b.body.value.ref is b.var
    assert isinstance(b.body.body, RefRead)


def test_constructors_as_values_and_calls():
    m = mod(LIST + OPTION + "def @map(%f, %l) { %l }\n"
            "def @main(%l: List[int32]) { (Nil, Nil(), Cons(1, Nil), Some, @map(Some, %l), None) }")
    nil, nil2, cons, some, mapped, none = m.functions["main"].body.fields
    for n in (nil, nil2, none):
        assert isinstance(n, Call) and isinstance(n.op, ConstructorRef) and n.args == []
    assert nil.op.constructor is m.constructors["Nil"]
    assert isinstance(cons.op, ConstructorRef) and cons.op.constructor.name == "Cons"
    assert isinstance(some, ConstructorRef) and some.constructor is m.constructors["Some"]
    assert isinstance(mapped.args[0], ConstructorRef)


def test_match_and_partial_match_with_nested_patterns():
    m = mod(LIST + OPTION + """def @main(%l: List[(int32, Option[int32])]) {
  match (%l) {
    Cons((%a: int32, Some(%b)), Cons(_, %rest)) => %a + %b,
    Cons((_, None), Nil) => 0,
    Cons(%p, _) => %p.0,
    Nil => match? (%l) { Nil => 1 },
  }
}""")
    mt = m.functions["main"].body
    assert isinstance(mt, Match) and mt.complete and len(mt.clauses) == 4
    p0 = mt.clauses[0].lhs
    assert isinstance(p0, PatternConstructor) and p0.constructor is m.constructors["Cons"]
    tup, tail = p0.patterns
    assert isinstance(tup, PatternTuple)
    a = tup.patterns[0]
    assert isinstance(a, PatternVar) and a.var.type_annotation == scalar("int32")
    assert isinstance(tup.patterns[1], PatternConstructor) and tup.patterns[1].name == "Some"
    assert isinstance(tail.patterns[0], PatternWildcard)
    rhs = mt.clauses[0].rhs
    assert rhs.args[0] is a.var and rhs.args[1] is tup.patterns[1].patterns[0].var
    none = mt.clauses[1].lhs.patterns[0].patterns[1]
    assert isinstance(none, PatternConstructor) and none.patterns == []
    inner = mt.clauses[3].rhs
    assert isinstance(inner, Match) and not inner.complete
    assert mt.clauses[0].span.line == 6


def test_match_arm_commas_and_let_value_match():
    m = mod(LIST + "def @main(%l: List[int32]) {\n"
            "  let %m = match (%l) { Nil => { 0 } Cons(%x, _) => %x };\n"
            "  let %n = (match %l { _ => 1, });\n  (%m, %n)\n}")
    b = m.functions["main"].body
    assert isinstance(b.value, Match) and len(b.value.clauses) == 2
    assert isinstance(b.body.value, Match)


def test_pattern_errors():
    e = error(LIST + "def @main(%l: List[int32]) { match (%l) { Cons(%x, %x) => 1 } }",
              NameResolutionError)
    assert "%x is bound twice" in e.message
    e = error(LIST + "def @main(%l: List[int32]) { match (%l) { Cons(%x) => 1 } }",
              RelayTypeError)
    assert "Cons has 2 fields, the pattern gives 1" in e.message
    e = error(LIST + "def @main(%l: List[int32]) { match (%l) { x => 1 } }", NameResolutionError)
    assert e.message == "undefined constructor x" and e.hint == "to bind a variable write %x"


def test_free_var_and_parse_expr():
    e = parse_expr("free_var %x: int32; %x + 1")
    assert op_name(e) == "add" and isinstance(e.args[0], Var)
    assert e.args[0].type_annotation == scalar("int32")
    e = parse_expr('#[version = "0.0.5"]\n@anything(1)')
    assert isinstance(e.op, GlobalVar)
    m = mod(LIST + "def @len(%l: List[int32]) -> int32 { 0 }")
    e = parse_expr("@len(Cons(1, Nil))", m)
    assert e.args[0].op.constructor is m.constructors["Cons"]
    with pytest.raises(NameResolutionError, match="undefined global function @lenn"):
        parse_expr("@lenn(Nil)", m)
    with pytest.raises(NameResolutionError):
        parse_expr("%y + 1")
    with pytest.raises(ParseError, match="expected the end of the expression"):
        parse_expr("1 2")


def test_comments_anywhere():
    b = body("// leading\n1 /* a /* nested */ b */ + // trailing\n 2")
    assert op_name(b) == "add"


# ---- name resolution ----

def test_globals_may_be_used_before_their_definition():
    m = mod("def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }\n"
            "def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }")
    call = m.functions["even"].body.false_branch
    assert isinstance(call.op, GlobalVar) and call.op.name == "odd"


def test_name_errors_located_at_the_use():
    e = error("def @main(%x: int32) {\n  %x + %y\n}", NameResolutionError, "n.relay")
    assert e.message == "unbound variable %y"
    assert e.format().splitlines()[:3] == [
        "n.relay:3:8: error: unbound variable %y",
        "   3 |   %x + %y",
        "              ^~"]
    e = error("def @main() {\n  @missing(1)\n}\ndef @missin() { 1 }", NameResolutionError)
    assert e.message == "undefined global function @missing" and e.hint == "did you mean @missin?"
    assert (e.span.line, e.span.col, e.span.end_col) == (3, 3, 11)
    e = error("def @main() { %3 }", NameResolutionError)
    assert "graph variable %3 is not bound" in e.message


def test_a_second_def_of_a_global_replaces_the_first_with_a_warning():
    # TVM's parser adds each definition with update=True, so the last one wins
    m = mod("def @f() { 1 }\ndef @main() { @f() }\ndef @f() { 2 }", "d.relay")
    assert list(m.functions) == ["f", "main"]
    assert int(m.functions["f"].body.data) == 2
    (w,) = m.warnings
    assert w.format().splitlines()[0] == ("d.relay:4:5: warning: @f is defined twice: this "
                                          "definition replaces the one at line 2, as in TVM")


def test_duplicates_are_errors_at_the_second_definition():
    e = error("type T { A }\ntype T { B }", NameResolutionError)
    assert e.message == "duplicate definition of type T" and e.span.line == 3
    e = error("type T { A }\ntype U { B, A }", NameResolutionError)
    assert e.message == "duplicate constructor A" and (e.span.line, e.span.col) == (3, 13)
    e = error("def @f(%x, %x) { 1 }", NameResolutionError)
    assert "duplicate parameter %x" in e.message
    e = error("type int32 { A }", ParseError)
    assert "built-in type" in e.message


def test_constructor_before_its_type_definition():
    e = error("def @main() { Nil }\n" + LIST, NameResolutionError)
    assert "constructor Nil is used before its type List is defined" in e.message
    assert e.hint == "move `type List` above its first use"


def test_unknown_operator():
    from rvmdbg.relay import parser
    if parser._known_ops() is None:
        pytest.skip("the operator table is not importable")
    e = error("def @main(%x) { nn.densee(%x, %x) }", NameResolutionError)
    assert e.message == "unknown operator `nn.densee`" and e.hint == "did you mean nn.dense?"
    assert (e.span.col, e.span.end_col) == (17, 26)
    e = error("def @main() { Foo }", NameResolutionError)
    assert "unknown operator `Foo`" in e.message and "type" in e.hint
    b = body("(add, nn.softmax)")
    assert [f.name for f in b.fields] == ["add", "nn.softmax"]


# ---- errors and hints ----

def test_version_header_required_and_checked():
    with pytest.raises(ParseError) as info:
        parse("def @main() { 1 }", "v.relay")
    assert info.value.message == "missing version header"
    assert '#[version = "0.0.5"]' in info.value.hint
    assert info.value.format().startswith("v.relay:1:1: error: missing version header")
    with pytest.raises(ParseError, match='unsupported text format version "0.0.4"'):
        parse('#[version = "0.0.4"]\n', "v.relay")
    assert parse('#[version = "0.0.5"]\n').functions == {}


def test_float_without_suffix_hint():
    e = error("def @main() {\n  1.5 + 1f\n}", LexError, "f.relay")
    assert e.hint == "floats need the f suffix: 1.5f"
    assert e.format().splitlines()[0] == "f.relay:3:3: error: float literal `1.5` needs a type suffix"
    assert caret_line(e) == "         ^~~"


def test_greedy_minus_hint():
    e = error("def @main(%n: int32) { @main(%n-1) }", ParseError, "g.relay")
    assert e.message == "expected `)` after the arguments, found `-1`"
    assert "write %n - 1 with spaces: numbers lex greedily" in e.hint
    assert (e.span.line, e.span.col) == (2, 32)


def test_double_projection_hint():
    e = error("def @main(%t) { %t.0.1 }", ParseError)
    assert "expected a tuple index after `.`, found `0.1`" in e.message
    assert "write (%t.0).1" in e.hint


def test_slash_in_identifier_hint():
    e = error("def @main(%x: int32, %y: int32) { %x/%y }", NameResolutionError)
    assert e.message == "unbound variable %x/"
    assert "`/` can be part of a name" in e.hint and "%x / %y" in e.hint


def test_messages_say_what_was_expected():
    e = error("def @main(%x) { add(%x, 1; }", ParseError, "e.relay")
    assert e.message == "expected `)` after the arguments, found `;`"
    assert e.format().splitlines()[0] == "e.relay:2:26: error: expected `)` after the arguments, found `;`"
    cases = {
        "def @main() { let %x = 1; }": "expected an expression after `;`, found `}`",
        "def @main() { if (True) { 1 } else if (False) { 2 } else { 3 } }":
            "expected `{` after `else`, found `if`",
        "def @main() { if (True) { 1 } }": "expected `else`, found `}`",
        "def main() { 1 }": "expected a function name such as @main after `def`, found `main`",
        "def @main() { (1, 2 }": "expected `,` or `)` in a tuple, found `}`",
        "def @main() { 1 2 }": "expected `}` to close the function body, found `2`",
        "def @main() { cast(%x, dtype=int32) }": None,
        "def @main() { let 1 = 2; 3 }": "expected a variable such as %x after `let`, found `1`",
        "def @main() -> { 1 }": "expected a type, found `{`",
        # a file that is one expression is @main; after a definition, an expression is not
        "def @f() { 0 }\n1 + 2": "expected a definition (`def`, `type` or `extern type`), "
                                  "found `1`",
        "fn () { 1 }\ndef @f() { 0 }": "expected the end of the file after its expression, "
                                       "found `def`",
        "def @main() { 1 + }": "expected an operand after `+`, found `}`",
        "def @main() {": "expected an expression, found the end of the input",
        "def @main() { fn %x { 1 } }": "expected `(` after `fn`, found `%x`",
        "def @main() { match (1) { } }": "a match needs at least one arm",
        "def @main() { let %0 = 1; 2 }": "`let` binds a named variable, not %0",
        "def @main() { Tensor }": None,
        "def @f(%x: Tensor[(2, x), float32]) { 1 }":
            "expected a dimension (a non-negative integer or `?`), found `x`",
        "def @f(%x: Tensor[(2,), float99]) { 1 }": None,
    }
    for text, message in cases.items():
        with pytest.raises(RelayError) as info:
            parse(HEADER + text)
        if message is not None:
            assert info.value.message == message, text
        assert info.value.span is not None and info.value.source is not None


def test_named_graph_binding_is_an_error_with_a_hint():
    for text in ("def @main(%x) { %v0 = %x; %v0 }", "def @main(%x) { let %a = 1; %x = 2; %x }"):
        e = error(text, ParseError)
        assert "is not a binding: only graph variables (%0, %1, ...) bind without `let`" in e.message
        assert e.hint.startswith("write `let %")


def test_let_in_operand_position_hint():
    e = error("def @main() { 1 + let %x = 1; %x }", ParseError)
    assert "found `let`" in e.message and "(let %x = ...; ...)" in e.hint


def test_errors_format_with_caret_under_the_span():
    e = error("def @main() {\n  foo_bar(1)\n}", RelayError, "c.relay")
    lines = e.format().splitlines()
    assert lines[1] == "   3 |   foo_bar(1)"
    assert lines[2] == "         ^~~~~~~"


# ---- deep and long input ----

def test_ten_thousand_line_let_chain():
    lines = ["def @main(%x0: int32) -> int32 {"]
    lines += [f"  let %x{i} = %x{i - 1} + {i};" for i in range(1, 10000)]
    lines += ["  %x9999", "}"]
    m = mod("\n".join(lines))
    e = m.functions["main"].body
    n = 0
    while isinstance(e, Let):
        n += 1
        e = e.body
    assert n == 9999 and e.name == "x9999"


def test_long_sequences_graph_bindings_and_operator_chains():
    seq = "; ".join(["ref_write(%r, 1)"] * 5000) + "; ref_read(%r)"
    assert isinstance(body(seq, "%r"), Let)
    graph = "".join(f"%{i} = %{i - 1} + 1;\n" for i in range(1, 5000))
    assert op_name(body("%0 = 0;\n" + graph + "%4999")) == "add"
    chain = body(" + ".join(["1"] * 5000))
    assert op_name(chain) == "add" and value(chain.args[1]) == ("int32", 1)


@pytest.mark.parametrize("make", [
    lambda n: "(" * n + "1" + ")" * n,
    lambda n: "if (True) { " * n + "1" + " } else { 2 }" * n,
    lambda n: "@f(" * n + "1" + ")" * n,
    lambda n: "fn () { " * n + "1" + " }" * n,
    lambda n: "[" * n + "]" * n,
], ids=["parens", "ifs", "calls", "fns", "attr-lists"])
def test_deep_nesting_is_a_clean_error(make):
    n = 20000
    text = make(n)
    if text.startswith("["):
        text = f"nn.dense(%x, %x, units={text})"
    with pytest.raises(ParseError, match="nesting too deep"):
        parse(HEADER + f"def @f(%x) {{ {text} }}")


def test_deep_types_and_patterns_are_clean_errors():
    with pytest.raises(ParseError, match="nesting too deep"):
        parse_type("(" * 20000 + ")" * 20000)
    pat = "(" * 20000 + "_" + ")" * 20000
    with pytest.raises(ParseError, match="nesting too deep"):
        parse(HEADER + f"def @f(%x) {{ match (%x) {{ {pat} => 1 }} }}")
    with pytest.raises(ParseError, match="nesting too deep"):
        parse_expr("-" * 5 + "(" * 20000)


@pytest.mark.parametrize("make, per_level", [
    (lambda n: "(" * n + "1" + ")" * n, 1),
    (lambda n: "@f(" * n + "1" + ")" * n, 1),
    (lambda n: "if (True) { " * n + "1" + " } else { 2 }" * n, 1),
    (lambda n: "fn () { " * n + "1" + " }" * n, 2),
    (lambda n: "match (" * n + "1" + ") { _ => 1 }" * n, 1),
    (lambda n: "ref(" * n + "1" + ")" * n, 1),
    (lambda n: "-(" * n + "1" + ")" * n, 1),
    (lambda n: "(" * n + "1" + ",)" * n, 1),
], ids=["parens", "calls", "ifs", "fns", "matches", "refs", "negations", "tuples"])
def test_nesting_just_under_the_limit_parses(make, per_level):
    # the recursion limit the parser sets must cover every construct up to MAX_NESTING
    n = (MAX_NESTING - 4) // per_level
    parse(HEADER + f"def @f(%x) {{ {make(n)} }}")


def test_types_and_patterns_just_under_the_limit_parse():
    n = MAX_NESTING - 4
    parse_type("(" * n + ")" * n)
    parse(HEADER + "def @f(%x) { match (%x) { " + "(" * n + "_" + ")" * n + " => 1 } }")


def test_moderate_nesting_parses():
    n = MAX_NESTING // 4
    b = body("(" * n + "1" + ")" * n)
    assert value(b) == ("int32", 1)
    b = body("if (True) { " * n + "1" + " } else { 2 }" * n)
    assert isinstance(b, If)


def test_operator_and_projection_spans_start_at_their_own_tokens_not_a_binder():
    # a Var node's span is its binder's; a use inside `a + b` or `%t.0` must not inherit it
    mod = parse('#[version = "0.0.5"]\ndef @main(%a: int32, %t: (int32, int32)) -> int32 {\n'
                '  %a + %t.1 * -%a\n}\n', "s.relay")
    body = mod.functions["main"].body
    assert (body.span.line, body.span.col, body.span.end_col) == (3, 3, 18)
    mul = body.args[1]
    assert (mul.span.line, mul.span.col, mul.span.end_col) == (3, 8, 18)
    proj = mul.args[0]
    assert (proj.span.line, proj.span.col, proj.span.end_col) == (3, 8, 12)
    neg = mul.args[1]
    assert (neg.span.line, neg.span.col, neg.span.end_col) == (3, 15, 18)


def test_the_memory_dialect_is_always_read_and_extra_ops_add_names():
    # TVM's parser knows the dialect's operators (they are registered ops), so a printed
    # pass stage reads back without extra_ops
    mod = parse(HEADER + "def @f(%s) { memory.kill(%s) }")
    assert mod.functions["f"].body.op.name == "memory.kill"
    with pytest.raises(NameResolutionError):
        parse(HEADER + "def @f(%s) { memory.nope(%s) }")
    mod = parse(HEADER + "def @f(%s) { memory.nope(%s) }", extra_ops={"memory.nope"})
    assert mod.functions["f"].body.op.name == "memory.nope"


def test_control_characters_in_a_program_never_reach_the_terminal_in_an_error():
    from rvmdbg.relay.diagnostics import RelayError
    from rvmdbg.relay.loader import load_module
    text = '#[version = "0.0.5"]\ndef @main() {\n  \x1b]0;owned\x07 \x1b[2J\n}\n'
    with pytest.raises(RelayError) as info:
        load_module(text, "<t>")
    shown = info.value.format()
    assert "\x1b" not in shown and "\x07" not in shown
    quoted = next(line for line in shown.splitlines() if line.startswith("   3 | "))
    caret = next(line for line in shown.splitlines() if line.lstrip().startswith("^"))
    # one visible cell per control character: the caret still points at the place
    assert quoted[caret.index("^")] == quoted[len("   3 | ") + info.value.span.col - 1]
