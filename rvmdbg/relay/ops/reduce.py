"""Reductions: sum, mean, prod, max, min, all, any (result keeps the input dtype, as in TVM:
a sum of int32 is int32 and wraps), argmax/argmin (result int32), variance, std, logsumexp.

max, min, argmax and argmin give what TVM's reducers give: a loop over the reduced elements in
row-major order from the dtype's finite bound, with LLVM's ordered float compares (a NaN counts
only when it comes last; argmax of all-zero uint8 is -1), docs/tvm-parity.md.

All share TVM's attributes `axis` (None: every axis), `keepdims` and `exclude` (reduce the axes
NOT listed); argmax/argmin add `select_last_index`.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    SAME_SIZE_INT, AttrSpec, KernelError, OpTypeError, as_result, float_intrinsic_refusal,
    fmt_shape, norm_axes, register, tir_binary_dtype, tvm_lowering_refuses,
)
from rvmdbg.relay.types import TensorType

_REDUCE_ATTRS = [AttrSpec("axis", "int_list_or_none", None), AttrSpec("keepdims", "bool", False),
                 AttrSpec("exclude", "bool", False)]
_ARG_ATTRS = _REDUCE_ATTRS + [AttrSpec("select_last_index", "bool", False)]


def reduce_axes(name: str, ndim: int, axis, exclude: bool) -> list:
    """The sorted axes a reduction runs over."""
    if axis is None:
        return list(range(ndim))
    axes = norm_axes(name, axis, ndim)
    if exclude:
        return [i for i in range(ndim) if i not in axes]
    return sorted(axes)


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_rel(name, args, attrs):
    # TVM's ReduceRel: any dtype, the result in the input's dtype
    (x,) = args
    axes = reduce_axes(name, len(x.shape), attrs["axis"], attrs["exclude"])
    return TensorType(_reduced_shape(x.shape, axes, attrs["keepdims"]), x.dtype)


def _axes_at_run_time(x, attrs):
    axis = attrs["axis"]
    if axis is None:
        return tuple(range(x.ndim))
    axes = [a + x.ndim if a < 0 else a for a in axis]
    if attrs["exclude"]:
        return tuple(i for i in range(x.ndim) if i not in axes)
    return tuple(sorted(axes))


def _make_reduce(name, np_fn):
    def kernel(args, attrs):
        x = args[0]
        dt = x.dtype
        axes = _axes_at_run_time(x, attrs)
        with np.errstate(all="ignore"):  # every reduction has an identity: empty axes are fine
            r = np_fn(x, axis=axes, keepdims=attrs["keepdims"])
        return as_result(r, dt)
    return kernel


def _sum(x, axis, keepdims):
    if x.dtype == np.bool_:
        # topi::sum reduces bools with tvm::any (topi/reduction.h): a logical or
        return np.any(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _prod(x, axis, keepdims):
    if x.dtype == np.bool_:
        return np.all(x, axis=axis, keepdims=keepdims)  # 1-bit products: and
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _trunc_div(s, count: int, dt) -> np.ndarray:
    """Integer s / count truncating toward zero (C's and TIR's division), in dtype dt."""
    wide = np.asarray(s).astype(np.int64 if np.dtype(dt).kind == "i" else np.uint64)
    with np.errstate(all="ignore"):
        q = np.floor_divide(wide, wide.dtype.type(count))
        q = q + ((wide - q * wide.dtype.type(count) != 0) & (wide < 0))
    return q.astype(dt)


def _mean(x, axis, keepdims):
    count = 1
    for a in axis:
        count *= x.shape[a]
    if x.dtype.kind in "biu":
        # TVM's kernel makes the count a constant of the input's dtype: lowering refuses one
        # that does not fit (a mean of bools over two elements, of int8 over 128)
        top = 1 if x.dtype.kind == "b" else int(np.iinfo(x.dtype).max)
        if count > top:
            raise tvm_lowering_refuses(
                "mean", x.dtype, _("lowering refuses: the element count {n} exceeds the "
                                   "maximum of {dtype}").format(n=count, dtype=x.dtype.name),
                _("cast to a wider dtype first"))
        if count == 0:
            raise KernelError(_("mean: mean over an empty axis of shape {x_shape}").format(x_shape=fmt_shape(x.shape)))
    s = _sum(x, axis, keepdims)
    if x.dtype == np.bool_:
        return s  # divided by a count of 1
    if x.dtype.kind in "iu":
        # TVM divides the dtype's sum by the count: integer division truncating toward zero
        return _trunc_div(s, count, x.dtype)
    if x.dtype == np.float16:
        # TVM's mean sums float16 in float32 and rounds the quotient once to float16
        s = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.float32)
        return np.divide(s, np.float32(count)).astype(np.float16)
    return np.divide(s, x.dtype.type(count))  # 0/0 is NaN for an empty axis, as in TVM


def _bool_only(name, kernel):
    # TIR's all and any reduce bools only: ReduceRel accepts the call, lowering refuses it
    def checked(args, attrs):
        if args[0].dtype != np.bool_:
            raise tvm_lowering_refuses(name, args[0].dtype,
                                       _("lowering refuses: {op} reduces booleans only").format(
                                           op=name),
                                       _("compare with a value first (e.g. x != 0)"))
        return kernel(args, attrs)
    return checked


def _reduced_last(x: np.ndarray, axis) -> tuple:
    """x with the reduced axes moved last and flattened in row-major order (the order of
    topi's reduction loop), and the shape of the kept axes."""
    rest = [i for i in range(x.ndim) if i not in axis]
    lead = tuple(x.shape[i] for i in rest)
    n = 1
    for a in axis:
        n *= x.shape[a]
    return np.transpose(x, rest + list(axis)).reshape(lead + (n,)), lead


def _last_true(mask: np.ndarray) -> np.ndarray:
    """The index of the last True along the last axis (-1 where there is none)."""
    n = mask.shape[-1]
    last = (n - 1) - np.argmax(mask[..., ::-1], axis=-1)
    return np.where(mask.any(axis=-1), last, -1)


def _first_true(mask: np.ndarray) -> np.ndarray:
    return np.argmax(mask, axis=-1)


def _dtype_bound(dt: np.dtype, kind: str):
    """TVM's min_value/max_value of a dtype: the reduction's identity (floats: the finite
    extreme, not an infinity; bool: False/True)."""
    if dt == np.bool_:
        return kind == "min"
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    return dt.type(info.min if kind == "max" else info.max)


def plain_extreme_is_tvms(x: np.ndarray) -> bool:
    """Whether NumPy's max/min of these floats is what TVM's ordered-select loop gives once
    clamped to the dtype's finite range: with no NaN, and no -0.0 to tie with +0.0 (of equal
    values the loop keeps the later, NumPy one of them). Two reductions over x: its max (NaN
    when any element is, as NumPy's max propagates NaN) and the min of its bits (-0.0's, the
    sign bit alone, are the lowest), where gathering the zeros to test their signs cost 1.4 ms
    on a ReLU's output of 300,000 floats."""
    if x.size == 0:
        return True
    if np.isnan(x.max()):
        return False
    bits = SAME_SIZE_INT.get(x.dtype.itemsize)
    if bits is None:
        return not np.signbit(x[x == 0]).any()
    # -0.0's bits are the lowest integer of the width (every other negative float adds
    # magnitude bits above it): one min reduction, where a compare and an any made an array
    return x.view(bits).min() != np.iinfo(bits).min


def _nan_suffix(flat: np.ndarray, kind: str) -> tuple:
    """What TVM's ordered-select fold sees of a float row: the index of the last NaN (-1: none)
    and the row with every element up to it masked out (a NaN is taken, then replaced by the
    next element, so only what follows the last NaN counts)."""
    nan = np.isnan(flat)
    last_nan = _last_true(nan)
    after = np.arange(flat.shape[-1]) > last_nan[..., None]
    masked = np.where(after, flat, -np.inf if kind == "max" else np.inf)
    return last_nan, after, masked


def _tvm_extreme(kind: str):
    """max/min as TVM computes them: `acc = acc > v ? acc : v` (max; min with <) from the
    dtype's finite lowest (highest) value, in row-major order, with LLVM's ordered compares:
    a NaN is kept only when it comes last, an all -inf row gives the finite lowest value, of
    equal values (+0.0 and -0.0) the later one wins, and an empty row is the start value."""
    np_fn = np.max if kind == "max" else np.min

    def reduce(x, axis, keepdims):
        bound = _dtype_bound(x.dtype, kind)
        if all(x.shape[a] for a in axis):
            if x.dtype.kind != "f":
                return np_fn(x, axis=axis, keepdims=keepdims)  # integers: the start never wins
            if plain_extreme_is_tvms(x):
                clamp = np.maximum if kind == "max" else np.minimum  # an infinity stays the bound
                return clamp(np_fn(x, axis=axis, keepdims=keepdims), bound)
        flat, lead = _reduced_last(x, axis)
        if flat.shape[-1] == 0:
            value = np.full(lead, bound, x.dtype)  # the loop never ran: its start value
        else:
            value = _float_extreme(flat, kind).reshape(lead)
        if keepdims:
            value = value.reshape(tuple(1 if i in axis else d for i, d in enumerate(x.shape)))
        return value
    return reduce


def _float_extreme(flat: np.ndarray, kind: str) -> np.ndarray:
    """max/min of each (non-empty) row of floats as TVM's ordered-select loop computes it."""
    last_nan, after, masked = _nan_suffix(flat, kind)
    m = (np.max if kind == "max" else np.min)(masked, axis=-1, keepdims=True)
    at = _last_true(after & (masked == m))  # the later of equal values
    value = np.take_along_axis(flat, np.maximum(at, 0)[..., None], axis=-1)[..., 0]
    bound = _dtype_bound(flat.dtype, kind)
    beyond = (m[..., 0] < bound) if kind == "max" else (m[..., 0] > bound)
    # no NaN: the fold started from the bound, which an infinity does not pass
    value = np.where((last_nan < 0) & beyond, bound, value)
    value = np.where(last_nan == flat.shape[-1] - 1, np.nan, value)
    return value.astype(flat.dtype)


# the max reduction global max pooling shares (topi's adaptive pooling uses the same reducer)
tvm_reduce_max = _tvm_extreme("max")

for _name, _fn in [("sum", _sum), ("prod", _prod), ("mean", _mean), ("max", tvm_reduce_max),
                   ("min", _tvm_extreme("min")), ("all", np.all), ("any", np.any)]:
    _k = _make_reduce(_name, _fn)
    register(_name, 1, _reduce_rel, _bool_only(_name, _k) if _name in ("all", "any") else _k,
             "comm_reduce", attrs=_REDUCE_ATTRS,
             doc=f"{_name} over axis (all axes when axis=None); keepdims, exclude as in TVM")


def _tvm_arg_index(flat: np.ndarray, kind: str, last: bool) -> np.ndarray:
    """argmax/argmin of each row as topi's reducer computes it: the state (index, value) starts
    at (-1, the dtype's lowest value for argmax, highest for argmin) and takes element j unless
    its value is better, or equal (without select_last_index); LLVM's ordered compares make a
    NaN always taken and always replaced. So an index counts only after the last NaN, a row
    that never passes the start value gives -1, and ties go to the first (last) index."""
    n = flat.shape[-1]
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        last_nan, after, masked = _nan_suffix(flat, kind)
    else:
        last_nan, after, masked = np.full(flat.shape[:-1], -1), np.ones(flat.shape, bool), flat
    m = (np.max if kind == "max" else np.min)(masked, axis=-1, keepdims=True)
    best = after & (masked == m)
    idx = _last_true(best) if last else _first_true(best)
    bound = _dtype_bound(flat.dtype, kind)
    if kind == "max":
        stuck = (m[..., 0] < bound) if last else (m[..., 0] <= bound)
    else:
        stuck = (m[..., 0] > bound) if last else (m[..., 0] >= bound)
    idx = np.where((last_nan < 0) & stuck, -1, idx)  # the start value was never passed
    return np.where(last_nan == n - 1, n - 1, idx)


def _make_arg_kernel(name, kind):
    def kernel(args, attrs):
        x = args[0]
        axes = _axes_at_run_time(x, attrs)
        if x.ndim == 0:
            return np.zeros((), np.int32)
        # reduce over the listed axes as one flattened axis (index within the reduced block)
        flat, lead = _reduced_last(x, list(axes))
        if flat.shape[-1] == 0:
            idx = np.full(lead, -1)  # the reducer's start index: its loop never ran
        else:
            idx = _tvm_arg_index(flat, kind, attrs["select_last_index"])
        if attrs["keepdims"]:
            idx = np.reshape(idx, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
        return as_result(idx, np.dtype(np.int32))
    return kernel


def _arg_rel(name, args, attrs):
    (x,) = args
    if not x.shape:
        # TVM's ArgReduceRel checks the rank before anything else
        raise OpTypeError(_("{op}: TVM's relation refuses a 0-d tensor (rank 0), got {t}; "
                            "reshape it to (1,) first").format(op=name, t=x))
    axes = reduce_axes(name, len(x.shape), attrs["axis"], attrs["exclude"])
    return TensorType(_reduced_shape(x.shape, axes, attrs["keepdims"]), "int32")


register("argmax", 1, _arg_rel, _make_arg_kernel("argmax", "max"), "comm_reduce",
         attrs=_ARG_ATTRS, doc="index (int32) of the largest element over axis")
register("argmin", 1, _arg_rel, _make_arg_kernel("argmin", "min"), "comm_reduce",
         attrs=_ARG_ATTRS, doc="index (int32) of the smallest element over axis")


# ---------------------------------------------------------------------------------------------
# variance (TVM's op: data and its mean), std and logsumexp (TVM's Python API expands these two
# into other operators; here each is one operator, see docs/differences.md)

_VARIANCE_ATTRS = _REDUCE_ATTRS + [AttrSpec("unbiased", "bool", False)]


def _variance_rel(name, args, attrs):
    # VarianceRel compares no dtypes: the kernel subtracts in TIR's common dtype
    data, mean = args
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: needs a tensor of rank >= 1, got {x}").format(
                op=name, x=data))
    if len(mean.shape) != len(data.shape):
        raise OpTypeError(_("{op}: mean {mean} must have the rank of data {data} (a mean with "
                            "keepdims=True)").format(op=name, mean=mean, data=data))
    for i, (d, m) in enumerate(zip(data.shape, mean.shape)):
        if d is not None and m is not None and m not in (1, d):
            raise OpTypeError(_("{op}: mean {mean} does not broadcast to data {data} on "
                                "axis {i}").format(op=name, mean=mean, data=data, i=i))
    axes = reduce_axes(name, len(data.shape), attrs["axis"], attrs["exclude"])
    return TensorType(_reduced_shape(data.shape, axes, attrs["keepdims"]), data.dtype)


