"""Dynamic-shape operators (`dyn.*`): TVM's forms of reshape, broadcast_to, strided_slice,
zeros, ones, full and tile whose shape arguments are run-time tensors instead of attributes.

Their output dims are `?` (the rank comes from the shape argument's static length), so the VM
plans each output at run time from a data-dependent shape function: every operator here
declares `shape_data` (which inputs the shape function reads by value, TVM's
TShapeDataDependent flags) and `shape_func`. One function per operator computes the output
shape from the concrete inputs; the shape function and the kernel both call it, so the two can
never disagree.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    AttrSpec, KernelError, OpTypeError, as_result, fmt_shape, is_int, register,
    runtime_type_error,
)
from rvmdbg.relay.ops.transform import reshape_dims, slice_by_plan, strided_slice_plan
from rvmdbg.relay.types import TensorType

# ---------------------------------------------------------------------------------------------
# Shared checks


def _shape_arg(name: str, t: TensorType, what: str) -> int:
    """The static length of a 1-d integer tensor argument (a shape, reps, begin...)."""
    if len(t.shape) != 1 or not is_int(t.dtype):
        raise OpTypeError(_("{op}: {what} must be a 1-d integer tensor, got {t}").format(
                op=name, what=what, t=t))
    if t.shape[0] is None:
        raise OpTypeError(_("{op}: {what} must have a static length (it sets the output's rank), "
                            "got {t}").format(op=name, what=what, t=t))
    return t.shape[0]


def _values(name: str, arr: np.ndarray, what: str) -> list:
    """A 1-d integer tensor's values as Python ints."""
    arr = np.asarray(arr)
    if arr.ndim != 1:
        raise KernelError(_("{op}: {what} must be a 1-d tensor, got shape {arr_shape}").format(op=name, what=what, arr_shape=fmt_shape(arr.shape)))
    return [int(v) for v in arr]


def _sizes(name: str, arr: np.ndarray, what: str = "shape") -> tuple:
    """A run-time shape: non-negative ints."""
    dims = _values(name, arr, what)
    bad = [d for d in dims if d < 0]
    if bad:
        raise KernelError(_("{op}: {what} {dims} has a negative size {bad_first}").format(op=name, what=what, dims=dims, bad_first=bad[0]))
    return tuple(dims)


def _unknown(rank: int) -> tuple:
    return (None,) * rank


_strided_slice_runtime = runtime_type_error(strided_slice_plan)

# InitOpAttrs: TVM prints `shape` (unset here: it is the argument) and `dtype`
_SHAPE_ATTR = AttrSpec("shape", "int_list_or_none", None)


# ---------------------------------------------------------------------------------------------
# dyn.reshape


def _dyn_reshape_rel(name, args, attrs):
    data, newshape = args
    return TensorType(_unknown(_shape_arg(name, newshape, "newshape")), data.dtype)


def _dyn_reshape_shape(name, ishape, newshape, allowzero) -> tuple:
    """TVM's dyn.reshape: 0 copies a dim (unless allowzero), -1 infers one, -3 merges two;
    -2 and -4 would make the rank depend on values, so TVM refuses them here."""
    for v in newshape:
        if v in (-2, -4):
            raise OpTypeError(_("{op}: newshape {newshape}: {v} is not valid in dyn.reshape (it "
                                "would change the rank)").format(op=name, newshape=newshape, v=v))
    out = reshape_dims(name, tuple(ishape), newshape, allowzero)
    if len(out) != len(newshape):
        raise OpTypeError(_("{op}: newshape {newshape} gives rank {len_out}, not "
                            "{len_newshape}").format(
                op=name, newshape=newshape, len_out=len(out), len_newshape=len(newshape)))
    return out


_dyn_reshape_runtime = runtime_type_error(_dyn_reshape_shape)


def _dyn_reshape_shape_func(inputs, attrs):
    ishape, newshape = inputs
    return [_dyn_reshape_runtime("dyn.reshape", ishape,
                                 _values("dyn.reshape", newshape, "newshape"),
                                 attrs["allowzero"])]


def _dyn_reshape_kernel(args, attrs):
    x, newshape = args
    (shape,) = _dyn_reshape_shape_func([x.shape, newshape], attrs)
    return x.reshape(shape).copy()


