"""FoldConstant: evaluate at compile time what only depends on constants.

TVM's FoldConstant, on our AST:
- an operator call whose arguments are all constants (or tuples of constants) runs its
  kernel from `rvmdbg.relay.ops` and becomes a `Constant` (a tuple result, as from `split`,
  becomes a tuple of constants);
- `(a, b, c).1` with atomic fields becomes `b`;
- `let %x = <constant>; body` inlines the constant into body and drops the binding;
- `if` on a constant condition becomes the branch it selects.
A kernel that fails (integer division by zero) leaves the call in place, so the program still
fails at run time, where the user can watch it. References are AST nodes of their own, not
operator calls, so their effects are never folded away.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.relay import ops as relay_ops
from rvmdbg.relay.ast import (Call, Constant, ConstructorRef, ExprMutator, Function, GlobalVar,
                              If, Let, Module, OpRef, Tuple, TupleGetItem, Var, map_bodies,
                              walk)
from rvmdbg.relay.dialect import ON_DEVICE
from rvmdbg.relay.types import TensorType, TupleType

# A folded tensor is embedded in the executable's constant pool: keep that pool small.
MAX_FOLDED_ELEMENTS = 1 << 16

_ATOMS = (Constant, Var, GlobalVar, ConstructorRef, OpRef)


def const_value(e):
    """The NumPy value of a constant argument (a tuple of arrays for a tuple of constants)."""
    if isinstance(e, Constant):
        return e.data
    if isinstance(e, Tuple) and all(isinstance(f, Constant) for f in e.fields):
        return tuple(f.data for f in e.fields)
    return None


def run_kernel(name: str, args: list, attrs: dict):
    """The kernel's result, or None when the operator cannot be folded."""
    opdef = relay_ops.OPS.get(name)
    if opdef is None or getattr(opdef, "kernel", None) is None:
        return None
    try:
        with np.errstate(all="ignore"):
            return opdef.kernel(args, attrs)  # the kernel normalises the attributes itself
    except Exception:  # a run-time failure (KernelError) belongs to run time
        return None


def _constant(value: np.ndarray, like) -> Constant:
    c = Constant(np.asarray(value), like.span)
    c.checked_type = TensorType(tuple(c.data.shape), str(c.data.dtype))
    return c


class _ConstantFolder(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.inlined: dict = {}  # let-bound Var -> the Constant it names

    def visit_Var(self, e: Var):
        return self.inlined.get(e, e)

    def visit_Function(self, e: Function):
        if e.is_primitive:
            return e
        return self._default(e)

    def visit_Call(self, e: Call):
        new = self._default(e)
        if not isinstance(new.op, OpRef):
            return new
        values = [const_value(a) for a in new.args]
        if any(v is None for v in values):
            return new
        out = run_kernel(new.op.name, values, new.attrs)
        if isinstance(out, np.ndarray) or np.isscalar(out):
            out = np.asarray(out)
            if out.size > MAX_FOLDED_ELEMENTS:
                return new
            return _constant(out, e)
        if isinstance(out, tuple) and all(isinstance(x, np.ndarray) for x in out):
            if sum(x.size for x in out) > MAX_FOLDED_ELEMENTS:
                return new
            fields = [_constant(x, e) for x in out]
            t = Tuple(fields, e.span)
            t.checked_type = TupleType(tuple(f.checked_type for f in fields))
            return t
        return new

    def visit_If(self, e: If):
        new = self._default(e)
        cond = new.cond
        if (isinstance(cond, Call) and isinstance(cond.op, OpRef) and cond.op.name == ON_DEVICE
                and cond.args):
            cond = cond.args[0]  # TVM looks through on_device
        if isinstance(cond, Constant):
            # TVM keeps the branch the condition's first byte selects
            kept = new.true_branch if np.asarray(cond.data).reshape(-1)[:1].any() \
                else new.false_branch
            # ...but a branch whose type only the other one fixed (`None` beside `Some(0)`)
            # would leave the re-check nothing to infer it from: then the `if` stays
            if _types_itself(kept):
                return kept
        return new

    def visit_TupleGetItem(self, e: TupleGetItem):
        new = self._default(e)
        tup = new.tuple_value
        # dropping the other fields is safe only when evaluating them has no effect
        if isinstance(tup, Tuple) and all(isinstance(f, _ATOMS) for f in tup.fields):
            return tup.fields[new.index]
        return new

    def visit_Let(self, e: Let):
        # a chain of lets is walked in a loop: long programs are long chains
        chain = []
        node = e
        while isinstance(node, Let) and id(node) not in self.memo:
            value = self.visit(node.value)
            if isinstance(value, Constant):
                self.inlined[node.var] = value
            chain.append((node, value))
            node = node.body
        out = self.visit(node)
        for let, value in reversed(chain):
            if isinstance(value, Constant):
                new = out
            elif value is let.value and out is let.body:
                new = let
            else:
                new = self._keep(let, Let(let.var, value, out))
            self.memo[id(let)] = (let, new)
            out = new
        return out


def _types_itself(e) -> bool:
    """Whether the expression's type follows from the expression alone: no nullary
    constructor (`None`, `Nil`, bare or called with no arguments: their type arguments come
    from context) and no function with an unannotated parameter. Conservative: False only
    costs a fold."""
    for n in walk(e):
        if isinstance(n, ConstructorRef) and n.constructor is not None \
                and not n.constructor.inputs:
            return False
        if isinstance(n, Function) and any(p.type_annotation is None for p in n.params):
            return False
    return True


def fold_constant(mod: Module) -> Module:
    """A new module with constant subexpressions evaluated."""
    return map_bodies(mod, lambda body: _ConstantFolder().visit(body))
