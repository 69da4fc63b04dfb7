"""Calls of primitive functions the program wrote itself, made direct as TVM's lowering makes them.

A printed TVM module often holds `Primitive=1` functions already (a FuseOps stage, a fused
model). TVM's LowerTE follows a `let`-bound primitive function to its calls: each call of the
variable becomes a call of the kernel and the `let` disappears. This module does the same
before FuseOps, so every such call compiles to one InvokePacked:

- `let %f = fn (..., Primitive=1) {...}; %f(%x)` -> `fn (..., Primitive=1) {...}(%x)`;
- `call_lowered(@f, (a, b))`, TVM's LowerTE form of a kernel call, -> `@f(a, b)`: a
  primitive global is then one kernel, a Relay function one Invoke;
- a primitive function used as a value (passed to a function, stored in a tuple) becomes a
  plain wrapper `fn (%x0, ...) { prim(%x0, ...) }`, which LambdaLift turns into a global that
  calls the kernel. TVM's VM compiler emits no register for such a value (see
  docs/differences.md);
- a primitive global no function calls (an entry: a file that is one partitioned
  `fn (..., Primitive=1)`) becomes that same wrapper, a VM function making one kernel call.

Every node made here carries its checked type: FuseOps, which runs this, types its own output.
"""
from __future__ import annotations

from rvmdbg.relay.ast import (
    Call, ExprMutator, Function, Let, Module, OpRef, Tuple, TupleGetItem, Var, map_functions,
    referenced_globals,
)
from rvmdbg.relay.dialect import CALL_LOWERED, INVOKE_TVM_OP, SHAPE_FUNC
from rvmdbg.relay.types import FuncType


KERNEL_CALLS = frozenset({INVOKE_TVM_OP, SHAPE_FUNC})


def _primitive(e) -> bool:
    return type(e) is Function and e.is_primitive


class _DirectCalls(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.bound: dict = {}  # id(Var) -> the primitive Function it is let-bound to
        self.changed = False
        # until a variable is bound to a primitive function, every use of one stays as it is
        self._kept_leaves = self._kept_leaves | {Var}

    def callee(self, op):
        """The primitive function op stands for (op itself, or the one its var is bound to)."""
        if type(op) is Var:
            return self.bound.get(id(op))
        if _primitive(op):
            return op
        return None

    def visit_Let(self, e: Let):
        # long let chains: walk them in a loop
        frames = []
        while type(e) is Let:
            prim = self.callee(e.value)  # the value itself, not visited: that would wrap it
            if prim is not None:
                self.bound[id(e.var)] = prim
                self._kept_leaves = self._kept_leaves - {Var}  # its uses are rewritten
                self.changed = True
                frames.append(None)  # the binding disappears
            else:
                frames.append((e, self.visit(e.value)))
            e = e.body
        out = self.visit(e)
        for frame in reversed(frames):
            if frame is None:
                continue
            old, value = frame
            if value is old.value and out is old.body:
                out = old
            else:
                out = self._keep(old, Let(old.var, value, out))
        return out

    def visit_Call(self, e: Call):
        if type(e.op) is OpRef and e.op.name == CALL_LOWERED:
            return self.lowered_call(e)
        prim = self.callee(e.op)
        if prim is None:
            if type(e.op) is OpRef and e.op.name in KERNEL_CALLS:
                # vm.invoke_tvm_op(fn, ins, outs): its primitive function stays as written
                rest = [self.visit(a) for a in e.args[1:]]
                if all(a is b for a, b in zip(rest, e.args[1:])):
                    return e
                return self._keep(e, Call(e.op, [e.args[0], *rest], e.attrs))
            return self._default(e)
        args = [self.visit(a) for a in e.args]
        if prim is e.op and all(a is b for a, b in zip(args, e.args)):
            return e
        self.changed = True
        out = self._keep(e, Call(prim, args, e.attrs))
        out.type_args = list(e.type_args)
        return out

    def lowered_call(self, e: Call):
        """`call_lowered(@f, (a, b))` -> `@f(a, b)`; a tuple that is no literal is bound first
        (`let %args = t; @f(%args.0, %args.1)`), so it is evaluated once."""
        self.changed = True
        callee, packed = e.args[0], self.visit(e.args[1])
        ptype = packed.checked_type
        binder = None
        if type(packed) is Tuple:
            args = list(packed.fields)
        else:
            if type(packed) is not Var:
                binder = Var("args", ptype, packed.span)
                binder.checked_type = ptype
                value, packed = packed, binder
            args = []
            for i, t in enumerate(ptype.fields):
                item = TupleGetItem(packed, i, packed.span)
                item.checked_type = t
                args.append(item)
        out = self._keep(e, Call(callee, args, None))
        out.type_args = list(e.type_args)  # a polymorphic @f: the checker's instantiation
        if binder is not None:
            out = self._keep(e, Let(binder, value, out))
        return out

    def visit_Var(self, e: Var):
        prim = self.bound.get(id(e))
        return e if prim is None else self.wrapper(prim, e)

    def visit_Function(self, e: Function):
        if e.is_primitive:  # reached as a value: a call in callee position never gets here
            return self.wrapper(e, e)
        return self._default(e)

    def wrapper(self, prim: Function, at, own_names: bool = False) -> Function:
        """`fn (%x0: T0, ...) -> R { prim(%x0, ...) }` standing for prim as a value (with
        `own_names`, the parameters keep prim's names)."""
        self.changed = True
        ftype = prim.checked_type
        params = []
        for i, p in enumerate(prim.params):
            t = p.checked_type if p.checked_type is not None else p.type_annotation
            v = Var(p.name if own_names else f"x{i}", t, p.span if own_names else at.span)
            v.checked_type = t
            params.append(v)
        ret = ftype.ret if isinstance(ftype, FuncType) else prim.ret_type
        call = Call(prim, list(params), None, at.span)
        call.checked_type = ret
        fn = Function(params, call, ret, [], {}, at.span)
        fn.checked_type = ftype
        return fn


def direct_primitive_calls(mod: Module) -> Module:
    """The module with let-bound primitive functions called directly (unchanged when none),
    and an entry that is itself primitive made a function that calls it once."""
    called = set()
    for fn in mod.functions.values():
        called.update(referenced_globals(fn))

    def rewrite(name: str, fn: Function) -> Function:
        if fn.is_primitive:
            if name in called:
                return fn
            # no function calls it, so it is an entry (RemoveUnusedFunctions dropped the
            # rest): a bare `fn (..., Primitive=1)` file runs as one kernel call
            return _DirectCalls().wrapper(fn, fn, own_names=True)
        m = _DirectCalls()
        body = m.visit(fn.body)
        if not m.changed or body is fn.body:
            return fn
        out = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, fn.span)
        out.checked_type = fn.checked_type
        return out

    return map_functions(mod, rewrite)