register("dyn.reshape", 2, _dyn_reshape_rel, _dyn_reshape_kernel, "injective",
         attrs=[AttrSpec("newshape", "int_list_or_none", None),
                AttrSpec("allowzero", "bool", False)],
         shape_data=(False, True), shape_func=_dyn_reshape_shape_func,
         doc="dyn.reshape(data, newshape): reshape to a run-time shape (0, -1, -3 as in "
             "reshape)")


# ---------------------------------------------------------------------------------------------
# dyn.broadcast_to


def _dyn_broadcast_to_rel(name, args, attrs):
    data, shape = args
    rank = _shape_arg(name, shape, "shape")
    if len(data.shape) > rank:
        raise OpTypeError(_("{op}: cannot broadcast {data} to a shape of rank {rank}").format(
                op=name, data=data, rank=rank))
    return TensorType(_unknown(rank), data.dtype)


def _broadcast_target(name, ishape, target) -> tuple:
    """The target shape, checked NumPy-style against the input shape."""
    if len(ishape) > len(target):
        raise KernelError(_("{op}: cannot broadcast shape {ishape} to {target_shape}").format(op=name, ishape=fmt_shape(ishape), target_shape=fmt_shape(target)))
    for d, t in zip(reversed(ishape), reversed(target)):
        if d != t and d != 1:
            raise KernelError(_("{op}: cannot broadcast shape {ishape} to {target_shape} at run time").format(op=name, ishape=fmt_shape(ishape), target_shape=fmt_shape(target)))
    return target


def _dyn_broadcast_to_shape_func(inputs, attrs):
    data, shape = inputs
    return [_broadcast_target("dyn.broadcast_to", data.shape, _sizes("dyn.broadcast_to", shape))]


def _dyn_broadcast_to_kernel(args, attrs):
    (shape,) = _dyn_broadcast_to_shape_func(args, attrs)
    return np.broadcast_to(args[0], shape).copy()


register("dyn.broadcast_to", 2, _dyn_broadcast_to_rel, _dyn_broadcast_to_kernel, "broadcast",
         attrs=[_SHAPE_ATTR, AttrSpec("dtype", "dtype_or_none", None)],
         shape_data=(True, True), shape_func=_dyn_broadcast_to_shape_func,
         doc="dyn.broadcast_to(data, shape): data broadcast NumPy-style to a run-time shape")


# ---------------------------------------------------------------------------------------------
# dyn.zeros, dyn.ones, dyn.full


def _dyn_init_rel(name, args, attrs):
    (shape,) = args
    return TensorType(_unknown(_shape_arg(name, shape, "shape")), attrs["dtype"])


def _dyn_init_shape_func(inputs, attrs):
    return [_sizes(attrs.op_name, inputs[-1])]  # the shape is the last input


def _make_dyn_init(name, fill):
    def kernel(args, attrs):
        return np.full(_sizes(name, args[0]), fill, dtype=attrs["dtype"])
    return kernel


_INIT_ATTRS = [_SHAPE_ATTR, AttrSpec("dtype", "dtype", "float32")]
register("dyn.zeros", 1, _dyn_init_rel, _make_dyn_init("dyn.zeros", 0), "elemwise",
         attrs=_INIT_ATTRS, shape_data=(True,), shape_func=_dyn_init_shape_func,
         doc="dyn.zeros(shape, dtype=): zeros of a run-time shape")
register("dyn.ones", 1, _dyn_init_rel, _make_dyn_init("dyn.ones", 1), "elemwise",
         attrs=_INIT_ATTRS, shape_data=(True,), shape_func=_dyn_init_shape_func,
         doc="dyn.ones(shape, dtype=): ones of a run-time shape")


def _dyn_full_rel(name, args, attrs):
    fill, shape = args
    if fill.shape != ():
        raise OpTypeError(_("{op}: the fill value must be a scalar (0-d tensor), got "
                            "{fill}").format(op=name, fill=fill))
    rank = _shape_arg(name, shape, "shape")
    return TensorType(_unknown(rank), attrs["dtype"] or fill.dtype)


def _dyn_full_kernel(args, attrs):
    fill, shape = args
    with np.errstate(all="ignore"):
        return np.full(_sizes("dyn.full", shape), fill, dtype=attrs["dtype"] or fill.dtype)


