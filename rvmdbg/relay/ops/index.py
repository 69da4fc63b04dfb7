"""Indexing, sorting and scans: gather, gather_nd, cumsum, cumprod, sort, argsort, topk.

Sorts are stable, as TVM's CPU sorts are: equal values keep the order of their indices, in
descending order too. TVM's relations take any dtype, but its CPU sorts are run-time functions
(tvm.contrib.sort.sort, .argsort, .topk) with a fixed list of dtypes: the others stop when the
kernel runs, with that function's message. A bool cumsum adds in TVM's 1-bit bool: a running
parity. Indices out of range are a run-time error (KernelError) instead of
topi's unchecked read.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, bool_parity, fmt_shape, is_int,
    known_prod, norm_axis, register, tvm_cast, tvm_lowering_refuses, unify_dim,
)
from rvmdbg.relay.types import TensorType, TupleType


def _check_range(name: str, idx: np.ndarray, n: int, axis: int) -> None:
    bad = (idx < 0) | (idx >= n)
    if np.any(bad):
        v = int(np.asarray(idx)[bad].flat[0])
        raise KernelError(_("{op}: index {v} is out of range for axis {axis} of size {n}").format(
                op=name, v=v, axis=axis, n=n))


# ---------------------------------------------------------------------------------------------
# gather, gather_nd


def _gather_rel(name, args, attrs):
    data, indices = args
    if not indices.dtype.startswith("int"):
        # GatherRel: "indices of take must be tensor of integer", signed ones only
        raise OpTypeError(_("{op}: indices must be a signed integer tensor (TVM's relation "
                            "refuses others), got {t}").format(op=name, t=indices))
    ndim = len(data.shape)
    if len(indices.shape) != ndim:
        raise OpTypeError(_("{op}: indices {indices} must have the rank of data {data}").format(
                op=name, indices=indices, data=data))
    if ndim == 0:
        raise OpTypeError(_("{op}: cannot gather from a 0-d tensor").format(op=name))
    axis = norm_axis(name, attrs["axis"], ndim)
    shape = []
    for i, (d, k) in enumerate(zip(data.shape, indices.shape)):
        if i == axis:
            shape.append(k)
        else:
            shape.append(unify_dim(name, k, d, _("indices {indices} and data {data} differ on "
                                                 "axis {i}; only axis {axis} may differ").format(
                    indices=indices, data=data, i=i, axis=axis)))
    return TensorType(tuple(shape), data.dtype)


def _gather_kernel(args, attrs):
    data, indices = args
    axis = attrs["axis"] % data.ndim
    for i in range(data.ndim):
        if i != axis and data.shape[i] != indices.shape[i]:
            raise KernelError(_("gather: indices {indices_shape} and data {data_shape} differ on "
                                "axis {i} at run time").format(indices_shape=fmt_shape(indices.shape), data_shape=fmt_shape(data.shape), i=i))
    _check_range("gather", indices, data.shape[axis], axis)
    return np.take_along_axis(data, indices.astype(np.int64), axis=axis)


register("gather", 2, _gather_rel, _gather_kernel, "injective",
         attrs=[AttrSpec("axis", "int")],
         doc="gather(data, indices, axis=): out[..i..] = data[.. indices[..i..] at axis ..]")


def gather_nd_shape(name: str, data: tuple, indices: tuple, batch_dims: int,
                    index_rank) -> tuple:
    """indices is (M, Y...): the output is Y... followed by data's axes after M + batch_dims."""
    if len(indices) < 1:
        raise OpTypeError(_("{op}: indices must have rank >= 1 (its first axis indexes "
                            "data)").format(op=name))
    m = indices[0]
    if index_rank is not None:
        m = unify_dim(name, m, index_rank, _("attribute 'index_rank' {index_rank} differs from "
                                             "the first axis of indices {indices_shape}").format(
                index_rank=index_rank, indices_shape=fmt_shape(indices)))
    if m is None:
        raise OpTypeError(_("{op}: the first axis of indices {indices_shape} must be known; give "
                            "attribute 'index_rank'").format(
                op=name, indices_shape=fmt_shape(indices)))
    if batch_dims < 0:
        raise OpTypeError(_("{op}: attribute '{attr}' must be >= {minimum}, got {value}").format(
                op=name, attr="batch_dims", minimum=0, value=batch_dims))
    if m + batch_dims > len(data):
        raise OpTypeError(_("{op}: indices index {m} axes after {batch_dims} batch axes, but "
                            "data {data_shape} has only {len_data}").format(
                op=name, m=m, batch_dims=batch_dims, data_shape=fmt_shape(data),
                len_data=len(data)))
    if batch_dims > len(indices) - 1:
        raise OpTypeError(_("{op}: attribute 'batch_dims' {batch_dims} exceeds the {count} axes "
                            "of indices after the first").format(
                op=name, batch_dims=batch_dims, count=len(indices) - 1))
    for i in range(batch_dims):
        unify_dim(name, data[i], indices[i + 1], _("batch axis {i} differs between data "
                                                   "{data_shape} and indices "
                                                   "{indices_shape}").format(
                i=i, data_shape=fmt_shape(data), indices_shape=fmt_shape(indices)))
    return tuple(indices[1:]) + tuple(data[m + batch_dims:])


