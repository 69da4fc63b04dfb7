"""Tests of the Relay type checker: inference, polymorphism, ADTs, refs, exhaustiveness, deferred
operator relations, error messages with their spans, re-checking, and very large programs."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay import ast
from rvmdbg.relay.ast import Call, ConstructorRef, GlobalVar, Let, Match, Var
from rvmdbg.relay.diagnostics import NameResolutionError, RelayError, RelayTypeError
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.parser import parse, parse_expr
from rvmdbg.relay.typecheck import TypeWarning, check_expr, check_module
from rvmdbg.relay.types import (
    UNIT, FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall, TypeVar, scalar,
)

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("*.relay"))
EXAMPLES_DIR = ROOT.parent / "shared" / "examples"
if not EXAMPLES_DIR.is_dir():
    EXAMPLES_DIR = ROOT / "tests" / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.relay"))
HEADER = '#[version = "0.0.5"]\n'

I32, F32, BOOL = scalar("int32"), scalar("float32"), scalar("bool")
A, B = TypeVar("A"), TypeVar("B")


def List(t):
    return TypeCall("List", (t,))


def check(body: str, prelude: bool = True):
    """Parse (with the prelude's types and functions) and type-check a program."""
    mod = load_module(HEADER + body.lstrip("\n"), "<test>", prelude=prelude)
    return check_module(mod)


def fails(body: str, cls=RelayTypeError, prelude: bool = True) -> RelayError:
    with pytest.raises(cls) as info:
        check(body, prelude)
    err = info.value
    assert err.source is not None, "errors carry the source so format() can quote the line"
    return err


def sig(mod, name: str) -> str:
    return str(mod.functions[name].checked_type)


def all_nodes(mod):
    """Every expression, Var and pattern node of every global, once."""
    out, seen = [], set()
    stack = list(mod.functions.values())
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if isinstance(n, ast.Function):
            stack.extend(n.params)
        if isinstance(n, Let):
            stack.append(n.var)
        if isinstance(n, Match):
            for c in n.clauses:
                stack.extend(ast.pattern_vars(c.lhs))
        if isinstance(n, ast.Expr):
            stack.extend(ast.children(n))
    return out


def has_incomplete(t) -> bool:
    if isinstance(t, IncompleteType):
        return True
    for attr in ("fields", "params", "args"):
        if any(has_incomplete(x) for x in getattr(t, attr, ())):
            return True
    return any(has_incomplete(getattr(t, a)) for a in ("ret", "value") if hasattr(t, a))


def assert_fully_typed(mod):
    for n in all_nodes(mod):
        assert n.checked_type is not None, f"{type(n).__name__} has no checked_type"
        assert not has_incomplete(n.checked_type), f"{type(n).__name__}: {n.checked_type!r}"
        if isinstance(n, Call):
            assert not any(has_incomplete(t) for t in n.type_args)


def find_nodes(mod, cls, pred=lambda n: True):
    return [n for n in all_nodes(mod) if isinstance(n, cls) and pred(n)]


# ---------------------------------------------------------------- whole programs

@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_shared_examples_typecheck(path):
    mod = check_module(load_module(path.read_text(), str(path)))
    assert_fully_typed(mod)
    assert isinstance(mod.functions["main"].checked_type, FuncType)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_programs_typecheck(path):
    mod = check_module(load_module(path.read_text(), str(path)))
    assert_fully_typed(mod)


def test_example_signatures():
    def load(name):
        return check_module(load_module((EXAMPLES_DIR / name).read_text(), name))

    assert sig(load("tuple_swap.relay"), "swap") == "fn [A, B]((A, B)) -> (B, A)"
    assert sig(load("counter_ref.relay"), "tick") == "fn (ref(int32), int32) -> int32"
    mod = load("policy_argmax.relay")
    assert sig(mod, "main") == ("fn (Tensor[(1, 3), float32], Tensor[(4, 3), float32]) -> int32")
    mod = load("reshape_chain.relay")
    assert sig(mod, "main") == "fn (Tensor[(2, 3), float32]) -> Tensor[(3, 2), float32]"


def test_prelude_typechecks_with_its_declared_signatures():
    text = (ROOT / "rvmdbg" / "relay" / "prelude.relay").read_text()
    mod = check_module(parse(text, "prelude.relay"))
    assert_fully_typed(mod)
    assert sig(mod, "map") == "fn [A, B](fn (A) -> B, List[A]) -> List[B]"
    assert sig(mod, "compose") == "fn [A, B, C](fn (B) -> C, fn (A) -> B) -> fn (A) -> C"
    assert sig(mod, "sum") == "fn (List[int32]) -> int32"
    assert sig(mod, "size") == "fn [A](Tree[A]) -> int32"
    assert mod.warnings == []


# ---------------------------------------------------------------- basic constructs

def test_constants_tuples_and_projection():
    mod = check("""
def @main() {
  let %t = (1, 2.5f, True, 5i64, (3f64,));
  (%t.0, %t.1, %t.2, %t.3, (%t.4).0)
}""", prelude=False)
    assert sig(mod, "main") == "fn () -> (int32, float32, bool, int64, float64)"
    assert_fully_typed(mod)


def test_tensor_constant_type_comes_from_the_array():
    mod = check("def @main() { 0 }", prelude=False)
    t = check_expr(ast.Constant(np.zeros((2, 3), "float32")), mod)
    assert t == TensorType((2, 3), "float32")


def test_let_sequencing_and_unit():
    mod = check("""
def @main(%x: int32) {
  let %r = ref(%x);
  ref_write(%r, 3);
  let %u = ref_write(%r, 4);
  (%u, ref_read(%r))
}""", prelude=False)
    assert sig(mod, "main") == "fn (int32) -> ((), int32)"
    seq = find_nodes(mod, Let, lambda n: n.var.name == "_")
    assert seq and seq[0].var.checked_type == UNIT


def test_let_annotation_is_respected():
    mod = check("""
def @main(%x: Tensor[(2, 3), float32]) {
  let %y: Tensor[(?, 3), float32] = %x;
  %y
}""", prelude=False)
    assert sig(mod, "main") == "fn (Tensor[(2, 3), float32]) -> Tensor[(?, 3), float32]"


def test_if_needs_bool_and_joins_branches():
    mod = check("""
def @main(%c: bool, %x: int32) { if (%c) { %x } else { 0 } }""", prelude=False)
    assert sig(mod, "main") == "fn (bool, int32) -> int32"


def test_recursive_local_function():
    mod = check("""
def @main(%n: int32) -> int32 {
  let %fact = fn (%k: int32) -> int32 {
    if (%k <= 1) { 1 } else { %k * %fact(%k - 1) }
  };
  %fact(%n)
}""", prelude=False)
    fact = find_nodes(mod, Var, lambda v: v.name == "fact")[0]
    assert str(fact.checked_type) == "fn (int32) -> int32"
    assert_fully_typed(mod)


def test_recursive_local_function_without_annotations():
    mod = check("""
def @main(%n: int32) {
  let %count = fn (%k) {
    if (%k == 0) { 0 } else { 1 + %count(%k - 1) }
  };
  %count(%n)
}""", prelude=False)
    assert sig(mod, "main") == "fn (int32) -> int32"
    k = find_nodes(mod, Var, lambda v: v.name == "k")[0]
    assert k.checked_type == I32


def test_function_node_type_and_closure_types():
    mod = check("""
def @adder(%n: int32) -> fn(int32) -> int32 {
  fn (%x: int32) { %x + %n }
}
def @main() { @adder(1)(2) }""", prelude=False)
    inner = mod.functions["adder"].body
    assert isinstance(inner, ast.Function)
    assert str(inner.checked_type) == "fn (int32) -> int32"
    assert sig(mod, "main") == "fn () -> int32"


def test_refs():
    mod = check("""
def @main() {
  let %r = ref((1, 2f));
  let %old = ref_read(%r);
  ref_write(%r, (%old.0 + 1, 2f));
  ref_read(%r)
}""", prelude=False)
    r = find_nodes(mod, Var, lambda v: v.name == "r")[0]
    assert r.checked_type == RefType(TupleType((I32, F32)))
    assert sig(mod, "main") == "fn () -> (int32, float32)"


def test_global_used_before_definition_and_mutual_recursion():
    mod = check("""
def @is_even(%n: int32) -> bool { if (%n == 0) { True } else { @is_odd(%n - 1) } }
def @is_odd(%n: int32) -> bool { if (%n == 0) { False } else { @is_even(%n - 1) } }
def @main() { @is_even(10) }""", prelude=False)
    assert sig(mod, "main") == "fn () -> bool"


# ---------------------------------------------------------------- polymorphism

def test_id_instantiated_per_use_with_type_args():
    mod = check("""
def @main() { (@id(1), @id(2f), @id(Nil)) }""")
    # the element type of Nil is unconstrained, so main itself is generalized over it
    assert sig(mod, "main") == "fn [A]() -> (int32, float32, List[A])"
    calls = find_nodes(mod, Call, lambda c: isinstance(c.op, GlobalVar) and c.op.name == "id")
    assert sorted(str(c.type_args[0]) for c in calls) == ["List[A]", "float32", "int32"]


def test_compose_and_map_over_lists():
    mod = check("""
def @main(%xs: List[int32]) {
  let %inc = fn (%x: int32) { %x + 1 };
  let %to_f = fn (%x: int32) { cast(%x, dtype="float32") };
  (@map(@compose(%to_f, %inc), %xs), @map(Some, %xs), @length(@map(%inc, %xs)))
}""")
    assert sig(mod, "main") == "fn (List[int32]) -> (List[float32], List[Option[int32]], int32)"
    calls = find_nodes(mod, Call, lambda c: isinstance(c.op, GlobalVar) and c.op.name == "compose")
    assert [str(t) for t in calls[0].type_args] == ["int32", "int32", "float32"]
    some = find_nodes(mod, ConstructorRef, lambda c: c.name == "Some")[0]
    assert str(some.checked_type) == "fn (int32) -> Option[int32]"
    assert_fully_typed(mod)


def test_polymorphic_global_as_a_value():
    mod = check("""
def @main() { let %f = @iterate(fn (%x: int32) { %x * 2 }, 3); (%f(1), @id) }""")
    t = mod.functions["main"].checked_type.ret
    assert t.fields[0] == I32
    assert isinstance(t.fields[1], FuncType) and not t.fields[1].type_params


def test_recursive_polymorphic_call_type_args():
    mod = check("""
def @len2[A](%xs: List[A]) -> int32 {
  match (%xs) { Nil => 0, Cons(_, %t) => 1 + @len2(%t) }
}""")
    rec = find_nodes(mod, Call, lambda c: isinstance(c.op, GlobalVar) and c.op.name == "len2")[0]
    assert rec.type_args == [A]


def test_unannotated_global_is_generalized():
    mod = check("""
def @pair(%x, %y) { (%y, %x) }
def @main() { (@pair(1, 2f), @pair(Nil, True)) }""", prelude=True)
    assert sig(mod, "pair") == "fn [A, B](A, B) -> (B, A)"
    assert sig(mod, "main") == "fn [A]() -> ((float32, int32), (bool, List[A]))"
    fn = mod.functions["pair"]
    assert [str(p.checked_type) for p in fn.params] == ["A", "B"]


def test_unannotated_mutually_recursive_globals():
    mod = check("""
def @ping(%n, %acc) { if (%n == 0) { %acc } else { @pong(%n - 1, %acc) } }
def @pong(%n, %acc) { @ping(%n, %acc) }
def @main() { (@ping(3, 1f), @ping(2, Nil)) }""", prelude=True)
    assert sig(mod, "ping") == "fn [A](int32, A) -> A"
    assert sig(mod, "pong") == "fn [A](int32, A) -> A"
    rec = find_nodes(mod, Call, lambda c: isinstance(c.op, GlobalVar) and c.op.name == "ping"
                     and c.args and isinstance(c.args[0], Var))
    assert rec[0].type_args == [A]
    assert_fully_typed(mod)


def test_unannotated_param_used_as_ref_is_inferred():
    mod = check("""
def @tick(%c, %k: int32) -> int32 {
  if (%k == 0) { ref_read(%c) } else { ref_write(%c, ref_read(%c) + %k); @tick(%c, %k - 1) }
}""", prelude=False)
    assert sig(mod, "tick") == "fn (ref(int32), int32) -> int32"


def test_higher_order_unannotated_global_and_wildcard_annotations():
    mod = check("""
def @apply(%f, %x: _) -> _ { %f(%x) }
def @main() { (@apply(fn (%i: int32) { %i > 0 }, 3), @apply(fn (%p: (bool, int8)) { %p.1 }, (True, 1i8))) }
""", prelude=False)
    assert sig(mod, "apply") == "fn [A, B](fn (A) -> B, A) -> B"
    assert sig(mod, "main") == "fn () -> (bool, int8)"
    calls = find_nodes(mod, Call, lambda c: isinstance(c.op, GlobalVar) and c.op.name == "apply")
    assert all(len(c.type_args) == 2 for c in calls)


def test_callers_fix_an_operator_argument_type():
    # the relation in @double waits on %x; main's call fixes it to float32
    mod = check("""
def @double(%x) { %x + %x }
def @main() { @double(2f) }""", prelude=False)
    assert sig(mod, "double") == "fn (float32) -> float32"
    assert sig(mod, "main") == "fn () -> float32"


def test_local_polymorphic_function():
    mod = check("""
def @main() {
  let %ident = fn [T](%v: T) -> T { %v };
  (%ident(1), %ident(True))
}""", prelude=False)
    assert sig(mod, "main") == "fn () -> (int32, bool)"
    calls = find_nodes(mod, Call, lambda c: isinstance(c.op, Var) and c.op.name == "ident")
    assert sorted(str(c.type_args[0]) for c in calls) == ["bool", "int32"]


def test_local_polymorphic_function_passed_as_a_value():
    mod = check("""
def @main(%xs: List[int32]) {
  let %ident = fn [T](%v: T) -> T { %v };
  (@map(%ident, %xs), @map(%ident, Cons(True, Nil)))
}""")
    assert sig(mod, "main") == "fn (List[int32]) -> (List[int32], List[bool])"


def test_unconstrained_local_unknown_defaults_to_unit():
    mod = check("""
def @main() { let %unused = Nil; let %g = fn (%x) { %x }; 0 }""")
    nil = find_nodes(mod, Var, lambda v: v.name == "unused")[0]
    assert nil.checked_type == List(UNIT)
    assert_fully_typed(mod)


# ---------------------------------------------------------------- ADTs and match

def test_constructors_nullary_and_applied():
    mod = check("""
def @main() -> (List[()], List[int32], Option[bool], Option[Option[float32]], nat, nat) {
  (Nil, Cons(1, Nil), None, Some(Some(2f)), zero, succ(zero))
}""")
    nil = find_nodes(mod, Call, lambda c: isinstance(c.op, ConstructorRef) and c.op.name == "None")
    assert nil[0].checked_type == TypeCall("Option", (BOOL,)) and nil[0].type_args == [BOOL]
    cons = find_nodes(mod, Call, lambda c: isinstance(c.op, ConstructorRef) and c.op.name == "Cons")
    assert cons[0].type_args == [I32]


def test_nested_tree_adt():
    mod = check("""
def @main() {
  let %leaf = Rose(2, Nil);
  let %t = Rose(1, Cons(%leaf, Cons(Rose(3, Nil), Nil)));
  (@size(%t), @tmap(fn (%v: int32) { %v > 1 }, %t))
}""")
    assert sig(mod, "main") == "fn () -> (int32, Tree[bool])"
    t = find_nodes(mod, Var, lambda v: v.name == "t")[0]
    assert t.checked_type == TypeCall("Tree", (I32,))


def test_match_binds_pattern_variables():
    mod = check("""
def @main(%p: (List[int32], Option[float32])) {
  match (%p) {
    (Cons(%h, %rest), Some(%f)) => (%h, %f, %rest),
    (%l: List[int32], _) => (0, 0f, %l),
  }
}""")
    h = find_nodes(mod, Var, lambda v: v.name == "h")[0]
    f = find_nodes(mod, Var, lambda v: v.name == "f")[0]
    assert (h.checked_type, f.checked_type) == (I32, F32)
    assert sig(mod, "main").endswith("-> (int32, float32, List[int32])")
    assert_fully_typed(mod)


def test_patterns_get_the_type_they_match():
    mod = check("""
def @f(%p: (Option[int32], bool)) -> int32 { match (%p) { (Some(%v), _) => %v, _ => 0 } }""")
    match = mod.functions["f"].body
    tup = match.clauses[0].lhs
    assert str(tup.checked_type) == "(Option[int32], bool)"
    assert str(tup.patterns[0].checked_type) == "Option[int32]"
    assert tup.patterns[1].checked_type == BOOL


def test_match_scrutinee_type_inferred_from_patterns():
    mod = check("""
def @head_or(%xs, %d: int32) { match (%xs) { Cons(%x, _) => %x, Nil => %d } }""")
    assert sig(mod, "head_or") == "fn (List[int32], int32) -> int32"


def test_match_not_exhaustive_missing_nil():
    err = fails("""
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, _) => %x,
  }
}""")
    assert err.message == "match is not exhaustive: missing Nil"
    assert (err.span.line, err.span.col) == (3, 3)
    assert "match (%xs)" in err.format()


def test_match_not_exhaustive_nested():
    err = fails("""
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    Nil => 0,
    Cons(_, Cons(_, _)) => 1,
  }
}""")
    assert err.message == "match is not exhaustive: missing Cons(_, Nil)"


def test_match_not_exhaustive_tuples_and_several_cases():
    err = fails("""
def @f(%a: Option[int32], %b: Option[int32]) -> int32 {
  match ((%a, %b)) {
    (Some(_), Some(_)) => 1,
    (None, None) => 0,
  }
}""")
    assert err.message == "match is not exhaustive: missing (Some(_), None), (None, Some(_))"


def test_match_not_exhaustive_missing_constructor_with_fields():
    err = fails("""
def @f(%n: nat) -> int32 { match (%n) { zero => 0 } }""")
    assert err.message == "match is not exhaustive: missing succ(_)"


def test_partial_match_and_wildcards_are_accepted():
    mod = check("""
def @f(%xs: List[int32]) -> int32 { match? (%xs) { Cons(%x, _) => %x } }
def @g(%xs: List[int32]) -> int32 { match (%xs) { Cons(%x, _) => %x, _ => 0 } }
def @h(%xs: List[int32]) -> int32 { match (%xs) { %all => @length(%all) } }""")
    assert mod.warnings == []


def test_unreachable_clause_is_a_warning():
    mod = check("""
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    _ => 0,
    Nil => 1,
  }
}""")
    assert len(mod.warnings) == 1
    w = mod.warnings[0]
    assert isinstance(w, TypeWarning) and "unreachable" in w.message
    assert w.span.line == 5
    assert ": warning: " in w.format()


# ---------------------------------------------------------------- operators

def test_op_attrs_are_normalized():
    mod = check("""
def @main(%x: Tensor[(2, 3), float32]) { sum(%x, axis=[1]) }""", prelude=False)
    call = mod.functions["main"].body
    assert "keepdims" in call.attrs and call.attrs["axis"] == [1]
    assert sig(mod, "main") == "fn (Tensor[(2, 3), float32]) -> Tensor[(2,), float32]"


def test_deferred_op_relation_solved_by_later_call():
    mod = check("""
def @main() {
  let %f = fn (%a, %b) { %a * %b + %a };
  %f(2f, 3f)
}""", prelude=False)
    assert sig(mod, "main") == "fn () -> float32"
    a = find_nodes(mod, Var, lambda v: v.name == "a")[0]
    assert a.checked_type == F32
    assert_fully_typed(mod)


def test_deferred_tuple_projection():
    mod = check("""
def @main() {
  let %second = fn (%p) { %p.1 };
  %second((1, Cons(2f, Nil), 3))
}""")
    assert sig(mod, "main") == "fn () -> List[float32]"


def test_deferred_relation_through_tensor_shapes():
    mod = check("""
def @main(%w: Tensor[(4, 3), float32]) {
  let %layer = fn (%x) { nn.relu(nn.dense(%x, %w, units=4)) };
  %layer(ones(shape=[2, 3], dtype="float32"))
}""", prelude=False)
    assert sig(mod, "main") == "fn (Tensor[(4, 3), float32]) -> Tensor[(2, 4), float32]"


# ---------------------------------------------------------------- Any dims

def test_any_dim_accepts_static_argument():
    mod = check("""
def @f(%x: Tensor[(?, 3), int64]) -> Tensor[(?, 3), int64] { %x }
def @main(%y: Tensor[(2, 3), int64]) { @f(%y) }""", prelude=False)
    assert sig(mod, "main") == "fn (Tensor[(2, 3), int64]) -> Tensor[(?, 3), int64]"


def test_branch_join_gives_any_dim():
    mod = check("""
def @main(%c: bool, %a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) {
  if (%c) { %a } else { %b }
}""", prelude=False)
    assert sig(mod, "main").endswith("-> Tensor[(?, 3), float32]")
    mod = check("""
def @main(%o: Option[Tensor[(2,), float32]], %b: Tensor[(5,), float32]) {
  match (%o) { Some(%a) => %a, None => %b }
}""")
    assert sig(mod, "main").endswith("-> Tensor[(?,), float32]")


def test_static_dims_must_agree_in_arguments():
    err = fails("""
def @f(%x: Tensor[(2, 3), int64]) -> int32 { 0 }
def @main(%y: Tensor[(2, 4), int64]) { @f(%y) }""", prelude=False)
    assert "expected Tensor[(2, 3), int64], found Tensor[(2, 4), int64]" in err.message
    assert "dimension 1" in err.message


# ---------------------------------------------------------------- errors and spans

def test_arity_error():
    err = fails("""
def @f(%a: int32, %b: int32) -> int32 { %a }
def @main() { @f(1, 2, 3) }""", prelude=False)
    assert err.message == "@f takes 2 arguments, 3 given"
    assert (err.span.line, err.span.col) == (3, 15)


def test_constructor_arity_error():
    err = fails("def @main() { Cons(1) }")
    assert err.message == "Cons takes 2 arguments, 1 given"


def test_argument_mismatch_with_literal_hint():
    err = fails("""
def @f(%a: float32) -> float32 { %a }
def @main() {
  @f(1)
}""", prelude=False)
    assert err.message == "type mismatch in argument 1 of @f: expected float32, found int32"
    assert (err.span.line, err.span.col) == (4, 6)
    assert err.hint == "write 1f for a float32 literal"
    text = err.format()
    assert "<test>:4:6: error:" in text and "@f(1)" in text and "hint: write 1f" in text


def test_mismatched_variable_argument_is_reported_at_the_call():
    err = fails("""
def @f(%a: float32) -> float32 { %a }
def @main(%i: int32) {
  let %r = @f(%i);
  %r
}""", prelude=False)
    assert err.message == "type mismatch in argument 1 of @f: expected float32, found int32"
    assert (err.span.line, err.span.col) == (4, 12)  # the call: %i's own span is its binder
    assert err.hint is None


def test_nested_mismatch_names_the_differing_part():
    err = fails("""
def @f(%a: List[int32]) -> int32 { 0 }
def @main() { @f(Cons(1f, Nil)) }""")
    assert err.message == ("type mismatch in argument 1 of @f: expected List[int32], "
                           "found List[float32] (float32 does not match int32)")


def test_operator_type_error_at_call_with_hint():
    err = fails("""
def @main(%x: float32) {
  2f * %x + 1
}""", prelude=False)
    assert "float32" in err.message and "int32" in err.message
    assert (err.span.line, err.span.col) == (3, 3)
    assert err.hint == "write 1f for a float32 literal"


def test_unknown_operator_attribute_is_a_name_error():
    err = fails("""
def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32]) {
  nn.dense(%x, %w, unit=4)
}""", cls=NameResolutionError, prelude=False)
    assert "unit" in err.message and "units" in err.message
    assert err.span.line == 3


def test_if_condition_must_be_bool_scalar():
    err = fails("""
def @main(%x: int32) {
  if (%x) { 1 } else { 2 }
}""", prelude=False)
    assert err.message == "the condition of if must be a bool scalar, found int32"
    # a Var's own span is its binder's, so a use is reported at the enclosing `if`
    assert (err.span.line, err.span.col) == (3, 3)
    err = fails("""
def @main(%x: Tensor[(3,), bool]) { if (%x) { 1 } else { 2 } }""", prelude=False)
    assert "found Tensor[(3,), bool]" in err.message


def test_if_branches_must_agree():
    err = fails("""
def @main(%c: bool) -> float32 {
  if (%c) { 1f } else { 2 }
}""", prelude=False)
    assert err.message == "the branches of if have different types: float32 and int32"
    assert err.hint == "write 2f for a float32 literal"
    assert err.span.line == 3


def test_match_clauses_must_agree():
    err = fails("""
def @f(%xs: List[int32]) {
  match (%xs) {
    Nil => 0,
    Cons(_, _) => True,
  }
}""")
    assert err.message == "match clause 2 has type bool, but the clauses before it have type int32"
    assert (err.span.line, err.span.col) == (5, 19)


def test_return_type_mismatch():
    err = fails("""
def @f(%x: int32) -> float32 {
  2 * %x
}""", prelude=False)
    assert err.message == "@f is declared to return float32, but its body has type int32"
    assert err.span.line == 3


def test_let_annotation_mismatch():
    err = fails("""
def @main() {
  let %x: float32 = 3;
  %x
}""", prelude=False)
    assert err.message == "%x is declared as float32, but its value has type int32"
    assert err.hint == "write 3f for a float32 literal"


def test_tuple_index_out_of_range():
    err = fails("""
def @main() {
  let %t = 1;
  (%t, 2).2
}""", prelude=False)
    assert err.message == "tuple index 2 is out of range: (int32, int32) has 2 fields"
    assert err.span.line == 4


def test_projection_of_non_tuple():
    err = fails("def @main(%x: int32) { %x.0 }", prelude=False)
    assert err.message == "cannot take field .0 of a value of type int32: it is not a tuple"


def test_calling_a_non_function():
    err = fails("def @main(%x: int32) { %x(1) }", prelude=False)
    assert err.message == "cannot call a value of type int32: it is not a function"


def test_ref_errors():
    err = fails("def @main(%x: int32) { ref_read(%x) }", prelude=False)
    assert err.message == "ref_read expects a reference, found int32"
    err = fails("def @main() { let %r = ref(1); ref_write(%r, 2f) }", prelude=False)
    assert err.message == "ref_write stores float32 into a reference holding int32"
    assert err.hint == "write 2 for an int32 literal"


def test_pattern_errors():
    err = fails("def @f(%x: Option[int32]) -> int32 { match (%x) { Cons(_, _) => 0, _ => 1 } }")
    assert err.message == "pattern Cons matches List[_], but the value matched has type Option[int32]"
    err = fails("def @f(%x: (int32, int32)) -> int32 { match (%x) { (%a, %b, %c) => %a } }")
    assert err.message.startswith("a tuple pattern of 3 fields cannot match a value of type "
                                  "(int32, int32)")
    err = fails("def @f(%x: int32) -> int32 { match (%x) { %y: float32 => 0 } }")
    assert err.message == ("pattern %y is declared as float32, but the value matched has "
                           "type int32")


def test_infinite_type_is_rejected():
    err = fails("def @main() { fn (%x) { %x(%x) } }", prelude=False)
    assert "cannot contain itself" in err.message


def test_cannot_infer_operator_argument():
    err = fails("""
def @main() {
  let %f = fn (%x) { %x + %x };
  0
}""", prelude=False)
    assert err.message == "cannot infer the type of %x; add an annotation"
    assert (err.span.line, err.span.col) == (3, 16)


def test_cannot_infer_projected_tuple():
    err = fails("def @main() { let %g = fn (%p) { %p.0 }; 0 }", prelude=False)
    assert err.message == "cannot infer the type of %p; add an annotation"


def test_functions_with_primitive_and_closure_attrs():
    mod = check("""
def @main(%x: Tensor[(3,), float32]) {
  let %prim = fn (%p0: Tensor[(3,), float32], Primitive=1) { exp(%p0) };
  let %clo = fn (%p1, Closure=1) { %prim(%p1) };
  %clo(%x)
}""", prelude=False)
    assert sig(mod, "main") == "fn (Tensor[(3,), float32]) -> Tensor[(3,), float32]"
    prim = mod.functions["main"].body.value
    assert prim.attrs["Primitive"] == 1
    assert str(prim.checked_type) == "fn (Tensor[(3,), float32]) -> Tensor[(3,), float32]"


def test_cannot_infer_unannotated_global_nobody_calls():
    err = fails("def @double(%y) { %y * 2 }", prelude=False)
    assert err.message == "cannot infer the type of %y; add an annotation"


def test_unannotated_global_is_monomorphic_when_an_operator_constrains_it():
    err = fails("""
def @double(%x) { %x + %x }
def @main() { (@double(2f), @double(3)) }""", prelude=False)
    assert "argument 1 of @double" in err.message


def test_unknown_names():
    err = fails("def @main() { @nope(1) }", cls=RelayError, prelude=False)
    assert "nope" in err.message


def test_operator_used_as_value():
    err = fails("def @main() { let %f = add; %f(1, 2) }", prelude=False)
    assert "must be called directly" in err.message


# ---------------------------------------------------------------- check_expr and re-checking

def test_check_expr_against_a_checked_module():
    mod = check("def @main(%xs: List[int32]) -> List[int32] { @map(@id, %xs) }")
    e = parse_expr("Cons(1, Cons(2, Nil))", mod)
    assert check_expr(e, mod) == List(I32)
    assert e.checked_type == List(I32)
    assert e.type_args == [I32]
    e = parse_expr("@map(fn (%x: int32) { %x > 1 }, Cons(1, Nil))", mod)
    assert check_expr(e, mod) == List(BOOL)
    with pytest.raises(RelayTypeError):
        check_expr(parse_expr("@map(1, Nil)", mod), mod)


def test_check_expr_checks_an_unchecked_module_first():
    mod = load_module(HEADER + "def @main() -> int32 { 0 }", "<test>")
    assert check_expr(parse_expr("@main()", mod), mod) == I32
    assert mod.functions["main"].checked_type is not None


def _snapshot(mod):
    return [(type(n).__name__, str(n.checked_type)) for n in all_nodes(mod)]


@pytest.mark.parametrize("path", EXAMPLES + PROGRAMS[:6], ids=lambda p: p.name)
def test_check_module_is_idempotent(path):
    mod = check_module(load_module(path.read_text(), str(path)))
    first = {name: str(f.checked_type) for name, f in mod.functions.items()}
    snap = _snapshot(mod)
    check_module(mod)
    assert {name: str(f.checked_type) for name, f in mod.functions.items()} == first
    assert _snapshot(mod) == snap


def test_recheck_after_a_transformation_with_unannotated_new_nodes():
    """A pass builds new nodes without types (a fresh let var, a primitive function whose
    params carry only the checked_type of the first check); re-checking types them."""
    mod = check("""
def @main(%x: Tensor[(2, 2), float32]) { nn.relu(%x) * %x }""", prelude=False)
    body = mod.functions["main"].body  # multiply(relu(x), x)
    relu = body.args[0]
    p = Var("p0")
    p.checked_type = TensorType((2, 2), "float32")
    prim = ast.Function([p], Call(ast.OpRef("nn.relu"), [p]), attrs={"Primitive": 1})
    v = Var("t")
    new_body = Let(v, Call(prim, [relu.args[0]]), Call(body.op, [v, body.args[1]]))
    mod.functions["main"] = ast.Function(mod.functions["main"].params, new_body,
                                         mod.functions["main"].ret_type)
    check_module(mod)
    assert v.checked_type == TensorType((2, 2), "float32")
    assert str(prim.checked_type) == "fn (Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32]"
    assert sig(mod, "main").endswith("-> Tensor[(2, 2), float32]")
    # generalized globals keep their type parameters on a re-check
    mod = check("def @pair(%x, %y) { (%y, %x) }", prelude=False)
    check_module(mod)
    assert sig(mod, "pair") == "fn [A, B](A, B) -> (B, A)"


# ---------------------------------------------------------------- size and depth

def _generated_program(n_funcs: int = 420) -> str:
    """About 25 lines per function: let chains, ifs, matches, tuples, calls between globals."""
    out = [HEADER]
    for i in range(n_funcs):
        out.append(f"def @f{i}(%x: int32, %xs: List[int32]) -> (int32, List[int32]) {{")
        for j in range(16):
            prev = "%x" if j == 0 else f"%v{j - 1}"
            out.append(f"  let %v{j} = {prev} * 3 + {j};")
        out.append("  let %ys = match (%xs) {")
        out.append("    Cons(%h, %t) => Cons(%h + %v15, %t),")
        out.append("    Nil => Cons(%v15, Nil),")
        out.append("  };")
        if i == 0:
            out.append("  (%v15, %ys)")
        else:
            out.append(f"  if (%v15 > 100) {{ @f{i - 1}(%v15 - 1, %ys) }} else {{ (%v15, %ys) }}")
        out.append("}")
        out.append("")
    out.append(f"def @main(%x: int32) {{ @f{n_funcs - 1}(%x, Nil) }}")
    return "\n".join(out)


def test_large_generated_program():
    text = _generated_program()
    assert text.count("\n") >= 10_000
    t0 = time.perf_counter()
    mod = check_module(load_module(text, "big.relay", prelude=True))
    elapsed = time.perf_counter() - t0
    assert sig(mod, "main") == "fn (int32) -> (int32, List[int32])"
    # not a timing assertion (benchmarks/ measures speed): only a guard against a blow-up
    assert elapsed < 30


def test_long_let_chain_and_deep_nesting_do_not_hit_the_recursion_limit():
    n = 6000
    lets = "\n".join(f"  let %v{i} = %v{i - 1} + 1;" for i in range(1, n))
    chain = f"def @chain(%v0: int32) -> int32 {{\n{lets}\n  %v{n - 1}\n}}\n"
    nested = "def @nested(%c: bool) -> int32 {\n" + "if (%c) { 1 } else { " * 120 + "0" + " }" * 120 + "\n}\n"
    mod = check(chain + nested, prelude=False)
    assert sig(mod, "chain") == "fn (int32) -> int32"
    assert sig(mod, "nested") == "fn (bool) -> int32"
    # an expression tree built directly, deeper than any parser would allow
    x = Var("x", I32)
    e = x
    for _ in range(20_000):
        e = Call(ast.OpRef("add"), [e, ast.Constant(np.array(1, "int32"))])
    mod.functions["deep"] = ast.Function([x], e)
    check_module(mod)
    assert sig(mod, "deep") == "fn (int32) -> int32"


# ---------------------------------------------------------------- random well-typed values

def _leaf():
    return st.one_of(
        st.integers(-50, 50).map(lambda n: (str(n), "int32")),
        st.integers(0, 50).map(lambda n: (f"{n}f", "float32")),
        st.booleans().map(lambda b: (str(b), "bool")),
        st.integers(0, 9).map(lambda n: (f"{n}i64", "int64")),
    )


def _extend(inner):
    def tup(items):
        text = "(" + ", ".join(t for t, _ in items) + ("," if len(items) == 1 else "") + ")"
        ty = "(" + ", ".join(t for _, t in items) + ("," if len(items) == 1 else "") + ")"
        return text, ty

    def lst(arg):
        (text, ty), n = arg
        out = "Nil"
        for _ in range(n):
            out = f"Cons({text}, {out})"
        return out, f"List[{ty}]"

    return st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(tup),
        inner.map(lambda v: (f"Some({v[0]})", f"Option[{v[1]}]")),
        st.tuples(inner, st.integers(1, 3)).map(lst),
        inner.map(lambda v: (f"@id({v[0]})", v[1])),
        inner.map(lambda v: (f"(match ({v[0]}) {{ %v => %v }})", v[1])),
        inner.map(lambda v: (f"if (True) {{ {v[0]} }} else {{ {v[0]} }}", v[1])),
        inner.map(lambda v: (f"ref_read(ref({v[0]}))", v[1])),
    )


