"""FuseOps: group chains of operator calls into primitive functions, one kernel per group.

Every operator call ends up inside a primitive function `fn (%p0: T0, ..., Primitive=1) -> R
{ ... }` that is called once with the group's external inputs; the code generator turns each
such call into one InvokePacked.

The groups are TVM's: `rvmdbg.passes.partition` is TVM's GraphPartitioner (post-dominator
tree, three phases, each op's `pattern` in `rvmdbg.relay.ops` as its OpPatternKind), so a
listing shows the kernels TVM's shows: conv2d + bias_add + relu is one kernel, dense + add is
one and the reshape + transpose after it another, a reduction never takes the ops after it,
and a producer used twice joins its consumers' group when both uses lead there. Opaque ops
stand alone, and so does a call with `?` output dims whose operator has a data-dependent shape
function (TVM's rule: see `call_pattern`); `annotation.stop_fusion` is opaque so no group
crosses it, and it is dropped once the groups are made (its argument takes its place), as in
TVM. Tuples feeding a fused op (concatenate) and projections of a fused op's tuple result
(split) join groups as TVM's tuple and injective nodes do. Scalar constants stay inline in the
kernel; every other input, tensor constants included, becomes a parameter, typed with its
checked type, so the printed primitive function parses back on its own.
"""
from __future__ import annotations

from rvmdbg.passes.partition import (BROADCAST, COMM_REDUCE, ELEMWISE, INJECTIVE, OPAQUE,
                                     OUT_ELEMWISE_FUSABLE, TUPLE, Group, partition)
from rvmdbg.passes.primitive_calls import direct_primitive_calls
from rvmdbg.relay import ops as relay_ops
from rvmdbg.relay.dialect import DIALECT_OPS
from rvmdbg.relay.ast import (Call, Constant, ExprMutator, Function, Module, OpRef, Tuple,
                              TupleGetItem, Var, map_bodies)
from rvmdbg.relay.types import FuncType, TensorType, TupleType

_PATTERN_NAMES = {
    "elemwise": ELEMWISE, "broadcast": BROADCAST, "injective": INJECTIVE,
    "comm_reduce": COMM_REDUCE, "reduce": COMM_REDUCE,
    "out_elemwise_fusable": OUT_ELEMWISE_FUSABLE, "outewisefusable": OUT_ELEMWISE_FUSABLE,
    "tuple": TUPLE, "opaque": OPAQUE,
}
# an identity that ends groups: opaque while partitioning, then replaced by its argument
STOP_FUSION = "annotation.stop_fusion"


def op_pattern(name: str) -> int:
    """The OpPatternKind of an operator (opaque when unknown)."""
    opdef = relay_ops.OPS.get(name)
    p = getattr(opdef, "pattern", None)
    if isinstance(p, bool) or p is None:
        return OPAQUE
    if isinstance(p, int):
        return p
    return _PATTERN_NAMES.get(str(getattr(p, "name", p)).lower().replace("-", "_"), OPAQUE)


def call_pattern(call: Call) -> int:
    """The pattern of one operator call. As in TVM, a call whose output has `?` dimensions and
    whose operator's shape function reads input values (dyn.reshape, dyn.zeros) is opaque: a
    shape kernel can read the values of a kernel's parameters, not of values computed in it."""
    opdef = relay_ops.OPS.get(call.op.name)
    if opdef is not None and opdef.data_dependent and not _static(call.checked_type):
        return OPAQUE
    return op_pattern(call.op.name)


def _static(t) -> bool:
    if isinstance(t, TupleType):
        return all(_static(f) for f in t.fields)
    return isinstance(t, TensorType) and t.is_static


def _is_op_call(e) -> bool:
    """A call of a user operator (the memory and device dialect is never fused)."""
    return isinstance(e, Call) and isinstance(e.op, OpRef) and e.op.name not in DIALECT_OPS


class _Fuser(ExprMutator):
    def __init__(self, body):
        super().__init__()
        # id(node) -> its group (partition.Group: `root`, the output node; `members`)
        self.group_of: dict = partition(body, call_pattern, _is_op_call)

    # ---- rewriting ----

    def visit_Function(self, e: Function):
        if e.is_primitive:
            return e
        return self._default(e)

    def visit_Call(self, e: Call):
        if isinstance(e.op, OpRef) and e.op.name == STOP_FUSION:
            # it did its work while partitioning (opaque: no group crosses it); TVM drops it
            return self.visit(e.args[0])
        group = self.group_of.get(id(e))
        if group is None or group.root is not e or not _is_op_call(e):
            return self._default(e)
        return self._primitive_call(group)

    def visit_TupleGetItem(self, e: TupleGetItem):
        # a group may end in a projection of the tuple an operator in it makes (split(...).0)
        group = self.group_of.get(id(e))
        if (group is None or group.root is not e or id(e.tuple_value) not in group.members
                or not any(_is_op_call(m) for m in group.members.values())):
            return self._default(e)
        return self._primitive_call(group)

    def _primitive_call(self, group: Group):
        inputs, params, body_memo = [], {}, {}

        def param_for(ext):
            key = id(ext)
            if key not in params:
                new = self.visit(ext)
                p = Var(f"p{len(inputs)}", ext.checked_type, ext.span)
                p.checked_type = ext.checked_type
                params[key] = p
                inputs.append(new)
            return params[key]

        def build(node):
            key = id(node)
            if key in body_memo:
                return body_memo[key]
            args = []
            for c in (node.args if isinstance(node, Call) else
                      node.fields if isinstance(node, Tuple) else [node.tuple_value]):
                if id(c) in group.members:
                    args.append(build(c))
                elif isinstance(c, Constant) and c.data.ndim == 0:
                    lit = Constant(c.data, c.span)  # scalar literals print inline in the kernel
                    lit.checked_type = c.checked_type
                    args.append(lit)
                else:
                    args.append(param_for(c))
            if isinstance(node, Call):
                new = Call(node.op, args, node.attrs, node.span)
                new.type_args = list(node.type_args)
            elif isinstance(node, Tuple):
                new = Tuple(args, node.span)
            else:
                new = TupleGetItem(args[0], node.index, node.span)
            new.checked_type = node.checked_type
            body_memo[key] = new
            return new

        root = group.root
        body = build(root)
        span = root.span
        for m in group.members.values():
            if m.span is not None and span is not None and m.span.file == span.file:
                span = span.merge(m.span)
        plist = list(params.values())
        fn = Function(plist, body, root.checked_type, attrs={"Primitive": 1}, span=span)
        if root.checked_type is not None:
            fn.checked_type = FuncType(tuple(p.checked_type for p in plist), root.checked_type)
        call = Call(fn, inputs, span=root.span)
        call.checked_type = root.checked_type
        return call


def fuse_ops(mod: Module) -> Module:
    """A new module in which every operator call sits inside a primitive function.
    Primitive functions the program bound with `let` are first called directly (as TVM's
    lowering calls them), so each is one kernel."""
    mod = direct_primitive_calls(mod)

    return map_bodies(mod, lambda body: _Fuser(body).visit(body))
