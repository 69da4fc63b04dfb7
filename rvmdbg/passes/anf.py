"""ToANormalForm: bind every non-atomic subexpression to a `let`, in evaluation order.

TVM's ToANormalForm. After it, every operand of a call, constructor, tuple, projection,
`if`, `match` and reference operation is atomic: a Var, GlobalVar, Constant, ConstructorRef,
OpRef or a primitive function (kept inline in call position: it becomes one kernel call).
Non-primitive functions are let-bound like any other value (as in TVM), so LambdaLift later
replaces a `let` value and the result stays in A-normal form.

Sharing is kept: a DAG node (a graph binding `%0 = e` used twice) is bound once, in the
innermost scope that holds all of its uses (scopes are function bodies, `if` branches and
`match` arms), at its first use in evaluation order. Primitive function bodies are left as
expression trees: they become kernels.
"""
from __future__ import annotations

import operator

from rvmdbg.relay.ast import (Call, Clause, Constant, ConstructorRef, Function, GlobalVar, If,
                              LEAF_KINDS, Let, Match, Module, OpRef, RefCreate, RefRead,
                              RefWrite, Tuple, TupleGetItem, Var, children, map_functions,
                              pattern_vars)

_LEAVES = (Var, GlobalVar, Constant, ConstructorRef, OpRef)


def is_atomic(e) -> bool:
    """An operand that ANF leaves in place."""
    return isinstance(e, _LEAVES) or (isinstance(e, Function) and e.is_primitive)


def _atomic_kind(e) -> bool:
    """is_atomic for the AST's own classes (which are not subclassed), by type."""
    kind = type(e)
    return kind in LEAF_KINDS or (kind is Function and e.is_primitive)


class _Scope:
    """A region whose bindings form one let chain: a function body, a branch or a match arm."""

    __slots__ = ("parent", "depth", "bindings")

    def __init__(self, parent: "_Scope | None"):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.bindings: list = []  # (Var, value expression, span)


def _lca(a: _Scope, b: _Scope) -> _Scope:
    while a.depth > b.depth:
        a = a.parent
    while b.depth > a.depth:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def _call_edges(e):
    return [(e.op, False)] + [(a, False) for a in e.args]


_NO_EDGES: tuple = ()

# type -> (node -> (child, opens_new_scope) pairs); AST classes are not subclassed
_EDGE_FNS = {
    Call: _call_edges,
    Function: lambda e: _NO_EDGES if e.is_primitive else [(e.body, True)],
    Let: lambda e: [(e.value, False), (e.body, False)],
    If: lambda e: [(e.cond, False), (e.true_branch, True), (e.false_branch, True)],
    Tuple: lambda e: [(f, False) for f in e.fields],
    TupleGetItem: lambda e: [(e.tuple_value, False)],
    Match: lambda e: [(e.data, False)] + [(c.rhs, True) for c in e.clauses],
    RefCreate: lambda e: [(e.value, False)],
    RefRead: lambda e: [(e.ref, False)],
    RefWrite: lambda e: [(e.ref, False), (e.value, False)],
}


def _edges(e):
    """(child, opens_new_scope) pairs for the scope analysis, in evaluation order."""
    fn = _EDGE_FNS.get(type(e))
    return _NO_EDGES if fn is None else fn(e)


