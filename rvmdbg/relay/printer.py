"""The Relay text printer: modules and expressions back to TVM-style text that parses again.

Layout follows TVM's printer (version header, `def @f(%x: int32) -> int32 {`, two-space
indents, calls in prefix form `add(%x, 1)`). A node the DAG shares (used more than once, not a
variable, constant or name) is printed once as a graph binding `%N = ...;` and referred to as
`%N` after that; the binding goes at the start of the innermost block that encloses every use,
just before the statement that first needs it, so branches and closures can share it safely.
Operands nested more than `_MAX_INLINE_DEPTH` deep (a long `a + b + ...` chain) are hoisted into
graph bindings too, so the text stays within the parser's nesting limit. Distinct variables
with the same name get distinct printed names (`%x`, `%x1`).
"""
from __future__ import annotations

import math
import re
import sys

import numpy as np

from rvmdbg.relay.ast import (
    AttrObject, Call, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, Module, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    Tuple, TupleGetItem, TypeData, Var,
)
from rvmdbg.relay.metadata import MARK, MetaObject, metadata_text
from rvmdbg.relay.parser import VERSION, paused_gc

_ATOMIC = (Var, GlobalVar, OpRef, ConstructorRef, Constant)
# Operands nested deeper than this inside one statement are hoisted into graph bindings.
_MAX_INLINE_DEPTH = 200
_NAME_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_/]*")
_FLOAT_TYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_FLOAT_SUFFIX = {"float16": "f16", "float32": "f", "float64": "f64"}


def print_module(mod: Module, show_types: bool = False, metadata: bool = True) -> str:
    """The whole module as Relay text: version header, type definitions, then functions.
    With show_types, calls carry TVM-style `/* ty=... */` comments where types are known.
    Tensor constants print as `meta[relay.Constant][i]`; with `metadata` (TVM's
    `show_meta_data`), the `#[metadata]` section holding them follows, so the text parses back."""
    parts = [print_type_def(td) for td in mod.type_defs.values()]
    meta: dict = {}  # one metadata numbering for the module, as in TVM
    objects: dict = {}
    for name, f in mod.functions.items():
        parts.append(_Printer(show_types, meta, objects).definition(name, f))
    text = f'#[version = "{VERSION}"]\n' + "\n\n".join(parts) + "\n"
    if metadata and (meta or objects):
        text += _metadata_section(meta, objects)
    return text


def print_expr(e, show_types: bool = False, metadata: bool = False) -> str:
    """One expression (bindings first, one per line); parse_expr reads it back. With
    `metadata`, the `#[metadata]` section of its tensor constants and metadata objects follows,
    so the text stands alone (a kernel's source)."""
    printer = _Printer(show_types)
    text = printer.root(e)
    if metadata and (printer.meta or printer.objects):
        text += "\n" + _metadata_section(printer.meta, printer.objects)
    return text


def _metadata_section(meta: dict, objects: dict) -> str:
    """`#[metadata]` and its JSON document, constants in their table order."""
    constants = [a for _, a in sorted(meta.values(), key=lambda p: p[0])]
    listed = [o for objs in objects.values() for o in objs]
    return MARK + "\n" + metadata_text(constants, listed) + "\n"


def print_type_def(td: TypeData) -> str:
    head = ("extern type " if td.extern else "type ") + td.name
    if td.type_params:
        head += "[" + ", ".join(str(t) for t in td.type_params) + "]"
    if td.extern or not td.constructors:
        return head
    lines = [head + " {"]
    for c in td.constructors:
        fields = "(" + ", ".join(str(t) for t in c.inputs) + ")" if c.inputs else ""
        lines.append(f"  {c.name}{fields},")
    lines.append("}")
    return "\n".join(lines)


def constant_text(data) -> str:
    """A 0-d constant as a literal with its dtype suffix (`5`, `5i64`, `2.5f`, `True`)."""
    a = np.asarray(data)
    if a.ndim != 0:
        raise ValueError("only 0-d constants have a literal form")
    dt = a.dtype.name
    v = a.item()
    if dt == "bool":
        return "True" if v else "False"
    if dt == "int32":
        return str(v)
    if dt.startswith("int"):
        return f"{v}i{dt[3:]}"
    if dt.startswith("uint"):
        return f"{v}u{dt[4:]}"
    if dt in _FLOAT_TYPES:
        return float_text(v, dt)
    raise ValueError(f"cannot print a constant of dtype {dt}")


