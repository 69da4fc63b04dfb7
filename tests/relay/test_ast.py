"""The AST's traversal helpers: `children` by node class and `ExprMutator`'s defaults (a let
chain rebuilt in a loop, leaves left unvisited unless a mutator rewrites them), which every
pass builds on; frozen spans and types."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rvmdbg.relay.ast import (Call, Constant, ExprMutator, Function, GlobalVar, If, Let, OpRef,
                              Tuple, TupleGetItem, Var, children, walk)
from rvmdbg.relay.diagnostics import Span
from rvmdbg.relay.types import (UNIT, FuncType, RefType, TensorType, TupleType, TypeCall,
                                TypeVar)


def const(v):
    return Constant(np.array(v, dtype="int32"))


def chain(n: int, value=lambda prev: prev):
    """let %x1 = value(%x0); ... let %xn = value(%x(n-1)); %xn, and the vars."""
    xs = [Var("x0")]
    lets = []
    for i in range(1, n + 1):
        v = Var(f"x{i}")
        lets.append((v, value(xs[-1])))
        xs.append(v)
    body = xs[-1]
    for v, val in reversed(lets):
        body = Let(v, val, body)
    return body, xs


class Subclassed(Call):
    """A node class the AST does not know: children() looks its base up."""


def test_children_in_evaluation_order_and_of_a_subclass():
    x, y = Var("x"), Var("y")
    call = Call(OpRef("add"), [x, y])
    assert children(call) == [call.op, x, y]
    assert children(If(x, y, call)) == [x, y, call]
    assert children(Let(x, y, call)) == [y, call]
    assert children(TupleGetItem(Tuple([x, y]), 1))[0].fields == [x, y]
    assert children(x) == [] and children(const(1)) == [] and children(GlobalVar("f")) == []
    op, arg = children(Subclassed(OpRef("add"), [x]))
    assert op.name == "add" and arg is x


def test_a_mutator_that_changes_nothing_returns_the_same_nodes():
    body, _ = chain(5000, lambda prev: Call(GlobalVar("inc"), [prev]))
    assert ExprMutator().visit(body) is body  # 5,000 lets deep: no recursion per let


class RenameCalls(ExprMutator):
    """Calls of @inc become calls of @dec; nothing else changes."""

    def visit_GlobalVar(self, e):
        return GlobalVar("dec") if e.name == "inc" else e


def test_a_changed_let_chain_is_rebuilt_keeping_vars_spans_and_types():
    body, xs = chain(3000, lambda prev: Call(GlobalVar("inc"), [prev]))
    span = Span(1, 1, 1, 5, "f")
    body.span, body.checked_type = span, TensorType((), "int32")
    out = RenameCalls().visit(body)
    assert out is not body and out.span is span and out.checked_type == body.checked_type
    seen = []
    e = out
    while isinstance(e, Let):
        seen.append((e.var, e.value.op.name))
        e = e.body
    assert seen == [(v, "dec") for v in xs[1:]] and e is xs[-1]


def test_shared_nodes_map_to_one_new_node_and_inner_lets_are_memoised():
    shared = Call(GlobalVar("inc"), [Var("a")])
    inner = Let(Var("b"), shared, Var("b"))
    outer = Let(Var("c"), Tuple([shared, inner]), inner)  # inner is the value's too
    m = RenameCalls()
    out = m.visit(outer)
    new_tuple = out.value
    assert new_tuple.fields[0] is out.body.value  # the shared call is one node still
    assert new_tuple.fields[1] is out.body        # and so is the shared let
    assert m.memo[id(inner)][1] is out.body


class CountVars(ExprMutator):
    def __init__(self):
        super().__init__()
        self.vars = []

    def visit_Var(self, e):
        self.vars.append(e.name)
        return e


def test_leaves_are_visited_when_the_mutator_rewrites_their_kind():
    body, xs = chain(4, lambda prev: Call(GlobalVar("inc"), [prev]))
    m = CountVars()
    assert m.visit(body) is body
    assert m.vars == ["x0", "x1", "x2", "x3", "x4"]  # in evaluation order, each once


class OwnLet(ExprMutator):
    """A mutator with its own visit_Let: every let of a chain goes through it."""

    def __init__(self):
        super().__init__()
        self.lets = 0

    def visit_Let(self, e):
        self.lets += 1
        return self._default(e)


def test_a_mutator_with_its_own_let_sees_every_let():
    body, _ = chain(50, lambda prev: Call(GlobalVar("inc"), [prev]))
    m = OwnLet()
    assert m.visit(body) is body and m.lets == 50


def test_walk_yields_each_node_once():
    x = Var("x")
    shared = Call(OpRef("add"), [x, x])
    e = Function([x], Tuple([shared, shared]))
    nodes = list(walk(e))
    assert len(nodes) == len({id(n) for n in nodes}) == 5  # fn, tuple, call, op, x


@pytest.mark.parametrize("value,changed", [
    (Span(1, 2, 3, 4, "f"), {"col": 9}),
    (TensorType((1, None), "float32"), {"dtype": "int8"}),
    (TupleType((UNIT, TensorType((), "bool"))), {"fields": ()}),
    (TypeVar("A"), {"name": "B"}),
    (FuncType((TypeVar("A"),), TypeVar("A"), (TypeVar("A"),)), {"type_params": ()}),
    (TypeCall("List", (TypeVar("A"),)), {"args": ()}),
    (RefType(UNIT), {"value": TensorType((), "int32")}),
])
def test_spans_and_types_are_frozen_values(value, changed):
    cls = type(value)
    fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    again = cls(**fields)
    assert again == value and hash(again) == hash(value) and repr(again) == repr(value)
    assert again is not value and str(again) == str(value)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, next(iter(changed)), None)
    other = dataclasses.replace(value, **changed)
    assert other != value and getattr(other, next(iter(changed))) == next(iter(changed.values()))
    assert cls(*fields.values()) == value  # positionally too
