"""FuseOps' grouping, as TVM's GraphPartitioner decides it: which operator calls become one
kernel.

TVM's algorithm (v0.14, src/relay/analysis/graph_partitioner.cc and the forward graph of
src/relay/transforms/fuse_ops.cc), restated:
- the forward graph: every expression is a node in post-DFS order (children first); an edge runs
  from an argument to the call using it, labelled with the consumer's pattern (a broadcast op
  whose argument has the result's shape gets an elemwise edge); tuple fields and projections
  get injective edges; what a let, if, match, reference or function uses, and every function
  body and parameter, is an external reference (it ends fusion);
- the post-dominator tree: a node's parent is the least common ancestor of its consumers, and
  its pattern is the worst edge pattern on the way there;
- three passes over the nodes, producers first, each fusing a node into the group of its
  post-dominator when every path between them allows it: phase 0 an out_elemwise_fusable
  node (conv2d, dense) takes a post-dominator reached through elemwise edges, and an
  elemwise/broadcast node joins an injective or reduction post-dominator; phase 1 injective
  nodes and tuples join injective paths; phase 2 injective nodes join a tuple that already
  joined its consumer;
- a group never grows past 256 nodes (TVM's relay.FuseOps.max_depth).
A reduction is never fused into its consumer, and a producer used twice joins its consumer's
group when both uses lead there (x -> a -> (b, c) -> add is one group).

`partition(body) -> {id(node): Group}` for the call, tuple and projection nodes of `body`
(nested non-primitive functions included); a `Group` has `root` (its output node) and
`members` (id -> node).
"""
from __future__ import annotations

from rvmdbg.relay.ast import (Call, Constant, Function, GlobalVar, Let, Match, OpRef, RefCreate,
                              RefRead, RefWrite, Tuple, TupleGetItem, Var, If, ConstructorRef)
from rvmdbg.relay.types import TensorType, TupleType

# TVM's OpPatternKind values
ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_ELEMWISE_FUSABLE = 0, 1, 2, 3, 4
TUPLE, OPAQUE = 7, 8
MAX_FUSE_DEPTH = 256
# scalar constants TVM's forward graph marks elemwise (others are opaque)
_SIMPLE_CONST = frozenset(("int32", "int64", "float32", "float64", "bool"))
_NO_NODE = (OpRef, GlobalVar, ConstructorRef)  # TVM adds no graph node for these


class _Node:
    __slots__ = ("ref", "index", "pattern", "outputs", "extern")

    def __init__(self, ref):
        self.ref = ref
        self.index = -1
        self.pattern = OPAQUE
        self.outputs: list = []  # (consumer node, edge pattern), in the order TVM pushes them
        self.extern = False


class _TreeNode:
    """A node of the post-dominator tree: `gnode` its graph node, `parent` its immediate
    post-dominator, `pattern` the worst edge pattern on the way to it."""
    __slots__ = ("gnode", "parent", "depth", "pattern")

    def __init__(self, gnode, parent, depth, pattern):
        self.gnode, self.parent, self.depth, self.pattern = gnode, parent, depth, pattern


class Group:
    """A union-find group; the root's `root` is the fused function's output node."""

    __slots__ = ("parent", "pattern", "root", "anchor", "num_nodes", "members")

    def __init__(self, pattern, root, anchor):
        self.parent = None
        self.pattern = pattern
        self.root = root
        self.anchor = anchor
        self.num_nodes = 1
        self.members: dict = {}

    def find_root(self) -> "Group":
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            node.parent, node = root, node.parent
        return root


def _same_shape(a, b) -> bool:
    return (isinstance(a, TensorType) and isinstance(b, TensorType)
            and tuple(a.shape) == tuple(b.shape))


def _tensor_fields(t) -> bool:
    return isinstance(t, TupleType) and all(isinstance(f, TensorType) for f in t.fields)


