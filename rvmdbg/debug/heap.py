"""The values a frame's registers reach: their types, the ADT heap with sharing, value trees.

Register values are immutable objects (tensors, ADT values, closures) plus mutable reference
cells. A value reachable along two paths (two registers, or a register and a field) is one
object in memory; `heap()` walks the graph once, numbers each ADT value, tuple, closure and
cell, and marks the ones reached more than once as shared. Walks are iterative (a list of a
million cells must not overflow Python's stack) and bounded by a node budget.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rvmdbg.values import ADTValue, RefCell, format_value, tensor_line
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder

HEAP_BUDGET = 20_000      # heap nodes walked at most per request
TREE_NODES = 400          # lines a printed value tree shows at most
TREE_DEPTH = 24           # nesting a printed value tree shows at most


def value_type(v) -> str:
    """A short type for a register value: `int32`, `Tensor[(2, 3), float32]`, `(int32, bool)`,
    `Cons` (an ADT value shows its constructor), `fn @f`, `ref`, `storage`, "" when empty."""
    if v is None:
        return ""
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return str(v.dtype)
        dims = ", ".join(str(d) for d in v.shape) + ("," if v.ndim == 1 else "")
        return f"Tensor[({dims}), {v.dtype}]"
    if isinstance(v, np.generic):
        return str(v.dtype)
    if isinstance(v, ADTValue):
        if v.con is None:
            inner = ", ".join(value_type(f) for f in v.fields[:8])
            more = ", ..." if len(v.fields) > 8 else ""
            return f"({inner}{more}{',' if len(v.fields) == 1 else ''})"
        return v.con
    if isinstance(v, RefCell):
        return "ref"
    name = type(v).__name__
    if name == "StorageObject":
        return f"storage[{v.size}]"
    if name == "TensorPlaceholder":
        dims = ", ".join(str(d) for d in v.shape)
        return f"Tensor[({dims}), {v.dtype}] (unwritten)"
    fname = getattr(v, "name", None)
    if fname is not None:
        return f"fn @{fname}"
    return name


def value_text(v, width: int = 60) -> str:
    """One line, at most `width` characters, of a register value ("-" when empty)."""
    if v is None:
        return "-"
    if type(v) is np.ndarray or isinstance(v, np.generic):
        return tensor_line(v, width)
    try:
        text = _short_format(v, width)
    except RecursionError:
        text = f"<{value_type(v)} nested too deeply to print>"
    except Exception:  # a value a kernel made up: describe it rather than fail
        text = f"<{type(v).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[:max(1, width - 3)] + "..."


def _short_format(v, width: int) -> str:
    # Long lists would format in full before being cut: stop walking past the width.
    if isinstance(v, ADTValue) and _deeper_than(v, width):
        out: list[str] = []
        _format_bounded(v, out, width + 8)
        return "".join(out)
    return format_value(v)


def _deeper_than(v, limit: int) -> bool:
    n = 0
    stack = [v]
    while stack:
        x = stack.pop()
        n += 1
        if n > limit:
            return True
        if isinstance(x, ADTValue):
            stack.extend(x.fields)
    return False


def _format_bounded(v, out: list, budget: int) -> None:
    """Append pieces of `format_value(v)` to `out` until about `budget` characters."""
    stack: list = [v]
    size = 0
    while stack and size < budget:
        x = stack.pop()
        if isinstance(x, str):
            piece = x
        elif isinstance(x, ADTValue):
            if not x.fields:
                piece = x.con if x.con is not None else "()"
            else:
                piece = (x.con or "") + "("
                tail: list = [")"]
                for i, f in enumerate(reversed(x.fields)):
                    tail.append(f)
                    if i < len(x.fields) - 1:
                        tail.append(", ")
                stack.extend(tail)
        else:
            piece = format_value(x)
        out.append(piece)
        size += len(piece)


def same_value(a, b, budget: int = 10_000) -> bool:
    """Whether two register values are equal (tensors by dtype, shape and contents; ADT
    values and closures structurally; reference cells by identity, as they are the same cell
    across replays). Iterative and bounded: past `budget` objects the answer is False."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        budget -= 1
        if budget < 0 or type(x) is not type(y):
            return False
        if type(x) is np.ndarray:
            if x.dtype != y.dtype or x.shape != y.shape:
                return False
            try:
                if not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
                    return False
            except (TypeError, ValueError):
                return False
        elif isinstance(x, np.generic):  # a 0-d tensor (rvmdbg/scalars.py); NaN equals NaN
            if not (x == y or (x != x and y != y)):
                return False
        elif type(x) is ADTValue:
            if x.tag != y.tag or x.con != y.con or len(x.fields) != len(y.fields):
                return False
            stack.extend(zip(x.fields, y.fields))
        elif getattr(x, "captured", None) is not None and getattr(x, "name", None) is not None:
            if x.name != y.name or len(x.captured) != len(y.captured):
                return False
            stack.extend(zip(x.captured, y.captured))
        elif type(x) is StorageObject:
            # a replay allocates the storage again: the same allocation is the same value
            if (x.size, x.alignment, x.dtype_hint) != (y.size, y.alignment, y.dtype_hint):
                return False
        elif type(x) is TensorPlaceholder:
            if (x.offset, tuple(x.shape), x.dtype) != (y.offset, tuple(y.shape), y.dtype):
                return False
            stack.append((x.storage, y.storage))
        else:
            return False  # cells: only the same object is the same (replays keep them)
    return True


