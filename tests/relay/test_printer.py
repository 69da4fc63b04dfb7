"""The printer and structural equality: TVM-style text, exact float literals, shared nodes as
graph bindings placed where every use can see them, distinct names for distinct variables, and a
hypothesis round trip (print, parse, compare) over randomly generated well-scoped programs."""
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg.relay.ast import (
    Call, Clause, Constant, Constructor, ConstructorRef, Function, GlobalVar, If, Let, Match,
    Module, OpRef, PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate,
    RefRead, RefWrite, Tuple, TupleGetItem, TypeData, Var,
)
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.loader import load_file
from rvmdbg.relay.parser import _known_ops, parse, parse_expr
from rvmdbg.relay.printer import float_text, print_expr, print_module
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall, TypeVar, scalar,
)

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
I32 = scalar("int32")


def const(v, dtype="int32"):
    return Constant(np.array(v, dtype=dtype))


def add(a, b):
    return Call(OpRef("add"), [a, b])


def roundtrip(m: Module) -> Module:
    text = print_module(m)
    back = parse(text, "printed.relay")
    assert structural_equal(m, back), text
    assert print_module(back) == text
    return back


def non_atomic_nodes(e) -> set:
    from rvmdbg.relay.ast import children
    seen, stack = {}, [e]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(children(n))
    atomic = (Var, GlobalVar, OpRef, ConstructorRef, Constant)
    return {k for k, n in seen.items() if not isinstance(n, atomic)}


def module_of(body, params=(), ret=None, name="main") -> Module:
    m = Module()
    m.functions[name] = Function(list(params), body, ret)
    return m


# ---- layout ----

def test_tvm_style_layout():
    text = HEADER + """type List[A] {
  Cons(A, List[A]),
  Nil,
}

extern type Handle

def @main(%x: int32, %l: List[int32]) -> int32 {
  let %y: int32 = add(%x, 1);
  %0 = multiply(%y, %y);
  ref_write(ref(%0), 2);
  match? (%l) {
    Cons(%h, _) => add(%h, %0),
    Nil => {
      let %z = negative(%0);
      %z
    },
  }
}
"""
    assert print_module(parse(text)) == text


def test_examples_and_programs_round_trip():
    paths = sorted((ROOT / "programs").glob("*.relay")) + [ROOT / "rvmdbg/relay/prelude.relay"]
    for path in paths:
        roundtrip(load_file(path))


def test_infix_operators_print_as_calls():
    m = parse(HEADER + "def @main(%a: int32, %b: int32) -> bool { %a + %b * 2 < -%a }")
    assert "less(add(%a, multiply(%b, 2)), negative(%a))" in print_module(m)


def test_if_and_function_layout():
    e = parse_expr("fn (%c: bool, Primitive=1) -> int32 { if (%c) { 1 } else { 2 } }")
    assert print_expr(e) == ("fn (%c: bool, Primitive=1) -> int32 {\n"
                             "  if (%c) {\n    1\n  } else {\n    2\n  }\n}")


def test_literals_print_with_suffixes():
    values = [const(7), const(-7), const(5, "int64"), const(-3, "int8"), const(200, "uint8"),
              const(2 ** 64 - 1, "uint64"), const(True, "bool"), const(False, "bool"),
              const(2.5, "float32"), const(-0.0, "float32"), const(1.5, "float64"),
              const(0.1, "float16")]
    text = print_expr(Tuple(values))
    assert text == ("(7, -7, 5i64, -3i8, 200u8, 18446744073709551615u64, True, False, 2.5f, -0f, "
                    "1.5f64, 0.1f16)")
    assert structural_equal(Tuple(values), parse_expr(text))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("v", [0.1, 1 / 3, 1e-30, 3.4028234663852886e38, 1.4e-45, 6.1e-5,
                               123456789.0, 1e16, -2.5, float("inf"), float("-inf"),
                               float("nan"), 0.0, -0.0, 65504.0, 5.96e-8])