def _gather_nd_rel(name, args, attrs):
    # GatherNDRel checks no dtype: float indices are cast to int32 by topi (see the kernel)
    data, indices = args
    return TensorType(gather_nd_shape(name, data.shape, indices.shape, attrs["batch_dims"],
                                      attrs["index_rank"]), data.dtype)


def _nd_index(idx: np.ndarray, n: int, axis: int) -> np.ndarray:
    """One coordinate of gather_nd's indices as int64: topi casts float indices to int32,
    truncating toward zero (LLVM's fptosi); a NaN, an infinity or a value out of range is
    refused here (TVM reads outside the tensor)."""
    if idx.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            t = np.trunc(idx)
            bad = ~((t >= 0) & (t < n))
        if np.any(bad):
            v = idx[bad].flat[0]
            raise KernelError(_("{op}: index {v} is out of range for axis {axis} of size "
                                "{n}").format(op="gather_nd", v=v, axis=axis, n=n))
        return t.astype(np.int64)
    idx = idx.astype(np.int64)
    _check_range("gather_nd", idx, n, axis)
    return idx


def _gather_nd_kernel(args, attrs):
    data, indices = args
    bd = attrs["batch_dims"]
    try:
        gather_nd_shape("gather_nd", data.shape, indices.shape, bd, attrs["index_rank"])
    except OpTypeError as e:
        raise KernelError(e.message) from None
    m = indices.shape[0]
    y = indices.shape[1:]
    index = []
    for j in range(bd):  # the batch axes of data follow the first axes of Y
        index.append(np.arange(data.shape[j]).reshape(
            tuple(data.shape[j] if k == j else 1 for k in range(len(y)))))
    if indices.dtype == np.bool_:
        # topi indexes with the 1-bit value unconverted; LLVM sign-extends an i1 index, so
        # True reads before the buffer on some axes: undefined, a clear stop here
        raise KernelError(_("gather_nd: TVM's kernel indexes with bool indices unconverted "
                            "(True may read index -1, undefined); cast the indices to int32 "
                            "first"))
    for i in range(m):
        idx = _nd_index(indices[i], data.shape[bd + i], bd + i)
        index.append(idx)
    out = data[tuple(index)] if index else np.broadcast_to(data, y + data.shape)
    return as_result(np.array(out), data.dtype)


register("gather_nd", 2, _gather_nd_rel, _gather_nd_kernel, "injective",
         attrs=[AttrSpec("batch_dims", "int", 0), AttrSpec("index_rank", "int_or_none", None)],
         doc="gather_nd(data, indices): indices (M, Y...) pick data[b..., i_0, ..., i_M-1, ...]")


# ---------------------------------------------------------------------------------------------
# cumsum


def _cumsum_rel(name, args, attrs):
    # ScanopRel: any dtype; with an axis the data's shape, unchecked (topi's scan refuses an
    # axis out of range when it lowers: the kernel stops then); without one, the flattened
    # size, read from dimension 0 on (a 0-d tensor has none: the relation fails)
    (x,) = args
    dt = attrs["dtype"] or x.dtype
    if attrs["axis"] is None:
        if len(x.shape) == 0:
            raise OpTypeError(_("{op}: a 0-d tensor has no dimension 0 to flatten from (TVM's "
                                "relation reads it)").format(op=name))
        return TensorType((known_prod(x.shape),), dt)
    return TensorType(x.shape, dt)


