"""Operators whose results are sized by the data: argwhere (output `(?, rank)`, sized at run
time by a data-dependent shape function, as TVM's) and unique (TVM's padded form: every output
as long as the input, with `num_unique` saying how much of it is meaningful).

topi's semantics: argwhere lists the coordinates of the elements with `c != 0` (a float NaN is
false: TVM's ordered compare) in row-major order, as int32. unique sorts the 1-d data stably,
marks where adjacent sorted values differ, and gives the unique values (ascending, or with
`sorted=False` in order of first occurrence), each one's first index in the data, the inverse
indices (each element's position among the unique values), `num_unique` and, with
`return_counts`, the counts. topi leaves the padding of the unique values and counts
undefined; rvmdbg writes 0 there (docs/differences.md), and the indices' padding is the data's
length, as topi writes it.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    AttrSpec, OpTypeError, as_result, register,
)
from rvmdbg.relay.ops.elemwise import _nonzero
from rvmdbg.relay.ops.index import stable_argsort
from rvmdbg.relay.types import TensorType, TupleType

# ---------------------------------------------------------------------------------------------
# argwhere


def _argwhere_rel(name, args, attrs):
    (cond,) = args
    return TensorType((None, len(cond.shape)), "int32")


def _argwhere_shape_func(inputs, attrs):
    (cond,) = inputs
    return [(int(np.count_nonzero(_nonzero(cond))), cond.ndim)]


def _argwhere_kernel(args, attrs):
    (cond,) = args
    return as_result(np.argwhere(_nonzero(cond)).reshape(-1, cond.ndim), np.dtype("int32"))


register("argwhere", 1, _argwhere_rel, _argwhere_kernel, "opaque",
         shape_data=(True,), shape_func=_argwhere_shape_func,
         doc="argwhere(condition): the coordinates of the non-zero elements, (?, rank) int32")


# ---------------------------------------------------------------------------------------------
# unique


def _unique_rel(name, args, attrs):
    (data,) = args
    if len(data.shape) != 1:
        raise OpTypeError(_("{op}: input must be a 1-d tensor, got {t}").format(op=name, t=data))
    fields = [TensorType(data.shape, data.dtype), TensorType(data.shape, "int32"),
              TensorType(data.shape, "int32"), TensorType((1,), "int32")]
    if attrs["return_counts"]:
        fields.append(TensorType(data.shape, "int32"))
    return TupleType(tuple(fields))


def _unique_kernel(args, attrs):
    (data,) = args
    n = data.shape[0]
    i32 = np.dtype("int32")
    order = stable_argsort(data, 0, True)
    ordered = data[order]
    with np.errstate(invalid="ignore"):
        starts = np.concatenate([[n > 0], ordered[1:] != ordered[:-1]]) if n else np.zeros(0, bool)
    group = np.cumsum(starts) - 1  # each sorted element's unique slot (ascending)
    count = int(starts.sum())
    first = order[starts]  # first index in data of each unique value, ascending by value
    if attrs["sorted"]:
        slot_of_group = np.arange(count)
    else:  # ranked by first occurrence
        slot_of_group = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    values = np.zeros(n, data.dtype)
    indices = np.full(n, n, i32)
    counts = np.zeros(n, i32)
    inverse = np.zeros(n, i32)
    if count:
        values[slot_of_group] = ordered[starts]
        indices[:count] = np.sort(first) if not attrs["sorted"] else first
        inverse[order] = slot_of_group[group]
        counts[slot_of_group] = np.diff(np.append(np.flatnonzero(starts), n))
    out = [as_result(values, data.dtype), indices, inverse, np.array([count], i32)]
    if attrs["return_counts"]:
        out.append(counts)
    return tuple(out)


register("unique", 1, _unique_rel, _unique_kernel, "opaque",
         attrs=[AttrSpec("sorted", "bool", True), AttrSpec("return_counts", "bool", False)],
         doc="unique(data, sorted=True, return_counts=False): (unique values, first indices, "
             "inverse indices, [num_unique], counts?), padded to the data's length")

