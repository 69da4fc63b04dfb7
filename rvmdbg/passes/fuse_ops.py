"""FuseOps: group chains of operator calls into primitive functions, one kernel per group.

TVM's FuseOps, in spirit. Every operator call ends up inside a primitive function
`fn (%p0: T0, ..., Primitive=1) -> R { ... }` that is called once with the group's external
inputs; the code generator turns each such call into one InvokePacked.

Groups grow from a consumer toward its producers. A producer joins its consumer's group only
when that consumer is its one and only user in the function's dataflow graph (so nothing is
computed twice), and when the operator patterns allow it (each op's `pattern` in
`rvmdbg.relay.ops`, TVM's OpPatternKind):
- elemwise and broadcast producers fuse into elemwise, broadcast and injective consumers,
  and into a comm_reduce whose path up from the producer is injective or simpler;
- injective producers fuse into consumers whose path to the group's output is injective or
  simpler (never into a reduction or dense);
- a comm_reduce may take elemwise ops after it; an out_elemwise_fusable op (nn.dense) may
  take elemwise and broadcast ops after it; a group holds at most one such anchor;
- opaque ops stand alone, and so does a call with `?` output dims whose operator has a
  data-dependent shape function (TVM's rule: see `call_pattern`); `annotation.stop_fusion`
  is opaque so no group crosses it, and it is dropped once the groups are made (its argument
  takes its place), as in TVM.
Tuples feeding a fused op (concatenate) and projections of a fused op's tuple result (split)
join the group as injective glue. Scalar constants stay inline in the kernel; every other
input, tensor constants included, becomes a parameter, typed with its checked type, so the
printed primitive function parses back on its own.
"""
from __future__ import annotations

from rvmdbg.passes.primitive_calls import direct_primitive_calls
from rvmdbg.relay import ops as relay_ops
from rvmdbg.relay.dialect import DIALECT_OPS
from rvmdbg.relay.ast import (LEAF_KINDS, Call, Constant, ExprMutator, Function, Module, OpRef, Tuple,
                              TupleGetItem, Var, children, map_functions)
from rvmdbg.relay.types import FuncType, TensorType, TupleType

# TVM's OpPatternKind values
ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_ELEMWISE_FUSABLE = 0, 1, 2, 3, 4
TUPLE, OPAQUE = 7, 8
_PATTERN_NAMES = {
    "elemwise": ELEMWISE, "broadcast": BROADCAST, "injective": INJECTIVE,
    "comm_reduce": COMM_REDUCE, "reduce": COMM_REDUCE,
    "out_elemwise_fusable": OUT_ELEMWISE_FUSABLE, "outewisefusable": OUT_ELEMWISE_FUSABLE,
    "tuple": TUPLE, "opaque": OPAQUE,
}
# an identity that ends groups: opaque while partitioning, then replaced by its argument
STOP_FUSION = "annotation.stop_fusion"
# TVM stops growing a group at this many operators
MAX_GROUP_SIZE = 256


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


def _same_shape(a, b) -> bool:
    return (isinstance(a, TensorType) and isinstance(b, TensorType) and a.shape == b.shape
            and None not in a.shape)


def _static(t) -> bool:
    if isinstance(t, TupleType):
        return all(_static(f) for f in t.fields)
    return isinstance(t, TensorType) and t.is_static


def _is_op_call(e) -> bool:
    """A call of a user operator (the memory and device dialect is never fused)."""
    return isinstance(e, Call) and isinstance(e.op, OpRef) and e.op.name not in DIALECT_OPS


def _tensor_only(t) -> bool:
    if isinstance(t, TensorType):
        return True
    if isinstance(t, TupleType):
        return all(isinstance(f, TensorType) for f in t.fields)
    return False


class _Group:
    __slots__ = ("root", "members", "parent", "kind", "anchor")

    def __init__(self, root):
        self.root = root
        self.members: dict = {}  # id(node) -> node
        self.parent: dict = {}   # id(member) -> the member consuming it (None for the root)
        self.kind: dict = {}     # id(member) -> its pattern
        self.anchor = None       # the comm_reduce or out_elemwise_fusable member, if any

    def add(self, node, kind: int, consumer) -> None:
        self.members[id(node)] = node
        self.parent[id(node)] = consumer
        self.kind[id(node)] = kind
        if kind in (COMM_REDUCE, OUT_ELEMWISE_FUSABLE):
            self.anchor = node

    def remove(self, node) -> None:
        for table in (self.members, self.parent, self.kind):
            del table[id(node)]

    def path_kinds(self, node) -> list:
        """(member, kind) from node up to the group's output."""
        out = []
        while node is not None:
            out.append((node, self.kind[id(node)]))
            node = self.parent[id(node)]
        return out

    def accepts(self, kind: int, consumer) -> bool:
        """May a producer of this pattern join the group as an input of consumer?"""
        if len(self.members) >= MAX_GROUP_SIZE or kind == OPAQUE:
            return False
        path = self.path_kinds(consumer)
        if any(k == OPAQUE for _, k in path):
            return False
        anchor_idx = next((i for i, (n, _) in enumerate(path) if n is self.anchor), None)
        if kind <= BROADCAST:
            if anchor_idx is None:
                return True
            before = path[:anchor_idx]
            return (self.kind[id(self.anchor)] == COMM_REDUCE
                    and all(k <= INJECTIVE for _, k in before))
        if kind in (INJECTIVE, TUPLE):
            return anchor_idx is None
        if kind == COMM_REDUCE:
            return self.anchor is None and all(k == ELEMWISE for _, k in path)
        if kind == OUT_ELEMWISE_FUSABLE:
            return self.anchor is None and all(k <= BROADCAST for _, k in path)
        return False