def _lowering_axis(name: str, axis: int, ndim: int) -> int:
    """An axis only TVM's lowering or run time checks: out of range, the kernel stops."""
    if not -ndim <= axis < ndim:
        raise KernelError(_("{op}: TVM's kernel cannot use axis {axis} of a {ndim}-d tensor "
                            "(its relation does not check it)").format(
            op=name, axis=axis, ndim=ndim))
    return axis % ndim


def _scan_kernel(name, args, attrs):
    x = args[0]
    dt = np.dtype(attrs["dtype"] or x.dtype)
    axis = attrs["axis"]
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _lowering_axis(name, axis, x.ndim)
    prod = name == "cumprod"
    with np.errstate(all="ignore"):
        if dt == BOOL:  # topi's scan works on 1-bit bools (each element cast first)
            b = tvm_cast(x, BOOL)
            r = (np.cumprod(b, axis=axis, dtype=np.int64) != 0) if prod else \
                bool_parity(np.cumsum(b, axis=axis, dtype=np.int64))
        else:
            r = (np.cumprod if prod else np.cumsum)(x, axis=axis, dtype=dt)
        if attrs["exclusive"]:
            # the sum (product) of the elements before each one: 0 (1) first
            first = (np.ones_like if prod else np.zeros_like)(np.take(r, [0], axis=axis))
            r = np.concatenate([first, np.take(r, range(r.shape[axis] - 1), axis=axis)],
                               axis=axis) if r.shape[axis] else r
    return as_result(r, dt)


def _cumsum_kernel(args, attrs):
    return _scan_kernel("cumsum", args, attrs)


def _cumprod_kernel(args, attrs):
    return _scan_kernel("cumprod", args, attrs)


register("cumsum", 1, _cumsum_rel, _cumsum_kernel, "opaque",
         attrs=[AttrSpec("axis", "int_or_none", None), AttrSpec("dtype", "dtype_or_none", None),
                AttrSpec("exclusive", "bool", False)],
         doc="cumsum(x, axis=None, dtype=None, exclusive=False): running sum (over the "
             "flattened tensor when axis is None)")
register("cumprod", 1, _cumsum_rel, _cumprod_kernel, "opaque",
         attrs=[AttrSpec("axis", "int_or_none", None), AttrSpec("dtype", "dtype_or_none", None),
                AttrSpec("exclusive", "bool", False)],
         doc="cumprod(x, axis=None, dtype=None, exclusive=False): running product (over the "
             "flattened tensor when axis is None)")


# ---------------------------------------------------------------------------------------------
# sort, argsort, topk


