"""LambdaLift: nested functions become globals; closures capture their free variables."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from pass_helpers import i32, load, nodes, run, same

from rvmdbg.passes.anf import to_a_normal_form
from rvmdbg.passes.lambda_lift import free_vars, lambda_lift
from rvmdbg.relay.ast import (Call, Constant, Function, GlobalVar, Let, OpRef, Tuple, Var,
                              children)
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.typecheck import check_module


def lift(text: str, anf: bool = False):
    mod = load(text)
    src = check_module(to_a_normal_form(mod)) if anf else mod
    return mod, check_module(lambda_lift(src))


def nested_functions(mod) -> list:
    """Non-primitive functions below a global's own function."""
    out = []
    for fn in mod.functions.values():
        inner = fn.body if not fn.attrs.get("Closure") else fn.body.body
        out += [n for n in nodes(inner) if isinstance(n, Function) and not n.is_primitive]
    return out


def test_closure_becomes_closure_global():
    mod, out = lift("""
def @make_adder(%n: int32) -> fn (int32) -> int32 {
  fn (%x: int32) -> int32 { %x + %n }
}
def @main(%x: int32) -> int32 { @make_adder(5)(%x) }
""")
    assert not nested_functions(out)
    lifted = out.functions["make_adder_lifted_0"]
    assert lifted.attrs == {"Closure": 1}
    assert [p.name for p in lifted.params] == ["n"]
    assert str(lifted.params[0].type_annotation) == "int32"
    assert isinstance(lifted.body, Function) and [p.name for p in lifted.body.params] == ["x"]
    # the original fn's span is kept on the lifted global's functions
    original = mod.functions["make_adder"].body
    assert lifted.span == original.span and lifted.body.span == original.span
    site = out.functions["make_adder"].body
    assert isinstance(site, Call) and isinstance(site.op, GlobalVar)
    assert site.op.name == "make_adder_lifted_0" and site.args == out.functions["make_adder"].params
    assert list(out.functions) == ["make_adder", "make_adder_lifted_0", "main"]
    assert same(run(out, i32(4)), i32(9))


def test_function_without_free_variables_becomes_plain_global():
    mod, out = lift("""
def @main(%l: List[int32]) -> List[int32] {
  let %sq = fn (%x: int32) -> int32 { %x * %x };
  @map(%sq, %l)
}""", anf=True)
    assert not nested_functions(out)
    g = out.functions["main_lifted_0"]
    assert not g.attrs.get("Closure") and [p.name for p in g.params] == ["x"]
    let = out.functions["main"].body
    assert isinstance(let, Let) and isinstance(let.value, GlobalVar)
    assert let.value.name == "main_lifted_0"


def test_recursive_local_function_without_captures_calls_itself_directly():
    mod, out = lift("""
def @main(%k: int32) -> int32 {
  let %fact = fn (%n: int32) -> int32 {
    if (%n == 0) { 1 } else { %n * %fact(%n - 1) }
  };
  %fact(%k)
}""", anf=True)
    assert not nested_functions(out)
    g = out.functions["main_lifted_0"]
    self_calls = [n for n in nodes(g) if isinstance(n, Call) and isinstance(n.op, GlobalVar)
                  and n.op.name == "main_lifted_0"]
    assert len(self_calls) == 1 and len(self_calls[0].args) == 1
    assert same(run(out, i32(5)), i32(120))


def test_recursive_closure_rebuilds_itself():
    text = """
def @main(%n: int32) -> (int32, int32) {
  let %count = ref(0);
  let %total = ref(0);
  let %visit = fn (%i: int32) -> () {
    ref_write(%count, ref_read(%count) + 1);
    ref_write(%total, ref_read(%total) + %i)
  };
  let %loop = fn (%i: int32) -> () {
    if (%i > %n) { () } else { %visit(%i); %loop(%i + 1) }
  };
  %loop(1);
  (ref_read(%count), ref_read(%total))
}"""
    for anf in (False, True):
        mod, out = lift(text, anf=anf)
        assert not nested_functions(out)
        loop = out.functions["main_lifted_1"]
        assert loop.attrs.get("Closure") and [p.name for p in loop.params] == ["n", "visit"]
        first = loop.body.body
        assert isinstance(first, Let) and first.var.name == "loop"
        assert isinstance(first.value, Call) and first.value.op.name == "main_lifted_1"
        result = run(out, i32(5))
        assert [int(f) for f in result.fields] == [5, 15]