class _Fuser(ExprMutator):
    def __init__(self, body):
        super().__init__()
        self.group_of: dict = {}
        self._partition(body)

    # ---- grouping ----

    def _partition(self, body) -> None:
        consumers: dict = {}  # id(node) -> set of id(consumer); leaves never join a group
        post, seen = [], {id(body)}
        stack = [(body, iter(self._kids(body)))]
        leaves = LEAF_KINDS
        while stack:
            node, it = stack[-1]
            for child in it:
                if type(child) in leaves:
                    continue
                consumers.setdefault(id(child), set()).add(id(node))
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(self._kids(child))))
                    break
            else:
                stack.pop()
                post.append(node)

        def sole_consumer(child, node) -> bool:
            return consumers.get(id(child)) == {id(node)}

        self._anchor_chains(post, consumers)
        for node in reversed(post):  # every consumer before its producers
            if not _is_op_call(node):
                continue
            group = self.group_of.get(id(node))
            if group is None:
                group = _Group(node)
                group.add(node, call_pattern(node), None)
                self.group_of[id(node)] = group
            if group.kind[id(node)] == OPAQUE:
                continue
            self._grow(group, node, sole_consumer)

    def _anchor_chains(self, post: list, consumers: dict) -> None:
        """TVM's first fusion phase, before any other: an out_elemwise_fusable op (nn.dense,
        nn.conv2d) takes the elementwise ops after it, as long as each is its producer's one
        consumer and keeps its shape (an elemwise edge: `add` of a bias broadcast into it).
        So `dense -> add -> reshape -> exp` is dense+add, then reshape+exp, as in TVM, rather
        than the injective reshape claiming the add first and leaving dense alone."""
        node_of = {id(n): n for n in post}
        for node in post:  # producers first
            if (not _is_op_call(node) or id(node) in self.group_of
                    or call_pattern(node) != OUT_ELEMWISE_FUSABLE):
                continue
            chain = [node]
            while len(chain) < MAX_GROUP_SIZE:
                users = consumers.get(id(chain[-1]), ())
                if len(users) != 1:
                    break
                user = node_of.get(next(iter(users)))
                if (user is None or not _is_op_call(user) or id(user) in self.group_of
                        or call_pattern(user) > BROADCAST
                        or not _same_shape(user.checked_type, chain[-1].checked_type)):
                    break
                chain.append(user)
            if len(chain) == 1:
                continue
            group = _Group(chain[-1])
            group.add(chain[-1], call_pattern(chain[-1]), None)
            for producer, user in zip(reversed(chain[:-1]), reversed(chain[1:])):
                group.add(producer, call_pattern(producer), user)
            for member in chain:
                self.group_of[id(member)] = group

    def _grow(self, group: _Group, node, sole_consumer) -> None:
        """Pull node's producers (and glue around them) into node's group."""
        for child in node.args if isinstance(node, Call) else node.fields:
            if (type(child) in LEAF_KINDS or id(child) in self.group_of
                    or not sole_consumer(child, node)):
                continue
            if _is_op_call(child):
                kind = call_pattern(child)
                if group.accepts(kind, node):
                    group.add(child, kind, node)
                    self.group_of[id(child)] = group
            elif isinstance(child, Tuple) and _tensor_only(child.checked_type):
                if group.accepts(TUPLE, node):
                    group.add(child, TUPLE, node)
                    self.group_of[id(child)] = group
                    self._grow(group, child, sole_consumer)
            elif isinstance(child, TupleGetItem):
                # a projection joins only together with the op producing the tuple
                src = child.tuple_value
                if (_is_op_call(src) and id(src) not in self.group_of
                        and sole_consumer(src, child) and group.accepts(INJECTIVE, node)):
                    kind = call_pattern(src)
                    group.add(child, INJECTIVE, node)
                    if group.accepts(kind, child):
                        group.add(src, kind, child)
                        self.group_of[id(child)] = group
                        self.group_of[id(src)] = group
                    else:
                        group.remove(child)

    @staticmethod
    def _kids(e):
        if isinstance(e, Function) and e.is_primitive:
            return []
        return children(e)

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
        if group is None or group.root is not e:
            return self._default(e)
        return self._primitive_call(group)

    def _primitive_call(self, group: _Group):
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

    def fuse(_name: str, fn: Function) -> Function:
        if fn.is_primitive:
            return fn
        body = _Fuser(fn.body).visit(fn.body)
        if body is fn.body:
            return fn
        out = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, fn.span)
        out.checked_type = fn.checked_type
        return out

    return map_functions(mod, fuse)