register("dyn.full", 2, _dyn_full_rel, _dyn_full_kernel, "elemwise",
         attrs=[_SHAPE_ATTR, AttrSpec("dtype", "dtype_or_none", None)],
         shape_data=(True, True), shape_func=_dyn_init_shape_func,
         doc="dyn.full(fill_value, shape, dtype=): a run-time shape filled with a 0-d value")


# ---------------------------------------------------------------------------------------------
# dyn.tile


def _dyn_tile_rel(name, args, attrs):
    data, reps = args
    rank = _shape_arg(name, reps, "reps")
    return TensorType(_unknown(max(len(data.shape), rank)), data.dtype)


def _tile_shape(name, ishape, reps) -> tuple:
    """NumPy's and TVM's tile: the shorter of shape and reps is padded with 1s in front."""
    if any(r <= 0 for r in reps):  # as tile's attribute (TVM: positive counts)
        raise KernelError(_("{op}: reps {reps} must be positive").format(op=name, reps=reps))
    n = max(len(ishape), len(reps))
    shape = (1,) * (n - len(ishape)) + tuple(ishape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return tuple(d * r for d, r in zip(shape, reps))


def _dyn_tile_shape_func(inputs, attrs):
    data, reps = inputs
    return [_tile_shape("dyn.tile", data.shape, _values("dyn.tile", reps, "reps"))]


def _dyn_tile_kernel(args, attrs):
    data, reps = args
    _dyn_tile_shape_func(args, attrs)  # the checks
    return as_result(np.tile(data, _values("dyn.tile", reps, "reps")), data.dtype)


register("dyn.tile", 2, _dyn_tile_rel, _dyn_tile_kernel, "injective",
         attrs=[AttrSpec("reps", "int_list_or_none", None)],
         shape_data=(True, True), shape_func=_dyn_tile_shape_func,
         doc="dyn.tile(data, reps): repeat data reps[i] times along each axis")


# ---------------------------------------------------------------------------------------------
# dyn.strided_slice


def _dyn_strided_slice_rel(name, args, attrs):
    data, begin, end, strides = args
    k = _shape_arg(name, begin, "begin")
    for t, what in ((end, "end"), (strides, "strides")):
        if _shape_arg(name, t, what) != k:
            raise OpTypeError(_("{op}: begin, end and strides must have the same length; got "
                                "{begin}, {end} and {strides}").format(
                    op=name, begin=begin, end=end, strides=strides))
    if k > len(data.shape):
        raise OpTypeError(_("{op}: begin has {k} values but {data} has only "
                            "{len_data_shape} axes").format(
                op=name, k=k, data=data, len_data_shape=len(data.shape)))
    return TensorType(_unknown(k) + tuple(data.shape[k:]), data.dtype)


def _slice_plan(inputs, attrs) -> list:
    """strided_slice's plan (ops/transform.py: TVM's clamping, padding to the rank, "size"
    mode) for the run-time begin, end and strides: one slicing semantics for both forms."""
    data, begin, end, strides = inputs
    ishape = data if isinstance(data, tuple) else data.shape
    name = "dyn.strided_slice"
    vals = [_values(name, v, what) for v, what in ((begin, "begin"), (end, "end"),
                                                      (strides, "strides"))]
    return _strided_slice_runtime(name, tuple(ishape), *vals, None, attrs["slice_mode"])


def _dyn_strided_slice_shape_func(inputs, attrs):
    data = inputs[0]
    out = list(data if isinstance(data, tuple) else data.shape)
    for axis, _begin, _stride, length in _slice_plan(inputs, attrs):
        out[axis] = length
    return [tuple(out)]


def _dyn_strided_slice_kernel(args, attrs):
    return slice_by_plan(args[0], _slice_plan(args, attrs))


register("dyn.strided_slice", 4, _dyn_strided_slice_rel, _dyn_strided_slice_kernel, "injective",
         attrs=[AttrSpec("begin", "int_list_or_none", None),
                AttrSpec("end", "int_list_or_none", None),
                AttrSpec("strides", "int_list_or_none", None),
                AttrSpec("slice_mode", "str", "end", choices=("end", "size")),
                AttrSpec("axes", "int_list_or_none", None)],
         shape_data=(False, True, True, True), shape_func=_dyn_strided_slice_shape_func,
         doc="dyn.strided_slice(data, begin, end, strides, slice_mode=\"end\"): slice the "
             "leading len(begin) axes with run-time bounds")