class _Converter:
    def __init__(self, taken_names: set):
        self.scope_of: dict = {}      # id(node) -> _Scope where its binding goes
        self.child_scopes: dict = {}  # (id(node), edge index) -> _Scope opened for that child
        self.uses: dict = {}          # id(node) -> number of parent edges
        self.atom: dict = {}          # id(node) -> the atom standing for it once bound
        self.keep: list = []          # keeps visited nodes alive so ids stay unique
        self.edges: dict = {}         # id(node) -> _edges(node), computed once
        self.taken = taken_names
        self.counter = 0

    # ---- analysis: which scope each node is bound in ----

    def analyse(self, body, root: _Scope) -> None:
        order = self._topological(body)
        scope_of, child_scopes = self.scope_of, self.child_scopes
        scope_of[id(body)] = root
        edges = self.edges
        for node in order:
            scope = scope_of[id(node)]
            for i, (child, opens) in enumerate(edges[id(node)]):
                if opens:
                    sub = child_scopes.get((id(node), i))
                    if sub is None:
                        sub = child_scopes[(id(node), i)] = _Scope(scope)
                    use = sub
                else:
                    use = scope
                if _atomic_kind(child):
                    continue  # an atom stays in place: it has no binding to place
                prev = scope_of.get(id(child))
                scope_of[id(child)] = use if prev is None or prev is use else _lca(prev, use)

    def _topological(self, root) -> list:
        """Nodes with every parent before its children (reverse post-order), iteratively;
        atoms left out (they are never bound). Every local name met is added to `taken`
        (what `local_names` finds, in the same walk)."""
        post, seen, edges, uses = [], {id(root)}, self.edges, self.uses
        taken = self.taken
        _note_names(root, taken)
        edges[id(root)] = root_edges = _edges(root)
        stack = [(root, iter(root_edges))]
        self.keep.append(root)
        while stack:
            node, it = stack[-1]
            for child, _opens in it:
                kind = type(child)
                if kind is Var:
                    taken.add(child.name)
                    continue
                if _atomic_kind(child):
                    if kind is Function:
                        taken.update(p.name for p in child.params)
                    continue
                key = id(child)
                uses[key] = uses.get(key, 0) + 1
                if key not in seen:
                    seen.add(key)
                    _note_names(child, taken)
                    self.keep.append(child)
                    edges[key] = child_edges = _edges(child)
                    stack.append((child, iter(child_edges)))
                    break
            else:
                stack.pop()
                post.append(node)
        post.reverse()
        return post

    # ---- emission ----

    def fresh_var(self, like) -> Var:
        while True:
            name = f"x_{self.counter}"
            self.counter += 1
            if name not in self.taken:
                break
        self.taken.add(name)
        v = Var(name, None, like.span)
        v.checked_type = like.checked_type
        return v

    def scope_block(self, e, scope: _Scope):
        """e converted as the whole of a scope: its bindings wrapped around its atom."""
        result = self.to_atom(e)
        out = result
        for var, value, span in reversed(scope.bindings):
            let = Let(var, value, out, span)
            let.checked_type = out.checked_type
            out = let
        scope.bindings = []
        return out

    def to_atom(self, e):
        """The atom for e, pushing the bindings that compute it to their scopes."""
        key = id(e)
        if key in self.atom:
            return self.atom[key]
        if is_atomic(e):
            return e
        if isinstance(e, Let):
            return self._let_chain(e)
        value = self.compound(e)
        var = self.fresh_var(e)
        self.scope_of[key].bindings.append((var, value, e.span))
        self.atom[key] = var
        return var

    def _let_chain(self, e: Let):
        node = e
        while True:
            scope = self.scope_of[id(node)]
            if is_atomic(node.value):
                value = node.value
            elif (isinstance(node.value, Let) or self.uses.get(id(node.value), 0) > 1
                  or id(node.value) in self.atom):
                # a nested let flattens into this chain; a shared value is bound once on its own
                value = self.to_atom(node.value)
            else:
                value = self.compound(node.value)  # bound directly to the let's variable
            scope.bindings.append((node.var, value, node.span))
            nxt = node.body
            if isinstance(nxt, Let) and id(nxt) not in self.atom and self.uses.get(id(nxt), 0) == 1:
                node = nxt
                continue
            result = self.to_atom(nxt)
            break
        # every let in the chain stands for the chain's result
        node = e
        while True:
            self.atom[id(node)] = result
            if node.body is nxt:
                break
            node = node.body
        return result

    def compound(self, e):
        """e with its operands made atomic (the value of a binding)."""
        a = self.to_atom
        if isinstance(e, Call):
            op = e.op if is_atomic(e.op) else a(e.op)
            args = [a(x) for x in e.args]
            if op is e.op and all(map(operator.is_, args, e.args)):
                return e  # already in A-normal form: shared, as other passes share what they keep
            n = Call(op, args, e.attrs, e.span)
            n.type_args = list(e.type_args)
        elif isinstance(e, Function):
            body = self.scope_block(e.body, self.child_scopes[(id(e), 0)])
            n = Function(e.params, body, e.ret_type, e.type_params, e.attrs, e.span)
        elif isinstance(e, If):
            cond = a(e.cond)
            t = self.scope_block(e.true_branch, self.child_scopes[(id(e), 1)])
            f = self.scope_block(e.false_branch, self.child_scopes[(id(e), 2)])
            n = If(cond, t, f, e.span)
        elif isinstance(e, Match):
            data = a(e.data)
            clauses = [Clause(c.lhs, self.scope_block(c.rhs, self.child_scopes[(id(e), i + 1)]),
                              c.span) for i, c in enumerate(e.clauses)]
            n = Match(data, clauses, e.complete, e.span)
        elif isinstance(e, Tuple):
            n = Tuple([a(f) for f in e.fields], e.span)
        elif isinstance(e, TupleGetItem):
            n = TupleGetItem(a(e.tuple_value), e.index, e.span)
        elif isinstance(e, RefCreate):
            n = RefCreate(a(e.value), e.span)
        elif isinstance(e, RefRead):
            n = RefRead(a(e.ref), e.span)
        elif isinstance(e, RefWrite):
            r = a(e.ref)
            n = RefWrite(r, a(e.value), e.span)
        else:
            raise TypeError(  # not shown to users: a node kind the pass forgot
                f"ToANormalForm: unexpected node {type(e).__name__}")
        n.checked_type = e.checked_type
        return n


