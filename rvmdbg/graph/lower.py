"""Lowering a Relay program to a static graph, or refusing it with the reason and the place.

`lower_to_graph(mod, entry="main") -> Graph` accepts a program whose entry is a static dataflow
graph. First every function the entry reaches is scanned, and the first construct in source
order that needs run-time control or run-time values is refused with a `GraphRefusal`:
`if`, `match`, recursion, closures (nested `fn`, a global used as a value, a call of a
function value), ADT constructors, references, and any `?` dimension. Calls of other
(non-recursive) globals are inlined while the graph is built.

Then TVM's passes run (FoldConstant, FuseOps) and the fused entry becomes nodes in evaluation
order, as TVM's `GraphExecutorCodegen` makes them: a `null` node per parameter (a tuple
parameter gives one per tensor) and per tensor constant (named `p0`, `p1`, ... as TVM names
the params it extracts), a `tvm_op` node per call of a primitive function. Tuples and
projections make no nodes: they only route entries (multi-output plumbing).
"""
from __future__ import annotations

import hashlib

from rvmdbg.i18n import _
from rvmdbg.graph.graph import CONSTANT, INPUT, KERNEL, Graph, GraphNode, GraphRefusal
from rvmdbg.passes.fold_constant import fold_constant
from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.relay.ast import (Call, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match,
                              Module, OpRef, PatternConstructor, PatternTuple, RefCreate, RefRead,
                              RefWrite, Tuple, TupleGetItem, Var, children, room_for_recursion)
from rvmdbg.relay.dialect import CALL_LOWERED, DEVICE_OPS, MEMORY_OPS
from rvmdbg.relay.ops.core import RESHAPE_OPS
from rvmdbg.relay.printer import print_expr
from rvmdbg.relay.typecheck import check_module
from rvmdbg.relay.types import FuncType, RefType, TensorType, TupleType, TypeCall, TypeVar

__all__ = ["lower_to_graph", "find_refusal", "RESHAPE_OPS"]

# TVM shortens longer kernel names and appends a hash of the full one
_MAX_NAME = 80
def _checked(mod: Module) -> Module:
    out = check_module(mod)
    return mod if out is None else out


# =============================================================================================
# Refusal: the first dynamic construct in source order


def _place(span) -> str:
    return str(span) if span is not None else _("<unknown place>")


def _non_tensor_reason(t) -> str | None:
    """Why a type is not a static tensor or a tuple of them (None when it is)."""
    if isinstance(t, TensorType):
        return None if t.is_static else "dynamic"
    if isinstance(t, TupleType):
        for f in t.fields:
            r = _non_tensor_reason(f)
            if r is not None:
                return r
        return None
    if isinstance(t, TypeCall):
        return "adt"
    if isinstance(t, FuncType):
        return "function"
    if isinstance(t, RefType):
        return "ref"
    if isinstance(t, TypeVar):
        return "typevar"
    return None  # not inferred: the checker would have said so


def _callees(fn: Function) -> list:
    """The names of the globals a function mentions, in any position."""
    out, seen, stack = [], set(), [fn.body]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, GlobalVar):
            out.append(e.name)
        stack.extend(children(e))
    return out


def _reachable(mod: Module, entry: str) -> tuple[list, dict]:
    """The globals reachable from entry (entry first) and each one's callee set."""
    order, edges, todo = [], {}, [entry]
    while todo:
        name = todo.pop()
        if name in edges or name not in mod.functions:
            continue
        fn = mod.functions[name]
        edges[name] = set(_callees(fn))
        order.append(name)
        todo.extend(sorted(edges[name] - set(edges)))
    return order, edges


