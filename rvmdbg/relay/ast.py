"""The Relay AST: expressions, patterns, definitions and the module.

Nodes are compared by identity: a graph binding `%0 = e;` makes every later `%0` the *same*
node (a DAG), and a `Var` object is both the binder and every use of it, as in TVM.
Every node carries `span` (its source region, or None for nodes a pass made) and
`checked_type` (None until the type checker fills it in).

`ExprVisitor` and `ExprMutator` walk expressions once per node (memoised), so DAGs stay DAGs.
"""
from __future__ import annotations

import itertools
import sys
from contextlib import contextmanager

from rvmdbg.relay.diagnostics import Source, Span
from rvmdbg.relay.types import Type, TypeVar

_var_ids = itertools.count()


class AttrMap(dict):
    """A map as an attribute value: `{"relay_attrs"={__dict__={"Primitive"=1}}, ...}`, as TVM
    prints call_lowered's metadata. Keys written without quotes (`__dict__`) are kept in
    `bare`, so the printer writes them back the same way; equality is the dict's."""

    __slots__ = ("bare",)

    def __init__(self, items=(), bare=frozenset()):
        super().__init__(items)
        self.bare = frozenset(bare)


class AttrObject:
    """An object as TVM's printer writes one inline in an attribute:
    `VirtualDevice(device_type=1, virtual_device_id=0, target=Target(kind='llvm', ...))`.
    Kept as written (its name and fields, an AttrMap), printed back the same way."""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict):
        self.name = name
        self.fields = AttrMap(fields, fields)  # a repr's keys are bare names

    def __eq__(self, other) -> bool:
        return (type(other) is AttrObject and self.name == other.name
                and self.fields == other.fields)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"AttrObject({self.name!r}, {dict(self.fields)!r})"


class Node:
    # The node classes below set these two themselves rather than through super().__init__:
    # a large program's passes make nodes by the hundred thousand.
    __slots__ = ("span", "checked_type")

    def __init__(self, span: Span | None = None):
        self.span = span
        self.checked_type: Type | None = None


class Expr(Node):
    __slots__ = ()


class Constant(Expr):
    """A literal: always a NumPy array (0-d for scalars)."""

    __slots__ = ("data",)

    def __init__(self, data, span=None):
        self.span = span
        self.checked_type = None
        self.data = data


class Var(Expr):
    """A local variable `%name` (name stored without `%`). Binder and uses are one object."""

    __slots__ = ("name", "type_annotation", "uid", "attrs")

    def __init__(self, name: str, type_annotation: Type | None = None, span=None,
                 attrs: dict | None = None):
        self.span = span
        self.checked_type = None
        self.name = name
        self.type_annotation = type_annotation
        self.uid = next(_var_ids)
        # a parameter's `{virtual_device=...}` as TVM prints it, kept to be printed back
        self.attrs = attrs

    def __repr__(self) -> str:
        return f"Var(%{self.name}#{self.uid})"


class GlobalVar(Expr):
    """A use of a global function `@name` (name stored without `@`)."""

    __slots__ = ("name",)

    def __init__(self, name: str, span=None):
        self.span = span
        self.checked_type = None
        self.name = name


class ConstructorRef(Expr):
    """A use of an ADT constructor, e.g. `Cons` or `Nil`; `constructor` is the resolved definition."""

    __slots__ = ("name", "constructor")

    def __init__(self, name: str, constructor: "Constructor | None" = None, span=None):
        self.span = span
        self.checked_type = None
        self.name = name
        self.constructor = constructor


class OpRef(Expr):
    """A primitive operator by name: `add`, `nn.dense`."""

    __slots__ = ("name",)

    def __init__(self, name: str, span=None):
        self.span = span
        self.checked_type = None
        self.name = name


class Call(Expr):
    """`op(args..., attr=value...)`. `type_args` are filled by the type checker for polymorphic callees."""

    __slots__ = ("op", "args", "attrs", "type_args")

    def __init__(self, op: Expr, args: list, attrs: dict | None = None, span=None):
        self.span = span
        self.checked_type = None
        self.op = op
        self.args = list(args)
        self.attrs = dict(attrs or {})
        self.type_args: list = []