def test_floats_round_trip_exactly(v, dtype):
    with np.errstate(all="ignore"):
        x = np.array(v, dtype=dtype)
    text = float_text(float(x), dtype)
    back = parse_expr(text)
    assert back.data.dtype == x.dtype
    assert back.data.tobytes() == x.tobytes() or (np.isnan(x) and np.isnan(back.data)), text


def test_float_literals_are_short():
    assert float_text(0.1, "float32") == "0.1f"
    assert float_text(1.0, "float32") == "1f"
    assert float_text(1e-30, "float32") == "1e-30f"
    assert float_text(2.0, "float64") == "2f64"


def test_attribute_values_round_trip():
    call = Call(OpRef("nn.dense"), [const(1), const(2)],
                {"units": 3, "f": 1.5, "whole": 2.0, "tiny": 1e-30, "s": "NCHW", "b": False,
                 "l": [1, [2, -3], []], "n": None, "inf": float("inf")})
    text = print_expr(call)
    assert text.startswith('nn.dense(1, 2, units=3, f=1.5, whole=2.0, tiny=1e-30, s="NCHW", '
                           'b=False, l=[1, [2, -3], []], n=None, inf=inff)')
    assert structural_equal(call, parse_expr(text))


# ---- sharing ----

def test_shared_node_prints_once_as_graph_binding():
    x = Var("x", I32)
    s = add(x, const(1))
    m = module_of(Tuple([s, s, add(s, x)]), [x])
    text = print_module(m)
    assert "%0 = add(%x, 1);\n  (%0, %0, add(%0, %x))" in text
    back = roundtrip(m)
    t = back.functions["main"].body
    assert t.fields[0] is t.fields[1] is t.fields[2].args[0]


def test_sharing_across_branches_binds_before_the_if():
    x = Var("x", I32)
    s = add(x, const(1))
    m = module_of(If(const(True, "bool"), s, Call(OpRef("negative"), [s])), [x])
    text = print_module(m)
    assert text.index("%0 = add(%x, 1);") < text.index("if (True)")
    back = roundtrip(m)
    b = back.functions["main"].body
    assert b.true_branch is b.false_branch.args[0]


def test_sharing_inside_a_branch_stays_in_the_branch():
    x = Var("x", I32)
    s = add(x, const(1))
    m = module_of(If(const(True, "bool"), Tuple([s, s]), x), [x])
    text = print_module(m)
    assert "  if (True) {\n    %0 = add(%x, 1);\n    (%0, %0)\n  }" in text
    roundtrip(m)


def test_shared_node_using_a_let_variable_binds_after_the_let():
    x, y = Var("x", I32), Var("y")
    s = add(y, y)
    m = module_of(Let(y, add(x, const(2)), Tuple([s, s])), [x])
    text = print_module(m)
    assert text.index("let %y = ") < text.index("%0 = add(%y, %y);")
    roundtrip(m)


def test_shared_node_used_in_a_closure_and_outside():
    x, p = Var("x", I32), Var("p", I32)
    s = add(x, x)
    fn = Function([p], add(p, s))
    m = module_of(Tuple([fn, s]), [x])
    text = print_module(m)
    assert text.index("%0 = add(%x, %x);") < text.index("fn (%p")
    back = roundtrip(m)
    b = back.functions["main"].body
    assert b.fields[0].body.args[1] is b.fields[1]


def test_shared_let_function_and_match_nodes():
    x = Var("x", I32)
    y = Var("y")
    shared_let = Let(y, add(x, const(1)), y)
    f = Function([], x)
    m = module_of(Tuple([shared_let, shared_let, f, f]), [x])
    back = roundtrip(m)
    t = back.functions["main"].body
    assert t.fields[0] is t.fields[1] and isinstance(t.fields[0], Let)
    assert t.fields[2] is t.fields[3] and isinstance(t.fields[2], Function)