def children(v) -> list[tuple[str, object]]:
    """(label, child) pairs of a heap object: fields, captured values, a cell's content."""
    if isinstance(v, ADTValue):
        return [(str(i), f) for i, f in enumerate(v.fields)]
    if isinstance(v, RefCell):
        return [("value", v.value)]
    captured = getattr(v, "captured", None)
    if captured is not None and getattr(v, "name", None) is not None:
        return [(f"captured {i}", c) for i, c in enumerate(captured)]
    return []


def is_heap_object(v) -> bool:
    """ADT values (nullary ones are shared constants: not worth a node), tuples, cells, closures."""
    if isinstance(v, ADTValue):
        return bool(v.fields) or v.con is None
    if isinstance(v, RefCell):
        return True
    return getattr(v, "captured", None) is not None and getattr(v, "name", None) is not None


@dataclass
class HeapField:
    """One field of a heap node: a nested node (`node` = its id) or a leaf shown as text."""

    label: str
    node: int | None
    text: str


@dataclass
class HeapNode:
    """One heap object: `kind` is "adt", "tuple", "closure" or "ref"; `roots` lists the
    registers that hold it directly; `refcount` counts the references the walk saw (registers
    and fields); `shared` is refcount > 1."""

    id: int
    kind: str
    label: str
    fields: list = field(default_factory=list)
    roots: list = field(default_factory=list)
    refcount: int = 0
    shared: bool = False
    value: object = None


def storage_tags(registers) -> dict:
    """id(value) -> `s3`: the pool buffer (`StorageObject.buffer`) a storage in `registers` was
    given, for that storage, the tensors laid out in it and the tensor a kernel wrote there,
    so the panes show a buffer handed out again under the same name. Empty without a pool."""
    tags: dict = {}
    for v in [v for v in registers if type(v) is StorageObject or type(v) is TensorPlaceholder]:
        st = v if type(v) is StorageObject else v.storage
        if st.buffer is None or st.released:
            continue
        tag = f"s{st.buffer}"
        tags[id(v)] = tag
        if type(st.tensor) is np.ndarray:  # (a NumPy scalar may be shared: never tagged)
            tags[id(st.tensor)] = tag
    return tags


