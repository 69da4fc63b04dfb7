"""One-line descriptions of register values for the screen: a type column and a value summary.

The value column is `rvmdbg.values.value_summary`, the one formatter the batch commands use
too (re-exported here): tensors show their first values at their dtype's precision and, when
big, min / max / mean and NaN/Inf counts; ADT values show constructors nested to a budget of
characters (`Cons(1, Cons(2, …))`); closures name their function. Every function here takes
any object a register may hold and never raises.
"""
from __future__ import annotations

from itertools import compress
from operator import not_

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.scalars import SCALAR_TYPES
from rvmdbg.values import ADTValue, RefCell, tensor_summary, value_summary


def value_type(v, constructor_types: dict[str, str] | None = None) -> str:
    """The type column: `int32`, `float32[2, 3]`, `List`, `tuple/2`, `closure`, `ref`."""
    if v is None:
        return ""
    if isinstance(v, (np.ndarray, np.generic)):
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
        return _("closure")
    if kind == "StorageObject":
        return _("storage")
    if kind == "TensorPlaceholder":
        shape = getattr(v, "shape", ())
        return f"{getattr(v, 'dtype', '?')}[{', '.join(str(d) for d in shape)}]"
    return kind


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


_NEVER_HEAP = frozenset({type(None), np.ndarray}) | SCALAR_TYPES


def heap_registers(regs: list) -> list[int]:
    """The registers holding heap objects, in order. Tensors and empty registers, nearly all
    of a big register file, are ruled out by their type at C speed, so a 20,000-register
    frame is not walked in Python."""
    maybe = compress(range(len(regs)), map(not_, map(_NEVER_HEAP.__contains__, map(type, regs))))
    return [r for r in maybe if is_heap_object(regs[r])]


__all__ = ["value_type", "value_summary", "tensor_summary", "constructor_types", "children_of",
           "is_heap_object", "heap_registers"]
