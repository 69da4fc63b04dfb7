"""EtaExpand: constructors and operators used as values become small `fn` wrappers.

TVM's EtaExpand as its VM compiler runs it: expand_constructor=True, expand_global_var=False.
After it, a constructor appears only in call position, so later passes see it as a `fn`,
which LambdaLift turns into a global: `@map(Some, %l)` becomes
`@map(fn (%x: A) -> Option[A] { Some(%x) }, %l)`. A global used as a value stays as it is:
the code generator makes it a closure with no captured values (`alloc_closure`), as TVM's.
Operators passed as values (`@map(exp, %l)`) are wrapped too, so every operator call has
the operator itself as its callee when FuseOps looks for them.
"""
from __future__ import annotations

from rvmdbg.relay.ast import (Call, ConstructorRef, ExprMutator, Function, GlobalVar, Module,
                              OpRef, Var, map_bodies)
from rvmdbg.relay.types import FuncType, IncompleteType, Type, TypeCall


def _is_concrete(t: Type | None) -> bool:
    """True when t is a fully resolved type (no unknowns left by the checker)."""
    if t is None or isinstance(t, IncompleteType):
        return False
    if isinstance(t, FuncType):
        return all(_is_concrete(p) for p in t.params) and _is_concrete(t.ret)
    for attr in ("fields", "args"):
        if hasattr(t, attr):
            return all(_is_concrete(f) for f in getattr(t, attr))
    if hasattr(t, "value"):
        return _is_concrete(t.value)
    return True


def _wrapper(callee, n_params: int, ftype: FuncType | None, param_types, ret_type,
             type_params, span) -> Function:
    """`fn (%x0: T0, ...) -> R { callee(%x0, ...) }` carrying the span of the replaced use."""
    params = []
    for i in range(n_params):
        ptype = param_types[i] if param_types is not None else None
        v = Var(f"x{i}" if n_params > 1 else "x", ptype, span)
        v.checked_type = ptype
        params.append(v)
    body = Call(callee, params, span=span)
    body.checked_type = ret_type
    fn = Function(params, body, ret_type, type_params, span=span)
    fn.checked_type = ftype
    return fn


class _EtaExpander(ExprMutator):
    def __init__(self, mod: Module):
        super().__init__()
        self.mod = mod

    def visit_Call(self, e: Call):
        # the callee of a call stays as it is; only values are expanded
        op = e.op
        if not isinstance(op, (GlobalVar, ConstructorRef, OpRef)):
            op = self.visit(op)
        args = [self.visit(a) for a in e.args]
        if op is e.op and all(a is b for a, b in zip(args, e.args)):
            return e
        n = self._keep(e, Call(op, args, e.attrs))
        n.type_args = list(e.type_args)
        return n

    def visit_Function(self, e: Function):
        if e.is_primitive:
            return e
        return self._default(e)

    def visit_ConstructorRef(self, e: ConstructorRef):
        con = e.constructor or self.mod.constructors.get(e.name)
        if con is None:
            return e
        callee = ConstructorRef(e.name, con, e.span)
        callee.checked_type = e.checked_type
        t = e.checked_type
        if isinstance(t, FuncType) and not t.type_params and _is_concrete(t):
            return _wrapper(callee, len(t.params), t, list(t.params), t.ret, [], e.span)
        # no usable instantiated type: a wrapper polymorphic over the ADT's type parameters
        data = self.mod.type_defs.get(con.type_name)
        tparams = list(data.type_params) if data else []
        ret = TypeCall(con.type_name, tuple(tparams))
        return _wrapper(callee, len(con.inputs), None, list(con.inputs), ret, tparams, e.span)

    def visit_OpRef(self, e: OpRef):
        # an operator passed as a value gets a wrapper too, so every op call has an OpRef callee
        t = e.checked_type
        if isinstance(t, FuncType) and not t.type_params and _is_concrete(t):
            callee = OpRef(e.name, e.span)
            callee.checked_type = t
            return _wrapper(callee, len(t.params), t, list(t.params), t.ret, [], e.span)
        return e


def eta_expand(mod: Module) -> Module:
    """A new module in which no constructor or operator is used as a value."""
    return map_bodies(mod, lambda body: _EtaExpander(mod).visit(body))
