"""Runtime values shared by the reference interpreter and the VM, and their two printed forms.

- a tensor is a NumPy array, never mutated once written; a 0-d tensor of a scalar dtype is held
  as a NumPy scalar (`np.int32(3)`, `rvmdbg/scalars.py`) and prints, converts to JSON and
  compares exactly as the 0-d array would (`is_tensor` accepts both);
- `ADTValue(tag, con, fields)`: a constructed value; a tuple is `ADTValue(0, None, fields)`;
- a closure is any object with a `name` attribute (the interpreter and VM each have their own);
- `RefCell(value)`: a mutable reference cell.

`format_value` gives the human form of the CLI contract (`run`, `print`), `value_summary` its
one-line form (registers, heap, stop and trace lines), `to_json` the `--json` form. Both text
forms show floats at their own dtype's precision (float32 0.1 is `0.1`) and a big tensor as its
first values, shape, dtype, min / max / mean and NaN/Inf counts.
"""
from __future__ import annotations

import weakref

import numpy as np

from rvmdbg.i18n import _, ngettext


def is_tensor(v) -> bool:
    """A tensor value: an array, or a NumPy scalar (a 0-d tensor)."""
    return isinstance(v, (np.ndarray, np.generic))


class ADTValue:
    __slots__ = ("tag", "con", "fields")

    def __init__(self, tag: int, con: str | None, fields: tuple):
        self.tag = tag
        self.con = con  # constructor name; None for a tuple
        self.fields = tuple(fields)

    @property
    def is_tuple(self) -> bool:
        return self.con is None

    def __repr__(self) -> str:
        return format_value(self)


def make_tuple(fields) -> ADTValue:
    return ADTValue(0, None, tuple(fields))


class RefCell:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"ref({format_value(self.value)})"


# ---- the one formatter: scalars at their dtype's precision, tensors in full or summarised

_FEW = 4  # tensor elements a one-line summary shows
_BIG = 1000  # elements above which the full form is summarised (NumPy's own threshold)
_STATS_CACHE: dict = {}  # id(array) -> (weakref, stats text): tensors are never mutated
_STATS_CACHE_SIZE = 256


def _shortest(x) -> str:
    """The shortest text that reads back as exactly this float at its own dtype."""
    if x == 0 or 1e-4 <= abs(float(x)) < 1e16:
        return np.format_float_positional(x, unique=True, trim="-")
    return np.format_float_scientific(x, unique=True, trim="-")


def element_text(x) -> str:
    """One tensor element as NumPy prints it, at the dtype's precision, no suffix."""
    a = np.asarray(x)
    v = a.item()
    k = a.dtype.kind
    if k == "b":
        return "True" if v else "False"
    if k == "f":
        if not np.isfinite(v):
            return str(float(v))
        return _shortest(a[()])
    return str(int(v))


def _scalar_text(a: np.ndarray) -> str:
    """A 0-d tensor as a Relay literal: `3`, `5i64`, `0.1f`, `2.5f16`, `True`."""
    dt = str(a.dtype)
    if dt.startswith("float"):
        v = a.item()
        if not np.isfinite(v):
            return str(v)  # inf, -inf, nan: Relay has no literal for them
        return _shortest(a[()]) + ("f" if dt == "float32" else "f" + dt[5:])
    if dt == "bool":
        return "True" if a.item() else "False"
    suffix = "" if dt == "int32" else {"int64": "i64", "int16": "i16", "int8": "i8"}.get(dt, "")
    return str(int(a.item())) + suffix


def tensor_stats(a: np.ndarray) -> str:
    """`min -1.5, max 2, mean 0.25` over the finite elements, then NaN/Inf counts when any."""
    key = id(a)
    hit = _STATS_CACHE.get(key)
    if hit is not None and hit[0]() is a:
        return hit[1]
    text = _stats(a)
    if len(_STATS_CACHE) >= _STATS_CACHE_SIZE:
        _STATS_CACHE.clear()
    try:
        _STATS_CACHE[key] = (weakref.ref(a), text)
    except TypeError:
        pass
    return text


