"""Relay type inference: Hindley-Milner unification plus TVM-style deferred operator relations.

`check_module(mod)` infers a type for every expression and variable of every global function,
writes it into `checked_type`, fills `Call.type_args` for calls to polymorphic callees and
checks that plain `match` is exhaustive. `check_expr(expr, mod)` types one extra expression
against an already checked module (CLI arguments, nodes built by passes).

How it works:
- Unknown types are `IncompleteType` objects bound in a substitution map (`_subst`); unifying
  two types binds unknowns, with an occurs check. Tensor dims unify when equal or when either
  is `?` (TVM's `Any`); joining the arms of `if`/`match` turns differing static dims into `?`.
- Globals are checked callees-first, one strongly connected component of the call graph at a
  time. A global whose signature is fully annotated is polymorphic everywhere (instantiated
  with fresh unknowns at each use). A global with missing annotations is monomorphic inside
  its own component and is generalized afterwards: its unconstrained unknowns become type
  parameters.
- Operator calls apply the operator's type relation as soon as the argument types are known;
  otherwise the relation is queued and solved to a fixpoint (like TVM's type solver). Unknowns
  a queued relation still waits on are never generalized, so a later caller may fix them.
- Unknowns nothing constrains (e.g. the element type of a discarded `Nil`) default to `()`.
"""
from __future__ import annotations

import gc
import itertools
import math
import sys
from contextlib import contextmanager

import numpy as np

from rvmdbg.relay import ast
from rvmdbg.relay.ast import (
    Call, Clause, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, Module, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    TupleGetItem, Var,
)
from rvmdbg.relay import dialect
from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.relay.diagnostics import (
    NameResolutionError, RelayError, RelayTypeError, RelayWarning, Span,
)
from rvmdbg.relay.match_coverage import PatternMatrix
from rvmdbg.relay.types import (
    UNIT, FuncType, IncompleteType, RefType, TensorType, TupleType, Type, TypeCall, TypeVar,
    free_type_vars, is_vector_dtype, scalar, substitute,
)

__all__ = ["check_module", "check_expr", "TypeWarning", "is_checked"]

BOOL = scalar("bool")
_CONSTANT_TYPES: dict = {}  # (shape, numpy dtype) -> TensorType: literals repeat a lot
_OPS = None  # the operator registry module, imported on first use


def _ops():
    global _OPS
    if _OPS is None:
        from rvmdbg.relay import ops  # imported late: the registry is large and loads kernels
        _OPS = ops
    return _OPS
def _solvers() -> dict:
    from rvmdbg.relay.ops.solvers import SOLVERS  # with the registry: imported late
    return SOLVERS


_RECURSION_LIMIT = 200_000  # deep nesting (long operator chains) recurses once per level


class TypeWarning(RelayWarning):
    """A located warning (unreachable match clause); collected on `mod.warnings`, never raised."""


class TypeNote(TypeWarning):
    """A located note: something rvmdbg accepts and TVM refuses (a generalised signature)."""

    kind = "note"

    def format(self, source=None) -> str:
        return RelayError.format(self, source).replace(": error: ", ": note: ", 1)


def _vector_dtype_in(t) -> str | None:
    """The first vector dtype (`int8x4`) in a tensor type or a tuple of them, or None."""
    if type(t) is TensorType:
        return t.dtype if is_vector_dtype(t.dtype) else None
    if type(t) is TupleType:
        for f in t.fields:
            found = _vector_dtype_in(f)
            if found is not None:
                return found
    return None


class _Mismatch(Exception):
    """Two types (or parts of them) that do not unify; the caller makes it a RelayTypeError."""

    def __init__(self, expected: Type, found: Type, reason: str | None = None):
        super().__init__(reason)
        self.expected = expected
        self.found = found
        self.reason = reason


class _OpRelation:
    """A queued operator type relation: the call's result type once its arguments are known."""

    __slots__ = ("call", "opdef", "arg_types", "result", "root")

    def __init__(self, call, opdef, arg_types, result, root):
        self.root = root
        self.call = call
        self.opdef = opdef
        self.arg_types = arg_types
        self.result = result

    def waiting_on(self, tc: "TypeChecker") -> list:
        return list(self.arg_types)

    def try_solve(self, tc: "TypeChecker") -> bool:
        out = tc._apply_relation(self.call, self.opdef, self.arg_types)
        if out is None and tc._assign_from_result(self):
            out = tc._apply_relation(self.call, self.opdef, self.arg_types)
        if out is None:
            return False
        tc._expect(self.result, out, self.call,
                   N_("operator `{op}` gives {found} here, but {expected} is expected"),
                   op=self.opdef.name)
        return True


class _Projection:
    """A queued tuple projection `e.i` whose tuple type is not known yet."""

    __slots__ = ("node", "tuple_type", "result", "root")

    def __init__(self, node, tuple_type, result, root):
        self.root = root
        self.node = node
        self.tuple_type = tuple_type
        self.result = result

    def waiting_on(self, tc: "TypeChecker") -> list:
        return [self.tuple_type]

    def try_solve(self, tc: "TypeChecker") -> bool:
        field = tc._project(self.node, self.tuple_type)
        if field is None:
            return False
        tc._expect(self.result, field, self.node,
                   N_("the projection .{index} gives {found}, but {expected} is expected"),
                   index=self.node.index)
        return True


@contextmanager
def _checking():
    """Room for deep recursion (long operator chains nest one level each), and no cyclic GC
    passes while checking: the checker allocates many small types on top of a large AST,
    which makes the collector rescan the AST over and over."""
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()
        sys.setrecursionlimit(old)


def _at(node, parent):
    """Where to report a problem with node used inside parent: a Var's span is its binder's
    (binder and uses are one object), so a use is reported at the enclosing expression."""
    return parent if type(node) is Var else node


def _has_unknown(t: Type) -> bool:
    if isinstance(t, IncompleteType):
        return True
    if isinstance(t, TensorType) or isinstance(t, TypeVar):
        return False
    if isinstance(t, TupleType):
        return any(_has_unknown(f) for f in t.fields)
    if isinstance(t, FuncType):
        return any(_has_unknown(p) for p in t.params) or _has_unknown(t.ret)
    if isinstance(t, TypeCall):
        return any(_has_unknown(a) for a in t.args)
    if isinstance(t, RefType):
        return _has_unknown(t.value)
    return False


def _float_word(v: float) -> str:
    """TVM's spelling of a non-finite float: `inff`, `-inff`, `nanf`."""
    return "nanf" if v != v else ("-inff" if v < 0 else "inff")