def _variance_dtypes(data: str, mean: str) -> tuple:
    """(dtype of data - mean, dtype the squares are summed in, dtype of the kernel's output) as
    topi computes variance: the difference in TIR's common dtype, float16 data's squares summed
    in float32, the sum divided by an int64 count, float16 data's quotient cast back."""
    diff = tir_binary_dtype(data, mean)
    summed = "float32" if data == "float16" else diff
    return diff, summed, "float16" if data == "float16" else tir_binary_dtype(summed, "int64")


def _variance(args, attrs, name):
    data, mean = args
    diff_dt, sum_dt, out_dt = _variance_dtypes(data.dtype.name, mean.dtype.name)
    if out_dt != data.dtype.name:
        # the relation's result has data's dtype: a kernel output of another dtype does not
        # fit it when it runs (int32 data: int64; float32 data and a float64 mean: float64)
        raise tvm_lowering_refuses(name, data.dtype,
                                   _("its kernel divides by an int64 count and returns "
                                     "{dtype}").format(dtype=out_dt),
                                   _("cast to a float dtype first"))
    axes = _axes_at_run_time(data, attrs)
    count = 1
    for a in axes:
        count *= data.shape[a]
    if attrs["unbiased"]:
        count -= 1
    with np.errstate(all="ignore"):
        try:
            diff = data.astype(diff_dt, copy=False) - mean.astype(diff_dt, copy=False)
        except ValueError:
            raise KernelError(_("{op}: mean {mean_shape} does not broadcast to data {data_shape} at "
                                "run time").format(op=name, mean_shape=fmt_shape(mean.shape), data_shape=fmt_shape(data.shape))) from None
        sq = diff * diff
        if sq.dtype.kind != "f":
            # int64/uint64: the squares and their sum wrap, the division truncates
            if count == 0:
                raise KernelError(_("{op}: integer division by zero (no elements to count)")
                                  .format(op=name))
            s = np.sum(sq, axis=axes, keepdims=attrs["keepdims"], dtype=sq.dtype)
            return _trunc_div(s, count, sq.dtype)
        sq = sq.astype(sum_dt, copy=False)  # topi sums float16 data's squares in float32
        s = np.sum(sq, axis=axes, keepdims=attrs["keepdims"], dtype=sq.dtype)
        return np.divide(s, sq.dtype.type(count)).astype(data.dtype)