def float_text(v: float, dtype: str = "float32") -> str:
    """The shortest literal that reads back as exactly this value of this dtype."""
    suffix = _FLOAT_SUFFIX[dtype]
    if math.isnan(v):
        return "nan" + suffix  # `nanf`, `inff`: TVM spells non-finite floats this way
    if math.isinf(v):
        return ("-" if v < 0 else "") + "inf" + suffix
    ftype = _FLOAT_TYPES[dtype]
    x = ftype(v)
    if x == 0 or 1e-4 <= abs(float(x)) < 1e16:
        s = np.format_float_positional(x, unique=True, trim="-")
    else:
        s = np.format_float_scientific(x, unique=True, trim="-")
    # the parser reads a double and rounds it to the dtype: check that lands on x, and that
    # the double is within the dtype's range (the parser refuses it past the largest finite)
    if ftype(float(s)).tobytes() != x.tobytes() or abs(float(s)) > float(np.finfo(ftype).max):
        s = repr(float(x))
    return s + suffix


def attr_text(v, objects: dict | None = None) -> str:
    """An attribute value; metadata objects are numbered in `objects` (key -> [MetaObject])."""
    if v is None:
        return "None"
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "nanf"
        if math.isinf(v):
            return "inff" if v > 0 else "-inff"
        return repr(v)
    if isinstance(v, str):
        if '"' in v and "'" not in v:
            return "'" + v + "'"  # read from TVM's single quotes: `kind='a "b"'`
        return '"' + v + '"'
    if isinstance(v, AttrObject):
        return v.name + "(" + ", ".join(f"{k}={attr_text(x, objects)}"
                                        for k, x in v.fields.items()) + ")"
    if isinstance(v, dict):
        bare = getattr(v, "bare", ())
        return "{" + ", ".join((k if k in bare else '"' + k + '"') + "=" + attr_text(x, objects)
                               for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr_text(x, objects) for x in v) + "]"
    if isinstance(v, np.ndarray):
        return attr_text(v.tolist())
    if isinstance(v, MetaObject):
        if objects is None:
            return repr(v)
        table = objects.setdefault(v.key, [])
        index = next((i for i, o in enumerate(table) if o is v), None)
        if index is None:
            index = len(table)
            table.append(v)
        return f"meta[{v.key}][{index}]"
    return '"' + str(v) + '"'


def _indent(lines) -> str:
    return "\n".join("  " + line.replace("\n", "\n  ") for line in lines)


_ALL_OPERANDS = None


def _edges(e):
    """The children of e and their kinds: 0 an operand, 1 a new block (function body, branch,
    clause), 2 the body of a let (the same block continues); kinds None means all operands."""
    t = type(e)
    if t is Call:
        return (e.op, *e.args), _ALL_OPERANDS
    if t is Let:
        return (e.value, e.body), (0, 2)
    if t is Function:
        return (e.body,), (1,)
    if t is If:
        return (e.cond, e.true_branch, e.false_branch), (0, 1, 1)
    if t is Tuple:
        return e.fields, _ALL_OPERANDS
    if t is TupleGetItem:
        return (e.tuple_value,), _ALL_OPERANDS
    if t is Match:
        return (e.data, *[c.rhs for c in e.clauses]), (0,) + (1,) * len(e.clauses)
    if t is RefCreate:
        return (e.value,), _ALL_OPERANDS
    if t is RefRead:
        return (e.ref,), _ALL_OPERANDS
    if t is RefWrite:
        return (e.ref, e.value), _ALL_OPERANDS
    return (), _ALL_OPERANDS