class Function(Expr):
    """`fn [T](%p: t, ..., Attr=v) -> ret { body }`; also every `def` body."""

    __slots__ = ("params", "body", "ret_type", "type_params", "attrs")

    def __init__(self, params: list, body: Expr, ret_type: Type | None = None,
                 type_params: list | None = None, attrs: dict | None = None, span=None):
        self.span = span
        self.checked_type = None
        self.params = list(params)
        self.body = body
        self.ret_type = ret_type
        self.type_params: list[TypeVar] = list(type_params or [])
        self.attrs = dict(attrs or {})

    @property
    def is_primitive(self) -> bool:
        # `Extern=1` (TVM: a function an external codegen has compiled already) is called as
        # one kernel too, and is no VM function
        return bool(self.attrs.get("Primitive") or self.attrs.get("Extern"))


class Let(Expr):
    """`let %v = value; body`. Sequencing `a; b` is a Let whose var is named `_`."""

    __slots__ = ("var", "value", "body")

    def __init__(self, var: Var, value: Expr, body: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.var = var
        self.value = value
        self.body = body


class If(Expr):
    __slots__ = ("cond", "true_branch", "false_branch")

    def __init__(self, cond: Expr, true_branch: Expr, false_branch: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.cond = cond
        self.true_branch = true_branch
        self.false_branch = false_branch


class Tuple(Expr):
    __slots__ = ("fields",)

    def __init__(self, fields: list, span=None):
        self.span = span
        self.checked_type = None
        self.fields = list(fields)


class TupleGetItem(Expr):
    __slots__ = ("tuple_value", "index")

    def __init__(self, tuple_value: Expr, index: int, span=None):
        self.span = span
        self.checked_type = None
        self.tuple_value = tuple_value
        self.index = index


class Match(Expr):
    """`match (data) {...}` (complete=True) or `match? (data) {...}` (complete=False)."""

    __slots__ = ("data", "clauses", "complete")

    def __init__(self, data: Expr, clauses: list, complete: bool = True, span=None):
        self.span = span
        self.checked_type = None
        self.data = data
        self.clauses = list(clauses)
        self.complete = complete


class Clause(Node):
    __slots__ = ("lhs", "rhs")

    def __init__(self, lhs: "Pattern", rhs: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.lhs = lhs
        self.rhs = rhs


class RefCreate(Expr):
    __slots__ = ("value",)

    def __init__(self, value: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.value = value


class RefRead(Expr):
    __slots__ = ("ref",)

    def __init__(self, ref: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.ref = ref


class RefWrite(Expr):
    """`ref_write(r, v)`: evaluates to `()`."""

    __slots__ = ("ref", "value")

    def __init__(self, ref: Expr, value: Expr, span=None):
        self.span = span
        self.checked_type = None
        self.ref = ref
        self.value = value


# ---- patterns ----

class Pattern(Node):
    __slots__ = ()


class PatternWildcard(Pattern):
    __slots__ = ()


class PatternVar(Pattern):
    __slots__ = ("var",)

    def __init__(self, var: Var, span=None):
        self.span = span
        self.checked_type = None
        self.var = var


class PatternConstructor(Pattern):
    __slots__ = ("name", "constructor", "patterns")

    def __init__(self, name: str, constructor: "Constructor | None", patterns: list, span=None):
        self.span = span
        self.checked_type = None
        self.name = name
        self.constructor = constructor
        self.patterns = list(patterns)


class PatternTuple(Pattern):
    __slots__ = ("patterns",)

    def __init__(self, patterns: list, span=None):
        self.span = span
        self.checked_type = None
        self.patterns = list(patterns)


def pattern_vars(p: Pattern) -> list:
    """The variables a pattern binds, left to right."""
    if isinstance(p, PatternVar):
        return [p.var]
    if isinstance(p, (PatternConstructor, PatternTuple)):
        return [v for q in p.patterns for v in pattern_vars(q)]
    return []


# ---- definitions and module ----

class Constructor:
    """One constructor of an ADT: `Cons(A, List[A])`. `tag` is its index within the type."""

    def __init__(self, name: str, inputs: list, tag: int, type_name: str, span: Span | None = None):
        self.name = name
        self.inputs = list(inputs)
        self.tag = tag
        self.type_name = type_name
        self.span = span

    def __repr__(self) -> str:
        return f"Constructor({self.name}, tag={self.tag})"


class TypeData:
    """`type Name[A, ...] { Ctor(...), ... }` (or an `extern type` with no constructors)."""

    def __init__(self, name: str, type_params: list, constructors: list, span: Span | None = None,
                 extern: bool = False):
        self.name = name
        self.type_params: list[TypeVar] = list(type_params)
        self.constructors: list[Constructor] = list(constructors)
        self.span = span
        self.extern = extern


class Module:
    """A whole program: global functions, type definitions and constructors, in source order."""

    def __init__(self, source: Source | None = None):
        self.source = source
        self.functions: dict[str, Function] = {}
        self.type_defs: dict[str, TypeData] = {}
        self.constructors: dict[str, Constructor] = {}
        self.warnings: list = []  # non-fatal diagnostics from the type checker (unreachable clauses)

    def copy_shallow(self) -> "Module":
        m = Module(self.source)
        m.functions = dict(self.functions)
        m.type_defs = dict(self.type_defs)
        m.constructors = dict(self.constructors)
        return m


# ---- traversal ----

def children(e: Node) -> list:
    """The direct sub-expressions of e, in evaluation order."""
    get = _CHILDREN.get(type(e))
    if get is not None:
        return get(e)
    return _children_of_subclass(e)


# node class -> its children: one lookup instead of a chain of isinstance tests (the passes
# ask this of every node). Leaves have none.
_CHILDREN = {
    Call: lambda e: [e.op, *e.args],
    Function: lambda e: [e.body],
    Let: lambda e: [e.value, e.body],
    If: lambda e: [e.cond, e.true_branch, e.false_branch],
    Tuple: lambda e: list(e.fields),
    TupleGetItem: lambda e: [e.tuple_value],
    Match: lambda e: [e.data, *(c.rhs for c in e.clauses)],
    RefCreate: lambda e: [e.value],
    RefRead: lambda e: [e.ref],
    RefWrite: lambda e: [e.ref, e.value],
}
LEAVES = (Constant, Var, GlobalVar, ConstructorRef, OpRef)
# the same as sets, for `type(e) in ...` (the AST's classes are not subclassed); the closed
# leaves use no local variable
LEAF_KINDS = frozenset(LEAVES)
CLOSED_LEAF_KINDS = LEAF_KINDS - {Var}
for _leaf in LEAVES:
    _CHILDREN[_leaf] = lambda e: []


def _children_of_subclass(e: Node) -> list:
    for kind in type(e).__mro__[1:]:
        get = _CHILDREN.get(kind)
        if get is not None:
            return get(e)
    return []


def walk(e: Node, into=None):
    """Every node of the expression `e` once (it may be a DAG), iteratively (bodies can be
    very deep); a node for which `into(node)` is false is yielded but not descended into."""
    stack, seen = [e], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if into is None or into(n):
            stack.extend(children(n))


def call_lines(span, fn=None) -> tuple:
    """The program lines a kernel's calls came from, in order: `span` is the kernel call's own,
    and a fused (primitive) function `fn` carries the span of every call fused into it (an
    imported ONNX model's: one line per node); only lines of the file the own call is in."""
    spans = [span]
    if fn is not None:
        spans += [e.span for e in walk(fn) if type(e) is Call]
    file = span.file if span is not None else None
    return tuple(sorted({sp.line for sp in spans
                         if sp is not None and (file is None or sp.file == file)}))


def referenced_globals(fn: Function) -> list:
    """Names of the globals fn's body mentions, in no particular order (iterative: bodies can
    be very deep)."""
    out: dict = {}
    seen: set = set()
    stack = [fn.body]
    push = stack.append
    leaves = (Constant, Var, OpRef, ConstructorRef)
    while stack:
        e = stack.pop()
        te = type(e)
        if te is GlobalVar:
            out[e.name] = None
        elif te not in leaves:
            for c in children(e):
                if type(c) is GlobalVar:
                    out[c.name] = None
                elif type(c) not in leaves and id(c) not in seen:
                    seen.add(id(c))
                    push(c)
    return list(out)


class ExprVisitor:
    """Visits every expression node once (DAG-aware). Override `visit_<ClassName>`;
    the default visits the children."""

    def __init__(self) -> None:
        self._seen: set = set()

    def visit(self, e: Expr) -> None:
        if id(e) in self._seen:
            return
        self._seen.add(id(e))
        getattr(self, "visit_" + type(e).__name__, self.generic_visit)(e)

    def generic_visit(self, e: Expr) -> None:
        for c in children(e):
            self.visit(c)


class ExprMutator:
    """Rebuilds expressions bottom-up, once per node (DAG-aware: a shared node maps to one new
    node). Override `visit_<ClassName>` and return the replacement; the defaults copy the node
    only when a child changed, keeping span and checked_type."""

    def __init__(self) -> None:
        self.memo: dict = {}
        self._methods: dict = {}  # node class -> this mutator's visit_<ClassName> or default
        # the kinds of leaves the defaults need not visit (they stay as they are): those this
        # mutator has no visit_<ClassName> for
        self._kept_leaves = frozenset(k for k in LEAVES if not hasattr(self, "visit_" + k.__name__))

    def visit(self, e: Expr) -> Expr:
        key = id(e)
        done = self.memo.get(key)
        if done is not None:
            return done[1]
        kind = type(e)
        method = self._methods.get(kind)
        if method is None:
            method = self._methods[kind] = self._method_for(kind)
        out = method(e)
        self.memo[key] = (e, out)  # keep e alive so its id is not reused
        return out

    def _method_for(self, kind):
        own = getattr(self, "visit_" + kind.__name__, None)
        if own is not None:
            return own
        default = _DEFAULTS.get(kind)
        if default is None:
            return self._default
        return default.__get__(self)

    def visit_pattern(self, p: Pattern) -> Pattern:
        return p

    def _keep(self, old: Expr, new: Expr) -> Expr:
        new.span = old.span
        new.checked_type = old.checked_type
        return new

    def _default(self, e: Expr) -> Expr:
        default = _DEFAULTS.get(type(e))
        if default is None:
            for kind in type(e).__mro__[1:]:
                default = _DEFAULTS.get(kind)
                if default is not None:
                    break
            else:
                return e
        return default(self, e)

    # the defaults per node class (`_default` picks one)

    def _default_Call(self, e: Call) -> Expr:
        v, kept = self.visit, self._kept_leaves
        op = e.op if type(e.op) in kept else v(e.op)
        args = [a if type(a) in kept else v(a) for a in e.args]
        if op is e.op and all(map(_is, args, e.args)):
            return e
        n = self._keep(e, Call(op, args, e.attrs))
        n.type_args = list(e.type_args)
        return n

    def _default_Function(self, e: Function) -> Expr:
        body = self.visit(e.body)
        if body is e.body:
            return e
        return self._keep(e, Function(e.params, body, e.ret_type, e.type_params, e.attrs))

    def _default_Let(self, e: Let) -> Expr:
        # a let chain in a loop (a long chain would otherwise recurse once per binding); the
        # lets of the chain are memoised as `visit` would have, values in evaluation order
        visit, memo, kept = self.visit, self.memo, self._kept_leaves
        own = hasattr(self, "visit_Let")  # then every let goes through it
        chain = []
        node = e
        while True:
            value = node.value
            chain.append((node, value if type(value) in kept else visit(value)))
            node = node.body
            if own or type(node) is not Let or id(node) in memo:
                break
        return self._rebuild_lets(e, chain, visit(node))

    def _rebuild_lets(self, e: Let, chain: list, out: Expr) -> Expr:
        """The let chain starting at `e` rebuilt innermost first around `out` from its
        `(let, new value)` pairs, sharing every let whose value and body did not change; the
        inner lets memoised as `visit` would have."""
        memo = self.memo
        for let, value in reversed(chain):
            if value is let.value and out is let.body:
                new = let
            else:
                new = self._keep(let, Let(let.var, value, out))
            if let is not e:
                memo[id(let)] = (let, new)
            out = new
        return out

    def _default_If(self, e: If) -> Expr:
        v = self.visit
        c, t, f = v(e.cond), v(e.true_branch), v(e.false_branch)
        if c is e.cond and t is e.true_branch and f is e.false_branch:
            return e
        return self._keep(e, If(c, t, f))

    def _default_Tuple(self, e: Tuple) -> Expr:
        v, kept = self.visit, self._kept_leaves
        fs = [f if type(f) in kept else v(f) for f in e.fields]
        if all(map(_is, fs, e.fields)):
            return e
        return self._keep(e, Tuple(fs))

    def _default_TupleGetItem(self, e: TupleGetItem) -> Expr:
        t = self.visit(e.tuple_value)
        return e if t is e.tuple_value else self._keep(e, TupleGetItem(t, e.index))

    def _default_Match(self, e: Match) -> Expr:
        v = self.visit
        d = v(e.data)
        cl = [Clause(self.visit_pattern(c.lhs), v(c.rhs), c.span) for c in e.clauses]
        if d is e.data and all(a.rhs is b.rhs and a.lhs is b.lhs for a, b in zip(cl, e.clauses)):
            return e
        return self._keep(e, Match(d, cl, e.complete))

    def _default_RefCreate(self, e: RefCreate) -> Expr:
        x = self.visit(e.value)
        return e if x is e.value else self._keep(e, RefCreate(x))

    def _default_RefRead(self, e: RefRead) -> Expr:
        x = self.visit(e.ref)
        return e if x is e.ref else self._keep(e, RefRead(x))

    def _default_RefWrite(self, e: RefWrite) -> Expr:
        r, x = self.visit(e.ref), self.visit(e.value)
        return e if (r is e.ref and x is e.value) else self._keep(e, RefWrite(r, x))

    def _default_leaf(self, e: Expr) -> Expr:
        return e  # Constant, Var, GlobalVar, ConstructorRef, OpRef


def _is(a, b) -> bool:
    return a is b


_DEFAULTS = {kind: getattr(ExprMutator, "_default_" + kind.__name__)
             for kind in (Call, Function, Let, If, Tuple, TupleGetItem, Match, RefCreate,
                          RefRead, RefWrite)}
_DEFAULTS.update((kind, ExprMutator._default_leaf) for kind in LEAVES)


def map_functions(mod: Module, fn) -> Module:
    """A new module with fn applied to every global function (name, Function) -> Function."""
    out = mod.copy_shallow()
    out.functions = {name: fn(name, f) for name, f in mod.functions.items()}
    return out


def map_bodies(mod: Module, rewrite) -> Module:
    """A new module with `rewrite(body) -> body` applied to the body of every global that is
    not a primitive function (a kernel already); a global whose body comes back the same
    object is kept as it is, another keeps its parameters, types, attributes and span."""
    def apply(_name: str, fn: Function) -> Function:
        if fn.is_primitive:
            return fn
        body = rewrite(fn.body)
        if body is fn.body:
            return fn
        out = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, fn.span)
        out.checked_type = fn.checked_type
        return out

    return map_functions(mod, apply)


# Passes and builders recurse once per level of expression nesting; long operator chains
# (`a + b + c + ...`, left-associative) nest as deep as they are long.
RECURSION_LIMIT = 200_000


@contextmanager
def room_for_recursion(limit: int = RECURSION_LIMIT):
    """Raise Python's recursion limit for a deep walk, and restore it afterwards."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