@settings(max_examples=40, deadline=None)
@given(st.recursive(_leaf(), _extend, max_leaves=8))
def test_random_values_get_their_constructed_type(value):
    text, expected = value
    mod = check(f"def @main() {{ let %value = {text}; %value }}")
    assert str(mod.functions["main"].checked_type.ret) == expected
    assert_fully_typed(mod)


def test_squeeze_all_on_question_mark_dims_names_the_known_axes():
    """axis=None becomes the axes statically known to be 1 (the kernel must not drop a `?`
    that is 1 at run time); with only known dimensions the written attributes stay."""
    mod = check("def @main(%x: Tensor[(1, ?, 1), float32]) { squeeze(%x) }\n"
                "def @g(%y: Tensor[(1, 3), float32]) { squeeze(%y) }\n")
    assert sig(mod, "main") == "fn (Tensor[(1, ?, 1), float32]) -> Tensor[(?,), float32]"
    assert mod.functions["main"].body.attrs["axis"] == [0, 2]
    assert mod.functions["g"].body.attrs["axis"] is None


# ------------------------------------------------------------------ literals in integer contexts

@pytest.mark.parametrize("body, col, message", [
    ('cast(inff, dtype="int32")', 8, "cast: inff has no int32 value"),
    ('cast(-inff, dtype="int64")', 8, "cast: -inff has no int64 value"),
    ('cast(nanf, dtype="uint8")', 8, "cast: nanf has no uint8 value"),
    ('cast(3e9f, dtype="int32")', 8, "cast: 3000000000 is out of range for int32"),
    ('full(inff, shape=[2], dtype="int32")', 8, "full: inff has no int32 value"),
    ('full(300, shape=[2], dtype="int8")', 8, "full: 300 is out of range for int8"),
    ('full_like(ones(shape=[2], dtype="uint8"), -1)', 45, "full_like: -1 is out of range"),
    ('clip(1, a_min=-inff, a_max=3f)', 3, "clip: a_min=-inff has no int32 value"),
])
def test_a_literal_without_a_value_in_its_integer_context_is_a_located_error(body, col,
                                                                             message):
    err = fails(f"def @main() {{\n  {body}\n}}\n", prelude=False)
    assert message in err.message
    assert (err.span.line, err.span.col) == (3, col), err.format()


@pytest.mark.parametrize("body, value", [
    ('cast(300, dtype="int8")', 44),          # a cast of an integer wraps, as it means to
    ('cast(2.7f, dtype="int32")', 2),         # a finite float in range truncates
    ('full(-128, shape=[1], dtype="int8")', -128),
    ('clip(1f, a_min=-inff, a_max=3f)', 1.0),  # a float tensor has infinities
])
def test_literals_with_a_value_in_the_integer_context_are_accepted(body, value):
    from rvmdbg.relay.interpreter import Interpreter
    mod = check(f"def @main() {{\n  {body}\n}}\n", prelude=False)
    out = Interpreter(mod).run("main", [])
    assert np.asarray(out).ravel()[0] == value


def test_a_non_finite_literal_where_an_integer_is_declared_gets_a_hint_not_a_crash():
    for word in ("inff", "-inff", "nanf"):
        err = fails(f"def @main() -> int32 {{\n  {word}\n}}\n", prelude=False)
        assert err.hint == f"{word} has no int32 value"
    err = fails("def @main() -> int32 {\n  3000000000\n}\n", prelude=False)
    assert err.hint == "3000000000 is out of range for int32 (-2147483648 to 2147483647)"