class _Printer:
    def __init__(self, show_types: bool = False, meta: dict | None = None,
                 objects: dict | None = None):
        self.show_types = show_types
        self.names: dict[int, str] = {}  # id(Var) -> printed name
        self.used: set[str] = set()
        self.next_suffix: dict[str, int] = {}
        self.graph: dict[int, str] = {}  # id(shared node) -> "%N"
        self.counter = 0
        self.uses: dict[int, int] = {}  # id(node) -> number of parents
        self.placement: dict[int, int] = {}  # id(shared node) -> depth of the block it goes in
        self.blocks: list[list] = []  # pending binding lines of each open block
        self.bases: list[int] = []  # the inline depth at which each open block starts
        self.depth = 0  # operands open around the node being rendered
        # id(tensor data) -> (its metadata index, the data): references to one tensor share
        # an entry, as TVM's one Constant object does
        self.meta: dict[int, tuple] = {} if meta is None else meta
        self.objects: dict = {} if objects is None else objects  # metadata attribute objects

    # ---- entry points ----

    def definition(self, name: str, f: Function) -> str:
        with _deep_recursion(), paused_gc():
            self.analyze(f)
            self.blocks, self.bases = [[]], [0]
            return "def @" + name + self.function_text(f)

    def root(self, e) -> str:
        with _deep_recursion(), paused_gc():
            self.analyze(e)
            return "\n".join(self.block(e))

    # ---- sharing analysis ----

    def analyze(self, root) -> None:
        """Count parents, then place each shared node in the lowest block enclosing its uses."""
        atomic = _ATOMIC
        uses = {id(root): 0}  # non-atomic nodes and variables -> number of parents
        stack = [root]
        while stack:
            for c in _edges(stack.pop())[0]:
                k = id(c)
                u = uses.get(k)
                if u is None:
                    uses[k] = 1
                    if not isinstance(c, atomic):
                        stack.append(c)
                else:
                    uses[k] = u + 1
        self.uses = uses

        parent = [-1]
        depth = [0]
        home = {id(root): 0}
        use_blocks: dict[int, list] = {}
        waiting: dict[int, int] = {}  # shared node -> parents not yet visited
        placement = self.placement
        # Visit every node after all of its parents (Kahn's order), so a shared node's uses are
        # all known when it is placed.
        stack = [root]
        while stack:
            node = stack.pop()
            k = id(node)
            if uses[k] > 1:
                blocks = use_blocks[k]
                b = blocks[0]
                for other in blocks[1:]:
                    while depth[b] > depth[other]:
                        b = parent[b]
                    while depth[other] > depth[b]:
                        other = parent[other]
                    while b != other:
                        b, other = parent[b], parent[other]
                placement[k] = depth[b]
                if type(node) is Let:  # its definition `%N = (let ...)` is a block of its own
                    parent.append(b)
                    depth.append(depth[b] + 1)
                    b = len(parent) - 1
                h = b
            else:
                h = home[k]
            children, kinds = _edges(node)
            for i, c in enumerate(children):
                if isinstance(c, atomic):
                    continue
                ck = id(c)
                kind = kinds[i] if kinds else 0
                if kind == 1:
                    parent.append(h)
                    depth.append(depth[h] + 1)
                    eb = len(parent) - 1
                else:
                    eb = h
                n = uses[ck]
                if n > 1:
                    use_blocks.setdefault(ck, []).append(eb)
                    left = waiting.get(ck, n) - 1
                    waiting[ck] = left
                    if left == 0:
                        stack.append(c)
                    continue
                if kind == 0 and type(c) is Let:
                    # a let as an operand is a parenthesised block of its own
                    parent.append(eb)
                    depth.append(depth[eb] + 1)
                    eb = len(parent) - 1
                home[ck] = eb
                stack.append(c)

    def is_shared(self, e) -> bool:
        return self.uses.get(id(e), 0) > 1 and not isinstance(e, _ATOMIC)

    # ---- blocks ----

    def block(self, e, chain_start: bool = False) -> list:
        """The lines of a block: its let/sequence statements, each preceded by the graph
        bindings it first needs, then its result."""
        pending: list = []
        self.blocks.append(pending)
        self.bases.append(self.depth)
        out = []
        first = chain_start
        while type(e) is Let and (first or not self.is_shared(e)):
            first = False
            value = self.render(e.value)
            if type(e.value) is Match and not self.is_shared(e.value):
                value = "(" + value + ")"
            out.extend(pending)
            pending.clear()
            v = e.var
            if v.name == "_" and v.type_annotation is None and self.uses.get(id(v), 0) == 0:
                out.append(value + ";")
            else:
                out.append(f"let {self.binder(v)} = {value};")
            e = e.body
        result = self.render(e)
        out.extend(pending)
        out.append(result)
        self.blocks.pop()
        self.bases.pop()
        return out

    def braced(self, e) -> str:
        return "{\n" + _indent(self.block(e)) + "\n}"

    # ---- expressions ----

    def render(self, e) -> str:
        """An expression in operand position."""
        t = type(e)
        if t is Var:
            return "%" + self.var_name(e)
        if t is Constant:
            if np.ndim(e.data):
                return self.meta_constant(e)
            return constant_text(e.data)
        if t is GlobalVar:
            return "@" + e.name
        if t is OpRef or t is ConstructorRef:
            return e.name
        if self.uses.get(id(e), 0) > 1:
            name = self.graph.get(id(e))
            if name is None:
                name = self.define(e)
            return name
        depth = self.depth + 1
        if depth - self.bases[-1] > _MAX_INLINE_DEPTH and t is not Let:
            return self.hoist(e)
        self.depth = depth
        text = "(\n" + _indent(self.block(e)) + "\n)" if t is Let else self.node_text(e)
        self.depth = depth - 1
        return text

    def hoist(self, e) -> str:
        """Bind an operand nested too deeply to a graph variable in the current block, so the
        text's nesting stays within what the parser reads. A graph binding makes no node, so
        the program read back is the same tree."""
        saved = self.depth
        self.depth = self.bases[-1] + 1
        text = self.node_text(e)
        if type(e) is Match:
            text = "(" + text + ")"
        self.depth = saved
        name = f"%{self.counter}"
        self.counter += 1
        self.blocks[-1].append(f"{name} = {text};")
        return name

    def meta_constant(self, e) -> str:
        """A tensor constant has no literal form: like TVM, refer to it in the metadata table
        (print_module writes the table after the program)."""
        a = np.asarray(e.data)
        index = self.meta.setdefault(id(a), (len(self.meta), a))[0]
        dims = ", ".join(str(d) for d in a.shape) + ("," if a.ndim == 1 else "")
        return f"meta[relay.Constant][{index}] /* ty=Tensor[({dims}), {a.dtype.name}] */"

    def define(self, e) -> str:
        """Emit the graph binding of a shared node into its block; return its name."""
        d = self.placement[id(e)]
        saved = self.blocks, self.bases, self.depth
        self.blocks, self.bases = saved[0][:d + 1], saved[1][:d + 1]
        self.depth = self.bases[-1] + 1
        if type(e) is Let:
            text = "(\n" + _indent(self.block(e, chain_start=True)) + "\n)"
        else:
            text = self.node_text(e)
            if type(e) is Match:
                text = "(" + text + ")"
        self.blocks, self.bases, self.depth = saved
        saved = saved[0]
        name = f"%{self.counter}"
        self.counter += 1
        self.graph[id(e)] = name
        saved[d].append(f"{name} = {text};")
        return name

    def node_text(self, e) -> str:
        t = type(e)
        if t is Call:
            return self.call_text(e)
        if t is Tuple:
            fields = [self.render(f) for f in e.fields]
            if len(fields) == 1:
                return "(" + fields[0] + ",)"
            return "(" + ", ".join(fields) + ")"
        if t is TupleGetItem:
            base = self.render(e.tuple_value)
            if not self.is_shared(e.tuple_value) and \
                    type(e.tuple_value) in (Call, TupleGetItem, If, Match, Constant):
                base = "(" + base + ")"
            return f"{base}.{e.index}" + self.type_note(e)
        if t is If:
            return (f"if ({self.render(e.cond)}) " + self.braced(e.true_branch) + " else "
                    + self.braced(e.false_branch))
        if t is Function:
            return "fn " + self.function_text(e)
        if t is Match:
            return self.match_text(e)
        if t is RefCreate:
            return f"ref({self.render(e.value)})"
        if t is RefRead:
            return f"ref_read({self.render(e.ref)})"
        if t is RefWrite:
            return f"ref_write({self.render(e.ref)}, {self.render(e.value)})"
        raise TypeError(f"cannot print {type(e).__name__}")

    def call_text(self, e: Call) -> str:
        op = e.op
        if _bare_constructor_call(e):
            return op.name
        callee = self.render(op)
        if not self.is_shared(op) and (type(op) in (Match, If) or _bare_constructor_call(op)):
            # `Nil()` would read as Nil itself, not as a call of it
            callee = "(" + callee + ")"
        parts = [self.render(a) for a in e.args]
        parts.extend(f"{k}={attr_text(v, self.objects)}" for k, v in e.attrs.items())
        return f"{callee}({', '.join(parts)})" + self.type_note(e)

    def type_note(self, e) -> str:
        if self.show_types and e.checked_type is not None:
            return f" /* ty={e.checked_type} */"
        return ""

    def function_text(self, f: Function) -> str:
        """Everything after `fn ` or `def @name`: type params, params, attrs, return, body."""
        head = ""
        if f.type_params:
            head = "[" + ", ".join(str(t) for t in f.type_params) + "]"
        params = [self.binder(p) for p in f.params]
        params.extend(f"{k}={attr_text(v, self.objects)}" for k, v in f.attrs.items())
        head += "(" + ", ".join(params) + ")"
        if f.ret_type is not None:
            head += f" -> {f.ret_type}"
        return head + " " + self.braced(f.body)

    def match_text(self, m: Match) -> str:
        lines = [("match" if m.complete else "match?") + f" ({self.render(m.data)}) {{"]
        for c in m.clauses:
            pat = self.pattern_text(c.lhs)
            body = self.block(c.rhs)
            if len(body) == 1 and "\n" not in body[0]:
                lines.append(f"  {pat} => {body[0]},")
            else:
                lines.append(f"  {pat} => {{\n" + _indent(_indent(body).split("\n")) + "\n  },")
        lines.append("}")
        return "\n".join(lines)

    def pattern_text(self, p) -> str:
        t = type(p)
        if t is PatternWildcard:
            return "_"
        if t is PatternVar:
            return self.binder(p.var)
        if t is PatternConstructor:
            if not p.patterns:
                return p.name
            return p.name + "(" + ", ".join([self.pattern_text(q) for q in p.patterns]) + ")"
        if t is PatternTuple:
            subs = [self.pattern_text(q) for q in p.patterns]
            if len(subs) == 1:
                return "(" + subs[0] + ",)"
            return "(" + ", ".join(subs) + ")"
        raise TypeError(f"cannot print pattern {type(p).__name__}")

    # ---- names ----

    def binder(self, v: Var) -> str:
        text = "%" + self.var_name(v)
        if v.attrs:
            text += " {" + ", ".join(f"{k}={attr_text(a, self.objects)}"
                                     for k, a in v.attrs.items()) + "}"
        if v.type_annotation is not None:
            text += f": {v.type_annotation}"
        return text

    def var_name(self, v: Var) -> str:
        name = self.names.get(id(v))
        if name is None:
            base = v.name if _NAME_OK.fullmatch(v.name or "") else _sanitize(v.name)
            name = base
            # resume counting where the last clash of this base stopped: linear, not quadratic
            k = self.next_suffix.get(base, 1)
            while name in self.used:
                name = f"{base}{k}"
                k += 1
            self.next_suffix[base] = k
            self.used.add(name)
            self.names[id(v)] = name
        return name


def _bare_constructor_call(e) -> bool:
    """A call of a nullary constructor, printed as just its name (`Nil`)."""
    if type(e) is not Call or e.args or e.attrs or type(e.op) is not ConstructorRef:
        return False
    return e.op.constructor is None or not e.op.constructor.inputs


def _sanitize(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name or "")
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "v" + cleaned
    return cleaned


_PRINT_RECURSION_LIMIT = 200_000


class _deep_recursion:
    """Room for deeply nested (non-let) expressions while printing, such as the left-deep call
    tree of a long `a + b + ...` chain: about four Python frames per level, which CPython 3.11
    keeps off the C stack."""

    def __enter__(self):
        self.old = sys.getrecursionlimit()
        if self.old < _PRINT_RECURSION_LIMIT:
            sys.setrecursionlimit(_PRINT_RECURSION_LIMIT)

    def __exit__(self, *exc):
        if self.old < _PRINT_RECURSION_LIMIT == sys.getrecursionlimit():
            sys.setrecursionlimit(self.old)
        return False