def test_parsed_dag_is_preserved():
    text = HEADER + """def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = nn.relu(%x);
  %1 = add(%0, %0);
  if (True) {
    multiply(%1, %0)
  } else {
    %1
  }
}
"""
    m = parse(text)
    assert print_module(m) == text
    back = roundtrip(m)
    assert len(non_atomic_nodes(back.functions["main"])) == len(non_atomic_nodes(m.functions["main"]))


# ---- names ----

def test_distinct_variables_with_one_name_are_disambiguated():
    outer, inner = Var("x", I32), Var("x", I32)
    body = Let(inner, add(outer, const(1)), Tuple([outer, inner]))
    m = module_of(body, [outer])
    text = print_module(m)
    assert "let %x1: int32 = add(%x, 1);" in text and "(%x, %x1)" in text
    roundtrip(m)


def test_recursive_let_value_cannot_capture_an_outer_name():
    outer, inner = Var("f"), Var("f")
    m = module_of(Let(inner, Call(outer, []), inner), [outer])
    text = print_module(m)
    assert "let %f1 = %f();" in text
    roundtrip(m)


def test_awkward_names_are_sanitised():
    vs = [Var("0"), Var(""), Var("a b"), Var("tf/emb"), Var("_")]
    m = module_of(Tuple(vs), vs)
    text = print_module(m)
    assert "def @main(%v0, %v, %a_b, %tf/emb, %_)" in text
    roundtrip(m)


def test_sequencing_prints_as_statements():
    r = Var("r")
    seq = Let(Var("_"), RefWrite(r, const(1)), RefRead(r))
    used = Var("_")
    m = module_of(Tuple([seq, Let(used, const(2), used)]), [r])
    text = print_module(m)
    assert "ref_write(%r, 1);\n    ref_read(%r)" in text
    assert "let %_ = 2;" in text
    roundtrip(m)


# ---- operand forms ----

def test_projections_and_matches_get_parentheses_where_tvm_needs_them():
    lst = TypeData("List", [TypeVar("A")], [])
    nil = Constructor("Nil", [], 0, "List")
    lst.constructors.append(nil)
    t = Var("t")

    def match():
        return Match(Call(ConstructorRef("Nil", nil), []), [Clause(PatternWildcard(), const(1))])

    body = Tuple([
        TupleGetItem(TupleGetItem(t, 0), 1),
        TupleGetItem(Call(GlobalVar("main"), [t]), 0),
        TupleGetItem(const(1), 0),
        Let(Var("m"), match(), const(2)),
        Call(match(), []),
        add(match(), const(1)),
    ])
    m = module_of(body, [t])
    m.type_defs["List"] = lst
    m.constructors["Nil"] = nil
    text = print_module(m)
    for piece in ["(%t.0).1", "(@main(%t)).0", "(1).0", "let %m = (match (Nil) {",
                  "(match (Nil) {\n    _ => 1,\n  })()", "add(match (Nil) {"]:
        assert piece in text, piece
    roundtrip(m)


def test_let_as_an_operand_is_a_parenthesised_block():
    y = Var("y")
    e = add(Let(y, const(1), y), const(2))
    text = print_expr(e)
    assert text == "add((\n  let %y = 1;\n  %y\n), 2)"
    assert structural_equal(e, parse_expr(text))


def test_print_expr_round_trips_with_free_variables_mapped():
    x = Var("x", I32)
    e = Let(Var("y"), add(x, x), x)
    back = parse_expr("free_var %x: int32;\n" + print_expr(e))
    assert structural_equal(e, back, map_free_vars=True)
    assert not structural_equal(e, back)


def test_long_let_chain_prints_without_recursion():
    x0 = Var("x0", I32)
    vs = [x0] + [Var(f"x{i}") for i in range(1, 10000)]
    body = vs[-1]
    for i in range(9999, 0, -1):
        body = Let(vs[i], add(vs[i - 1], const(i)), body)
    m = module_of(body, [x0])
    text = print_module(m)
    assert text.count("\n") > 10000
    back = parse(text)
    assert structural_equal(m, back)


