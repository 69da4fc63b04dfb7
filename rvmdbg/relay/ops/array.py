"""Whole-array operators TVM's ONNX frontend emitted: ndarray_size (the element count as a 0-d
tensor; NdarraySizeAttrs: dtype; pattern injective), trilu (the upper or lower triangle of
the last two axes, the rest zero; TriluAttrs: upper; pattern elemwise) and reverse_sequence
(below).

topi's semantics: ndarray_size is the product of the dims cast to dtype (TVM's Python API
defaults it to int32); trilu keeps element (..., row, col) where `row <= col - k` (upper) or
`row >= col - k` (lower), k a 0-d integer tensor cast to int32.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    AttrSpec, KernelError, OpTypeError, is_int, norm_axis, register, unify_dim,
)
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


# reverse_sequence (ReverseSequenceAttrs: seq_axis, batch_axis; pattern injective): topi
# reverses, in each batch b, the first seq_lengths[b] elements along seq_axis (all of them when
# the length exceeds the axis, none when it is 1 or less)


def _reverse_sequence_rel(name, args, attrs):
    data, lengths = args
    ndim = len(data.shape)
    if len(lengths.shape) != 1 or not lengths.dtype.startswith("int"):
        raise OpTypeError(_("{op}: seq_lengths must be a 1-d integer tensor, got {t}").format(
                op=name, t=lengths))
    batch = norm_axis(name, attrs["batch_axis"], ndim, "batch_axis")
    norm_axis(name, attrs["seq_axis"], ndim, "seq_axis")
    unify_dim(name, lengths.shape[0], data.shape[batch],
              _("seq_lengths {t} must have one length per batch of data {data}").format(
                  t=lengths, data=data))
    return TensorType(data.shape, data.dtype)


def _reverse_sequence_kernel(args, attrs):
    data, lengths = args
    batch_axis = attrs["batch_axis"] % data.ndim
    seq_axis = attrs["seq_axis"] % data.ndim
    size = data.shape[seq_axis]
    idx = np.arange(size)
    out = np.empty_like(data)
    for b in range(data.shape[batch_axis]):
        n = int(lengths[b])
        keep = min(n, size)
        src = idx if n <= 1 else np.where(idx < keep, keep - 1 - idx, idx)
        part = np.take(np.take(data, [b], axis=batch_axis), src, axis=seq_axis)
        index = [slice(None)] * data.ndim
        index[batch_axis] = slice(b, b + 1)
        out[tuple(index)] = part
    return out


register("reverse_sequence", 2, _reverse_sequence_rel, _reverse_sequence_kernel, "injective",
         attrs=[AttrSpec("seq_axis", "int", 1), AttrSpec("batch_axis", "int", 0)],
         doc="reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0): reverse each "
             "batch's first seq_lengths[b] elements along seq_axis")
