"""DeadCodeElimination: drop `let` bindings whose variable is never used and whose value is pure.

TVM's DeadCodeElimination removes unused bindings of pure values. Here "pure" is decided
syntactically and conservatively: constants, variables, globals, constructors and operators
as values, functions (making a closure has no effect), operator calls and calls of primitive
functions, constructor applications, tuples and projections, closure allocations of
lambda-lifted globals, and lets/ifs built only from those. Calls of global functions or
closures may loop, fail or write references, and `ref`, `ref_read`, `ref_write` and `match?`
are effects or may fail, so bindings of those always stay, as do the memory dialect's calls
TVM registers stateful (`memory.kill`, `vm.invoke_tvm_op`). Every global function stays: the
compiled listing shows them all.
"""
from __future__ import annotations

from rvmdbg.relay.ast import (CLOSED_LEAF_KINDS, Call, Clause, Constant, ConstructorRef, Function,
                              GlobalVar, If, Let, Match, Module, OpRef, RefCreate, RefRead,
                              RefWrite, Tuple, TupleGetItem, Var, children, map_bodies,
                              pattern_vars)
from rvmdbg.relay.dialect import STATEFUL_OPS


def is_pure(e, mod: Module | None = None, _memo: dict | None = None) -> bool:
    """True when evaluating e can have no effect and cannot fail or loop (conservative)."""
    memo = {} if _memo is None else _memo
    key = id(e)
    if key in memo:
        return memo[key]
    memo[key] = False  # a cycle cannot happen in an AST, but be safe
    result = _pure(e, mod, memo)
    memo[key] = result
    return result


def _pure(e, mod, memo) -> bool:
    if isinstance(e, (Constant, Var, GlobalVar, ConstructorRef, OpRef, Function)):
        return True
    if isinstance(e, Call):
        op = e.op
        args_pure = all(is_pure(a, mod, memo) for a in e.args)
        if isinstance(op, (OpRef, ConstructorRef)):
            return args_pure and not (type(op) is OpRef and op.name in STATEFUL_OPS)
        if isinstance(op, Function) and op.is_primitive:
            return args_pure
        if isinstance(op, GlobalVar) and mod is not None:
            target = mod.functions.get(op.name)
            # calling a Closure=1 global only builds the closure of a lifted function
            return bool(target is not None and target.attrs.get("Closure")) and args_pure
        return False
    if isinstance(e, (Tuple, TupleGetItem, Let, If)):
        return all(is_pure(c, mod, memo) for c in children(e))
    if isinstance(e, Match):
        return e.complete and all(is_pure(c, mod, memo) for c in children(e))
    if isinstance(e, (RefCreate, RefRead, RefWrite)):
        return False
    return False


_NOTHING: frozenset = frozenset()


class _Eliminator:
    """Rebuilds an expression bottom-up, returning it with the set of its free variables."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.memo: dict = {}
        self.pure_memo: dict = {}

    def run(self, e):
        kind = type(e)
        if kind is Var:
            return e, frozenset((e,))
        if kind in CLOSED_LEAF_KINDS:
            return e, _NOTHING
        key = id(e)
        hit = self.memo.get(key)
        if hit is not None:
            return hit[1], hit[2]
        new, fv = self._visit(e)
        self.memo[key] = (e, new, fv)
        return new, fv

    def _visit(self, e):
        if isinstance(e, Var):
            return e, frozenset((e,))
        if isinstance(e, Let):
            return self._let_chain(e)
        if isinstance(e, Function):
            if e.is_primitive:
                return e, frozenset()
            body, fv = self.run(e.body)
            fv = fv - set(e.params)
            if body is e.body:
                return e, fv
            return self._keep(e, Function(e.params, body, e.ret_type, e.type_params, e.attrs)), fv
        if isinstance(e, Match):
            data, fv = self.run(e.data)
            clauses, changed = [], data is not e.data
            for c in e.clauses:
                rhs, cfv = self.run(c.rhs)
                fv = fv | (cfv - set(pattern_vars(c.lhs)))
                changed = changed or rhs is not c.rhs
                clauses.append(Clause(c.lhs, rhs, c.span))
            if not changed:
                return e, fv
            return self._keep(e, Match(data, clauses, e.complete)), fv
        kids = children(e)
        if not kids:
            return e, frozenset()
        results = [self.run(k) for k in kids]
        fv = frozenset().union(*(r[1] for r in results))
        new = [r[0] for r in results]
        if all(a is b for a, b in zip(new, kids)):
            return e, fv
        return self._rebuild(e, new), fv

    @staticmethod
    def _keep(old, new):
        new.span = old.span
        new.checked_type = old.checked_type
        return new

    def _rebuild(self, e, new):
        if isinstance(e, Call):
            n = self._keep(e, Call(new[0], new[1:], e.attrs))
            n.type_args = list(e.type_args)
            return n
        if isinstance(e, If):
            return self._keep(e, If(*new))
        if isinstance(e, Tuple):
            return self._keep(e, Tuple(new))
        if isinstance(e, TupleGetItem):
            return self._keep(e, TupleGetItem(new[0], e.index))
        if isinstance(e, RefCreate):
            return self._keep(e, RefCreate(new[0]))
        if isinstance(e, RefRead):
            return self._keep(e, RefRead(new[0]))
        if isinstance(e, RefWrite):
            return self._keep(e, RefWrite(new[0], new[1]))
        raise TypeError(f"cannot rebuild {type(e).__name__}")  # not shown to users

    def _let_chain(self, e: Let):
        # walk the chain in a loop (ANF output is one long chain), then decide from the inside out
        chain = []
        node = e
        while isinstance(node, Let) and (id(node) not in self.memo or node is e):
            chain.append(node)
            node = node.body
        out, fv = self.run(node)
        for let in reversed(chain):
            if let.var not in fv and is_pure(let.value, self.mod, self.pure_memo):
                new, new_fv = out, fv
            else:
                value, vfv = self.run(let.value)
                new_fv = fv | vfv
                if let.var in new_fv:
                    new_fv = new_fv - {let.var}
                if value is let.value and out is let.body:
                    new = let
                else:
                    new = self._keep(let, Let(let.var, value, out))
            if let is not e:
                self.memo[id(let)] = (let, new, new_fv)
            out, fv = new, new_fv
        return out, fv


def dead_code_elimination(mod: Module) -> Module:
    """A new module without unused pure let bindings; every global is kept."""
    return map_bodies(mod, lambda body: _Eliminator(mod).run(body)[0])