def test_long_operator_chain_prints_as_text_the_parser_reads():
    e = parse_expr("free_var %x: int32; " + " + ".join(["%x"] * 5000))
    text = print_expr(e)
    assert text.count("\n") > 10 and text.startswith("%0 = add(add(")
    assert structural_equal(e, parse_expr("free_var %x: int32;\n" + text), map_free_vars=True)


def test_deeply_nested_calls_print():
    e = const(0)
    for _ in range(200):
        e = Call(OpRef("negative"), [e])
    assert structural_equal(e, parse_expr(print_expr(e)))


def test_show_types_adds_comments_that_parse_as_comments():
    m = parse(HEADER + "def @main(%x: int32) -> int32 { %x + 1 }")
    call = m.functions["main"].body
    call.checked_type = I32
    text = print_module(m, show_types=True)
    assert "add(%x, 1) /* ty=int32 */" in text
    assert structural_equal(parse(text), m)


# ---- structural equality ----

def eq(a, b, **kw):
    return structural_equal(parse_expr(a), parse_expr(b), **kw)


def test_alpha_equivalence():
    assert eq("fn (%x) { %x }", "fn (%y) { %y }")
    assert not eq("fn (%x, %y) { %x }", "fn (%a, %b) { %b }")
    assert eq("let %a = 1; let %b = %a; (%a, %b)", "let %p = 1; let %q = %p; (%p, %q)")
    assert not eq("let %a = 1; let %b = 2; %a", "let %a = 1; let %b = 2; %b")
    assert eq("fn [A](%x: A) -> A { %x }", "fn [B](%y: B) -> B { %y }")
    assert not eq("fn [A, B](%x: A) -> B { %x }", "fn [A, B](%x: B) -> A { %x }")


def test_constants_types_and_attributes_matter():
    assert not eq("1", "1i64")
    assert not eq("1f", "2f")
    assert eq("nanf", "nanf")
    assert not eq("fn (%x: int32) { %x }", "fn (%x: int64) { %x }")
    assert not eq("fn (%x: int32) { %x }", "fn (%x) { %x }")
    assert eq("fn (%x: _) { %x }", "fn (%y: _) { %y }")
    assert not eq("fn () -> int32 { 1 }", "fn () { 1 }")
    assert not eq("cast(1, dtype=\"int32\")", "cast(1, dtype=\"int64\")")
    assert not eq("sum(1, axis=[1])", "sum(1)")
    assert eq("sum(1, axis=[1, 2])", "sum(1, axis=(1, 2))")
    assert not eq("fn (Primitive=1) { 1 }", "fn () { 1 }")
    assert not eq("(1, 2)", "(1, 2, 3)")
    assert not eq("match? (1) { _ => 1 }", "match (1) { _ => 1 }")
    assert not eq("ref(1)", "ref_read(1)")


def test_free_variables_are_compared_by_identity_unless_mapped():
    x, y = Var("x"), Var("y")
    assert structural_equal(add(x, y), add(x, y))
    assert not structural_equal(add(x, y), add(y, x))
    assert structural_equal(add(x, y), add(y, x), map_free_vars=True)
    assert not structural_equal(add(x, x), add(x, y), map_free_vars=True)


def test_spans_and_sharing_are_ignored():
    a = parse_expr("%0 = 1 + 2; (%0, %0)")
    b = parse_expr("(1 + 2,\n 1 + 2)")
    assert structural_equal(a, b)


def test_pattern_variables_pair_up():
    lst = HEADER + "type List[A] { Cons(A, List[A]), Nil }\n"
    m1 = parse(lst + "def @f(%l: List[int32]) { match (%l) { Cons(%a, %b) => %a, Nil => 0 } }")
    m2 = parse(lst + "def @f(%k: List[int32]) { match (%k) { Cons(%p, %q) => %p, Nil => 0 } }")
    m3 = parse(lst + "def @f(%k: List[int32]) { match (%k) { Cons(%p, %q) => %q, Nil => 0 } }")
    assert structural_equal(m1, m2) and not structural_equal(m1, m3)