def test_recursive_function_used_inside_an_inner_closure():
    mod, out = lift("""
def @main(%k: int32) -> int32 {
  let %base = 0;
  let %f = fn (%n: int32) -> int32 {
    let %g = fn (%m: int32) -> int32 {
      if (%m <= %base) { %base } else { %m + %f(%m - 1) }
    };
    %g(%n)
  };
  %f(%k)
}""", anf=True)
    assert not nested_functions(out)
    assert same(run(out, i32(4)), i32(10))


def test_nested_and_polymorphic_closures():
    mod, out = lift("""
def @curried(%a: int32) -> fn (int32) -> fn (int32) -> int32 {
  fn (%b: int32) -> fn (int32) -> int32 {
    fn (%c: int32) -> int32 { %a * %b + %c }
  }
}
def @twice[A](%f: fn (A) -> A) -> fn (A) -> A {
  fn (%x: A) -> A { %f(%f(%x)) }
}
def @main(%x: int32) -> (int32, int32) {
  (@curried(2)(%x)(1), @twice(fn (%y: int32) -> int32 { %y * 3 })(%x))
}""")
    assert not nested_functions(out)
    assert [p.name for p in out.functions["curried_lifted_0"].params] == ["a"]
    assert [p.name for p in out.functions["curried_lifted_1"].params] == ["a", "b"]
    twice = out.functions["twice_lifted_0"]
    assert [str(t) for t in twice.type_params] == ["A"]
    assert "twice_lifted_0[A]" in print_module(out)
    result = run(out, i32(4))
    assert [int(f) for f in result.fields] == [9, 36]
    assert same(result, run(mod, i32(4)))


def test_free_vars_in_order_of_first_use():
    mod = load("""
def @main(%a: int32, %b: int32, %c: int32) -> fn (int32) -> int32 {
  fn (%x: int32) -> int32 { let %y = %c + %x; match? (Some(%b)) { Some(%z) => %z + %y + %a } }
}""")
    fv = free_vars(mod.functions["main"].body)
    assert [v.name for v in fv] == ["c", "b", "a"]
    assert all(isinstance(v, Var) for v in fv)


def _reference_free_vars(e, bound=frozenset(), out=None) -> list:
    """Free variables by plain recursion, in order of first use (the definition)."""
    out = [] if out is None else out
    if isinstance(e, Var):
        if e not in bound and e not in out:
            out.append(e)
    elif isinstance(e, Function):
        if not e.is_primitive:
            _reference_free_vars(e.body, bound | set(e.params), out)
    elif isinstance(e, Let):
        inner = bound | {e.var}
        _reference_free_vars(e.value, inner, out)
        _reference_free_vars(e.body, inner, out)
    else:
        for c in children(e):
            _reference_free_vars(c, bound, out)
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_free_vars_match_the_definition(data):
    """free_vars (with its shortcut for a call of atoms) agrees with plain recursion. As in
    every AST, a Var is bound in one place, and used only inside it or free."""
    outer = [Var(f"v{i}") for i in range(3)]

    def expr(depth, scope):
        kind = data.draw(st.sampled_from(["var", "const", "global", "call"] +
                                         (["let", "fn", "tuple"] if depth < 3 else [])))
        if kind == "var":
            return data.draw(st.sampled_from(scope))
        if kind == "const":
            return Constant(np.array(1, dtype="int32"))
        if kind == "global":
            return GlobalVar("g")
        if kind == "call":
            op = data.draw(st.sampled_from([OpRef("add"), GlobalVar("f"), scope[-1]]))
            return Call(op, [expr(depth + 1, scope)
                             for _ in range(data.draw(st.integers(0, 3)))])
        if kind == "let":
            v = Var("l")
            return Let(v, expr(depth + 1, scope), expr(depth + 1, scope + [v]))
        if kind == "fn":
            p = Var("p")
            return Function([p], expr(depth + 1, scope + [p]))
        return Tuple([expr(depth + 1, scope) for _ in range(data.draw(st.integers(0, 3)))])

    e = expr(0, outer)
    assert free_vars(e) == _reference_free_vars(e)