def _stats(a: np.ndarray) -> str:
    if a.size == 0:
        return "empty"
    if a.dtype.kind == "b":
        n = int(np.count_nonzero(a))
        return f"{n} True, {a.size - n} False"
    extra = ""
    data = a
    if a.dtype.kind == "f":
        finite = np.isfinite(a)
        if not finite.all():
            nans = int(np.count_nonzero(np.isnan(a)))
            infs = a.size - int(np.count_nonzero(finite)) - nans
            extra = "".join(p for p in (f", {nans} NaN" if nans else "",
                                        f", {infs} Inf" if infs else ""))
            data = a[finite]
            if data.size == 0:
                return extra[2:]
    lo, hi = data.min(), data.max()
    mean = float(np.mean(data, dtype=np.float64))
    return f"min {element_text(lo)}, max {element_text(hi)}, mean {mean:.4g}{extra}"


def tensor_summary(a: np.ndarray, ellipsis: str = "…") -> str:
    """One line: a scalar as its literal; a tensor's elements when they are few, else its first
    values and its statistics (`[0.1, 0.2, 0.3, 0.4, …] min 0.1, max 0.9, mean 0.5`)."""
    if a.ndim == 0:
        return _scalar_text(a)
    flat = a.reshape(-1)
    items = ", ".join(element_text(x) for x in flat[:_FEW])
    if flat.size <= _FEW:
        return f"[{items}]"
    return f"[{items}, {ellipsis}] {tensor_stats(a)}"


def tensor_line(a: np.ndarray, width: int = 60, ellipsis: str = "...") -> str:
    """A tensor on one line of a message, trace or stop line: its full form when that fits in
    `width`, else its first values, dtype, shape and statistics (never cut: those are the
    point)."""
    if a.ndim == 0:
        return _scalar_text(a)
    if a.size <= 64:
        text = " ".join(_tensor_text(a).split())
        if len(text) <= width:
            return text
    shape = ", ".join(str(d) for d in a.shape) + ("," if a.ndim == 1 else "")
    return f"Tensor[({shape}), {a.dtype}] {tensor_summary(a, ellipsis)}"


def _tensor_text(x: np.ndarray) -> str:
    """The full form: NumPy's print and the dtype; a big tensor is summarised by NumPy and
    followed by its shape and statistics."""
    if x.ndim == 0:
        return _scalar_text(x)
    # floatmode "unique": each float at its dtype's own precision, as element_text shows it
    # (NumPy's default, 8 fractional digits, cuts float64 and small float32 values)
    body = np.array2string(x, separator=", ", threshold=_BIG, floatmode="unique")
    if x.size <= _BIG:
        return f"{body} ({x.dtype})"
    shape = ", ".join(str(d) for d in x.shape)
    return f"{body} ({x.dtype}, shape ({shape}), {tensor_stats(x)})"


def full_form_stats(a) -> str | None:
    """The statistics `print` adds after a tensor's full form when that form lists every
    element but the summaries would show statistics (more than a few elements; a bigger
    tensor's full form has them already), else None."""
    if isinstance(a, np.ndarray) and _FEW < a.size <= _BIG:
        return tensor_stats(a)
    return None


CYCLE = "<cycle>"  # a reference cell met again inside itself, as Python prints `[...]`


class _Leave:
    """A marker on a printer's stack: the reference cell `cell` is printed; off the path."""
    __slots__ = ("cell",)

    def __init__(self, cell):
        self.cell = cell


def host_form(x):
    """TVM's runtime objects (what the Relax VM's registers hold), found by duck type without
    importing tvm, as the values rvmdbg shows: a tensor as its NumPy array, an FFI array as a
    tuple; anything else unchanged."""
    kind = type(x).__name__
    if kind == "Tensor" and callable(getattr(x, "numpy", None)):
        return x.numpy()
    if kind == "Array" and type(x).__module__.startswith("tvm_ffi"):
        return ADTValue(0, None, tuple(host_form(y) for y in x))
    return x


