"""Register values as DAP variables: a reference per expandable value, children on demand.

A value shows its one-line text and type; what can be opened gets a `variablesReference`:
ADT values and tuples open to their fields, closures to their captured values, reference
cells to their content (`heap.children` names them), and a tensor with dimensions to a
summary first (shape, dtype, min, max, mean) and then its slices along the first axis (`[0]`,
`[1]`, ...: each a tensor of one dimension fewer, opened the same way), paged with the
request's `start` and `count`. References are valid until the next stop (`clear()`).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.debug.heap import children, is_heap_object, value_text, value_type

VALUE_WIDTH = 120          # characters of a value's one-line text
MAX_CHILDREN = 1000        # children sent at most when the client does not page
SUMMARY_LIMIT = 10_000_000  # elements up to which min, max and mean are computed


class VariableStore:
    """Variable references for one stop: `reference(producer)` hands out a number whose
    children `producer(start, count, filter)` makes; `variable(name, value)` the DAP form."""

    def __init__(self):
        self._producers: dict[int, object] = {}
        self._info: dict[int, dict] = {}
        self._next = 1

    def clear(self) -> None:
        self._producers.clear()
        self._info.clear()

    def reference(self, producer, **info) -> int:
        ref = self._next
        self._next += 1
        self._producers[ref] = producer
        self._info[ref] = info
        return ref

    def info(self, ref: int) -> dict | None:
        """What the reference was made with (a scope's kind and frame), None if unknown."""
        return self._info.get(ref)

    def children(self, ref: int, start: int = 0, count: int = 0, which: str | None = None):
        producer = self._producers.get(ref)
        if producer is None:
            raise KeyError(ref)
        return producer(start, count, which)

    def variable(self, name: str, value, evaluate_name: str | None = None) -> dict:
        """The DAP variable for a register value (or a field, a slice, a summary line)."""
        out = {"name": name, "value": value_text(value, VALUE_WIDTH),
               "type": value_type(value), "variablesReference": 0}
        if value is None:
            out["value"] = "(empty)"
        if evaluate_name is not None:
            out["evaluateName"] = evaluate_name
        if isinstance(value, np.ndarray) and value.ndim > 0:
            # the summary is computed when the tensor is opened, not at every stop
            out["variablesReference"] = self.reference(
                lambda start, count, which: self._tensor_children(value, start, count, which))
            out["namedVariables"] = 6 if _has_statistics(value) else 3
            out["indexedVariables"] = int(value.shape[0])
        elif is_heap_object(value):
            kids = children(value)
            if kids:
                out["variablesReference"] = self.reference(
                    lambda start, count, which: [self.variable(label, v) for label, v in
                                                 _window(kids, start, count)])
                out["namedVariables"] = len(kids)
        return out

    def _tensor_children(self, a: np.ndarray, start: int, count: int, which):
        out = []
        if which in (None, "named"):
            out.extend({"name": k, "value": v, "variablesReference": 0,
                        "presentationHint": {"kind": "property"}} for k, v in _summary(a))
        if which in (None, "indexed"):
            n = int(a.shape[0])
            lo = max(0, start)
            hi = min(n, lo + MAX_CHILDREN) if count <= 0 else min(n, lo + count)
            out.extend(self.variable(f"[{i}]", a[i]) for i in range(lo, hi))
            if count <= 0 and hi < n:
                out.append({"name": "...", "value": f"{n - hi} more slices (page with start, "
                            f"count)", "variablesReference": 0})
        return out


def _window(items: list, start: int, count: int) -> list:
    lo = max(0, start)
    hi = len(items) if count <= 0 else min(len(items), lo + count)
    return items[lo:min(hi, lo + MAX_CHILDREN)]


def _has_statistics(a: np.ndarray) -> bool:
    return 0 < a.size <= SUMMARY_LIMIT and (np.issubdtype(a.dtype, np.number)
                                            or a.dtype == np.bool_)


def _summary(a: np.ndarray) -> list[tuple[str, str]]:
    """(name, text) lines shown before a tensor's slices."""
    out = [("shape", str(list(a.shape))), ("dtype", str(a.dtype)), ("size", str(a.size))]
    if _has_statistics(a):
        with np.errstate(all="ignore"):
            data = a.astype(np.float64) if a.dtype == np.bool_ else a
            out.append(("min", value_text(np.asarray(data.min()), 40)))
            out.append(("max", value_text(np.asarray(data.max()), 40)))
            out.append(("mean", f"{float(np.mean(data, dtype=np.float64)):.6g}"))
    return out


__all__ = ["VariableStore"]