def stable_argsort(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """Stable sort order along axis; descending keeps equal values in index order too."""
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


# what TVM v0.14's CPU sort functions take (src/runtime/contrib/sort/sort.cc, as built for
# x86): the data dtypes, each with its index dtypes; any other stops with "Unsupported
# input dtype" / "Unsupported output dtype"
_INDEX_DTYPES = frozenset(("int32", "int64", "float32", "float64"))
_ARGSORT_DTYPES = {d: _INDEX_DTYPES for d in ("float32", "float64", "float16", "int32", "int64")}
_TOPK_DTYPES = dict(_ARGSORT_DTYPES, uint8=_INDEX_DTYPES | {"uint8"},
                    int8=_INDEX_DTYPES | {"int8"})


def _runtime_sort_takes(name: str, function: str, data, index_dtypes, index_dtype=None):
    """Stop as TVM's run-time sort `function` does when it has no code for these dtypes
    (`index_dtypes`: the data dtype's index dtypes, None when it takes no such data)."""
    if index_dtypes is None:
        raise tvm_lowering_refuses(
            name, data.dtype, _("{function} stops: \"Unsupported input dtype: {dtype}\"").format(
                function=function, dtype=data.dtype.name),
            _("cast to int32, int64 or a float dtype first"))
    if index_dtype is not None and index_dtype not in index_dtypes:
        raise tvm_lowering_refuses(
            name, data.dtype, _("{function} stops: \"Unsupported output dtype: {dtype}\"").format(
                function=function, dtype=index_dtype), _("give dtype=\"int32\" or \"int64\""))


def _topk_axis_rel(name, x: TensorType, axis: int) -> int:
    # TopKRel's ICHECK: the axis in range, so rank >= 1
    if len(x.shape) == 0:
        raise OpTypeError(_("{op}: needs a tensor of rank >= 1, got {x}").format(op=name, x=x))
    return norm_axis(name, axis, len(x.shape))


def _sort_rel(name, args, attrs):
    # SortRel: the data's type, whatever the axis (the run-time function reads the shape at
    # it: out of range, or any axis of a 0-d tensor, is undefined there and stops here)
    return args[0]


def _sort_kernel(args, attrs):
    x = args[0]
    _runtime_sort_takes("sort", "tvm.contrib.sort.sort", x, _ARGSORT_DTYPES.get(x.dtype.name))
    axis = _lowering_axis("sort", attrs["axis"], x.ndim)
    order = stable_argsort(x, axis, attrs["is_ascend"])
    return np.take_along_axis(x, order, axis=axis)


register("sort", 1, _sort_rel, _sort_kernel, "opaque",
         attrs=[AttrSpec("axis", "int", -1), AttrSpec("is_ascend", "bool", True)],
         doc="sort(x, axis=-1, is_ascend=True): the values sorted along axis")


def _argsort_rel(name, args, attrs):
    (x,) = args  # ArgsortRel: the data's shape, whatever the axis (as sort's)
    return TensorType(x.shape, attrs["dtype"])


def _argsort_kernel(args, attrs):
    x = args[0]
    _runtime_sort_takes("argsort", "tvm.contrib.sort.argsort", x,
                        _ARGSORT_DTYPES.get(x.dtype.name), attrs["dtype"])
    axis = _lowering_axis("argsort", attrs["axis"], x.ndim)
    return as_result(stable_argsort(x, axis, attrs["is_ascend"]), np.dtype(attrs["dtype"]))


register("argsort", 1, _argsort_rel, _argsort_kernel, "opaque",
         attrs=[AttrSpec("axis", "int", -1), AttrSpec("is_ascend", "bool", True),
                AttrSpec("dtype", "dtype", "int32")],
         doc="argsort(x, axis=-1, is_ascend=True, dtype=\"int32\"): the indices that sort x")


def _topk_rel(name, args, attrs):
    (x,) = args
    axis = _topk_axis_rel(name, x, attrs["axis"])  # TopKRel: any dtypes
    k, d = attrs["k"], x.shape[axis]
    if k >= 1 and d is not None and k > d:
        raise OpTypeError(_("{op}: attribute 'k' {k} exceeds the size {d} of axis {axis}").format(
                op=name, k=k, d=d, axis=axis))
    shape = x.shape[:axis] + ((k if k >= 1 else d),) + x.shape[axis + 1:]
    values, indices = TensorType(shape, x.dtype), TensorType(shape, attrs["dtype"])
    return {"both": TupleType((values, indices)), "values": values,
            "indices": indices}[attrs["ret_type"]]


def _topk_kernel(args, attrs):
    x = args[0]
    # TVM passes no index buffer for ret_type="values" and the function then checks int64
    _runtime_sort_takes("topk", "tvm.contrib.sort.topk", x, _TOPK_DTYPES.get(x.dtype.name),
                        "int64" if attrs["ret_type"] == "values" else attrs["dtype"])
    axis = attrs["axis"] % x.ndim
    k = attrs["k"]
    if k > x.shape[axis]:
        raise KernelError(_("topk: k {k} exceeds the size {x_shape_dim} of axis {axis}").format(k=k, x_shape_dim=x.shape[axis], axis=axis))
    order = stable_argsort(x, axis, attrs["is_ascend"])
    if k >= 1:
        order = np.take(order, range(k), axis=axis)
    values = np.take_along_axis(x, order, axis=axis)
    indices = as_result(order, np.dtype(attrs["dtype"]))
    ret = attrs["ret_type"]
    if ret == "values":
        return values
    if ret == "indices":
        return indices
    return (values, indices)


register("topk", 1, _topk_rel, _topk_kernel, "opaque",
         attrs=[AttrSpec("k", "int", 1), AttrSpec("axis", "int", -1),
                AttrSpec("ret_type", "str", "both", choices=("both", "values", "indices")),
                AttrSpec("is_ascend", "bool", False), AttrSpec("dtype", "dtype", "int32")],
         doc="topk(x, k=1, axis=-1, ret_type=\"both\"): the k largest (is_ascend: smallest) "
             "values and their indices; k < 1 keeps all")