def _note_names(e, names: set) -> None:
    """Add the names e binds (or is, for a Var) to names."""
    kind = type(e)
    if kind is Var:
        names.add(e.name)
    elif kind is Let:
        names.add(e.var.name)
    elif kind is Function:
        names.update(p.name for p in e.params)
    elif kind is Match:
        for c in e.clauses:
            names.update(v.name for v in pattern_vars(c.lhs))


def local_names(fn: Function) -> set:
    """Every local variable name used in fn, so fresh names never collide with them."""
    names = {p.name for p in fn.params}
    add = names.add
    leaves = LEAF_KINDS
    stack, seen = [fn.body], set()
    pop, push = stack.pop, stack.extend
    while stack:
        e = pop()
        kind = type(e)
        if kind is Var:
            add(e.name)
            continue
        if kind in leaves or id(e) in seen:
            continue
        seen.add(id(e))
        if kind is Let:
            add(e.var.name)
        elif kind is Function:
            names.update(p.name for p in e.params)
            if e.is_primitive:
                continue  # a kernel's body is its own scope
        elif kind is Match:
            for c in e.clauses:
                names.update(v.name for v in pattern_vars(c.lhs))
        push(children(e))
    return names


def to_a_normal_form(mod: Module) -> Module:
    """A new module whose non-primitive functions are in A-normal form."""
    def convert(_name: str, fn: Function) -> Function:
        if fn.is_primitive:
            return fn
        if fn.attrs.get("Closure") and isinstance(fn.body, Function):
            # a lifted closure's body is its code: convert inside it, keep the fn itself
            inner = convert(_name, fn.body)
            out = Function(fn.params, inner, fn.ret_type, fn.type_params, fn.attrs, fn.span)
            out.checked_type = fn.checked_type
            return out
        conv = _Converter({p.name for p in fn.params})  # analyse adds the body's names
        root = _Scope(None)
        conv.analyse(fn.body, root)
        body = conv.scope_block(fn.body, root)
        out = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, fn.span)
        out.checked_type = fn.checked_type
        return out

    return map_functions(mod, convert)
