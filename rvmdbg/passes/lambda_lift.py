"""LambdaLift: every nested non-primitive `fn` becomes a global function.

TVM's LambdaLift. A function with no free variables becomes a plain global and its site
becomes a reference to it (`@main_lifted_0`). A closure with free variables `%a, %b` becomes

    def @main_lifted_1(%a: T, %b: U, Closure=1) { fn (%x: V) -> W { body } }

a global marked `Closure=1` whose body is the inner function, and its site becomes the call
`@main_lifted_1(%a, %b)`, which the code generator compiles to AllocClosure: the VM's closure
calls take the captured values first, then the arguments.

A recursive local function (`let %f = fn (...) { ... %f(...) ... }`) works as follows: with no
captured variables, `%f` inside the body becomes the global itself, so the recursive call is
a direct call; with captured variables, the lifted body starts with
`let %f = @main_lifted_1(%a, %b);`, rebuilding the closure from its own captured values.

Lifted globals are named `@<enclosing def>_lifted_<n>`, placed after the enclosing def, and
carry the span of the original `fn` (the debugger maps bytecode back to source through it).
Parameters and captured variables are annotated with their checked types so every lifted
global type-checks on its own.
"""
from __future__ import annotations

from rvmdbg.relay.ast import (CLOSED_LEAF_KINDS, Call, ExprMutator, Function, GlobalVar, Let,
                              Match, Module, Var, children, pattern_vars)
from rvmdbg.relay.types import FuncType, IncompleteType, Type, free_type_vars


def free_vars(e) -> list:
    """The local variables used in e but not bound inside it, in order of first use.

    A Var object is bound in exactly one place, so "bound inside e" is a set test."""
    kind = type(e)
    if kind is Var:
        return [e]
    if kind in CLOSED_LEAF_KINDS:
        return []
    if kind is Call:  # most often an operator or function applied to atoms (A-normal form)
        out = []
        for c in (e.op, *e.args):
            kc = type(c)
            if kc is Var:
                if c not in out:
                    out.append(c)
            elif kc not in CLOSED_LEAF_KINDS:
                break
        else:
            return out
    bound, used, order = set(), set(), []
    stack, seen = [e], set()
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is Var:
            if node not in used:
                used.add(node)
                order.append(node)
            continue
        if kind in CLOSED_LEAF_KINDS:
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if kind is Function:
            if node.is_primitive:
                continue  # closed by construction
            bound.update(node.params)
        elif kind is Let:
            bound.add(node.var)
        elif kind is Match:
            for c in node.clauses:
                bound.update(pattern_vars(c.lhs))
        push(reversed(children(node)))
    if not bound:
        return order
    return [v for v in order if v not in bound]



def _known(t: Type | None) -> Type | None:
    """t when it is a usable annotation (no unknowns), else None."""
    if t is None or isinstance(t, IncompleteType):
        return None
    if isinstance(t, FuncType):
        if any(_known(p) is None for p in t.params) or _known(t.ret) is None:
            return None
        return t
    for attr in ("fields", "args"):
        if hasattr(t, attr) and any(_known(f) is None for f in getattr(t, attr)):
            return None
    if hasattr(t, "value") and _known(t.value) is None:
        return None
    return t


def _var_type(v: Var) -> Type | None:
    return _known(v.type_annotation) or _known(v.checked_type)


class _Substitute(ExprMutator):
    """Replaces uses of variables (never binders) by the given expressions."""

    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_Var(self, e: Var):
        return self.mapping.get(e, e)

    def visit_Function(self, e: Function):
        if e.is_primitive:
            return e
        return self._default(e)