class _ForwardGraph:
    """TVM's IndexedForwardGraph of one function body."""

    def __init__(self, body, call_pattern, is_fusable_call):
        self.call_pattern = call_pattern
        self.is_fusable_call = is_fusable_call
        self.nodes: dict = {}  # id(expr) -> _Node
        self.order: list = []  # post-DFS
        self._update(body, None, OPAQUE)
        self._visit(body)

    def _node(self, e) -> _Node:
        n = self.nodes.get(id(e))
        if n is None:
            n = self.nodes[id(e)] = _Node(e)
        return n

    def _update(self, e, consumer, pattern) -> None:
        if isinstance(e, _NO_NODE):
            return
        n = self._node(e)
        if consumer is None:
            n.extern = True
        else:
            n.outputs.append((consumer, pattern))

    def _visit(self, root) -> None:
        # iterative post-order: a node's edges are recorded before its children are visited,
        # and it is numbered after them, as TVM's memoizing visitor does
        seen = set()
        stack = [(root, None)]
        while stack:
            e, kids = stack[-1]
            if kids is None:
                if id(e) in seen or isinstance(e, _NO_NODE):
                    stack.pop()
                    continue
                seen.add(id(e))
                kids = iter(self._link(e))
                stack[-1] = (e, kids)
            child = next(kids, None)
            if child is not None:
                if id(child) not in seen:
                    stack.append((child, None))
                continue
            stack.pop()
            node = self._node(e)
            node.index = len(self.order)
            self.order.append(node)

    def _link(self, e) -> list:
        """Record e's edges to its children (TVM's Update calls); returns the children to visit."""
        node = self._node(e)
        t = type(e)
        if t is Call:
            if self.is_fusable_call(e):
                pattern = self.call_pattern(e)
            else:
                pattern = OPAQUE
                self._update(e.op, node, OPAQUE)
            node.pattern = pattern
            out = e.checked_type
            for a in e.args:
                edge = pattern
                if edge == BROADCAST and _same_shape(out, a.checked_type):
                    edge = ELEMWISE
                self._update(a, node, edge)
            return [e.op, *e.args]
        if t is Tuple:
            node.pattern = TUPLE
            for f in e.fields:
                if isinstance(f.checked_type, TensorType):
                    self._update(f, node, INJECTIVE)
                else:
                    self._update(f, None, OPAQUE)
            return list(e.fields)
        if t is TupleGetItem:
            if _tensor_fields(e.tuple_value.checked_type):
                node.pattern = INJECTIVE
                self._update(e.tuple_value, node, INJECTIVE)
            else:
                self._update(e.tuple_value, None, OPAQUE)
            return [e.tuple_value]
        if t is Constant:
            simple = str(e.data.dtype) in _SIMPLE_CONST and e.data.ndim == 0
            node.pattern = ELEMWISE if simple else OPAQUE
            return []
        if t is Var:
            return []
        if t is Function:
            if e.is_primitive:
                return []  # already one kernel: nothing inside is regrouped
            for p in e.params:
                self._update(p, None, OPAQUE)
            self._update(e.body, None, OPAQUE)
            return [e.body]
        # let, if, match, references: everything they use is an external reference
        kids = {Let: lambda: [e.value, e.body], If: lambda: [e.cond, e.true_branch,
                                                            e.false_branch],
                Match: lambda: [e.data, *(c.rhs for c in e.clauses)],
                RefCreate: lambda: [e.value], RefRead: lambda: [e.ref],
                RefWrite: lambda: [e.ref, e.value]}.get(t, lambda: [])()
        if t is Let:
            self._update(e.var, None, OPAQUE)
        for k in kids:
            self._update(k, None, OPAQUE)
        return kids


def _post_dominators(order: list) -> list:
    tree: list = [None] * len(order)
    for i in range(len(order) - 1, -1, -1):  # consumers before their producers
        node = order[i]
        if node.extern:
            tree[i] = _TreeNode(node, None, 1, OPAQUE)
            continue
        pattern, parent = ELEMWISE, None
        for k, (consumer, edge) in enumerate(node.outputs):
            other = tree[consumer.index]
            if k == 0:
                parent = other
            else:
                parent, pattern = _lca(parent, other, pattern)
            pattern = max(pattern, edge)
        tree[i] = _TreeNode(node, parent, parent.depth + 1 if parent is not None else 1, pattern)
    return tree