def _variance_kernel(args, attrs):
    return as_result(_variance(args, attrs, "variance"), args[0].dtype)


def _std_kernel(args, attrs):
    if args[0].dtype.kind != "f":
        _variance(args, attrs, "std")  # TVM's std is sqrt(variance(...)): the first to refuse
        raise float_intrinsic_refusal("std", args[0].dtype)  # sqrt of an integer
    with np.errstate(all="ignore"):
        return as_result(np.sqrt(_variance(args, attrs, "std")), args[0].dtype)


def _not_a_tvm_operator(name: str, expansion: str):
    """The note for an operator TVM's Python API expands into others: TVM's parser does not
    know it (rvmdbg keeps it one operator, docs/differences.md)."""
    def note(args, attrs):
        return _("it has no operator {op}; its Python API writes {expansion}").format(
            op=name, expansion=expansion)
    return note


register("variance", 2, _variance_rel, _variance_kernel, "comm_reduce", attrs=_VARIANCE_ATTRS,
         doc="variance(data, mean, axis=None, keepdims=False, exclude=False, unbiased=False): "
             "mean of squared differences from mean (a keepdims mean of data)")
register("std", 2, _variance_rel, _std_kernel, "comm_reduce", attrs=_VARIANCE_ATTRS,
         tvm_note=_not_a_tvm_operator("std", "sqrt(variance(data, mean, ...))"),
         doc="std(data, mean, ...): the square root of variance(data, mean, ...)")