def test_module_equality():
    a = parse(HEADER + "type T { A, B }\ndef @f() { A }")
    assert structural_equal(a, parse(HEADER + "type T { A, B }\ndef @f() { A }"))
    assert not structural_equal(a, parse(HEADER + "type T { B, A }\ndef @f() { A }"))
    assert not structural_equal(a, parse(HEADER + "type T { A, B }\ndef @g() { A }"))
    assert not structural_equal(a, parse(HEADER + "type T { A, B }\ndef @f() { B }"))
    assert not structural_equal(a, a.functions["f"])


# ---- random programs ----

VAR_NAMES = ["x", "y", "x1", "_", "acc", "a/b", "0v", "p0", "n"]
ATTR_KEYS = ["units", "dtype", "axis", "newshape", "keepdims", "alpha"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = {"float16": 16, "float32": 32, "float64": 64}


class ProgramGen:
    """Draws a random well-scoped module: every variable use is bound, constructors and globals
    exist, and shared sub-expressions are only reused where their variables are in scope."""

    def __init__(self, draw, ops):
        self.draw = draw
        self.ops = ops
        self.frames = [[]]  # nodes that later expressions in this scope may share
        self.vars: list = []  # variables in scope
        self.tparams: list = []  # type parameter names in scope
        self.adts: dict = {}
        self.ctors: list = []
        self.globals: list = []

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flip(self, p=0.5):
        # bounded integers are drawn near-uniformly (floats lean hard towards 0)
        return self.draw(st.integers(0, 99)) < p * 100

    def count(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    # types

    def type_(self, depth=2):
        kinds = ["scalar", "scalar", "tensor", "incomplete"]
        if depth > 0:
            kinds += ["tuple", "func", "ref"]
        if self.adts:
            kinds.append("adt")
        if self.tparams:
            kinds.append("tvar")
        k = self.pick(kinds)
        if k == "scalar":
            return scalar(self.pick(INT_DTYPES + list(FLOAT_DTYPES) + ["bool"]))
        if k == "tensor":
            dims = tuple(self.pick([1, 2, 3, None]) for _ in range(self.count(1, 3)))
            return TensorType(dims, self.pick(["float32", "int32", "bool"]))
        if k == "incomplete":
            return IncompleteType()
        if k == "tuple":
            return TupleType(tuple(self.type_(depth - 1) for _ in range(self.count(0, 3))))
        if k == "func":
            return FuncType(tuple(self.type_(depth - 1) for _ in range(self.count(0, 2))),
                            self.type_(depth - 1))
        if k == "ref":
            return RefType(self.type_(depth - 1))
        if k == "tvar":
            return TypeVar(self.pick(self.tparams))
        name = self.pick(self.adts)
        arity = len(self.adts[name].type_params)
        return TypeCall(name, tuple(self.type_(max(depth - 1, 0)) for _ in range(arity)))

    def maybe_type(self):
        return self.type_() if self.flip(0.3) else None

    # scopes

    def made(self, node):
        self.frames[-1].append(node)
        return node

    def scoped(self, new_vars, build):
        """Run build with new_vars in scope; nodes made inside are not shared outside."""
        saved = len(self.vars)
        self.vars.extend(new_vars)
        self.frames.append([])
        try:
            return build()
        finally:
            self.frames.pop()
            del self.vars[saved:]

    def new_var(self):
        return Var(self.pick(VAR_NAMES), self.maybe_type())

    # expressions

    def constant(self):
        dtype = self.pick(INT_DTYPES + list(FLOAT_DTYPES) + ["bool"])
        if dtype == "bool":
            v = self.draw(st.booleans())
        elif dtype in FLOAT_DTYPES:
            v = self.draw(st.floats(width=FLOAT_DTYPES[dtype]))
        else:
            info = np.iinfo(dtype)
            v = self.draw(st.integers(int(info.min), int(info.max)))
        return Constant(np.array(v, dtype=dtype))

    def leaf(self):
        kinds = ["const", "const"]
        if self.vars:
            kinds += ["var", "var", "var"]
        if self.globals:
            kinds.append("global")
        if self.ops:
            kinds.append("op")
        if self.ctors:
            kinds.append("ctor")
        k = self.pick(kinds)
        if k == "const":
            return self.constant()
        if k == "var":
            return self.pick(self.vars)
        if k == "global":
            return GlobalVar(self.pick(self.globals))
        if k == "op":
            return OpRef(self.pick(self.ops))
        c = self.pick(self.ctors)
        if c.inputs:
            return ConstructorRef(c.name, c)
        return self.made(Call(ConstructorRef(c.name, c), []))

    def attrs(self):
        def value(depth):
            k = self.pick(["int", "float", "str", "bool", "none"] + (["list"] if depth else []))
            if k == "int":
                return self.draw(st.integers(-(2 ** 63), 2 ** 63 - 1))
            if k == "float":
                return self.draw(st.floats())
            if k == "str":
                return self.draw(st.text(string.ascii_letters + "_ ./-", max_size=6))
            if k == "bool":
                return self.draw(st.booleans())
            if k == "none":
                return None
            return [value(depth - 1) for _ in range(self.count(0, 3))]
        keys = self.draw(st.lists(st.sampled_from(ATTR_KEYS), max_size=3, unique=True))
        return {k: value(2) for k in keys}

    def args(self, depth, n=None):
        n = self.count(0, 3) if n is None else n
        return [self.expr(depth - 1) for _ in range(n)]

    def expr(self, depth):
        if depth <= 0 or self.flip(0.2):
            return self.leaf()
        kinds = ["op", "global", "ctor", "let", "seq", "if", "tuple", "proj", "match", "fn",
                 "ref", "call"] + ["share"] * 5
        pool = [n for frame in self.frames for n in frame]
        k = self.pick(kinds if pool else kinds[:-5])
        if k == "share":
            return self.pick(pool)
        if k == "op" and self.ops:
            attrs = self.attrs() if self.flip() else None
            return self.made(Call(OpRef(self.pick(self.ops)), self.args(depth), attrs))
        if k == "global" and self.globals:
            return self.made(Call(GlobalVar(self.pick(self.globals)), self.args(depth)))
        if k == "ctor" and self.ctors:
            c = self.pick(self.ctors)
            return self.made(Call(ConstructorRef(c.name, c), self.args(depth, len(c.inputs))))
        if k == "let":
            v = self.new_var()
            if self.flip(0.3):
                # a recursive function binding: the variable is visible in its own value
                value = self.scoped([v], lambda: self.function(depth - 1))
            else:
                value = self.expr(depth - 1)
            return self.made(Let(v, value, self.scoped([v], lambda: self.expr(depth - 1))))
        if k == "seq":
            return self.made(Let(Var("_"), self.expr(depth - 1), self.expr(depth - 1)))
        if k == "if":
            return self.made(If(self.expr(depth - 1), self.expr(depth - 1), self.expr(depth - 1)))
        if k == "tuple":
            return self.made(Tuple(self.args(depth)))
        if k == "proj":
            return self.made(TupleGetItem(self.expr(depth - 1), self.count(0, 3)))
        if k == "match":
            return self.made(self.match(depth))
        if k == "fn":
            return self.function(depth - 1)
        if k == "ref":
            which = self.pick(["create", "read", "write"])
            if which == "create":
                return self.made(RefCreate(self.expr(depth - 1)))
            if which == "read":
                return self.made(RefRead(self.expr(depth - 1)))
            return self.made(RefWrite(self.expr(depth - 1), self.expr(depth - 1)))
        return self.made(Call(self.expr(depth - 1), self.args(depth)))

    def function(self, depth):
        tparams = ["A", "B"][:self.count(0, 2)] if self.flip(0.3) else []
        saved = list(self.tparams)
        self.tparams = sorted(set(self.tparams) | set(tparams))
        try:
            params = [self.new_var() for _ in range(self.count(0, 3))]
            attrs = {"Primitive": 1} if self.flip(0.2) else {}
            ret = self.maybe_type()
            body = self.scoped(params, lambda: self.expr(depth))
        finally:
            self.tparams = saved
        return self.made(Function(params, body, ret, [TypeVar(t) for t in tparams], attrs))

    def pattern(self, depth, bound):
        kinds = ["wild", "var", "var"]
        if depth > 0:
            kinds.append("tuple")
            if self.ctors:
                kinds += ["ctor", "ctor"]
        k = self.pick(kinds)
        if k == "wild":
            return PatternWildcard()
        if k == "var":
            v = self.new_var()
            bound.append(v)
            return PatternVar(v)
        if k == "tuple":
            return PatternTuple([self.pattern(depth - 1, bound) for _ in range(self.count(0, 3))])
        c = self.pick(self.ctors)
        return PatternConstructor(c.name, c, [self.pattern(depth - 1, bound) for _ in c.inputs])

    def match(self, depth):
        data = self.expr(depth - 1)
        clauses = []
        for _ in range(self.count(1, 3)):
            bound = []
            lhs = self.pattern(2, bound)
            clauses.append(Clause(lhs, self.scoped(bound, lambda: self.expr(depth - 1))))
        return Match(data, clauses, self.flip(0.7))

    # definitions

    def module(self) -> Module:
        m = Module()
        adt_names = ["Box", "Tree2", "Pair"][:self.count(0, 3)]
        arities = {name: self.count(0, 2) for name in adt_names}
        n_ctor = 0
        for name in adt_names:
            params = [TypeVar(p) for p in ["A", "B"][:arities[name]]]
            td = TypeData(name, params, [])
            self.adts[name] = td  # visible to its own constructors: recursive types
            self.tparams = [p.name for p in params]
            for tag in range(self.count(1, 3)):
                inputs = [self.type_(1) for _ in range(self.count(0, 2))]
                c = Constructor(f"C{n_ctor}", inputs, tag, name)
                n_ctor += 1
                td.constructors.append(c)
            self.tparams = []
            m.type_defs[name] = td
            for c in td.constructors:
                m.constructors[c.name] = c
                self.ctors.append(c)
        self.globals = ["main", "f", "g2"][:self.count(1, 3)]
        for name in self.globals:
            self.frames = [[]]
            m.functions[name] = self.function(5)
        return m


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_programs_round_trip(data):
    ops = sorted(_known_ops() or ["add", "multiply", "negative", "nn.dense", "cast"])
    ops = [o for o in ("add", "multiply", "negative", "nn.dense", "cast", "reshape", "less",
                       "concatenate") if o in ops]
    m = ProgramGen(data.draw, ops).module()
    with np.errstate(all="ignore"):
        back = roundtrip(m)
    for name, f in m.functions.items():
        # sharing is kept: one parsed node for every distinct printed node
        assert len(non_atomic_nodes(back.functions[name])) == len(non_atomic_nodes(f))


def test_tensor_constants_print_as_metadata_references():
    c = Constant(np.zeros((2, 3), "float32"))
    m = module_of(Tuple([c, c, Constant(np.ones(4, "int32"))]))
    m.functions["g"] = Function([], c)
    text = print_module(m)
    assert "(meta[relay.Constant][0] /* ty=Tensor[(2, 3), float32] */, meta[relay.Constant][0]" in text
    assert "meta[relay.Constant][1] /* ty=Tensor[(4,), int32] */)" in text
    assert "def @g() {\n  meta[relay.Constant][0]" in text
    assert "\n#[metadata]\n{" in text
    back = parse(text)
    assert structural_equal(back, m)
    # both references to one tensor share its one table entry, as TVM's one Constant does
    assert back.functions["g"].body.data is back.functions["main"].body.fields[1].data
    bare = print_module(m, metadata=False)
    assert "#[metadata]" not in bare
    with pytest.raises(RelayError, match="this file has none"):
        parse(bare)
