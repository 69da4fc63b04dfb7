"""Runtime values shared by the reference interpreter and the VM, and their two printed forms.

- a tensor is a NumPy array (0-d for scalars), never mutated once written;
- `ADTValue(tag, con, fields)`: a constructed value; a tuple is `ADTValue(0, None, fields)`;
- a closure is any object with a `name` attribute (the interpreter and VM each have their own);
- `RefCell(value)`: a mutable reference cell.

`format_value` gives the human form of the CLI contract, `to_json` its `--json` form.
"""
from __future__ import annotations

import numpy as np


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


def _scalar_text(a: np.ndarray) -> str:
    v = a.item()
    dt = str(a.dtype)
    if dt.startswith("float") and not np.isfinite(v):
        return str(v)  # inf, -inf, nan: Relay has no literal for them
    if dt == "bool":
        return "True" if v else "False"
    if dt.startswith("float"):
        txt = repr(float(v)) if dt != "float32" else repr(float(np.float32(v)))
        if txt.endswith(".0"):
            txt = txt[:-2]
        return txt + ("f" if dt == "float32" else "f" + dt[5:])
    suffix = "" if dt == "int32" else {"int64": "i64", "int16": "i16", "int8": "i8"}.get(dt, "")
    return str(int(v)) + suffix


def format_value(v) -> str:
    """The human (Relay-like) form: `55`, `3f`, `(6, 8)`, `Cons(3, Nil)`, arrays as NumPy prints.

    Iterative, and linear in the size of the value: lists of a million cells print fine."""
    parts: list = []
    todo: list = [v]  # values to print, or str pieces to emit as they are
    while todo:
        x = todo.pop()
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, np.ndarray):
            parts.append(_scalar_text(x) if x.ndim == 0
                         else f"{np.array2string(x, separator=', ')} ({x.dtype})")
        elif isinstance(x, np.generic):
            parts.append(_scalar_text(np.asarray(x)))
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
            parts.append("ref(")
            todo.append(")")
            todo.append(x.value)
        elif getattr(x, "name", None) is not None:
            parts.append(f"<closure @{x.name}>")
        else:
            parts.append(repr(x))
    return "".join(parts)


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


def to_json(v):
    """The `--json` form of the CLI contract."""
    if isinstance(v, np.generic):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            data = _json_scalar(v[()])
        else:
            data = np.vectorize(_json_scalar, otypes=[object])(v).tolist() if v.size else v.tolist()
        return {"dtype": str(v.dtype), "shape": list(v.shape), "data": data}
    if isinstance(v, ADTValue):
        fields = [to_json(f) for f in v.fields]
        if v.con is None:
            return {"tuple": fields}
        return {"con": v.con, "fields": fields}
    if isinstance(v, RefCell):
        return {"ref": to_json(v.value)}
    name = getattr(v, "name", None)
    if name is not None:
        return {"closure": name}
    raise TypeError(f"no JSON form for {type(v).__name__}")


def values_equal(a, b) -> bool:
    """Deep equality of runtime values (tensors by dtype, shape and contents; NaN equals NaN)."""
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
                and all(values_equal(x, y) for x, y in zip(a.fields, b.fields)))
    if isinstance(a, RefCell) and isinstance(b, RefCell):
        return values_equal(a.value, b.value)
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