def _logsumexp_rel(name, args, attrs):
    (x,) = args
    axes = reduce_axes(name, len(x.shape), attrs["axis"], False)
    return TensorType(_reduced_shape(x.shape, axes, attrs["keepdims"]), x.dtype)


def _logsumexp_kernel(args, attrs):
    x = args[0]
    if x.dtype.kind != "f":
        raise float_intrinsic_refusal("logsumexp", x.dtype)  # TVM's expansion calls exp
    axis = attrs["axis"]
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
    if any(x.shape[a] == 0 for a in axes):
        raise KernelError(_("logsumexp: cannot reduce an empty tensor of shape {x_shape}").format(x_shape=fmt_shape(x.shape)))
    # TVM's expansion: log(sum(exp(x - max))) + max, each step in the dtype
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axes, keepdims=True)
        s = np.sum(np.exp(x - m), axis=axes, keepdims=True, dtype=x.dtype)
        r = np.log(s) + m
    if not attrs["keepdims"]:
        r = r.reshape(_reduced_shape(x.shape, axes, False))
    return as_result(r, x.dtype)


register("logsumexp", 1, _logsumexp_rel, _logsumexp_kernel, "comm_reduce",
         tvm_note=_not_a_tvm_operator("logsumexp", "max, exp, sum and log"),
         attrs=[AttrSpec("axis", "int_list_or_none", None), AttrSpec("keepdims", "bool", False)],
         doc="logsumexp(x, axis=None, keepdims=False): log(sum(exp(x))) computed stably")
