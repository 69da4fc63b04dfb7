"""Scattering: scatter_elements (TVM's ScatterElementsAttrs: axis, reduction) and scatter_nd
(ScatterNDAttrs: mode), both opaque (topi's extern kernels) and both returning a copy of data
with the updates applied.

topi's semantics, reproduced: scatter_elements walks the indices with a flat offset into data
(a negative index counts from the end of the axis) and applies, in order along the axis,
update, add, mul, mean (`(old + new) / 2`, truncating for integers), min or max (ordered
selects: a NaN already held is replaced, a NaN update is kept only by update/add/mul/mean);
scatter_nd reads indices of shape (M, Y_0, ..., Y_{K-1}) and updates of shape
(Y_0, ..., Y_{K-1}, X_M, ..., X_{N-1}), one index tuple at a time in row-major order (a
repeated index: later writes win, or accumulate), negative indices not wrapped. An index out
of range is a run-time error (KernelError) instead of topi's unchecked write.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, is_int, known_prod, norm_axis,
    register, runtime_type_error, unify_dim,
)
from rvmdbg.relay.types import TensorType

REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")


def _need_indices(name, indices):
    if not is_int(indices.dtype):
        raise OpTypeError(_("{op}: indices must be a tensor of integers, got {t}").format(
                op=name, t=indices))


def _combine(reduction: str, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """One step of topi's reduce_func on gathered values (in the data's dtype)."""
    if reduction == "update":
        return new
    if old.dtype == BOOL:  # TVM's 1-bit bool: add wraps (xor), mul is and
        o, n = old.astype(np.uint8), new.astype(np.uint8)
        if reduction == "add":
            return (o ^ n) != 0
        if reduction == "mul":
            return (o & n) != 0
        if reduction == "mean":
            return ((o + n) // 2) != 0
        return (o | n if reduction == "max" else o & n) != 0
    with np.errstate(all="ignore"):
        if reduction == "add":
            return old + new
        if reduction == "mul":
            return old * new
        if reduction == "mean":
            if old.dtype.kind in "iu":
                s = old + new
                return np.where(s < 0, -((-s) // 2), s // 2).astype(old.dtype)
            return (old + new) / old.dtype.type(2)
        if reduction == "max":  # tir.max: old > new ? old : new
            return np.where(old > new, old, new)
        return np.where(old < new, old, new)


# ---------------------------------------------------------------------------------------------
# scatter_elements


def _scatter_elements_rel(name, args, attrs):
    # TVM's ScatterElementsRel checks only that indices are integers; the rest shows at run time
    data, indices, updates = args
    _need_indices(name, indices)
    if attrs["reduction"] not in REDUCTIONS:
        raise OpTypeError(_("{op}: reduction must be one of {choices}, got {value}").format(
                op=name, choices=", ".join(REDUCTIONS), value=attrs["reduction"]))
    return TensorType(data.shape, data.dtype)


def _scatter_elements_kernel(args, attrs):
    data, indices, updates = args
    name = "scatter_elements"
    if indices.shape != updates.shape or indices.ndim != data.ndim or data.ndim == 0:
        raise KernelError(_("{op}: indices {a} and updates {b} must have one shape, of data's "
                            "rank {rank}").format(op=name, a=indices.shape, b=updates.shape,
                                                  rank=data.ndim))
    if updates.dtype != data.dtype:
        raise KernelError(_("{op}: updates ({b}) must have data's dtype {a}").format(
                op=name, a=data.dtype, b=updates.dtype))
    out = data.copy()
    if indices.size == 0:
        return out
    axis = runtime_type_error(norm_axis)(name, attrs["axis"], data.ndim)
    size = data.shape[axis]
    # topi's flat offsets: the indices' before/after-axis positions over data's strides
    after = known_prod(data.shape[axis + 1:])
    before_stride = size * after
    k_len = indices.shape[axis]
    i_before = known_prod(indices.shape[:axis])
    i_after = known_prod(indices.shape[axis + 1:])
    idx = indices.reshape(i_before, k_len, i_after).astype(np.int64)
    upd = updates.reshape(i_before, k_len, i_after)
    bad = (idx < -size) | (idx >= size)
    if np.any(bad):
        raise KernelError(_("{op}: index {v} is out of range for axis {axis} of size {n}").format(
                op=name, v=int(idx[bad][0]), axis=axis, n=size))
    idx = np.where(idx < 0, idx + size, idx)
    base = (np.arange(i_before)[:, None] * before_stride + np.arange(i_after)[None, :])
    flat = out.reshape(-1)
    for k in range(k_len):
        pos = base + idx[:, k, :] * after
        if np.any(pos >= flat.size):
            raise KernelError(_("{op}: indices {a} do not fit data {b} outside axis "
                                "{axis}").format(op=name, a=indices.shape, b=data.shape,
                                                 axis=axis))
        pos = pos.reshape(-1)
        vals = upd[:, k, :].reshape(-1)
        if attrs["reduction"] == "update":
            flat[pos] = vals
        else:
            for p, v in zip(pos, vals):  # one at a time: repeated positions accumulate
                flat[p] = _combine(attrs["reduction"], flat[p:p + 1], np.asarray([v]))[0]
    return as_result(out, data.dtype)


register("scatter_elements", 3, _scatter_elements_rel, _scatter_elements_kernel, "opaque",
         attrs=[AttrSpec("axis", "int", 0), AttrSpec("reduction", "str", "update")],
         doc="scatter_elements(data, indices, updates, axis=0, reduction=\"update\"): data "
             "with updates written (or reduced) at indices along axis")


# ---------------------------------------------------------------------------------------------
# scatter_nd


def _scatter_nd_rel(name, args, attrs):
    data, indices, updates = args
    _need_indices(name, indices)
    if attrs["mode"] not in REDUCTIONS or attrs["mode"] == "mean":
        raise OpTypeError(_("{op}: mode must be one of {choices}, got {value}").format(
                op=name, choices="update, add, mul, min, max", value=attrs["mode"]))
    if not indices.shape:
        raise OpTypeError(_("{op}: indices must have rank 1 or more, got {t}").format(
                op=name, t=indices))
    m = indices.shape[0]
    if m is None:
        raise OpTypeError(_("{op}: needs a static shape for the first axis of indices, got "
                            "{t}").format(op=name, t=indices))
    k = len(indices.shape) - 1
    n = len(data.shape)
    if m > n:
        raise OpTypeError(_("{op}: indices {indices} index {m} axes, data {data} has only "
                            "{n}").format(op=name, indices=indices, m=m, data=data, n=n))
    if len(updates.shape) != k + n - m:
        raise OpTypeError(_("{op}: updates {updates} must have rank {rank} (indices {indices}, "
                            "data {data})").format(op=name, updates=updates, rank=k + n - m,
                                                   indices=indices, data=data))
    if updates.dtype != data.dtype:
        raise OpTypeError(_("{op}: updates {updates} must have data's dtype {dtype}").format(
                op=name, updates=updates, dtype=data.dtype))
    for i in range(k):
        unify_dim(name, indices.shape[i + 1], updates.shape[i],
                  _("indices {indices} and updates {updates} differ on axis {i}").format(
                      indices=indices, updates=updates, i=i))
    for i in range(m, n):
        unify_dim(name, updates.shape[i - m + k], data.shape[i],
                  _("updates {updates} and data {data} differ on data's axis {i}").format(
                      updates=updates, data=data, i=i))
    return TensorType(data.shape, data.dtype)


def _scatter_nd_kernel(args, attrs):
    data, indices, updates = args
    name = "scatter_nd"
    out = data.copy()
    m = indices.shape[0]
    tuples = indices.reshape(m, -1).astype(np.int64)
    tail = data.shape[m:]
    upd = updates.reshape((tuples.shape[1],) + tail)
    for d in range(m):
        bad = (tuples[d] < 0) | (tuples[d] >= data.shape[d])
        if np.any(bad):
            raise KernelError(_("{op}: index {v} is out of range for axis {axis} of size "
                                "{n}").format(op=name, v=int(tuples[d][bad][0]), axis=d,
                                              n=data.shape[d]))
    mode = attrs["mode"]
    for i in range(tuples.shape[1]):  # in order: a repeated index is written again
        at = tuple(int(v) for v in tuples[:, i])
        out[at] = _combine(mode, np.asarray(out[at]), upd[i])
    return as_result(out, data.dtype)


register("scatter_nd", 3, _scatter_nd_rel, _scatter_nd_kernel, "opaque",
         attrs=[AttrSpec("mode", "str", "update")],
         doc="scatter_nd(data, indices, updates, mode=\"update\"): data with updates written "
             "(or reduced) at the index tuples indices[:, y]")
