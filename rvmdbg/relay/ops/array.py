"""Whole-array operators TVM's ONNX frontend emitted: ndarray_size (the element count as a 0-d
tensor; NdarraySizeAttrs: dtype; pattern injective) and trilu (the upper or lower triangle of
the last two axes, the rest zero; TriluAttrs: upper; pattern elemwise).

topi's semantics: ndarray_size is the product of the dims cast to dtype (TVM's Python API
defaults it to int32); trilu keeps element (..., row, col) where `row <= col - k` (upper) or
`row >= col - k` (lower), k a 0-d integer tensor cast to int32.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import AttrSpec, KernelError, OpTypeError, is_int, register
from rvmdbg.relay.types import TensorType


def _ndarray_size_rel(name, args, attrs):
    return TensorType((), attrs["dtype"])


def _ndarray_size_kernel(args, attrs):
    return np.array(int(args[0].size), dtype=np.int64).astype(attrs["dtype"])


register("ndarray_size", 1, _ndarray_size_rel, _ndarray_size_kernel, "injective",
         attrs=[AttrSpec("dtype", "dtype", "int32")],
         doc="ndarray_size(data, dtype=\"int32\"): the number of elements, a 0-d tensor")


def _trilu_rel(name, args, attrs):
    data, k = args
    if k.shape != ():
        raise OpTypeError(_("{op}: k must be a 0-d tensor, got {t}").format(op=name, t=k))
    if not is_int(k.dtype):
        raise OpTypeError(_("{op}: k must be an integer tensor, got {t}").format(op=name, t=k))
    if len(data.shape) < 2:
        raise OpTypeError(_("{op}: needs a tensor of rank 2 or more, got {t}").format(
                op=name, t=data))
    return TensorType(data.shape, data.dtype)


def _trilu_kernel(args, attrs):
    data, k = args
    if data.ndim < 2:
        raise KernelError(_("trilu: needs a tensor of rank 2 or more"))
    shift = int(np.asarray(k).astype(np.int64).astype(np.int32))  # topi casts k to int32
    rows = np.arange(data.shape[-2])[:, None]
    cols = np.arange(data.shape[-1])[None, :]
    keep = rows <= cols - shift if attrs["upper"] else rows >= cols - shift
    return np.where(keep, data, np.zeros((), data.dtype)).astype(data.dtype)


register("trilu", 2, _trilu_rel, _trilu_kernel, "elemwise",
         attrs=[AttrSpec("upper", "bool", True)],
         doc="trilu(data, k, upper=True): the upper (or lower) triangle from diagonal k")
