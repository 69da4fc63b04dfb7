"""Structural equality of Relay modules and expressions.

Two expressions are equal when they have the same shape up to the renaming of local variables
(alpha-equivalence: binders are paired as they are met, and every use must agree with that
pairing) and of type parameters. Constants compare by dtype, shape and value, types
structurally (any `IncompleteType` equals any other); spans, checked types and the inferred
`type_args` of calls are ignored. Sharing is not compared: a DAG equals its unfolded tree.
The walk uses an explicit stack, so a 10,000-long let chain costs no recursion.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.relay.ast import (
    Call, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, Module, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    Tuple, TupleGetItem, Var,
)
from rvmdbg.relay.parser import paused_gc
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall, TypeVar,
)


def structural_equal(a, b, map_free_vars: bool = False) -> bool:
    """Whether a and b (two Modules or two expressions) are structurally equal.

    Free variables (used but not bound inside the expression) must be the same Var object,
    unless map_free_vars, which pairs them like binders."""
    with paused_gc():
        if isinstance(a, Module) or isinstance(b, Module):
            return isinstance(a, Module) and isinstance(b, Module) and _modules_equal(a, b)
        return _Equal(map_free_vars).exprs(a, b)


def _modules_equal(a: Module, b: Module) -> bool:
    if set(a.type_defs) != set(b.type_defs) or set(a.constructors) != set(b.constructors):
        return False
    if set(a.functions) != set(b.functions):
        return False
    for name, ta in a.type_defs.items():
        tb = b.type_defs[name]
        if ta.extern != tb.extern or len(ta.type_params) != len(tb.type_params) or \
                len(ta.constructors) != len(tb.constructors):
            return False
        eq = _Equal(False)
        for pa, pb in zip(ta.type_params, tb.type_params):
            eq.bind_type_param(pa, pb)
        for ca, cb in zip(ta.constructors, tb.constructors):
            if ca.name != cb.name or ca.tag != cb.tag or len(ca.inputs) != len(cb.inputs):
                return False
            if not all(eq.types(x, y) for x, y in zip(ca.inputs, cb.inputs)):
                return False
    for name, fa in a.functions.items():
        if not _Equal(False).exprs(fa, b.functions[name]):
            return False
    return True


def constants_equal(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.tobytes() == y.tobytes():
        return True
    if x.dtype.kind in "fc":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def attr_values_equal(x, y) -> bool:
    """Attribute values: lists and tuples alike, numbers by value, nan equal to nan."""
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and \
            len(x) == len(y) and all(attr_values_equal(p, q) for p, q in zip(x, y))
    if isinstance(x, dict) or isinstance(y, dict):
        return isinstance(x, dict) and isinstance(y, dict) and _attrs_equal(x, y)
    xb, yb = isinstance(x, (bool, np.bool_)), isinstance(y, (bool, np.bool_))
    if xb or yb:
        return xb and yb and bool(x) == bool(y)
    if isinstance(x, (int, float, np.number)) and isinstance(y, (int, float, np.number)):
        return x == y or (x != x and y != y)
    return type(x) is type(y) and x == y


def _attrs_equal(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(attr_values_equal(v, b[k]) for k, v in a.items())


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.left: dict[int, Var] = {}  # id(var of a) -> var of b
        self.right: dict[int, Var] = {}  # id(var of b) -> var of a
        self.tleft: dict[str, str] = {}  # type parameter names, a -> b
        self.tright: dict[str, str] = {}
        self.seen: set = set()

    # ---- binders ----

    def bind(self, va: Var, vb: Var) -> bool:
        if not self.types(va.type_annotation, vb.type_annotation):
            return False
        old = self.left.get(id(va))
        if old is not None:
            self.right.pop(id(old), None)
        self.left[id(va)] = vb
        self.right[id(vb)] = va
        return True

    def use(self, va: Var, vb: Var) -> bool:
        m = self.left.get(id(va))
        if m is not None:
            return m is vb
        if id(vb) in self.right:
            return False
        if va is vb:
            return True
        if self.map_free:
            return self.bind(va, vb)
        return False

    def bind_type_param(self, pa: TypeVar, pb: TypeVar) -> None:
        self.tleft[pa.name] = pb.name
        self.tright[pb.name] = pa.name

    # ---- types ----

    def types(self, ta, tb) -> bool:
        if ta is None or tb is None:
            return ta is None and tb is None
        if isinstance(ta, IncompleteType) or isinstance(tb, IncompleteType):
            return isinstance(ta, IncompleteType) and isinstance(tb, IncompleteType)
        t = type(ta)
        if t is not type(tb):
            return False
        if t is TensorType:
            return ta.shape == tb.shape and ta.dtype == tb.dtype
        if t is TypeVar:
            return self.tleft.get(ta.name, ta.name) == tb.name and \
                self.tright.get(tb.name, tb.name) == ta.name
        if t is TupleType:
            return len(ta.fields) == len(tb.fields) and \
                all(self.types(x, y) for x, y in zip(ta.fields, tb.fields))
        if t is TypeCall:
            return ta.name == tb.name and len(ta.args) == len(tb.args) and \
                all(self.types(x, y) for x, y in zip(ta.args, tb.args))
        if t is FuncType:
            if len(ta.params) != len(tb.params) or len(ta.type_params) != len(tb.type_params):
                return False
            saved = dict(self.tleft), dict(self.tright)
            for pa, pb in zip(ta.type_params, tb.type_params):
                self.bind_type_param(pa, pb)
            ok = all(self.types(x, y) for x, y in zip(ta.params, tb.params)) and \
                self.types(ta.ret, tb.ret)
            self.tleft, self.tright = saved
            return ok
        if t is RefType:
            return self.types(ta.value, tb.value)
        return ta == tb

    # ---- patterns ----

    def patterns(self, pa, pb) -> bool:
        t = type(pa)
        if t is not type(pb):
            return False
        if t is PatternWildcard:
            return True
        if t is PatternVar:
            return self.bind(pa.var, pb.var)
        if t is PatternConstructor:
            if pa.name != pb.name or len(pa.patterns) != len(pb.patterns):
                return False
        elif t is not PatternTuple or len(pa.patterns) != len(pb.patterns):
            return False
        return all(self.patterns(x, y) for x, y in zip(pa.patterns, pb.patterns))

    # ---- expressions ----

    def exprs(self, a, b) -> bool:
        stack = [(a, b)]
        seen = self.seen
        push = stack.append
        while stack:
            x, y = stack.pop()
            t = type(x)
            if t is not type(y):
                return False
            if t is Var:
                if not self.use(x, y):
                    return False
                continue
            key = (id(x), id(y))
            if key in seen:
                continue
            seen.add(key)
            if t is Call:
                if len(x.args) != len(y.args) or not _attrs_equal(x.attrs, y.attrs):
                    return False
                push((x.op, y.op))
                stack.extend(zip(x.args, y.args))
            elif t is Let:
                if not self.bind(x.var, y.var):
                    return False
                push((x.body, y.body))
                push((x.value, y.value))
            elif t is Constant:
                if not constants_equal(x.data, y.data):
                    return False
            elif t is GlobalVar or t is OpRef or t is ConstructorRef:
                if x.name != y.name:
                    return False
            elif t is Function:
                if len(x.params) != len(y.params) or len(x.type_params) != len(y.type_params):
                    return False
                for pa, pb in zip(x.type_params, y.type_params):
                    self.bind_type_param(pa, pb)
                if not all(self.bind(p, q) for p, q in zip(x.params, y.params)):
                    return False
                if not self.types(x.ret_type, y.ret_type) or not _attrs_equal(x.attrs, y.attrs):
                    return False
                push((x.body, y.body))
            elif t is If:
                push((x.false_branch, y.false_branch))
                push((x.true_branch, y.true_branch))
                push((x.cond, y.cond))
            elif t is Tuple:
                if len(x.fields) != len(y.fields):
                    return False
                stack.extend(zip(x.fields, y.fields))
            elif t is TupleGetItem:
                if x.index != y.index:
                    return False
                push((x.tuple_value, y.tuple_value))
            elif t is Match:
                if x.complete != y.complete or len(x.clauses) != len(y.clauses):
                    return False
                for ca, cb in zip(x.clauses, y.clauses):
                    if not self.patterns(ca.lhs, cb.lhs):
                        return False
                    push((ca.rhs, cb.rhs))
                push((x.data, y.data))
            elif t is RefCreate:
                push((x.value, y.value))
            elif t is RefRead:
                push((x.ref, y.ref))
            elif t is RefWrite:
                push((x.value, y.value))
                push((x.ref, y.ref))
            else:
                return False
        return True