class TypeChecker(PatternMatrix):
    """One inference problem over a module: the substitution, the node types, the relation queue."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.source = mod.source
        self._subst: dict = {}          # IncompleteType -> Type
        self._types: dict = {}          # id(node) -> Type, for expressions and Vars
        self._nodes: list = []          # every typed node, in visiting order
        self._pending: list = []        # queued _OpRelation / _Projection
        self._defaulted = False         # resolve_final bound an unknown to () (TVM refuses)
        self._schemes: dict = {}        # global name -> FuncType, usable polymorphically
        self._mono: dict = {}           # global name -> FuncType, monomorphic (own component)
        self._sigs: dict = {}           # id(Function) -> (param types, ret type) made in advance
        self._call_inst: dict = {}      # id(Call) -> fresh unknowns of the callee's instantiation
        self._mono_calls: list = []     # (Call, global name): recursive calls inside a component
        self._ctor_types: dict = {}     # constructor name -> FuncType scheme
        self._checked_annots: set = set()
        self._global_names: dict = {id(f): n for n, f in mod.functions.items()}
        self.root = None                # the expression being checked, for spans of span-less nodes
        self.warnings: list = []
        self._tvm_noted: set = set()  # ids of calls noted as refused by TVM
        self._dispatch = {
            Constant: self._constant, Var: self._free_var, GlobalVar: self._global_var,
            ConstructorRef: self._constructor_ref, OpRef: self._op_ref, Call: self._call,
            Function: self._function, Let: self._let, If: self._if, ast.Tuple: self._tuple,
            TupleGetItem: self._tuple_get_item, Match: self._match, RefCreate: self._ref_create,
            RefRead: self._ref_read, RefWrite: self._ref_write,
        }

    # ------------------------------------------------------------------ substitution

    def find(self, t: Type) -> Type:
        """t with bound unknowns at the top replaced by what they are bound to (shallow)."""
        subst = self._subst
        while type(t) is IncompleteType:
            u = subst.get(t)
            if u is None:
                return t
            t = u
        return t

    def resolve(self, t: Type) -> Type:
        """t with every bound unknown replaced, all the way down."""
        tt = type(t)
        if tt is IncompleteType:
            u = self.find(t)
            return u if u is t else self.resolve(u)
        if tt is TensorType or tt is TypeVar:
            return t
        if tt is TupleType:
            fields = [self.resolve(f) for f in t.fields]
            if all(a is b for a, b in zip(fields, t.fields)):
                return t
            return TupleType(tuple(fields))
        if tt is FuncType:
            params = [self.resolve(p) for p in t.params]
            ret = self.resolve(t.ret)
            if ret is t.ret and all(a is b for a, b in zip(params, t.params)):
                return t
            return FuncType(tuple(params), ret, t.type_params)
        if tt is TypeCall:
            args = [self.resolve(a) for a in t.args]
            if all(a is b for a, b in zip(args, t.args)):
                return t
            return TypeCall(t.name, tuple(args))
        if tt is RefType:
            v = self.resolve(t.value)
            return t if v is t.value else RefType(v)
        return t

    def unknowns(self, t: Type, out: dict | None = None) -> list:
        """The unbound unknowns in t, in order of first occurrence (also added to out)."""
        if out is None:
            out = {}
        self._collect_unknowns(t, out)
        return list(out)

    def _collect_unknowns(self, t: Type, out: dict) -> None:
        t = self.find(t)
        tt = type(t)
        if tt is IncompleteType:
            out[t] = None
        elif tt is TupleType:
            for f in t.fields:
                self._collect_unknowns(f, out)
        elif tt is FuncType:
            for p in t.params:
                self._collect_unknowns(p, out)
            self._collect_unknowns(t.ret, out)
        elif tt is TypeCall:
            for a in t.args:
                self._collect_unknowns(a, out)
        elif tt is RefType:
            self._collect_unknowns(t.value, out)

    def _occurs(self, u: IncompleteType, t: Type) -> bool:
        t = self.find(t)
        tt = type(t)
        if tt is IncompleteType:
            return t is u
        if tt is TupleType:
            return any(self._occurs(u, f) for f in t.fields)
        if tt is FuncType:
            return any(self._occurs(u, p) for p in t.params) or self._occurs(u, t.ret)
        if tt is TypeCall:
            return any(self._occurs(u, a) for a in t.args)
        if tt is RefType:
            return self._occurs(u, t.value)
        return False

    def _bind(self, u: IncompleteType, t: Type, expected_side: bool) -> None:
        if type(t) is not TensorType and self._occurs(u, t):
            exp, found = (u, t) if expected_side else (t, u)
            raise _Mismatch(exp, found, _("a type cannot contain itself"))
        self._subst[u] = t

    def unify(self, a: Type, b: Type, join: bool = False) -> Type:
        """Make a (expected) and b (found) equal; returns the unified type.

        Dims unify when equal or when either is `?` (result `?`); with join=True (the arms of
        if/match) differing static dims also give `?`."""
        a = self.find(a)
        b = self.find(b)
        if a is b:
            return a
        ta, tb = type(a), type(b)
        if ta is IncompleteType:
            if tb is IncompleteType:
                self._subst[a] = b
                return b
            self._bind(a, b, True)
            return b
        if tb is IncompleteType:
            self._bind(b, a, False)
            return a
        if ta is not tb:
            raise _Mismatch(a, b)
        if ta is TensorType:
            if a.dtype != b.dtype or len(a.shape) != len(b.shape):
                raise _Mismatch(a, b)
            if a.shape == b.shape:
                return a
            dims = []
            for i, (da, db) in enumerate(zip(a.shape, b.shape)):
                if da == db:
                    dims.append(da)
                elif da is None or db is None or join:
                    dims.append(None)
                else:
                    raise _Mismatch(a, b, _("dimension {index} is {found}, expected {expected}")
                                    .format(index=i, found=db, expected=da))
            return TensorType(tuple(dims), a.dtype)
        if ta is TupleType:
            if len(a.fields) != len(b.fields):
                raise _Mismatch(a, b)
            fields = [self.unify(x, y, join) for x, y in zip(a.fields, b.fields)]
            return TupleType(tuple(fields))
        if ta is TypeCall:
            if a.name != b.name or len(a.args) != len(b.args):
                raise _Mismatch(a, b)
            args = [self.unify(x, y, join) for x, y in zip(a.args, b.args)]
            return TypeCall(a.name, tuple(args))
        if ta is RefType:
            return RefType(self.unify(a.value, b.value, join))
        if ta is FuncType:
            # a polymorphic function where a monomorphic one is expected: use an instance of it
            if a.type_params and not b.type_params:
                a = self.instantiate(a)[0]
            elif b.type_params and not a.type_params:
                b = self.instantiate(b)[0]
            if len(a.params) != len(b.params) or len(a.type_params) != len(b.type_params):
                raise _Mismatch(a, b)
            if a.type_params != b.type_params:
                # alpha-rename b's type parameters to a's
                m = dict(zip(b.type_params, a.type_params))
                b = FuncType(tuple(substitute(p, m) for p in b.params), substitute(b.ret, m),
                             a.type_params)
            params = [self.unify(x, y, join) for x, y in zip(a.params, b.params)]
            ret = self.unify(a.ret, b.ret, join)
            return FuncType(tuple(params), ret, a.type_params)
        if a == b:  # TypeVar, StorageType: equal or nothing
            return a
        raise _Mismatch(a, b)

    def instantiate(self, fty: FuncType) -> tuple:
        """A polymorphic function type with its type parameters replaced by fresh unknowns."""
        if not fty.type_params:
            return fty, []
        fresh = [IncompleteType() for _ in fty.type_params]
        m = dict(zip(fty.type_params, fresh))
        params = tuple(substitute(p, m) for p in fty.params)
        return FuncType(params, substitute(fty.ret, m), ()), fresh

    # ------------------------------------------------------------------ errors

    def _span_of(self, node) -> Span | None:
        """node's span, or that of its nearest enclosing node that has one."""
        if node is not None and getattr(node, "span", None) is not None:
            return node.span
        root = self.root
        if root is None or node is None:
            return getattr(root, "span", None)
        parent: dict = {id(root): None}
        stack = [root]
        found = False
        while stack:
            n = stack.pop()
            if n is node:
                found = True
                break
            kids: list = []
            if isinstance(n, Match):
                kids = [n.data]
                for c in n.clauses:
                    kids.extend((c, c.lhs))
            elif isinstance(n, Clause):
                kids = [n.rhs]
            elif isinstance(n, (PatternConstructor, PatternTuple)):
                kids = list(n.patterns)
            elif isinstance(n, PatternVar):
                kids = [n.var]
            elif isinstance(n, Function):
                kids = [*n.params, n.body]
            elif isinstance(n, Let):
                kids = [n.var, n.value, n.body]
            elif isinstance(n, ast.Expr):
                kids = ast.children(n)
            for k in kids:
                if id(k) not in parent:
                    parent[id(k)] = n
                    stack.append(k)
        if not found:
            return getattr(root, "span", None)
        n = parent.get(id(node))
        while n is not None:
            if n.span is not None:
                return n.span
            n = parent.get(id(n))
        return None

    def error(self, node, message: str, hint: str | None = None, cls=RelayTypeError):
        return cls(message, self._span_of(node), hint, self.source)

    def _expect(self, expected: Type, found: Type, node, template, join: bool = False,
                literal=None, **fields) -> Type:
        """unify(expected, found), or a RelayTypeError at node built from template: a msgid
        marked with N_ (or a function giving the translated text, for ngettext), translated
        only on a mismatch; {expected} and {found} are filled with the resolved types, other
        fields from `fields`."""
        try:
            return self.unify(expected, found, join)
        except _Mismatch as m:
            exp, fnd = self.resolve(expected), self.resolve(found)
            text = template() if callable(template) else _(template)
            msg = text.format(expected=exp, found=fnd, **fields)
            inner_e, inner_f = self.resolve(m.expected), self.resolve(m.found)
            if m.reason and (inner_e, inner_f) == (exp, fnd):
                msg = _("{message} ({reason})").format(message=msg, reason=m.reason)
            elif m.reason:
                msg = _("{message} ({found} does not match {expected}: {reason})").format(
                    message=msg, found=inner_f, expected=inner_e, reason=m.reason)
            elif str(inner_e) != str(exp) or str(inner_f) != str(fnd):
                msg = _("{message} ({found} does not match {expected})").format(
                    message=msg, found=inner_f, expected=inner_e)
            hint = self._literal_hint(literal, inner_e) if literal is not None else None
            raise self.error(node, msg, hint) from None

    def _refuse(self, expected: Type, found: Type, node, template, literal=None, **fields):
        """The RelayTypeError `_expect` makes, after `unify(expected, found)` failed (checking
        succeeds without making the message): unifying again fails at the same place."""
        self._expect(expected, found, node, template, literal=literal, **fields)
        text = template() if callable(template) else _(template)
        raise self.error(node, text.format(expected=self.resolve(expected),
                                           found=self.resolve(found), **fields))

    @staticmethod
    def _literal_hint(expr, expected: Type) -> str | None:
        """For a literal of the wrong number kind, how to write it in the expected dtype."""
        if not isinstance(expr, Constant) or not isinstance(expected, TensorType):
            return None
        data = expr.data
        if getattr(data, "ndim", 1) != 0 or not expected.is_scalar:
            return None
        have, want = str(data.dtype), expected.dtype
        if have == want:
            return None
        value = data.item()
        if want.startswith("float"):
            if isinstance(value, bool):
                return None
            text = repr(float(value))
            if text.endswith(".0"):
                text = text[:-2]
            suffix = {"float32": "f", "float64": "f64", "float16": "f16"}.get(want)
            if suffix is None:
                return None
            return _("write {literal} for a {dtype} literal").format(literal=text + suffix,
                                                                      dtype=want)
        if want.startswith(("int", "uint")):
            if isinstance(value, float) and not math.isfinite(value):
                return _("{value} has no {dtype} value").format(value=_float_word(value),
                                                               dtype=want)
            if isinstance(value, bool) or float(value) != int(value):
                return None
            info = np.iinfo(want)
            if not info.min <= int(value) <= info.max:
                return _("{value} is out of range for {dtype} ({low} to {high})").format(
                    value=int(value), dtype=want, low=info.min, high=info.max)
            suffix = {"int32": "", "int64": "i64", "int16": "i16", "int8": "i8"}.get(want)
            if suffix is None:
                return None
            return _("write {literal} for an {dtype} literal").format(
                literal=f"{int(value)}{suffix}", dtype=want)
        if want == "bool" and value in (0, 1):
            return _("write {literal} for a bool literal").format(
                literal="True" if value else "False")
        return None

    # ------------------------------------------------------------------ node bookkeeping

    def visit(self, e) -> Type:
        t = self._types.get(id(e))
        if t is not None:
            return t
        fn = self._dispatch.get(type(e))
        if fn is None:
            raise self.error(e, _("cannot type-check a {node} node").format(
                node=type(e).__name__))
        t = fn(e)
        if id(e) not in self._types:
            self._types[id(e)] = t
            self._nodes.append(e)
        return t

    def _record(self, node, t: Type) -> None:
        if id(node) not in self._types:
            self._nodes.append(node)
        self._types[id(node)] = t

    def _bind_var(self, var: Var, t: Type) -> None:
        self._record(var, t)

    def annotation(self, t: Type, node) -> Type:
        """A written type, checked for unknown ADTs, with every `_` made a fresh unknown."""
        if id(t) not in self._checked_annots:
            self._validate_type(t, node)
            self._checked_annots.add(id(t))
        return self._freshen(t) if _has_unknown(t) else t

    def _freshen(self, t: Type) -> Type:
        if isinstance(t, IncompleteType):
            return IncompleteType()
        if isinstance(t, TupleType):
            return TupleType(tuple(self._freshen(f) for f in t.fields))
        if isinstance(t, FuncType):
            return FuncType(tuple(self._freshen(p) for p in t.params), self._freshen(t.ret),
                            t.type_params)
        if isinstance(t, TypeCall):
            return TypeCall(t.name, tuple(self._freshen(a) for a in t.args))
        if isinstance(t, RefType):
            return RefType(self._freshen(t.value))
        return t

    def _validate_type(self, t: Type, node) -> None:
        if isinstance(t, TypeCall):
            td = self.mod.type_defs.get(t.name)
            if td is None:
                raise self.error(node, _("unknown type `{name}`").format(name=t.name),
                                 cls=NameResolutionError)
            if len(td.type_params) != len(t.args):
                n = len(td.type_params)
                raise self.error(node, ngettext(
                    "type `{name}` takes {n} type argument, {given} given",
                    "type `{name}` takes {n} type arguments, {given} given", n).format(
                        name=t.name, n=n, given=len(t.args)))
            for a in t.args:
                self._validate_type(a, node)
        elif isinstance(t, TupleType):
            for f in t.fields:
                self._validate_type(f, node)
        elif isinstance(t, FuncType):
            for p in t.params:
                self._validate_type(p, node)
            self._validate_type(t.ret, node)
        elif isinstance(t, RefType):
            self._validate_type(t.value, node)

    # ------------------------------------------------------------------ leaves

    def _constant(self, e: Constant) -> Type:
        data = e.data
        key = (data.shape, data.dtype)
        t = _CONSTANT_TYPES.get(key)
        if t is None:
            t = TensorType(tuple(int(d) for d in data.shape), str(data.dtype))
            _CONSTANT_TYPES[key] = t
        return t

    def _free_var(self, v: Var) -> Type:
        # a Var reaches here only when used outside any binder seen so far
        if v.type_annotation is not None:
            t = self.annotation(v.type_annotation, v)
        elif v.checked_type is not None and not _has_unknown(v.checked_type):
            t = v.checked_type
        else:
            raise self.error(v, _("unbound variable %{name}").format(name=v.name),
                             cls=NameResolutionError)
        self._bind_var(v, t)
        return t

    def _global_scheme(self, node: GlobalVar):
        """(type, polymorphic?) of the global node names."""
        name = node.name
        s = self._schemes.get(name)
        if s is not None:
            return s, True
        s = self._mono.get(name)
        if s is not None:
            return s, False
        if name not in self.mod.functions:
            raise self.error(node, _("unknown global @{name}").format(name=name),
                             cls=NameResolutionError)
        # a global not in the problem (check_expr before its module was checked)
        raise self.error(node, _("@{name} has not been type-checked").format(name=name))

    def _global_var(self, node: GlobalVar) -> Type:
        s, poly = self._global_scheme(node)
        return self.instantiate(s)[0] if poly else s

    def _constructor_scheme(self, node) -> FuncType:
        name = node.name
        s = self._ctor_types.get(name)
        if s is not None:
            return s
        con = node.constructor or self.mod.constructors.get(name)
        if con is None:
            raise self.error(node, _("unknown constructor {name}").format(name=name),
                             cls=NameResolutionError)
        td = self.mod.type_defs.get(con.type_name)
        tps = tuple(td.type_params) if td is not None else ()
        s = FuncType(tuple(con.inputs), TypeCall(con.type_name, tps), tps)
        self._ctor_types[name] = s
        return s

    def _constructor_ref(self, node: ConstructorRef) -> Type:
        return self.instantiate(self._constructor_scheme(node))[0]

    def _op_ref(self, node: OpRef) -> Type:
        opdef = _ops().OPS.get(node.name)
        params = ", ".join(f"%x{i}" for i in range(opdef.num_inputs if opdef else 1))
        wrapper = f"fn ({params}) {{ {node.name}({params}) }}"  # Relay text: nothing to translate
        raise self.error(node, _("operator `{op}` must be called directly; wrap it in a "
                                 "function to pass it as a value").format(op=node.name),
                         hint=wrapper)

    # ------------------------------------------------------------------ calls

    def _callee_desc(self, op) -> str | None:
        """How messages name the callee: `@f`, `Cons`, `%g`, or None for another function."""
        if isinstance(op, GlobalVar):
            return "@" + op.name
        if isinstance(op, ConstructorRef):
            return op.name
        if isinstance(op, Var):
            return "%" + op.name
        return None

    def _call(self, call: Call) -> Type:
        op = call.op
        if type(op) is OpRef:
            return self._op_call(call, op)
        fty = self._callee_type(call, op)
        args = call.args
        arg_types = [self.visit(a) for a in args]
        if type(fty) is IncompleteType:
            ret = IncompleteType()
            self._expect(fty, FuncType(tuple(arg_types), ret), call,
                         N_("cannot call this value: it has type {expected}, but is called as "
                            "{found}"))
            return ret
        if type(fty) is not FuncType:
            raise self.error(call, _("cannot call a value of type {type}: it is not a "
                                     "function").format(type=self.resolve(fty)))
        if len(fty.params) != len(args):
            desc = self._callee_desc(op)
            n = len(fty.params)
            if desc is None:
                text = ngettext("the function takes {n} argument, {given} given",
                                "the function takes {n} arguments, {given} given", n)
            else:
                text = ngettext("{callee} takes {n} argument, {given} given",
                                "{callee} takes {n} arguments, {given} given", n)
            raise self.error(call, text.format(callee=desc, n=n, given=len(args)))
        self._unify_args(call, op, fty, args, arg_types)
        return fty.ret

    def _callee_type(self, call: Call, op) -> Type:
        """The type of the function `call` calls through `op` (a global, a constructor or a
        value), instantiated where it is polymorphic; the instantiation is kept for the call."""
        inst = None
        if type(op) is GlobalVar:
            s, poly = self._global_scheme(op)
            if poly:
                fty, inst = self.instantiate(s)
            else:
                fty = s
                self._mono_calls.append((call, op.name))
            self._record(op, fty)
        elif type(op) is ConstructorRef:
            fty, inst = self.instantiate(self._constructor_scheme(op))
            self._record(op, fty)
        else:
            fty = self.find(self.visit(op))
            if type(fty) is FuncType and fty.type_params:
                fty, inst = self.instantiate(fty)
        if inst:
            self._call_inst[id(call)] = inst
        return fty

    def _unify_args(self, call: Call, op, fty: FuncType, args, arg_types: list) -> None:
        """Each argument type against its parameter; a mismatch is reported at its argument
        (`args`: the nodes the arguments come from)."""
        unify = self.unify
        for i, (p, a, at) in enumerate(zip(fty.params, args, arg_types)):
            try:
                unify(p, at)
            except _Mismatch:
                # the message is made only for a mismatch (unifying again fails the same way)
                desc = self._callee_desc(op)
                template = (N_("type mismatch in argument {index} of the function: expected "
                               "{expected}, found {found}") if desc is None else
                            N_("type mismatch in argument {index} of {callee}: expected "
                               "{expected}, found {found}"))
                self._refuse(p, at, _at(a, call), template, literal=a, index=i + 1, callee=desc)

    def _op_call(self, call: Call, op: OpRef) -> Type:
        relay_ops = _ops()
        opdef = relay_ops.OPS.get(op.name)
        if opdef is None and op.name in dialect.DIALECT_OPS:
            return self._dialect_call(call, op)
        if opdef is None:
            raise self.error(op, _("unknown operator `{op}`").format(op=op.name),
                             cls=NameResolutionError)
        try:
            call.attrs = relay_ops.normalize_attrs(opdef, call.attrs)
        except relay_ops.OpAttrError as exc:
            raise self.error(call, getattr(exc, "message", None) or str(exc),
                             cls=NameResolutionError) from None
        arg_types = [self.visit(a) for a in call.args]
        if opdef.attrs_from_args is not None:
            fixed = opdef.attrs_from_args(
                [a.data if isinstance(a, Constant) else None for a in call.args], call.attrs)
            if fixed is not None:
                call.attrs = fixed
        out = self._apply_relation(call, opdef, arg_types)
        if out is None:
            out = IncompleteType()
            self._pending.append(_OpRelation(call, opdef, arg_types, out, self.root))
        self._record(op, FuncType(tuple(arg_types), out))
        return out

    def _dialect_call(self, call: Call, op: OpRef) -> Type:
        """A call of the memory or device dialect (a printed late pass stage)."""
        msg = dialect.arity_error(op.name, len(call.args))
        if msg is not None:
            raise self.error(call, msg)
        if op.name == dialect.CALL_LOWERED:
            return self._call_lowered(call, op)
        arg_types = [self.visit(a) for a in call.args]
        if op.name in dialect.DEVICE_OPS:
            out = arg_types[0]  # one device: the value passes through
        else:
            resolved = [self.resolve(self.find(t)) for t in arg_types]
            try:
                out = dialect.result_type(op.name, resolved, call.attrs)
            except dialect.DialectTypeError as exc:
                where = call if exc.arg is None else _at(call.args[exc.arg], call)
                raise self.error(where, exc.message) from None
        self._record(op, FuncType(tuple(arg_types), out))
        return out

    def _call_lowered(self, call: Call, op: OpRef) -> Type:
        """`call_lowered(@f, (a, b), metadata={...})`, as TVM's LowerTE writes a kernel call:
        TVM's relation asks for a global callee whose parameters are the tuple's fields, and
        gives the callee's result."""
        callee, packed = call.args
        if type(callee) is not GlobalVar:
            raise self.error(_at(callee, call), _(
                "call_lowered: the callee must be a global function such as @f"))
        fty = self._callee_type(call, callee)  # a global's type is known or being inferred
        packed_t = self.resolve(self.find(self.visit(packed)))
        if type(packed_t) is not TupleType:
            raise self.error(_at(packed, call), _(
                "call_lowered: the arguments must be a tuple, found {type}").format(type=packed_t))
        fields = packed_t.fields
        if len(fty.params) != len(fields):
            raise self.error(_at(packed, call), ngettext(
                "call_lowered: @{name} takes {n} argument, the tuple holds {given}",
                "call_lowered: @{name} takes {n} arguments, the tuple holds {given}",
                len(fty.params)).format(name=callee.name, n=len(fty.params), given=len(fields)))
        # a mismatch is reported at the tuple's field when the tuple is written out
        nodes = packed.fields if type(packed) is ast.Tuple else [packed] * len(fields)
        self._unify_args(call, callee, fty, nodes, list(fields))
        self._record(op, FuncType((fty, packed_t), fty.ret))
        return fty.ret

    def _apply_relation(self, call: Call, opdef, arg_types: list) -> Type | None:
        """The operator's result type, or None while an argument type is still unknown."""
        relay_ops = _ops()
        resolved = []
        for t in arg_types:
            t = self.find(t)
            if type(t) is not TensorType:
                t = self.resolve(t)
                if _has_unknown(t):
                    if not self._assign_arguments(call, opdef, arg_types):
                        return None
                    return self._apply_relation(call, opdef, arg_types)
            resolved.append(t)
        for i, t in enumerate(resolved):
            # the relation checks tensor kinds itself; these kinds get a message at the argument
            if type(t) in (FuncType, TypeCall, RefType, TypeVar):
                raise self.error(_at(call.args[i], call),
                                 _("argument {index} of operator `{op}` must be a tensor, found "
                                   "{type}").format(index=i + 1, op=opdef.name, type=t))
            vector = _vector_dtype_in(t)
            if vector is not None:
                raise self.error(_at(call.args[i], call),
                                 _("argument {index} of operator `{op}` has the vector dtype "
                                   "{dtype}, which no operator kernel here takes").format(
                                       index=i + 1, op=opdef.name, dtype=vector),
                                 _("vector dtypes (TVM's lanes, as in int8x4) may appear in "
                                   "types; an operator needs a scalar dtype such as int8"))
        try:
            out = opdef.type_rel(resolved, call.attrs)
        except relay_ops.OpTypeError as exc:
            msg = getattr(exc, "message", None) or str(exc)
            if not msg.startswith(opdef.name):
                msg = f"{opdef.name}: {msg}"
            raise self.error(call, msg, self._relation_hint(call, resolved)) from None
        self._check_integer_context(call, opdef.name, resolved, out)
        if opdef.tvm_note is not None:
            self._note_tvm_refusal(call, opdef, resolved)
        if opdef.resolve_attrs is not None:
            fixed = opdef.resolve_attrs(resolved, call.attrs)
            if fixed is not None:
                call.attrs = fixed
        return out

    def _note_tvm_refusal(self, call: Call, opdef, arg_types: list) -> None:
        """A call rvmdbg runs and TVM refuses (docs/differences.md): a note at the call, once."""
        why = opdef.tvm_note(arg_types, _ops().normalize_attrs(opdef, call.attrs or {}))
        if why is None or id(call) in self._tvm_noted or call.span is None:
            return
        self._tvm_noted.add(id(call))
        self.warnings.append(TypeNote(
            _("TVM refuses this: {why}").format(why=why), call.span,
            _("rvmdbg accepts it (docs/differences.md says why)"),
            self.mod.source if self.mod is not None else None))

    # operator -> (index of the argument converted to the result's dtype, whether integer
    # wrap-around is the conversion's meaning): a cast wraps integers on purpose, a fill does not
    _CONVERTING = {"cast": (0, True), "cast_like": (0, True), "full": (0, False),
                   "full_like": (1, False)}

    def _check_integer_context(self, call: Call, name: str, args: list, out) -> None:
        """A literal that has no value in the integer dtype it is converted to (`inff`, `nanf`,
        3e9f or 300 into int8) is a type error at the literal: TVM's code for it is undefined
        (a float cast to an integer) or silently wraps (a fill value)."""
        if not isinstance(out, TensorType) or not out.dtype.startswith(("int", "uint")):
            return
        want = out.dtype
        if name == "clip":
            for key in ("a_min", "a_max"):
                v = call.attrs.get(key) if call.attrs else None
                if isinstance(v, float) and not math.isfinite(v):
                    raise self.error(
                        call, _("clip: {attr}={value} has no {dtype} value").format(
                            attr=key, value=_float_word(v), dtype=want),
                        _("give {attr} as a number within {dtype}'s range").format(
                            attr=key, dtype=want))
            return
        spec = self._CONVERTING.get(name)
        if spec is None or spec[0] >= len(call.args):
            return
        literal = call.args[spec[0]]
        if not isinstance(literal, Constant) or getattr(literal.data, "ndim", 1) != 0:
            return
        value = literal.data.item()
        if isinstance(value, bool):
            return
        where = _at(literal, call)
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.error(where, _("{op}: {value} has no {dtype} value (converting it "
                                          "to an integer is undefined)").format(
                                     op=name, value=_float_word(value), dtype=want),
                                 _("write an integer literal within {dtype}'s range").format(
                                     dtype=want))
            value = math.trunc(value)
            wraps = False  # a float out of an integer's range is undefined, not a wrap
        else:
            wraps = spec[1]
        info = np.iinfo(want)
        if not wraps and not info.min <= value <= info.max:
            raise self.error(where, _("{op}: {value} is out of range for {dtype} ({low} to "
                                      "{high})").format(op=name, value=value, dtype=want,
                                                         low=info.min, high=info.max),
                             _("cast(...) an integer literal when wrap-around is meant")
                             if not isinstance(literal.data.item(), float) else None)

    def _assign_arguments(self, call: Call, opdef, arg_types: list) -> bool:
        """Give unknown arguments the types the operator's TVM relation assigns them (the
        weight of nn.dense from `units`, ...); True when one became known."""
        solve = _solvers().get(opdef.name)
        if solve is None:
            return False
        known = []
        for t in arg_types:
            t = self.resolve(self.find(t))
            known.append(None if _has_unknown(t) else t)
        progress = False
        for i, t in solve(known, call.attrs).items():
            if known[i] is None:
                self._expect(t, arg_types[i], _at(call.args[i], call),
                             N_("argument {index} of operator `{op}` must be {expected}, found "
                                "{found}"), index=i + 1, op=opdef.name)
                progress = progress or not _has_unknown(self.resolve(self.find(arg_types[i])))
        return progress

    def _assign_from_result(self, rel: "_OpRelation") -> bool:
        """TVM's IdentityRel unifies result and input both ways: a known result types an
        unknown input. True when that made the input known."""
        from rvmdbg.relay.ops.solvers import IDENTITY_RELATION_OPS
        if rel.opdef.name not in IDENTITY_RELATION_OPS or len(rel.arg_types) != 1:
            return False
        result = self.resolve(self.find(rel.result))
        arg = rel.arg_types[0]
        if _has_unknown(result) or not _has_unknown(self.resolve(self.find(arg))):
            return False
        self._expect(result, arg, _at(rel.call.args[0], rel.call),
                     N_("operator `{op}` gives {expected} here, so its argument must be "
                        "{expected}, found {found}"), op=rel.opdef.name)
        return not _has_unknown(self.resolve(self.find(arg)))

    def _relation_hint(self, call: Call, arg_types: list) -> str | None:
        """When an int literal meets a float tensor (or back), how to write the literal."""
        dtypes = [t.dtype for t in arg_types if type(t) is TensorType]
        for a, t in zip(call.args, arg_types):
            if isinstance(a, Constant):
                for dtype in dtypes:
                    h = self._literal_hint(a, scalar(dtype)) if dtype != t.dtype else None
                    if h:
                        return h
        return None

    # ------------------------------------------------------------------ binders

    def signature(self, fn: Function) -> tuple:
        """Parameter and return types of fn: annotations, else the types a previous check gave
        (so re-checking a transformed module agrees with the first check), else unknowns."""
        sig = self._sigs.get(id(fn))
        if sig is not None:
            return sig
        old = fn.checked_type if isinstance(fn.checked_type, FuncType) else None
        if old is not None and (len(old.params) != len(fn.params) or _has_unknown(old)):
            old = None
        params = []
        for p in fn.params:
            if p.type_annotation is not None:
                params.append(self.annotation(p.type_annotation, p))
            elif p.checked_type is not None and not _has_unknown(p.checked_type):
                params.append(p.checked_type)
            else:
                params.append(IncompleteType())
        if fn.ret_type is not None:
            ret = self.annotation(fn.ret_type, fn)
        elif old is not None:
            ret = old.ret
        else:
            ret = IncompleteType()
        sig = (params, ret)
        self._sigs[id(fn)] = sig
        return sig

    def _function(self, fn: Function) -> Type:
        params, ret = self.signature(fn)
        for p, t in zip(fn.params, params):
            self._bind_var(p, t)
        body_t = self.visit(fn.body)
        name = self._global_names.get(id(fn))
        template = (N_("@{name} is declared to return {expected}, but its body has type {found}")
                    if name else
                    N_("the function is declared to return {expected}, but its body has type "
                       "{found}"))
        self._expect(ret, body_t, _at(fn.body, fn), template, literal=fn.body, name=name)
        return FuncType(tuple(params), ret, tuple(fn.type_params))

    def _let(self, e: Let) -> Type:
        # walk the let chain iteratively: programs have thousands of lets in a row
        chain = []
        while True:
            var = e.var
            value = e.value
            if var.type_annotation is not None:
                vt = self.annotation(var.type_annotation, var)
            elif type(value) is Function:
                # the signature is known before the body, so a recursive use sees it
                params, ret = self.signature(value)
                vt = FuncType(tuple(params), ret, tuple(value.type_params))
            else:
                vt = IncompleteType()
            self._bind_var(var, vt)
            value_t = self.visit(value)
            try:
                self.unify(vt, value_t)
            except _Mismatch:
                # the message is made only for a mismatch (unifying again fails the same way)
                self._refuse(vt, value_t, _at(value, var),
                             N_("%{name} is declared as {expected}, but its value has type "
                                "{found}"), literal=value, name=var.name)
            chain.append(e)
            body = e.body
            if type(body) is not Let or id(body) in self._types:
                break
            e = body
        t = self.visit(body)
        for let in chain[1:]:
            self._record(let, t)
        return t

    def _if(self, e: If) -> Type:
        ct = self.visit(e.cond)
        try:
            self.unify(BOOL, ct)
        except _Mismatch:
            raise self.error(_at(e.cond, e), _("the condition of if must be a bool scalar, "
                                               "found {type}").format(type=self.resolve(ct)),
                             hint=None) from None
        tt = self.visit(e.true_branch)
        ft = self.visit(e.false_branch)
        try:
            return self.unify(tt, ft, join=True)
        except _Mismatch:
            hint = (self._literal_hint(e.false_branch, self.resolve(tt))
                    or self._literal_hint(e.true_branch, self.resolve(ft)))
            raise self.error(_at(e.false_branch, e),
                             _("the branches of if have different types: {then} and "
                               "{else_}").format(then=self.resolve(tt), else_=self.resolve(ft)),
                             hint) from None

    def _tuple(self, e: ast.Tuple) -> Type:
        return TupleType(tuple([self.visit(f) for f in e.fields]))

    def _project(self, e: TupleGetItem, tuple_type: Type) -> Type | None:
        t = self.find(tuple_type)
        if type(t) is IncompleteType:
            return None
        if type(t) is not TupleType:
            raise self.error(e, _("cannot take field .{index} of a value of type {type}: it is "
                                  "not a tuple").format(index=e.index, type=self.resolve(t)))
        if not 0 <= e.index < len(t.fields):
            n = len(t.fields)
            raise self.error(e, ngettext("tuple index {index} is out of range: {type} has {n} "
                                         "field",
                                         "tuple index {index} is out of range: {type} has {n} "
                                         "fields", n).format(index=e.index, type=self.resolve(t),
                                                             n=n))
        return t.fields[e.index]

    def _tuple_get_item(self, e: TupleGetItem) -> Type:
        tt = self.visit(e.tuple_value)
        field = self._project(e, tt)
        if field is None:
            field = IncompleteType()
            self._pending.append(_Projection(e, tt, field, self.root))
        return field

    def _ref_create(self, e: RefCreate) -> Type:
        return RefType(self.visit(e.value))

    def _referenced(self, e, what: str) -> Type:
        """The type of the value `e.ref` refers to (`what` names the operation in the error)."""
        rt = self.visit(e.ref)
        value = IncompleteType()
        try:
            self.unify(RefType(value), rt)
        except _Mismatch:
            raise self.error(_at(e.ref, e),
                             _("{op} expects a reference, found {type}").format(
                                 op=what, type=self.resolve(rt))) from None
        return value

    def _ref_read(self, e: RefRead) -> Type:
        return self._referenced(e, "ref_read")

    def _ref_write(self, e: RefWrite) -> Type:
        value = self._referenced(e, "ref_write")
        vt = self.visit(e.value)
        self._expect(value, vt, _at(e.value, e),
                     N_("ref_write stores {found} into a reference holding {expected}"),
                     literal=e.value)
        return UNIT

    # ------------------------------------------------------------------ match

    def _match(self, e: Match) -> Type:
        dt = self.visit(e.data)
        result = None
        for i, clause in enumerate(e.clauses):
            self._check_pattern(clause.lhs, dt, clause)
            rt = self.visit(clause.rhs)
            if result is None:
                result = rt
            else:
                try:
                    result = self.unify(result, rt, join=True)
                except _Mismatch:
                    before = self.resolve(result)
                    raise self.error(_at(clause.rhs, clause),
                                     _("match clause {index} has type {type}, but the clauses "
                                       "before it have type {before}").format(
                                         index=i + 1, type=self.resolve(rt), before=before),
                                     self._literal_hint(clause.rhs, before)) from None
        if result is None:
            raise self.error(e, _("match has no clauses"))
        self._check_coverage(e)
        return result

    def _check_pattern(self, p, t: Type, clause) -> None:
        self._record(p, t)  # patterns get the type of the value they match, for code generation
        if isinstance(p, PatternWildcard):
            return
        if isinstance(p, PatternVar):
            var = p.var
            if var.type_annotation is not None:
                vt = self.annotation(var.type_annotation, var)
                self._expect(vt, t, p, N_("pattern %{name} is declared as {expected}, but the "
                                          "value matched has type {found}"), name=var.name)
            else:
                vt = t
            self._bind_var(var, vt)
            return
        if isinstance(p, PatternConstructor):
            ref = p
            if p.constructor is None:
                p.constructor = self.mod.constructors.get(p.name)
            scheme = self._constructor_scheme(ref)
            fty = self.instantiate(scheme)[0]
            self._expect(fty.ret, t, p, N_("pattern {name} matches {expected}, but the value "
                                           "matched has type {found}"), name=p.name)
            if len(p.patterns) != len(fty.params):
                n = len(fty.params)
                raise self.error(p, ngettext(
                    "constructor {name} has {n} field, but the pattern gives {given}",
                    "constructor {name} has {n} fields, but the pattern gives {given}", n).format(
                        name=p.name, n=n, given=len(p.patterns)))
            for sub, ft in zip(p.patterns, fty.params):
                self._check_pattern(sub, ft, clause)
            return
        if isinstance(p, PatternTuple):
            fields = tuple(IncompleteType() for _ in p.patterns)
            self._expect(TupleType(fields), t, p,
                         lambda: ngettext(
                             "a tuple pattern of {n} field cannot match a value of type {found}",
                             "a tuple pattern of {n} fields cannot match a value of type {found}",
                             len(fields)), n=len(fields))
            for sub, ft in zip(p.patterns, fields):
                self._check_pattern(sub, ft, clause)
            return
        raise self.error(clause, _("unknown pattern {kind}").format(kind=type(p).__name__))

    def _check_coverage(self, e: Match) -> None:
        rows: list = []
        for c in e.clauses:
            if rows and not self.useful(rows, [c.lhs]):
                self.warnings.append(TypeWarning(_("unreachable match clause: the clauses "
                                                   "before it cover every value it matches"),
                                                 self._span_of(c), None, self.source))
            rows.append([c.lhs])
        if not e.complete:
            return
        missing = self.missing_cases(rows, 1)
        if missing:
            cases = ", ".join(w[0] for w in missing)
            raise self.error(e, _("match is not exhaustive: missing {cases}").format(cases=cases),
                             hint=_("add the missing clauses, a `_ =>` clause, or write `match?` "
                                    "for a partial match that fails at run time"))

    # ------------------------------------------------------------------ solving

    def solve_pending(self) -> None:
        """Apply queued relations until none makes progress."""
        progress = True
        while progress and self._pending:
            progress = False
            waiting = []
            for c in self._pending:
                self.root = c.root
                if c.try_solve(self):
                    progress = True
                else:
                    waiting.append(c)
            self._pending = waiting

    def pending_unknowns(self) -> set:
        """Unknowns a queued relation still mentions: they must stay monomorphic."""
        out: dict = {}
        for c in self._pending:
            for t in c.waiting_on(self):
                self._collect_unknowns(t, out)
            self._collect_unknowns(c.result, out)
        return set(out)

    def fail_on_pending(self) -> None:
        """A relation still waiting means some type cannot be inferred: name the variable."""
        if not self._pending:
            return
        c = self._pending[0]
        self.root = c.root
        found: dict = {}
        for t in c.waiting_on(self):
            self._collect_unknowns(t, found)
        blocking = set(found)
        args = c.call.args if isinstance(c, _OpRelation) else [c.node.tuple_value]
        culprit = None
        for a in args:
            if isinstance(a, Var) and set(self.unknowns(self._types[id(a)])) & blocking:
                culprit = a
                break
        if culprit is None:
            for n in self._nodes:
                if type(n) is Var and set(self.unknowns(self._types[id(n)])) & blocking:
                    culprit = n
                    break
        if culprit is not None:
            raise self.error(culprit, _("cannot infer the type of %{name}; add an "
                                        "annotation").format(name=culprit.name))
        if isinstance(c, _OpRelation):
            raise self.error(c.call, _("cannot infer the type of the arguments of operator "
                                       "`{op}`; add an annotation").format(op=c.opdef.name))
        raise self.error(c.node, _("cannot infer the type of the tuple projected; add an "
                                   "annotation"))

    def finalize(self) -> None:
        """Write resolved types into the nodes; unconstrained unknowns default to `()`."""
        types = self._types
        call_inst = self._call_inst
        final = self.resolve_final
        noted = False
        self._defaulted = False
        # id(type) -> its resolution, for composite types met again (a global's type at each
        # of its uses): kept only when resolving it defaulted nothing, so it stays exact
        done: dict = {}
        for n in self._nodes:
            t = types[id(n)]
            tt = type(t)
            if tt is TensorType:
                n.checked_type = t
            elif tt is IncompleteType:
                n.checked_type = final(t)
            else:
                r = done.get(id(t))
                if r is None:
                    r = final(t)
                    if not self._defaulted:
                        done[id(t)] = r
                n.checked_type = r
            if type(n) is Call:
                inst = call_inst.get(id(n))
                n.type_args = [final(u) for u in inst] if inst else []
            if not self._defaulted:
                continue
            self._defaulted = False  # this node's resolution defaulted an unknown
            if not noted and n.span is not None:
                # TVM's InferType leaves the type unsolved and refuses the program: say so once
                noted = True
                self.warnings.append(TypeNote(
                    _("TVM refuses this: its type inference is unable to infer a type for this "
                      "expression; rvmdbg takes () for the part nothing constrains"), n.span,
                    _("annotate it (a let's variable or a parameter) to be accepted by TVM too"),
                    self.mod.source if self.mod is not None else None))

    def resolve_final(self, t: Type) -> Type:
        """resolve(t), binding every unknown left in it to `()` (nothing constrains it)."""
        tt = type(t)
        if tt is IncompleteType:
            u = self.find(t)
            tu = type(u)
            if tu is IncompleteType:
                self._subst[u] = UNIT
                self._defaulted = True
                return UNIT
            if tu is TensorType:
                return u  # the common case (a let's variable), without a call
            return self.resolve_final(u)
        if tt is TensorType or tt is TypeVar:
            return t
        final = self.resolve_final
        if tt is TupleType:
            fields = [final(f) for f in t.fields]
            if all(a is b for a, b in zip(fields, t.fields)):
                return t
            return TupleType(tuple(fields))
        if tt is FuncType:
            params = [final(p) for p in t.params]
            ret = final(t.ret)
            if ret is t.ret and all(a is b for a, b in zip(params, t.params)):
                return t
            return FuncType(tuple(params), ret, t.type_params)
        if tt is TypeCall:
            args = [final(a) for a in t.args]
            if all(a is b for a, b in zip(args, t.args)):
                return t
            return TypeCall(t.name, tuple(args))
        if tt is RefType:
            v = final(t.value)
            return t if v is t.value else RefType(v)
        return t

    # ------------------------------------------------------------------ the module

    def check_module(self) -> Module:
        mod = self.mod
        for td in mod.type_defs.values():
            for con in td.constructors:
                for t in con.inputs:
                    self._validate_type(t, None)
        incomplete = set()
        for name, fn in mod.functions.items():
            if not isinstance(fn, Function):
                raise RelayTypeError(_("@{name} is not a function").format(name=name), None,
                                     None, self.source)
            params, ret = self.signature(fn)
            sig = FuncType(tuple(params), ret)
            if _has_unknown(sig):
                incomplete.add(name)
                self._mono[name] = sig
            else:
                self._schemes[name] = self._close(fn, sig)
        # only a global with an inferred signature constrains the order globals are checked in
        order = _components(mod, incomplete) if incomplete else [[n] for n in mod.functions]
        for component in order:
            self._check_component(component, incomplete)
        self.fail_on_pending()
        self.finalize()
        for name, fn in mod.functions.items():
            fn.checked_type = self.resolve_final(self._schemes[name])
        # the parser's warnings stay; the checker's own are made afresh by every check
        mod.warnings = [w for w in mod.warnings if not isinstance(w, TypeWarning)] + self.warnings
        return mod

    def _close(self, fn: Function, sig: FuncType) -> FuncType:
        """sig as a global's type scheme: its declared type parameters plus any other TypeVar
        it mentions (a global has no enclosing scope to bind them)."""
        tps = list(fn.type_params)
        for tv in free_type_vars(sig):
            if tv not in tps:
                tps.append(tv)
        return FuncType(sig.params, sig.ret, tuple(tps))

    def _note_generalised(self, name: str, tvs: list) -> None:
        """TVM's solver leaves these types unsolved and refuses the definition; say so."""
        fn = self.mod.functions[name]
        scheme = self._schemes[name]
        where = fn.span
        for p in fn.params:
            if p.type_annotation is None and set(free_type_vars(self.resolve(
                    self._types.get(id(p), IncompleteType())))) & set(tvs):
                where = p.span or where
                break
        self.warnings.append(TypeNote(
            _("TVM refuses @{name}: its type inference is unable to infer a type here (nothing "
              "constrains it); rvmdbg generalises @{name} to {scheme}").format(
                  name=name, scheme=scheme), where,
            _("annotate the parameter's type to be accepted by TVM too"), self.mod.source))

    def _check_component(self, names: list, incomplete: set) -> None:
        mod = self.mod
        self._mono_calls = []
        for name in names:
            fn = mod.functions[name]
            self.root = fn
            self.visit(fn)
        self.root = None
        self.solve_pending()
        generalize = [n for n in names if n in incomplete]
        if not generalize:
            return
        frozen = self.pending_unknowns()
        taken = {tv.name for n in names for tv in mod.functions[n].type_params}
        taken |= set(mod.type_defs)
        for n in generalize:
            taken |= {tv.name for tv in free_type_vars(self.resolve(self._mono[n]))}
        fresh_names = _type_param_names(taken)
        made: dict = {}  # global -> the type parameters generalisation gave it
        for n in generalize:
            for u in self.unknowns(self._mono[n]):
                if u not in frozen:
                    self._subst[u] = tv = TypeVar(next(fresh_names))
                    made.setdefault(n, []).append(tv)
        for n in generalize:
            self._schemes[n] = self._close(mod.functions[n], self.resolve(self._mono.pop(n)))
            if n in made:
                self._note_generalised(n, made[n])
        for call, name in self._mono_calls:
            if name in generalize:
                # a recursive call uses the global at its own type parameters
                tps = self._schemes[name].type_params
                if tps:
                    self._call_inst[id(call)] = list(tps)
        self._mono_calls = []