class _Lifter(ExprMutator):
    def __init__(self, def_name: str, taken: set):
        super().__init__()
        self.def_name = def_name
        self.taken = taken
        self.counter = 0
        self.lifted: list = []  # (number, name, Function)

    def fresh_name(self) -> tuple:
        while True:
            number, name = self.counter, f"{self.def_name}_lifted_{self.counter}"
            self.counter += 1
            if name not in self.taken:
                self.taken.add(name)
                return number, name

    def visit_Function(self, e: Function):
        if e.is_primitive:
            return e
        return self.lift(e, None)

    def visit_Let(self, e: Let):
        # walk the chain in a loop (ANF output is one long chain)
        chain, node = [], e
        while isinstance(node, Let) and (node is e or id(node) not in self.memo):
            value = node.value
            lifts = isinstance(value, Function) and not value.is_primitive
            if lifts and id(value) not in self.memo:
                new_value = self.lift(value, node.var)
                self.memo[id(value)] = (value, new_value)
            else:
                new_value = self.visit(value)
            chain.append((node, new_value))
            node = node.body
        out = self.visit(node)
        for let, value in reversed(chain):
            if value is let.value and out is let.body:
                new = let
            else:
                new = self._keep(let, Let(let.var, value, out))
            if let is not e:
                self.memo[id(let)] = (let, new)
            out = new
        return out

    def lift(self, fn: Function, rec_var: Var | None):
        """Make fn a global; return the expression that replaces it at its site."""
        number, name = self.fresh_name()
        fvs = free_vars(fn)
        recursive = rec_var is not None and rec_var in fvs
        captured = [v for v in fvs if v is not rec_var]
        body = self.visit(fn.body)  # inner functions first: they become sites using our vars

        new_params = []
        for p in fn.params:
            q = Var(p.name, _var_type(p), p.span)
            q.checked_type = p.checked_type
            new_params.append(q)
        new_captured = []
        for v in captured:
            q = Var(v.name, _var_type(v), v.span)
            q.checked_type = v.checked_type
            new_captured.append(q)
        mapping = dict(zip(fn.params, new_params))
        mapping.update(zip(captured, new_captured))

        fn_type = fn.checked_type if isinstance(fn.checked_type, FuncType) else None
        ret = _known(fn.ret_type) or (_known(fn_type.ret) if fn_type else None)
        gv = GlobalVar(name, fn.span)
        rebuild = None
        if recursive:
            if captured:
                # the closure rebuilt from its own captured values, once per activation
                rec_new = Var(rec_var.name, rec_var.type_annotation, rec_var.span)
                rec_new.checked_type = rec_var.checked_type
                rebuild = Call(GlobalVar(name, fn.span), new_captured, span=fn.span)
                rebuild.checked_type = fn.checked_type
                mapping[rec_var] = rec_new
            else:
                mapping[rec_var] = gv
        body = _Substitute(mapping).visit(body)
        if rebuild is not None:
            let = Let(rec_new, rebuild, body, fn.span)
            let.checked_type = body.checked_type
            body = let

        inner_type = None
        if ret is not None and all(p.type_annotation is not None for p in new_params):
            inner_type = FuncType(tuple(p.type_annotation for p in new_params), ret,
                                  tuple(fn.type_params))
        # type parameters of the enclosing def that the lifted signature mentions
        sig_types = [v.type_annotation for v in new_captured + new_params]
        sig_types.append(ret)
        own = set(fn.type_params)
        tparams = []
        for t in sig_types:
            if t is not None:
                for tv in free_type_vars(t):
                    if tv not in own and tv not in tparams:
                        tparams.append(tv)

        if not captured:
            lifted = Function(new_params, body, ret, tparams + list(fn.type_params), fn.attrs,
                              fn.span)
            if inner_type is not None:
                lifted.checked_type = FuncType(inner_type.params, inner_type.ret,
                                               tuple(tparams) + tuple(fn.type_params))
            site = gv
        else:
            inner = Function(new_params, body, ret, fn.type_params, fn.attrs, fn.span)
            inner.checked_type = inner_type
            attrs = {"Closure": 1}
            lifted = Function(new_captured, inner, inner_type, tparams, attrs, fn.span)
            if inner_type is not None and all(v.type_annotation is not None for v in new_captured):
                lifted.checked_type = FuncType(tuple(v.type_annotation for v in new_captured),
                                               inner_type, tuple(tparams))
            site = Call(gv, list(captured), span=fn.span)
        site.checked_type = fn.checked_type
        self.lifted.append((number, name, lifted))
        return site


def lambda_lift(mod: Module) -> Module:
    """A new module with no nested non-primitive functions: each one is a global now."""
    out = mod.copy_shallow()
    out.functions = {}
    taken = set(mod.functions)
    for name, fn in mod.functions.items():
        if fn.is_primitive:
            out.functions[name] = fn
            continue
        lifter = _Lifter(name, taken)
        if fn.attrs.get("Closure") and isinstance(fn.body, Function):
            # already lifted: its inner function is the closure's code and stays in place
            inner = fn.body
            inner_body = lifter.visit(inner.body)
            if inner_body is not inner.body:
                new_inner = Function(inner.params, inner_body, inner.ret_type, inner.type_params,
                                     inner.attrs, inner.span)
                new_inner.checked_type = inner.checked_type
                body = new_inner
            else:
                body = inner
        else:
            body = lifter.visit(fn.body)
        if body is fn.body:
            out.functions[name] = fn
        else:
            new = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, fn.span)
            new.checked_type = fn.checked_type
            out.functions[name] = new
        # inner functions are lifted first; list them in the order of their numbers
        for _number, lname, lfn in sorted(lifter.lifted, key=lambda item: item[0]):
            out.functions[lname] = lfn
    return out