def format_value(v) -> str:
    """The human (Relay-like) form: `55`, `3f`, `(6, 8)`, `Cons(3, Nil)`, arrays as NumPy prints.

    Iterative, and linear in the size of the value: lists of a million cells print fine. A
    reference cell met again inside its own contents prints as `<cycle>`."""
    parts: list = []
    todo: list = [v]  # values to print, or str pieces to emit as they are
    path: set = set()  # ids of the reference cells being printed (the cells above)
    while todo:
        x = todo.pop()
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, np.ndarray):
            parts.append(_tensor_text(x))
        elif isinstance(x, np.generic):
            parts.append(_scalar_text(x))
        elif isinstance(x, ADTValue):
            if x.con is not None and not x.fields:
                parts.append(x.con)
                continue
            close = ",)" if (x.con is None and len(x.fields) == 1) else ")"
            parts.append("(" if x.con is None else x.con + "(")
            todo.append(close)
            for i in range(len(x.fields) - 1, -1, -1):
                todo.append(x.fields[i])
                if i:
                    todo.append(", ")
        elif isinstance(x, RefCell):
            if id(x) in path:
                parts.append(CYCLE)
                continue
            path.add(id(x))
            parts.append("ref(")
            todo.append(_Leave(x))
            todo.append(")")
            todo.append(x.value)
        elif isinstance(x, _Leave):
            path.discard(id(x.cell))
        elif (shown := host_form(x)) is not x:
            todo.append(shown)
        elif getattr(x, "name", None) is not None:
            parts.append(f"<closure @{x.name}>")
        else:
            parts.append(repr(x))
    return "".join(parts)


def value_summary(v, width: int = 60, ellipsis: str = "…") -> str:
    """A one-line summary of at most about `width` characters."""
    if v is None:
        return "-"
    try:
        v = host_form(v)
        if isinstance(v, (np.ndarray, np.generic)):
            text = tensor_summary(v, ellipsis)
        elif isinstance(v, (ADTValue, RefCell)):
            text = _nested(v, max(8, width), ellipsis)
        else:
            kind = type(v).__name__
            if kind == "VMClosure":
                captured = len(getattr(v, "captured", ()))
                text = f"@{v.name}" + (ngettext(" ({n} captured)", " ({n} captured)",
                                                    captured).format(n=captured)
                                           if captured else "")
            elif kind == "StorageObject":
                size = getattr(v, "size", "?")
                text = (_("{n} bytes (released)") if getattr(v, "released", False)
                        else _("{n} bytes")).format(n=size)
            elif kind == "TensorPlaceholder":
                text = _("uninitialized")
            elif hasattr(v, "name"):
                text = f"@{v.name}"
            else:
                text = repr(v)
    except Exception as exc:  # describe rather than fail on a value we do not know
        text = f"<{type(v).__name__}: {type(exc).__name__}>"
    text = " ".join(text.split())
    if len(text) > width:
        text = text[:max(0, width - len(ellipsis))] + ellipsis
    return text


def _nested(v, budget: int, ellipsis: str) -> str:
    """ADT values and references, nested while the character budget lasts."""
    out: list[str] = []
    used = 0
    # An explicit stack keeps long lists from recursing deeply: items are values or text.
    stack: list = [v]
    path: set = set()  # the reference cells being shown, as in format_value
    while stack:
        item = stack.pop()
        if isinstance(item, _Leave):
            path.discard(id(item.cell))
            continue
        if used >= budget:
            out.append(ellipsis)
            break
        if isinstance(item, str):
            piece = item
        elif isinstance(item, ADTValue):
            if item.con is not None and not item.fields:
                piece = item.con
            else:
                piece = f"{item.con}(" if item.con is not None else "("
                tail = ",)" if item.con is None and len(item.fields) == 1 else ")"
                parts: list = []
                for k, f in enumerate(item.fields):
                    if k:
                        parts.append(", ")
                    parts.append(f)
                parts.append(tail)
                stack.extend(reversed(parts))
        elif isinstance(item, RefCell):
            if id(item) in path:
                piece = CYCLE
            else:
                path.add(id(item))
                piece = "ref("
                stack.extend([_Leave(item), ")", item.value])
        elif isinstance(item, (np.ndarray, np.generic)):
            piece = tensor_summary(item, ellipsis)
        else:
            piece = value_summary(item, budget, ellipsis)
        out.append(piece)
        used += len(piece)
    return "".join(out)


