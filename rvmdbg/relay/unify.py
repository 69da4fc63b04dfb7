"""Type unification and the deferred-relation solver: the substitution of unknowns, the occurs
check, joining the arms of `if`/`match`, instantiating schemes, the queue of operator
relations and tuple projections solved to a fixpoint (like TVM's type solver), and the final
resolution that defaults what nothing constrains. A mixin of `typecheck.TypeChecker`, whose
state (`subst`, `types`, `pending`, ...) it reads and writes.
"""
from __future__ import annotations

from rvmdbg.i18n import N_, _
from rvmdbg.relay.ast import Call, Var
from rvmdbg.relay.check_base import TypeNote
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, Type, TypeCall, TypeVar, UNIT,
    substitute,
)


class Mismatch(Exception):
    """Two types (or parts of them) that do not unify; the caller makes it a RelayTypeError."""

    def __init__(self, expected: Type, found: Type, reason: str | None = None):
        super().__init__(reason)
        self.expected = expected
        self.found = found
        self.reason = reason


class OpRelation:
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
        out = tc.apply_relation(self.call, self.opdef, self.arg_types)
        if out is None and tc.assign_from_result(self):
            out = tc.apply_relation(self.call, self.opdef, self.arg_types)
        if out is None:
            return False
        tc.expect(self.result, out, self.call,
                   N_("operator `{op}` gives {found} here, but {expected} is expected"),
                   op=self.opdef.name)
        return True


class Projection:
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
        field = tc.project(self.node, self.tuple_type)
        if field is None:
            return False
        tc.expect(self.result, field, self.node,
                   N_("the projection .{index} gives {found}, but {expected} is expected"),
                   index=self.node.index)
        return True


def has_unknown(t: Type) -> bool:
    if isinstance(t, IncompleteType):
        return True
    if isinstance(t, TensorType) or isinstance(t, TypeVar):
        return False
    if isinstance(t, TupleType):
        return any(has_unknown(f) for f in t.fields)
    if isinstance(t, FuncType):
        return any(has_unknown(p) for p in t.params) or has_unknown(t.ret)
    if isinstance(t, TypeCall):
        return any(has_unknown(a) for a in t.args)
    if isinstance(t, RefType):
        return has_unknown(t.value)
    return False