def _lca(lhs, rhs, pattern):
    """The least common ancestor of two tree nodes, and the pattern combined on the way."""
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern = max(pattern, rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern = max(pattern, lhs.pattern)
            lhs = lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern


class _Partitioner:
    """TVM's GraphPartitioner over one forward graph."""

    def __init__(self, graph: _ForwardGraph):
        self.order = graph.order
        self.groups = [Group(n.pattern, n.ref,
                             n.ref if n.pattern == OUT_ELEMWISE_FUSABLE else None)
                       for n in self.order]
        tree = _post_dominators(self.order)
        for phase in range(3):
            self._run(tree, phase)

    # ---- TVM's helpers ----

    def _check_path(self, src, sink, fcond) -> bool:
        """Does every node on every path from src to sink (sink included) pass fcond(its
        group's pattern, is it the sink)? Iterative: a path can be as long as the program."""
        seen: set = set()
        todo = [c for c, _ in src.outputs]
        while todo:
            node = todo.pop()
            if node.index in seen:
                continue
            seen.add(node.index)
            if not fcond(self.groups[node.index].find_root().pattern, node is sink):
                return False
            if node is not sink:
                todo.extend(c for c, _ in node.outputs)
        return True

    def _merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor is not None:
            parent.anchor = child.anchor
            parent.pattern = max(child.pattern, parent.pattern)

    @staticmethod
    def _path_nodes(src, sink):
        """Each node on the paths from src to sink once, src included, sink not (TVM's
        CommitFuse and CountNodesUptoSink walk these). Iterative, as _check_path."""
        seen: set = set()
        todo = [src]
        while todo:
            node = todo.pop()
            if node is sink or node.index in seen:
                continue
            seen.add(node.index)
            yield node
            todo.extend(c for c, _ in node.outputs)

    def _commit(self, src, sink) -> None:
        target = self.groups[sink.index]
        for node in self._path_nodes(src, sink):
            self._merge(self.groups[node.index], target)

    def _count_with(self, child, dom) -> int:
        """Nodes in dom's group once child's paths to it join (each node's own group count,
        as TVM adds them)."""
        return (self.groups[dom.index].find_root().num_nodes
                + sum(self.groups[n.index].num_nodes for n in self._path_nodes(child, dom)))

    # ---- the fusion passes ----

    def _run(self, tree: list, phase: int) -> None:
        for nid, gnode in enumerate(self.order):
            dom = tree[nid]
            group = self.groups[nid]
            if group.pattern == OPAQUE or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self._count_with(gnode, sink) > MAX_FUSE_DEPTH:
                continue
            sink_group = self.groups[sink.index]
            if phase == 2:
                # injective ops join a tuple that already joined its (injective) consumer
                if group.pattern > INJECTIVE:
                    continue
                root = sink_group.find_root()
                if root.pattern == TUPLE:
                    continue
                if sink_group.pattern == TUPLE and root.pattern <= INJECTIVE:
                    if self._check_path(gnode, sink, lambda k, _s: k <= INJECTIVE):
                        self._commit(gnode, sink)
                continue
            if group.find_root() is sink_group.find_root():
                continue
            if sink_group.pattern == TUPLE:
                continue  # no fusing into a tuple yet
            if group.pattern == OUT_ELEMWISE_FUSABLE:
                # conv2d, dense: take the post-dominator when the edges there are elemwise
                if phase == 0 and dom.pattern == ELEMWISE and self._check_path(
                        gnode, sink, lambda k, _s: k <= BROADCAST):
                    self._commit(gnode, sink)
            elif group.pattern <= BROADCAST:
                if dom.pattern <= INJECTIVE or dom.pattern == COMM_REDUCE:
                    def fcond(k, is_sink):
                        if not is_sink:
                            return k <= INJECTIVE
                        return k <= COMM_REDUCE or k == OUT_ELEMWISE_FUSABLE
                    if self._check_path(gnode, sink, fcond):
                        self._commit(gnode, sink)
            elif group.pattern in (INJECTIVE, TUPLE):
                if phase == 1 and self._check_path(gnode, sink, lambda k, _s: k <= INJECTIVE):
                    self._commit(gnode, sink)
            # comm_reduce: never fused into its consumer


def partition(body, call_pattern, is_fusable_call) -> dict:
    """id(node) -> its Group (the union-find root) for every call, tuple and projection node of
    body; `call_pattern(call)` gives a fusable call's OpPatternKind, `is_fusable_call(e)` says
    whether a call is an operator call FuseOps may group."""
    graph = _ForwardGraph(body, call_pattern, is_fusable_call)
    parts = _Partitioner(graph)
    out: dict = {}
    for node, group in zip(graph.order, parts.groups):
        if type(node.ref) in (Call, Tuple, TupleGetItem):
            root = group.find_root()
            root.members[id(node.ref)] = node.ref
            out[id(node.ref)] = root
    return out