def _json_scalar(x):
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        f = float(x)
        if f != f or f in (float("inf"), float("-inf")):
            return str(f)  # JSON has no NaN or infinity
        return f
    return x


def to_json(v, _path: frozenset = frozenset()):
    """The `--json` form of the CLI contract; a reference cell met again inside its own
    contents is `{"cycle": "ref"}`."""
    if isinstance(v, np.generic):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            data = _json_scalar(v[()])
        else:
            data = np.vectorize(_json_scalar, otypes=[object])(v).tolist() if v.size else v.tolist()
        return {"dtype": str(v.dtype), "shape": list(v.shape), "data": data}
    if isinstance(v, ADTValue):
        fields = [to_json(f, _path) for f in v.fields]
        if v.con is None:
            return {"tuple": fields}
        return {"con": v.con, "fields": fields}
    if isinstance(v, RefCell):
        if id(v) in _path:
            return {"cycle": "ref"}
        return {"ref": to_json(v.value, _path | {id(v)})}
    name = getattr(v, "name", None)
    if name is not None:
        return {"closure": name}
    kind = type(v).__name__
    # a saved executable may return what no kernel wrote yet, or a storage buffer
    if kind == "TensorPlaceholder":
        return {"uninitialized": {"dtype": str(v.dtype), "shape": [int(d) for d in v.shape]}}
    if kind == "StorageObject":
        return {"storage": {"bytes": int(v.size)}}
    return {"opaque": kind}


def values_equal(a, b, _assumed: set | None = None) -> bool:
    """Deep equality of runtime values (tensors by dtype, shape and contents; NaN equals NaN).
    Cyclic values through reference cells compare as the infinite values they unfold to:
    a pair of cells met again while comparing them is assumed equal (bisimulation)."""
    if isinstance(a, np.generic):
        a = np.asarray(a)
    if isinstance(b, np.generic):
        b = np.asarray(b)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "f":
            return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, ADTValue) and isinstance(b, ADTValue):
        return (a.tag == b.tag and a.con == b.con and len(a.fields) == len(b.fields)
                and all(values_equal(x, y, _assumed) for x, y in zip(a.fields, b.fields)))
    if isinstance(a, RefCell) and isinstance(b, RefCell):
        pair = (id(a), id(b))
        if _assumed is None:
            _assumed = set()
        elif pair in _assumed:
            return True
        _assumed.add(pair)
        return values_equal(a.value, b.value, _assumed)
    na, nb = getattr(a, "name", None), getattr(b, "name", None)
    if na is not None and nb is not None:
        return na == nb
    return False


def _copy_value(root, memo: dict):
    """A copy of an argument value with fresh reference cells (everything else is immutable).

    Iterative (a list argument may be a million cells long); sharing is kept, and a cycle
    through a reference cell ends at that cell's copy."""
    nodes = (ADTValue, RefCell)
    if not isinstance(root, nodes):
        return root
    stack = [(root, False)]
    entered: set = set()
    while stack:
        v, children_done = stack.pop()
        if not children_done:
            if id(v) in memo or id(v) in entered:
                continue
            entered.add(id(v))
            stack.append((v, True))
            if isinstance(v, RefCell):
                memo[id(v)] = RefCell(None)  # made before its contents: cycles end here
                kids = (v.value,)
            else:
                kids = v.fields
            stack.extend((k, False) for k in reversed(kids) if isinstance(k, nodes))
        elif isinstance(v, RefCell):
            inner = v.value
            memo[id(v)].value = memo.get(id(inner), inner) if isinstance(inner, nodes) else inner
        else:
            fields = tuple(memo.get(id(f), f) if isinstance(f, nodes) else f for f in v.fields)
            same = all(a is b for a, b in zip(fields, v.fields))
            memo[id(v)] = v if same else ADTValue(v.tag, v.con, fields)
    return memo[id(root)]


def copy_values(values) -> list:
    """Fresh copies of values for another run (arguments): new reference cells, the rest
    shared, since reference cells are the only mutable values."""
    memo: dict = {}
    return [_copy_value(v, memo) for v in values]