class Unifier:
    """Unification, solving and final resolution, over the checker's substitution."""

    def find(self, t: Type) -> Type:
        """t with bound unknowns at the top replaced by what they are bound to (shallow)."""
        subst = self.subst
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
        self.collect_unknowns(t, out)
        return list(out)

    def collect_unknowns(self, t: Type, out: dict) -> None:
        t = self.find(t)
        tt = type(t)
        if tt is IncompleteType:
            out[t] = None
        elif tt is TupleType:
            for f in t.fields:
                self.collect_unknowns(f, out)
        elif tt is FuncType:
            for p in t.params:
                self.collect_unknowns(p, out)
            self.collect_unknowns(t.ret, out)
        elif tt is TypeCall:
            for a in t.args:
                self.collect_unknowns(a, out)
        elif tt is RefType:
            self.collect_unknowns(t.value, out)

    def occurs(self, u: IncompleteType, t: Type) -> bool:
        t = self.find(t)
        tt = type(t)
        if tt is IncompleteType:
            return t is u
        if tt is TupleType:
            return any(self.occurs(u, f) for f in t.fields)
        if tt is FuncType:
            return any(self.occurs(u, p) for p in t.params) or self.occurs(u, t.ret)
        if tt is TypeCall:
            return any(self.occurs(u, a) for a in t.args)
        if tt is RefType:
            return self.occurs(u, t.value)
        return False

    def bind(self, u: IncompleteType, t: Type, expected_side: bool) -> None:
        if type(t) is not TensorType and self.occurs(u, t):
            exp, found = (u, t) if expected_side else (t, u)
            raise Mismatch(exp, found, _("a type cannot contain itself"))
        self.subst[u] = t

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
                self.subst[a] = b
                return b
            self.bind(a, b, True)
            return b
        if tb is IncompleteType:
            self.bind(b, a, False)
            return a
        if ta is not tb:
            raise Mismatch(a, b)
        if ta is TensorType:
            if a.dtype != b.dtype or len(a.shape) != len(b.shape):
                raise Mismatch(a, b)
            if a.shape == b.shape:
                return a
            dims = []
            for i, (da, db) in enumerate(zip(a.shape, b.shape)):
                if da == db:
                    dims.append(da)
                elif da is None or db is None or join:
                    dims.append(None)
                else:
                    raise Mismatch(a, b, _("dimension {index} is {found}, expected {expected}")
                                    .format(index=i, found=db, expected=da))
            return TensorType(tuple(dims), a.dtype)
        if ta is TupleType:
            if len(a.fields) != len(b.fields):
                raise Mismatch(a, b)
            fields = [self.unify(x, y, join) for x, y in zip(a.fields, b.fields)]
            return TupleType(tuple(fields))
        if ta is TypeCall:
            if a.name != b.name or len(a.args) != len(b.args):
                raise Mismatch(a, b)
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
                raise Mismatch(a, b)
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
        raise Mismatch(a, b)

    def instantiate(self, fty: FuncType) -> tuple:
        """A polymorphic function type with its type parameters replaced by fresh unknowns."""
        if not fty.type_params:
            return fty, []
        fresh = [IncompleteType() for _ in fty.type_params]
        m = dict(zip(fty.type_params, fresh))
        params = tuple(substitute(p, m) for p in fty.params)
        return FuncType(params, substitute(fty.ret, m), ()), fresh

    def solve_pending(self) -> None:
        """Apply queued relations until none makes progress."""
        progress = True
        while progress and self.pending:
            progress = False
            waiting = []
            for c in self.pending:
                self.root = c.root
                if c.try_solve(self):
                    progress = True
                else:
                    waiting.append(c)
            self.pending = waiting

    def pending_unknowns(self) -> set:
        """Unknowns a queued relation still mentions: they must stay monomorphic."""
        out: dict = {}
        for c in self.pending:
            for t in c.waiting_on(self):
                self.collect_unknowns(t, out)
            self.collect_unknowns(c.result, out)
        return set(out)

    def fail_on_pending(self) -> None:
        """A relation still waiting means some type cannot be inferred: name the variable."""
        if not self.pending:
            return
        c = self.pending[0]
        self.root = c.root
        found: dict = {}
        for t in c.waiting_on(self):
            self.collect_unknowns(t, found)
        blocking = set(found)
        args = c.call.args if isinstance(c, OpRelation) else [c.node.tuple_value]
        culprit = None
        for a in args:
            if isinstance(a, Var) and set(self.unknowns(self.types[id(a)])) & blocking:
                culprit = a
                break
        if culprit is None:
            for n in self.nodes:
                if type(n) is Var and set(self.unknowns(self.types[id(n)])) & blocking:
                    culprit = n
                    break
        if culprit is not None:
            raise self.error(culprit, _("cannot infer the type of %{name}; add an "
                                        "annotation").format(name=culprit.name))
        if isinstance(c, OpRelation):
            raise self.error(c.call, _("cannot infer the type of the arguments of operator "
                                       "`{op}`; add an annotation").format(op=c.opdef.name))
        raise self.error(c.node, _("cannot infer the type of the tuple projected; add an "
                                   "annotation"))

    def finalize(self) -> None:
        """Write resolved types into the nodes; unconstrained unknowns default to `()`."""
        types = self.types
        call_inst = self.call_inst
        final = self.resolve_final
        noted = False
        self.defaulted = False
        # id(type) -> its resolution, for composite types met again (a global's type at each
        # of its uses): kept only when resolving it defaulted nothing, so it stays exact
        done: dict = {}
        for n in self.nodes:
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
                    if not self.defaulted:
                        done[id(t)] = r
                n.checked_type = r
            if type(n) is Call:
                inst = call_inst.get(id(n))
                n.type_args = [final(u) for u in inst] if inst else []
            if not self.defaulted:
                continue
            self.defaulted = False  # this node's resolution defaulted an unknown
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
                self.subst[u] = UNIT
                self.defaulted = True
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