def heap_of(registers, budget: int = HEAP_BUDGET) -> tuple[list[HeapNode], bool]:
    """The heap reachable from `registers` (a register file) and whether the walk was cut short.

    Nodes are numbered in walk order from the lowest register, so the numbering is stable
    for the same values.
    """
    index: dict[int, HeapNode] = {}
    nodes: list[HeapNode] = []
    truncated = False

    def visit(v) -> HeapNode | None:
        nonlocal truncated
        node = index.get(id(v))
        if node is not None:
            node.refcount += 1
            return node
        if len(nodes) >= budget:
            truncated = True
            return None
        if isinstance(v, ADTValue):
            kind, label = ("tuple", "tuple") if v.con is None else ("adt", v.con)
        elif isinstance(v, RefCell):
            kind, label = "ref", "ref"
        else:
            kind, label = "closure", f"@{v.name}"
        node = HeapNode(len(nodes), kind, label, refcount=1, value=v)
        index[id(v)] = node
        nodes.append(node)
        pending.append(node)
        return node

    pending: list[HeapNode] = []
    tags = storage_tags(registers)
    for r, v in enumerate(registers):
        if is_heap_object(v):
            node = visit(v)
            if node is not None:
                node.roots.append(r)
    while pending:
        node = pending.pop()
        for label, child in children(node.value):
            if is_heap_object(child):
                sub = visit(child)
                node.fields.append(HeapField(label, sub.id if sub is not None else None,
                                             value_text(child, 40) if sub is None else ""))
            else:
                tag = tags.get(id(child))  # the pool buffer the tensor lives in
                node.fields.append(HeapField(label, None, value_text(child, 40)
                                             + (f" in {tag}" if tag else "")))
    for node in nodes:
        node.shared = node.refcount > 1
    return nodes, truncated


def format_heap(nodes: list[HeapNode], truncated: bool) -> str:
    """`#0 Cons [$3] shared(2): 0=1, 1=#1` one line per node."""
    if not nodes:
        return "no ADT values, tuples, closures or references in this frame's registers"
    lines = []
    for n in nodes:
        roots = f" [{', '.join('$' + str(r) for r in n.roots)}]" if n.roots else ""
        shared = f" shared({n.refcount})" if n.shared else ""
        fields = ", ".join(f"{f.label}=" + (f"#{f.node}" if f.node is not None else f.text)
                           for f in n.fields)
        lines.append(f"#{n.id} {n.label}{roots}{shared}" + (f": {fields}" if fields else ""))
    if truncated:
        lines.append(f"... (stopped after {len(nodes)} nodes)")
    return "\n".join(lines)


def value_tree(v, max_nodes: int = TREE_NODES, max_depth: int = TREE_DEPTH) -> list[str]:
    """A value drawn as an ASCII tree, one line per node; a value seen before along another
    path is printed once and referred to as `#k (shared)` afterwards."""
    seen: dict[int, int] = {}
    counts: dict[int, int] = {}
    # First pass: which objects are reached more than once (bounded walk).
    stack = [v]
    walked = 0
    while stack and walked < HEAP_BUDGET:
        x = stack.pop()
        walked += 1
        if is_heap_object(x):
            k = id(x)
            counts[k] = counts.get(k, 0) + 1
            if counts[k] == 1:
                stack.extend(c for _, c in children(x))
    lines: list[str] = []
    # Each entry: (value, label, prefix for this line, prefix for its children, depth).
    todo = [(v, None, "", "", 0)]
    names = 0
    while todo:
        x, label, lead, child_lead, depth = todo.pop()
        if len(lines) >= max_nodes:
            lines.append(f"{lead}... (more not shown)")
            break
        head = f"{label}: " if label is not None else ""
        if not is_heap_object(x):
            lines.append(f"{lead}{head}{value_text(x, 60)}")
            continue
        k = id(x)
        if k in seen:
            lines.append(f"{lead}{head}#{seen[k]} (shared, shown above)")
            continue
        tag = ""
        if counts.get(k, 0) > 1:  # name it so later paths can refer back to it
            seen[k] = names
            tag = f"  #{names} shared"
            names += 1
        kids = children(x)
        name = _node_label(x)
        if depth >= max_depth and kids:
            lines.append(f"{lead}{head}{name}{tag} ... ({value_text(x, 40)})")
            continue
        lines.append(f"{lead}{head}{name}{tag}")
        entries = []
        for i, (clabel, c) in enumerate(kids):
            last = i == len(kids) - 1
            entries.append((c, clabel if not isinstance(x, ADTValue) else None,
                            child_lead + ("`-- " if last else "|-- "),
                            child_lead + ("    " if last else "|   "), depth + 1))
        todo.extend(reversed(entries))
    return lines


def _node_label(v) -> str:
    if isinstance(v, ADTValue):
        return "tuple" if v.con is None else v.con
    if isinstance(v, RefCell):
        return "ref"
    return f"<closure @{v.name}>"


__all__ = ["value_type", "value_text", "same_value", "children", "is_heap_object", "HeapNode", "HeapField",
           "heap_of", "format_heap", "value_tree"]
