"""Relay type inference: Hindley-Milner unification plus TVM-style deferred operator relations.

`check_module(mod)` infers a type for every expression and variable of every global function,
writes it into `checked_type`, fills `Call.type_args` for calls to polymorphic callees and
checks that plain `match` is exhaustive. `check_expr(expr, mod)` types one extra expression
against an already checked module (CLI arguments, nodes built by passes).

How it works:
- Unknown types are `IncompleteType` objects bound in a substitution map (`subst`); unifying
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

from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.relay import ast
from rvmdbg.relay.ast import (
    Call, Clause, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, Module, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    TupleGetItem, Var,
)
from rvmdbg.relay.check_base import TypeNote, TypeWarning, at_node, float_word, ops_module
from rvmdbg.relay.check_calls import CallChecker
from rvmdbg.relay.diagnostics import NameResolutionError, RelayTypeError, Span
from rvmdbg.relay.match_coverage import PatternMatrix
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, Type, TypeCall, TypeVar, UNIT,
    free_type_vars, scalar,
)
from rvmdbg.relay.unify import Mismatch, Projection, Unifier, has_unknown

__all__ = ["check_module", "check_expr", "TypeWarning", "is_checked"]

BOOL = scalar("bool")
_CONSTANT_TYPES: dict = {}  # (shape, numpy dtype) -> TensorType: literals repeat a lot

_RECURSION_LIMIT = 200_000  # deep nesting (long operator chains) recurses once per level


@contextmanager
def checking():
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


class TypeChecker(CallChecker, Unifier, PatternMatrix):
    """One inference problem over a module: the substitution, the node types, the relation queue."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.source = mod.source
        self.subst: dict = {}          # IncompleteType -> Type
        self.types: dict = {}          # id(node) -> Type, for expressions and Vars
        self.nodes: list = []          # every typed node, in visiting order
        self.pending: list = []        # queued OpRelation / Projection
        self.defaulted = False         # resolve_final bound an unknown to () (TVM refuses)
        self.schemes: dict = {}        # global name -> FuncType, usable polymorphically
        self.mono: dict = {}           # global name -> FuncType, monomorphic (own component)
        self.sigs: dict = {}           # id(Function) -> (param types, ret type) made in advance
        self.call_inst: dict = {}      # id(Call) -> fresh unknowns of the callee's instantiation
        self.mono_calls: list = []     # (Call, global name): recursive calls inside a component
        self.ctor_types: dict = {}     # constructor name -> FuncType scheme
        self.checked_annots: set = set()
        self.global_names: dict = {id(f): n for n, f in mod.functions.items()}
        self.root = None                # the expression being checked, for spans of span-less nodes
        self.warnings: list = []
        self.tvm_noted: set = set()  # ids of calls noted as refused by TVM
        self.dispatch = {
            Constant: self.constant, Var: self.free_var, GlobalVar: self.global_var,
            ConstructorRef: self.constructor_ref, OpRef: self.op_ref, Call: self.call,
            Function: self.function, Let: self.let, If: self.if_, ast.Tuple: self.tuple,
            TupleGetItem: self.tuple_get_item, Match: self.match, RefCreate: self.ref_create,
            RefRead: self.ref_read, RefWrite: self.ref_write,
        }

    # ------------------------------------------------------------------ errors

    def span_of(self, node) -> Span | None:
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
        return cls(message, self.span_of(node), hint, self.source)

    def expect(self, expected: Type, found: Type, node, template, join: bool = False,
                literal=None, **fields) -> Type:
        """unify(expected, found), or a RelayTypeError at node built from template: a msgid
        marked with N_ (or a function giving the translated text, for ngettext), translated
        only on a mismatch; {expected} and {found} are filled with the resolved types, other
        fields from `fields`."""
        try:
            return self.unify(expected, found, join)
        except Mismatch as m:
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
            hint = self.literal_hint(literal, inner_e) if literal is not None else None
            raise self.error(node, msg, hint) from None

    def refuse(self, expected: Type, found: Type, node, template, literal=None, **fields):
        """The RelayTypeError `expect` makes, after `unify(expected, found)` failed (checking
        succeeds without making the message): unifying again fails at the same place."""
        self.expect(expected, found, node, template, literal=literal, **fields)
        text = template() if callable(template) else _(template)
        raise self.error(node, text.format(expected=self.resolve(expected),
                                           found=self.resolve(found), **fields))

    @staticmethod
    def literal_hint(expr, expected: Type) -> str | None:
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
                return _("{value} has no {dtype} value").format(value=float_word(value),
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
        t = self.types.get(id(e))
        if t is not None:
            return t
        fn = self.dispatch.get(type(e))
        if fn is None:
            raise self.error(e, _("cannot type-check a {node} node").format(
                node=type(e).__name__))
        t = fn(e)
        if id(e) not in self.types:
            self.types[id(e)] = t
            self.nodes.append(e)
        return t

    def record(self, node, t: Type) -> None:
        if id(node) not in self.types:
            self.nodes.append(node)
        self.types[id(node)] = t

    def bind_var(self, var: Var, t: Type) -> None:
        self.record(var, t)

    def annotation(self, t: Type, node) -> Type:
        """A written type, checked for unknown ADTs, with every `_` made a fresh unknown."""
        if id(t) not in self.checked_annots:
            self.validate_type(t, node)
            self.checked_annots.add(id(t))
        return self.freshen(t) if has_unknown(t) else t

    def freshen(self, t: Type) -> Type:
        if isinstance(t, IncompleteType):
            return IncompleteType()
        if isinstance(t, TupleType):
            return TupleType(tuple(self.freshen(f) for f in t.fields))
        if isinstance(t, FuncType):
            return FuncType(tuple(self.freshen(p) for p in t.params), self.freshen(t.ret),
                            t.type_params)
        if isinstance(t, TypeCall):
            return TypeCall(t.name, tuple(self.freshen(a) for a in t.args))
        if isinstance(t, RefType):
            return RefType(self.freshen(t.value))
        return t

    def validate_type(self, t: Type, node) -> None:
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
                self.validate_type(a, node)
        elif isinstance(t, TupleType):
            for f in t.fields:
                self.validate_type(f, node)
        elif isinstance(t, FuncType):
            for p in t.params:
                self.validate_type(p, node)
            self.validate_type(t.ret, node)
        elif isinstance(t, RefType):
            self.validate_type(t.value, node)

    # ------------------------------------------------------------------ leaves

    def constant(self, e: Constant) -> Type:
        data = e.data
        key = (data.shape, data.dtype)
        t = _CONSTANT_TYPES.get(key)
        if t is None:
            t = TensorType(tuple(int(d) for d in data.shape), str(data.dtype))
            _CONSTANT_TYPES[key] = t
        return t

    def free_var(self, v: Var) -> Type:
        # a Var reaches here only when used outside any binder seen so far
        if v.type_annotation is not None:
            t = self.annotation(v.type_annotation, v)
        elif v.checked_type is not None and not has_unknown(v.checked_type):
            t = v.checked_type
        else:
            raise self.error(v, _("unbound variable %{name}").format(name=v.name),
                             cls=NameResolutionError)
        self.bind_var(v, t)
        return t

    def global_scheme(self, node: GlobalVar):
        """(type, polymorphic?) of the global node names."""
        name = node.name
        s = self.schemes.get(name)
        if s is not None:
            return s, True
        s = self.mono.get(name)
        if s is not None:
            return s, False
        if name not in self.mod.functions:
            raise self.error(node, _("unknown global @{name}").format(name=name),
                             cls=NameResolutionError)
        # a global not in the problem (check_expr before its module was checked)
        raise self.error(node, _("@{name} has not been type-checked").format(name=name))

    def global_var(self, node: GlobalVar) -> Type:
        s, poly = self.global_scheme(node)
        return self.instantiate(s)[0] if poly else s

    def constructor_scheme(self, node) -> FuncType:
        name = node.name
        s = self.ctor_types.get(name)
        if s is not None:
            return s
        con = node.constructor or self.mod.constructors.get(name)
        if con is None:
            raise self.error(node, _("unknown constructor {name}").format(name=name),
                             cls=NameResolutionError)
        td = self.mod.type_defs.get(con.type_name)
        tps = tuple(td.type_params) if td is not None else ()
        s = FuncType(tuple(con.inputs), TypeCall(con.type_name, tps), tps)
        self.ctor_types[name] = s
        return s

    def constructor_ref(self, node: ConstructorRef) -> Type:
        return self.instantiate(self.constructor_scheme(node))[0]

    def op_ref(self, node: OpRef) -> Type:
        opdef = ops_module().OPS.get(node.name)
        params = ", ".join(f"%x{i}" for i in range(opdef.num_inputs if opdef else 1))
        wrapper = f"fn ({params}) {{ {node.name}({params}) }}"  # Relay text: nothing to translate
        raise self.error(node, _("operator `{op}` must be called directly; wrap it in a "
                                 "function to pass it as a value").format(op=node.name),
                         hint=wrapper)

    # ------------------------------------------------------------------ binders

    def signature(self, fn: Function) -> tuple:
        """Parameter and return types of fn: annotations, else the types a previous check gave
        (so re-checking a transformed module agrees with the first check), else unknowns."""
        sig = self.sigs.get(id(fn))
        if sig is not None:
            return sig
        old = fn.checked_type if isinstance(fn.checked_type, FuncType) else None
        if old is not None and (len(old.params) != len(fn.params) or has_unknown(old)):
            old = None
        params = []
        for p in fn.params:
            if p.type_annotation is not None:
                params.append(self.annotation(p.type_annotation, p))
            elif p.checked_type is not None and not has_unknown(p.checked_type):
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
        self.sigs[id(fn)] = sig
        return sig

    def function(self, fn: Function) -> Type:
        params, ret = self.signature(fn)
        for p, t in zip(fn.params, params):
            self.bind_var(p, t)
        body_t = self.visit(fn.body)
        name = self.global_names.get(id(fn))
        template = (N_("@{name} is declared to return {expected}, but its body has type {found}")
                    if name else
                    N_("the function is declared to return {expected}, but its body has type "
                       "{found}"))
        self.expect(ret, body_t, at_node(fn.body, fn), template, literal=fn.body, name=name)
        return FuncType(tuple(params), ret, tuple(fn.type_params))

    def let(self, e: Let) -> Type:
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
            self.bind_var(var, vt)
            value_t = self.visit(value)
            try:
                self.unify(vt, value_t)
            except Mismatch:
                # the message is made only for a mismatch (unifying again fails the same way)
                self.refuse(vt, value_t, at_node(value, var),
                             N_("%{name} is declared as {expected}, but its value has type "
                                "{found}"), literal=value, name=var.name)
            chain.append(e)
            body = e.body
            if type(body) is not Let or id(body) in self.types:
                break
            e = body
        t = self.visit(body)
        for let in chain[1:]:
            self.record(let, t)
        return t

    def if_(self, e: If) -> Type:
        ct = self.visit(e.cond)
        try:
            self.unify(BOOL, ct)
        except Mismatch:
            raise self.error(at_node(e.cond, e), _("the condition of if must be a bool scalar, "
                                               "found {type}").format(type=self.resolve(ct)),
                             hint=None) from None
        tt = self.visit(e.true_branch)
        ft = self.visit(e.false_branch)
        try:
            return self.unify(tt, ft, join=True)
        except Mismatch:
            hint = (self.literal_hint(e.false_branch, self.resolve(tt))
                    or self.literal_hint(e.true_branch, self.resolve(ft)))
            raise self.error(at_node(e.false_branch, e),
                             _("the branches of if have different types: {then} and "
                               "{else_}").format(then=self.resolve(tt), else_=self.resolve(ft)),
                             hint) from None

    def tuple(self, e: ast.Tuple) -> Type:
        return TupleType(tuple([self.visit(f) for f in e.fields]))

    def project(self, e: TupleGetItem, tuple_type: Type) -> Type | None:
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

    def tuple_get_item(self, e: TupleGetItem) -> Type:
        tt = self.visit(e.tuple_value)
        field = self.project(e, tt)
        if field is None:
            field = IncompleteType()
            self.pending.append(Projection(e, tt, field, self.root))
        return field

    def ref_create(self, e: RefCreate) -> Type:
        return RefType(self.visit(e.value))

    def referenced(self, e, what: str) -> Type:
        """The type of the value `e.ref` refers to (`what` names the operation in the error)."""
        rt = self.visit(e.ref)
        value = IncompleteType()
        try:
            self.unify(RefType(value), rt)
        except Mismatch:
            raise self.error(at_node(e.ref, e),
                             _("{op} expects a reference, found {type}").format(
                                 op=what, type=self.resolve(rt))) from None
        return value

    def ref_read(self, e: RefRead) -> Type:
        return self.referenced(e, "ref_read")

    def ref_write(self, e: RefWrite) -> Type:
        value = self.referenced(e, "ref_write")
        vt = self.visit(e.value)
        self.expect(value, vt, at_node(e.value, e),
                     N_("ref_write stores {found} into a reference holding {expected}"),
                     literal=e.value)
        return UNIT

    # ------------------------------------------------------------------ match

    def match(self, e: Match) -> Type:
        dt = self.visit(e.data)
        result = None
        for i, clause in enumerate(e.clauses):
            self.check_pattern(clause.lhs, dt, clause)
            rt = self.visit(clause.rhs)
            if result is None:
                result = rt
            else:
                try:
                    result = self.unify(result, rt, join=True)
                except Mismatch:
                    before = self.resolve(result)
                    raise self.error(at_node(clause.rhs, clause),
                                     _("match clause {index} has type {type}, but the clauses "
                                       "before it have type {before}").format(
                                         index=i + 1, type=self.resolve(rt), before=before),
                                     self.literal_hint(clause.rhs, before)) from None
        if result is None:
            raise self.error(e, _("match has no clauses"))
        self.check_coverage(e)
        return result

    def check_pattern(self, p, t: Type, clause) -> None:
        self.record(p, t)  # patterns get the type of the value they match, for code generation
        if isinstance(p, PatternWildcard):
            return
        if isinstance(p, PatternVar):
            var = p.var
            if var.type_annotation is not None:
                vt = self.annotation(var.type_annotation, var)
                self.expect(vt, t, p, N_("pattern %{name} is declared as {expected}, but the "
                                          "value matched has type {found}"), name=var.name)
            else:
                vt = t
            self.bind_var(var, vt)
            return
        if isinstance(p, PatternConstructor):
            ref = p
            if p.constructor is None:
                p.constructor = self.mod.constructors.get(p.name)
            scheme = self.constructor_scheme(ref)
            fty = self.instantiate(scheme)[0]
            self.expect(fty.ret, t, p, N_("pattern {name} matches {expected}, but the value "
                                           "matched has type {found}"), name=p.name)
            if len(p.patterns) != len(fty.params):
                n = len(fty.params)
                raise self.error(p, ngettext(
                    "constructor {name} has {n} field, but the pattern gives {given}",
                    "constructor {name} has {n} fields, but the pattern gives {given}", n).format(
                        name=p.name, n=n, given=len(p.patterns)))
            for sub, ft in zip(p.patterns, fty.params):
                self.check_pattern(sub, ft, clause)
            return
        if isinstance(p, PatternTuple):
            fields = tuple(IncompleteType() for _ in p.patterns)
            self.expect(TupleType(fields), t, p,
                         lambda: ngettext(
                             "a tuple pattern of {n} field cannot match a value of type {found}",
                             "a tuple pattern of {n} fields cannot match a value of type {found}",
                             len(fields)), n=len(fields))
            for sub, ft in zip(p.patterns, fields):
                self.check_pattern(sub, ft, clause)
            return
        raise self.error(clause, _("unknown pattern {kind}").format(kind=type(p).__name__))

    def check_coverage(self, e: Match) -> None:
        rows: list = []
        for c in e.clauses:
            if rows and not self.useful(rows, [c.lhs]):
                self.warnings.append(TypeWarning(_("unreachable match clause: the clauses "
                                                   "before it cover every value it matches"),
                                                 self.span_of(c), None, self.source))
            rows.append([c.lhs])
        if not e.complete:
            return
        missing = self.missing_cases(rows, 1)
        if missing:
            cases = ", ".join(w[0] for w in missing)
            raise self.error(e, _("match is not exhaustive: missing {cases}").format(cases=cases),
                             hint=_("add the missing clauses, a `_ =>` clause, or write `match?` "
                                    "for a partial match that fails at run time"))

    # ------------------------------------------------------------------ the module

    def check_module(self) -> Module:
        mod = self.mod
        for td in mod.type_defs.values():
            for con in td.constructors:
                for t in con.inputs:
                    self.validate_type(t, None)
        incomplete = set()
        for name, fn in mod.functions.items():
            if not isinstance(fn, Function):
                raise RelayTypeError(_("@{name} is not a function").format(name=name), None,
                                     None, self.source)
            params, ret = self.signature(fn)
            sig = FuncType(tuple(params), ret)
            if has_unknown(sig):
                incomplete.add(name)
                self.mono[name] = sig
            else:
                self.schemes[name] = self.close(fn, sig)
        # only a global with an inferred signature constrains the order globals are checked in
        order = _components(mod, incomplete) if incomplete else [[n] for n in mod.functions]
        for component in order:
            self.check_component(component, incomplete)
        self.fail_on_pending()
        self.finalize()
        for name, fn in mod.functions.items():
            fn.checked_type = self.resolve_final(self.schemes[name])
        # the parser's warnings stay; the checker's own are made afresh by every check
        mod.warnings = [w for w in mod.warnings if not isinstance(w, TypeWarning)] + self.warnings
        return mod

    def close(self, fn: Function, sig: FuncType) -> FuncType:
        """sig as a global's type scheme: its declared type parameters plus any other TypeVar
        it mentions (a global has no enclosing scope to bind them)."""
        tps = list(fn.type_params)
        for tv in free_type_vars(sig):
            if tv not in tps:
                tps.append(tv)
        return FuncType(sig.params, sig.ret, tuple(tps))

    def note_generalised(self, name: str, tvs: list) -> None:
        """TVM's solver leaves these types unsolved and refuses the definition; say so."""
        fn = self.mod.functions[name]
        scheme = self.schemes[name]
        where = fn.span
        for p in fn.params:
            if p.type_annotation is None and set(free_type_vars(self.resolve(
                    self.types.get(id(p), IncompleteType())))) & set(tvs):
                where = p.span or where
                break
        self.warnings.append(TypeNote(
            _("TVM refuses @{name}: its type inference is unable to infer a type here (nothing "
              "constrains it); rvmdbg generalises @{name} to {scheme}").format(
                  name=name, scheme=scheme), where,
            _("annotate the parameter's type to be accepted by TVM too"), self.mod.source))

    def check_component(self, names: list, incomplete: set) -> None:
        mod = self.mod
        self.mono_calls = []
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
            taken |= {tv.name for tv in free_type_vars(self.resolve(self.mono[n]))}
        fresh_names = _type_param_names(taken)
        made: dict = {}  # global -> the type parameters generalisation gave it
        for n in generalize:
            for u in self.unknowns(self.mono[n]):
                if u not in frozen:
                    self.subst[u] = tv = TypeVar(next(fresh_names))
                    made.setdefault(n, []).append(tv)
        for n in generalize:
            self.schemes[n] = self.close(mod.functions[n], self.resolve(self.mono.pop(n)))
            if n in made:
                self.note_generalised(n, made[n])
        for call, name in self.mono_calls:
            if name in generalize:
                # a recursive call uses the global at its own type parameters
                tps = self.schemes[name].type_params
                if tps:
                    self.call_inst[id(call)] = list(tps)
        self.mono_calls = []


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
    with checking():
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
    with checking():
        tc = TypeChecker(mod)
        for name, fn in mod.functions.items():
            tc.schemes[name] = fn.checked_type
        tc.root = expr
        t = tc.visit(expr)
        tc.solve_pending()
        tc.fail_on_pending()
        tc.finalize()
        return tc.resolve_final(t)