def _type_param_names(taken: set):
    """A, B, ..., Z, T0, T1, ...: names for generalized type parameters, skipping taken ones."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for n in itertools.count():
        name = letters[n] if n < 26 else f"T{n - 26}"
        if name not in taken:
            yield name


_referenced_globals = ast.referenced_globals


def _components(mod: Module, targets: set) -> list:
    """Strongly connected components of the graph of references to the globals in targets,
    referenced globals before referencing ones (Tarjan's algorithm, iterative)."""
    names = list(mod.functions)
    edges = {n: [m for m in _referenced_globals(mod.functions[n]) if m in targets]
             for n in names}
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list = []
    counter = 0
    for root in names:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            recurse = False
            succ = edges[v]
            while i < len(succ):
                w = succ[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comp.sort(key=names.index)
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def check_module(mod: Module) -> Module:
    """Infer and record the type of every expression of mod (in place); returns mod.

    Raises RelayTypeError or NameResolutionError, located, with `source=mod.source`.
    Safe to call again on a module passes have transformed: everything is re-inferred."""
    with _checking():
        out = TypeChecker(mod).check_module()
    out.checked_definitions = tuple(dict(d) for d in _definitions(out))
    return out


def _definitions(mod: Module) -> tuple:
    return (mod.functions, mod.type_defs, mod.constructors)


def is_checked(mod: Module) -> bool:
    """Whether `check_module` typed `mod` and none of its functions, type definitions or
    constructors was added, removed or replaced since (`checked_definitions` records them; a
    pass may hand its input's record on to the module it makes): then checking it again would
    write the same types. Passes build new nodes rather than change old ones, so a replaced
    definition is how a module changes."""
    snapshot = getattr(mod, "checked_definitions", None)
    if snapshot is None:
        return False
    for before, now in zip(snapshot, _definitions(mod)):
        if before.keys() != now.keys() or any(now[k] is not v for k, v in before.items()):
            return False
    return True


def check_expr(expr, mod: Module) -> Type:
    """Type one expression against the checked module mod (checking mod first if needed);
    fills checked_type on expr's nodes and returns expr's type."""
    if any(f.checked_type is None for f in mod.functions.values()):
        check_module(mod)
    with _checking():
        tc = TypeChecker(mod)
        for name, fn in mod.functions.items():
            tc._schemes[name] = fn.checked_type
        tc.root = expr
        t = tc.visit(expr)
        tc.solve_pending()
        tc.fail_on_pending()
        tc.finalize()
        return tc.resolve_final(t)