def _reaches(edges: dict, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        if n == goal:
            return True
        if n in seen:
            continue
        seen.add(n)
        todo.extend(edges.get(n, ()))
    return False


class _Scanner:
    """Collects every dynamic construct of one function as (span, message)."""

    def __init__(self, fname: str, edges: dict, out: list):
        self.fname = fname
        self.edges = edges
        self.out = out

    def add(self, span, message: str) -> None:
        self.out.append((span, _("graph executor: {reason}; run it on the VM").format(
            reason=message)))

    def scan_params(self, fn: Function) -> None:
        ft = fn.checked_type
        types = list(ft.params) if isinstance(ft, FuncType) and len(ft.params) == len(fn.params) \
            else [p.checked_type for p in fn.params]
        if isinstance(ft, FuncType) and ft.type_params:
            self.add(fn.span, _("@{func} at {where} is polymorphic; a graph's inputs need "
                                "fixed tensor types").format(func=self.fname,
                                                             where=_place(fn.span)))
        for p, t in zip(fn.params, types):
            self.check_type(t, f"%{p.name}", p.span, parameter=True)

    def check_type(self, t, what: str, span, parameter: bool = False) -> None:
        reason = _non_tensor_reason(t)
        if reason is None:
            return
        where = _place(span)
        fields = dict(what=what, where=where, type=t)
        if reason == "dynamic":
            self.add(span, _("the shape of {what} at {where} is known only at run time "
                             "({type})").format(**fields))
        elif parameter and reason == "adt":
            self.add(span, _("parameter {what} at {where} has the ADT type {type}; a graph's "
                             "inputs are tensors").format(**fields))
        elif parameter and reason == "function":
            self.add(span, _("parameter {what} at {where} is a function ({type}): calling it "
                             "needs a closure at run time").format(**fields))
        elif parameter and reason == "ref":
            self.add(span, _("parameter {what} at {where} is a reference ({type})").format(
                **fields))
        elif parameter and reason == "typevar":
            self.add(span, _("parameter {what} at {where} has no fixed tensor type "
                             "({type})").format(**fields))

    def scan(self, fn: Function) -> None:
        seen = set()
        stack = [fn.body]
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            sp = e.span
            where = _place(sp)
            if isinstance(e, If):
                self.add(sp, _("`if` at {where} needs a branch at run time").format(where=where))
            elif isinstance(e, Match):
                kw = "match" if e.complete else "match?"
                if any(_has_constructor(c.lhs) for c in e.clauses):
                    self.add(sp, _("`{keyword}` at {where} needs a branch on a constructor at "
                                   "run time").format(keyword=kw, where=where))
                else:
                    self.add(sp, _("`{keyword}` at {where} takes its value apart with pattern "
                                   "tests at run time").format(keyword=kw, where=where))
            elif isinstance(e, Function):
                if not e.is_primitive:
                    self.add(sp, _("a closure (`fn`) at {where} is a function value made at "
                                   "run time").format(where=where))
                continue  # its body belongs to the closure, refused as a whole
            elif isinstance(e, Call):
                op = e.op
                if (isinstance(op, OpRef) and op.name == CALL_LOWERED
                        and isinstance(e.args[0], GlobalVar)):
                    op = e.args[0]  # TVM's lowered call of @f: judged as a call of @f
                if isinstance(op, GlobalVar):
                    if op.name == self.fname:
                        self.add(sp, _("`@{func}` calls itself at {where} (recursion)").format(
                            func=op.name, where=where))
                    elif _reaches(self.edges, op.name, self.fname):
                        self.add(sp, _("`@{func}` calls `@{callee}` at {where}, which calls back "
                                       "into `@{func}` (recursion)").format(
                            func=self.fname, callee=op.name, where=where))
                elif isinstance(op, ConstructorRef):
                    self.add(sp, _("ADT constructor `{name}` at {where} builds a data value; a "
                                   "graph holds only tensors").format(name=op.name, where=where))
                elif isinstance(op, OpRef) and op.name in MEMORY_OPS:
                    self.add(sp, _("`{op}` at {where} belongs to the VM's memory dialect; a "
                                   "graph plans its memory itself").format(op=op.name,
                                                                           where=where))
                # a call of a function value (`%f(%x)`) is not reported itself: the value
                # comes from a closure, a global used as a value or a function parameter,
                # each reported where it is made (a use's span is its binder's, in any case)
            elif isinstance(e, GlobalVar):
                self.add(sp, _("`@{func}` used as a value at {where} makes a closure at run "
                               "time").format(func=e.name, where=where))
            elif isinstance(e, ConstructorRef):
                self.add(sp, _("ADT constructor `{name}` at {where} used as a value makes a "
                               "closure at run time").format(name=e.name, where=where))
            elif isinstance(e, RefCreate):
                self.add(sp, _("`ref(...)` at {where} makes a mutable reference").format(
                    where=where))
            elif isinstance(e, RefRead):
                self.add(sp, _("`ref_read` at {where} reads a mutable reference").format(
                    where=where))
            elif isinstance(e, RefWrite):
                self.add(sp, _("`ref_write` at {where} writes a mutable reference").format(
                    where=where))
            if isinstance(e, Var):
                self.check_type(e.checked_type, f"%{e.name}", sp)
            elif not isinstance(e, (GlobalVar, ConstructorRef, OpRef, Function, Let)):
                t = e.checked_type
                if _non_tensor_reason(t) == "dynamic":
                    self.add(sp, _("the shape of the result of {what} at {where} is known "
                                   "only at run time ({type})").format(
                        what=_describe(e), where=where, type=t))
            if isinstance(e, Call):
                # a called global or constructor is judged with its call, not as a value
                if isinstance(e.op, OpRef) and e.op.name == CALL_LOWERED:
                    stack.extend(e.args[1:])
                elif isinstance(e.op, (GlobalVar, ConstructorRef, OpRef)):
                    stack.extend(reversed(e.args))
                else:
                    stack.extend(reversed([e.op, *e.args]))
            else:
                stack.extend(reversed(children(e)))


def _has_constructor(p) -> bool:
    if isinstance(p, PatternConstructor):
        return True
    return isinstance(p, PatternTuple) and any(_has_constructor(q) for q in p.patterns)


def _describe(e) -> str:
    if isinstance(e, Call) and isinstance(e.op, OpRef):
        return f"`{e.op.name}`"
    if isinstance(e, Call) and isinstance(e.op, GlobalVar):
        return _("the call of `@{func}`").format(func=e.op.name)
    if isinstance(e, Constant):
        return _("a constant")
    if isinstance(e, TupleGetItem):
        return _("the projection `.{index}`").format(index=e.index)
    return _("a {kind}").format(kind=type(e).__name__.lower())


def find_refusal(mod: Module, entry: str = "main") -> GraphRefusal | None:
    """The first construct (in source order) that keeps entry from being a static graph."""
    if entry not in mod.functions:
        return GraphRefusal(_("graph executor: there is no function @{func}").format(
            func=entry), None,
                            source=mod.source)
    order, edges = _reachable(mod, entry)
    found: list = []
    main_file = getattr(mod.functions[entry].span, "file", None)
    for name in order:
        fn = mod.functions[name]
        if fn.is_primitive:
            continue
        scanner = _Scanner(name, edges, found)
        if name == entry:
            scanner.scan_params(fn)
        scanner.scan(fn)
    if not found:
        return None

    def key(item):
        sp = item[0]
        if sp is None:
            return (2, 0, 0)
        return (0 if sp.file == main_file else 1, sp.line, sp.col)

    span, message = min(found, key=key)  # min is stable: equal places keep scan order
    return GraphRefusal(message, span, source=mod.source)


# =============================================================================================
# Building the graph from the fused module


class _Entry:
    """A value that is one tensor: output `index` of node `node`."""

    __slots__ = ("node", "index")

    def __init__(self, node: int, index: int):
        self.node = node
        self.index = index


def _flatten(value) -> list:
    if isinstance(value, _Entry):
        return [value]
    return [leaf for v in value for leaf in _flatten(v)]


def _form(value, counter: list):
    """None for one tensor, else a nested tuple of positions in the flattened order."""
    if isinstance(value, _Entry):
        counter[0] += 1
        return counter[0] - 1
    return tuple(_form(v, counter) for v in value)


def _arg_form(value):
    """A kernel parameter's form: None for one tensor, else a nested tuple of Nones."""
    if isinstance(value, _Entry):
        return None
    return tuple(_arg_form(v) for v in value)


def _leaf_types(t) -> list:
    if isinstance(t, TupleType):
        return [leaf for f in t.fields for leaf in _leaf_types(f)]
    return [t]


def _rebuild(t, leaves: list):
    """The nested value of type t, taking entries from leaves in order."""
    if isinstance(t, TupleType):
        return tuple(_rebuild(f, leaves) for f in t.fields)
    return leaves.pop(0)


def _post_order_ops(body) -> list:
    """Operator names in a primitive body, each operand before its user."""
    out, seen = [], set()
    stack = [(body, False)]
    while stack:
        node, done = stack.pop()
        if done:
            if isinstance(node, Call) and isinstance(node.op, OpRef):
                out.append(node.op.name)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        kids = node.args if isinstance(node, Call) else children(node)
        stack.extend((k, False) for k in reversed(kids))
    return out


def _reshape_only(fn: Function) -> bool:
    """Only reshape-like operators applied in a chain to the one tensor parameter."""
    if len(fn.params) != 1 or not isinstance(fn.params[0].checked_type, TensorType):
        return False
    e = fn.body
    steps = 0
    while isinstance(e, Call) and isinstance(e.op, OpRef) and e.op.name in RESHAPE_OPS \
            and len(e.args) == 1:
        e = e.args[0]
        steps += 1
    return steps > 0 and e is fn.params[0] and isinstance(fn.body.checked_type, TensorType)


class _Builder:
    def __init__(self, mod: Module):
        self.mod = mod
        self.nodes: list = []
        self.shapes: list = []
        self.dtypes: list = []
        self.row_ptr: list = [0]
        self.constants: dict = {}     # id(Constant) -> value structure
        self._keep: list = []         # keeps memo keys' objects alive
        self.func_names: dict = {}    # kernel text -> func_name
        self.used_names: set = set()

    # ---- nodes ----

    def add(self, node: GraphNode, types: list) -> int:
        nid = len(self.nodes)
        node.num_outputs = len(types)
        self.nodes.append(node)
        for t in types:
            self.shapes.append(tuple(int(d) for d in t.shape))
            self.dtypes.append(t.dtype)
        self.row_ptr.append(self.row_ptr[-1] + len(types))
        return nid

    def input(self, name: str, t, span):
        """The value of an entry parameter: one null node per tensor of its type."""
        if isinstance(t, TupleType):
            return tuple(self.input(f"{name}.{i}", f, span) for i, f in enumerate(t.fields))
        nid = self.add(GraphNode("null", name, INPUT, span=span), [t])
        return _Entry(nid, 0)

    def constant(self, c: Constant):
        got = self.constants.get(id(c))
        if got is None:
            name = f"p{sum(1 for n in self.nodes if n.kind == CONSTANT)}"
            t = TensorType(tuple(c.data.shape), str(c.data.dtype))
            nid = self.add(GraphNode("null", name, CONSTANT, value=c.data, span=c.span), [t])
            got = self.constants[id(c)] = _Entry(nid, 0)
            self._keep.append(c)
        return got

    def func_name(self, fn: Function, text: str) -> str:
        name = self.func_names.get(text)
        if name is not None:
            return name
        ops = [op.replace(".", "_") for op in _post_order_ops(fn.body)]
        base = "fused_" + "_".join(ops) if ops else "fused_identity"
        if len(base) > _MAX_NAME:
            base = base[:_MAX_NAME] + "_" + hashlib.sha1(base.encode()).hexdigest()[:12]
        name, n = base, 0
        while name in self.used_names:
            n += 1
            name = f"{base}_{n}"
        self.used_names.add(name)
        self.func_names[text] = name
        return name

    def kernel(self, fn: Function, args: list, call: Call):
        text = print_expr(fn)
        inputs = [(e.node, e.index) for a in args for e in _flatten(a)]
        ret = call.checked_type if call.checked_type is not None else fn.body.checked_type
        types = _leaf_types(ret)
        node = GraphNode("tvm_op", "", KERNEL, inputs=inputs, function=fn, source=text,
                         reshape_only=_reshape_only(fn), span=call.span or fn.span,
                         arg_shape=tuple(_arg_form(a) for a in args))
        node.func_name = node.name = self.func_name(fn, text)
        nid = self.add(node, types)
        return _rebuild(ret, [_Entry(nid, i) for i in range(len(types))])

    # ---- expressions ----

    def body(self, e, env: dict):
        """The value of e (an entry or nested tuple of entries) under env."""
        memo: dict = {}
        return self.value(e, env, memo)

    def value(self, e, env: dict, memo: dict):
        got = memo.get(id(e))
        if got is not None:
            return got
        if isinstance(e, Let):
            # let chains are long: walk them in a loop
            chain = []
            while isinstance(e, Let) and id(e) not in memo:
                env[e.var] = self.value(e.value, env, memo)
                chain.append(e)
                e = e.body
            out = self.value(e, env, memo)
            for let in chain:
                memo[id(let)] = out
            return out
        if isinstance(e, Var):
            out = env[e]
        elif isinstance(e, Constant):
            out = self.constant(e)
        elif isinstance(e, Tuple):
            out = tuple(self.value(f, env, memo) for f in e.fields)
        elif isinstance(e, TupleGetItem):
            out = self.value(e.tuple_value, env, memo)[e.index]
        elif isinstance(e, Call) and isinstance(e.op, Function) and e.op.is_primitive:
            args = [self.value(a, env, memo) for a in e.args]
            out = self.kernel(e.op, args, e)
        elif isinstance(e, Call) and isinstance(e.op, OpRef) and e.op.name in DEVICE_OPS:
            # one device: `on_device` and `device_copy` pass their value on (TVM's graph
            # codegen drops on_device, and a copy within one device moves nothing)
            out = self.value(e.args[0], env, memo)
        elif isinstance(e, Call) and isinstance(e.op, GlobalVar):
            callee = self.mod.functions[e.op.name]
            args = [self.value(a, env, memo) for a in e.args]
            if callee.is_primitive:
                # a global marked Primitive=1 (TVM's partitioned functions) is one kernel
                out = self.kernel(callee, args, e)
            else:
                # a non-recursive global: inline its body with the arguments' entries
                out = self.body(callee.body, dict(zip(callee.params, args)))
        else:
            raise GraphRefusal(_("graph executor: {reason}; run it on the VM").format(
                reason=_("cannot place {what} at {where} in a static graph").format(
                    what=_describe(e), where=_place(e.span))), e.span, source=self.mod.source)
        memo[id(e)] = out
        return out


def lower_to_graph(mod: Module, entry: str = "main") -> Graph:
    """The static graph of `entry`, or `GraphRefusal` naming the first dynamic construct."""
    with room_for_recursion():
        mod = _checked(mod)
        refusal = find_refusal(mod, entry)
        if refusal is not None:
            raise refusal
        fused = _checked(fuse_ops(_checked(fold_constant(mod))))
        fn = fused.functions[entry]
        builder = _Builder(fused)
        env = {}
        forms = []
        for p in fn.params:
            env[p] = builder.input(p.name, p.checked_type, p.span)
            forms.append(_arg_form(env[p]))
        result = builder.body(fn.body, env)
    heads = [(e.node, e.index) for e in _flatten(result)]
    form = None if isinstance(result, _Entry) else _form(result, [0])
    return Graph(nodes=builder.nodes, node_row_ptr=builder.row_ptr, shapes=builder.shapes,
                 dtypes=builder.dtypes, heads=heads, result_form=form, entry=entry,
                 input_forms=forms, source=mod.source)
