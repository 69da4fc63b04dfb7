"""One-line descriptions of register values for the screen: a type column and a value summary.

Tensors show dtype and shape and their first few values; ADT values show constructors nested
to a budget of characters (`Cons(1, Cons(2, …))`); closures name their function. Every
function here takes any object a register may hold and never raises: a value the VM made up
is described by its Python type rather than failing the screen.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.values import ADTValue, RefCell, format_value

_FEW = 4  # tensor elements shown in a summary


def _scalar(a) -> str:
    try:
        return format_value(np.asarray(a))
    except Exception:
        return repr(a)


def value_type(v, constructor_types: dict[str, str] | None = None) -> str:
    """The type column: `int32`, `float32[2, 3]`, `List`, `tuple/2`, `closure`, `ref`."""
    if v is None:
        return ""
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return str(v.dtype)
        return f"{v.dtype}[{', '.join(str(d) for d in v.shape)}]"
    if isinstance(v, ADTValue):
        if v.con is None:
            return f"tuple/{len(v.fields)}"
        if constructor_types and v.con in constructor_types:
            return constructor_types[v.con]
        return v.con
    if isinstance(v, RefCell):
        return "ref"
    kind = type(v).__name__
    if kind == "VMClosure" or (hasattr(v, "name") and hasattr(v, "captured")):
        return "closure"
    if kind == "StorageObject":
        return "storage"
    if kind == "TensorPlaceholder":
        shape = getattr(v, "shape", ())
        return f"{getattr(v, 'dtype', '?')}[{', '.join(str(d) for d in shape)}]"
    return kind


def tensor_summary(a: np.ndarray, ellipsis: str = "…") -> str:
    if a.ndim == 0:
        return _scalar(a)
    flat = a.reshape(-1)
    items = [_scalar(x) for x in flat[:_FEW]]
    more = f", {ellipsis}" if flat.size > _FEW else ""
    return f"[{', '.join(items)}{more}]"


def value_summary(v, width: int = 60, ellipsis: str = "…") -> str:
    """A one-line summary of at most about `width` characters."""
    if v is None:
        return "-"
    try:
        if isinstance(v, np.ndarray):
            text = tensor_summary(v, ellipsis)
        elif isinstance(v, (ADTValue, RefCell)):
            text = _nested(v, max(8, width), ellipsis)
        else:
            kind = type(v).__name__
            if kind == "VMClosure":
                captured = len(getattr(v, "captured", ()))
                text = f"@{v.name}" + (f" ({captured} captured)" if captured else "")
            elif kind == "StorageObject":
                text = f"{getattr(v, 'size', '?')} bytes" + (" (released)" if getattr(v, "released", False) else "")
            elif kind == "TensorPlaceholder":
                text = "uninitialized"
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
    while stack:
        item = stack.pop()
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
            piece = "ref("
            stack.extend([")", item.value])
        elif isinstance(item, np.ndarray):
            piece = tensor_summary(item, ellipsis)
        else:
            piece = value_summary(item, budget, ellipsis)
        out.append(piece)
        used += len(piece)
    return "".join(out)


def constructor_types(module) -> dict[str, str]:
    """Constructor name -> its type's name, from a (typed) module; empty without one."""
    if module is None:
        return {}
    return {name: con.type_name for name, con in getattr(module, "constructors", {}).items()}


def children_of(v) -> list[tuple[str, object]]:
    """The (label, value) pairs the heap tree shows under a value."""
    if isinstance(v, ADTValue):
        return [(f"[{i}]", f) for i, f in enumerate(v.fields)]
    if isinstance(v, RefCell):
        return [("value", v.value)]
    if type(v).__name__ == "VMClosure":
        return [(f"captured[{i}]", f) for i, f in enumerate(getattr(v, "captured", ()))]
    return []


def is_heap_object(v) -> bool:
    """A value the heap tree expands: ADT values, tuples, references and closures."""
    return isinstance(v, (ADTValue, RefCell)) or type(v).__name__ == "VMClosure"


__all__ = ["value_type", "value_summary", "tensor_summary", "constructor_types", "children_of",
           "is_heap_object"]
