"""Shape-changing operators: reshape, transpose, expand_dims, squeeze, concatenate, stack,
split, take, reverse, shape_of, strided_slice, tile, repeat, layout_transform,
collapse_sum_like, broadcast_to_like, reshape_like, contrib_reverse_reshape (TVM 0.6's
_contrib_reverse_reshape too), annotation.stop_fusion, arange and one_hot.

Each shape computation is one function used twice: by the type relation on static or `?`
dimensions, and by the kernel on the concrete input shape (where its errors become KernelError).
"""
from __future__ import annotations

import math

import numpy as np

from rvmdbg.i18n import N_, _
from rvmdbg.relay.ops.core import (
    Attrs, AttrSpec, KernelError, OpTypeError, as_result, fmt_shape, is_int, known_prod, norm_axes,
    norm_axis, register, runtime_type_error, tir_binary_dtype,
    unify_dim,
)
from rvmdbg.relay.ops.layouts import parse_layout
from rvmdbg.relay.types import TensorType, TupleType

# ---------------------------------------------------------------------------------------------
# reshape


def reshape_dims(name: str, ishape: tuple, newshape, allowzero: bool = False) -> tuple:
    """TVM's reshape shape inference, with its special values: 0 copies the input dim (unless
    allowzero), -1 infers one dim, -2 copies all remaining dims, -3 merges two consecutive dims,
    -4 splits one dim into the next two values (one of which may be -1)."""
    out: list = []
    src = 0
    infer_at = -1
    i = 0
    n_in = len(ishape)

    def need_src(k: int, what: str):
        if src + k > n_in:
            raise OpTypeError(_("{op}: newshape {newshape}: {what} needs input dimension "
                                "{index}, but the input has rank {n_in}").format(
                    op=name, newshape=list(newshape), what=_(what), index=src + k - 1, n_in=n_in))

    while i < len(newshape):
        v = newshape[i]
        if v > 0:
            out.append(v)
            src += 1
        elif v == 0:
            if allowzero:
                out.append(0)
            else:
                need_src(1, N_("0 (copy a dimension)"))
                out.append(ishape[src])
            src += 1
        elif v == -1:
            if infer_at >= 0:
                raise OpTypeError(_("{op}: newshape {newshape} has more than one -1").format(
                        op=name, newshape=list(newshape)))
            infer_at = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out.extend(ishape[src:])
            src = n_in
        elif v == -3:
            need_src(2, N_("-3 (merge two dimensions)"))
            d1, d2 = ishape[src], ishape[src + 1]
            out.append(None if d1 is None or d2 is None else d1 * d2)
            src += 2
        elif v == -4:
            if i + 2 >= len(newshape):
                raise OpTypeError(_("{op}: newshape {newshape}: -4 must be followed by "
                                    "two values").format(op=name, newshape=list(newshape)))
            need_src(1, N_("-4 (split a dimension)"))
            d0 = ishape[src]
            d1, d2 = newshape[i + 1], newshape[i + 2]
            if d1 == -1 and d2 == -1:
                raise OpTypeError(_("{op}: newshape {newshape}: -4 splits into -1, -1").format(
                        op=name, newshape=list(newshape)))
            if d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0:
                raise OpTypeError(_("{op}: newshape {newshape}: after -4 give two positive sizes "
                                    "(one may be -1)").format(op=name, newshape=list(newshape)))
            if d1 == -1:
                d1 = None if d0 is None else d0 // d2
            if d2 == -1:
                d2 = None if d0 is None else d0 // d1
            if d0 is not None and d1 is not None and d2 is not None and d1 * d2 != d0:
                raise OpTypeError(_("{op}: newshape {newshape}: cannot split dimension {dim} "
                                    "into {first} x {second}").format(
                        op=name, newshape=list(newshape), dim=d0, first=d1, second=d2))
            out.extend((d1, d2))
            src += 1
            i += 2
        else:
            raise OpTypeError(_("{op}: newshape {newshape}: invalid value {v}; use a positive "
                                "size, 0, -1, -2, -3 or -4").format(
                    op=name, newshape=list(newshape), v=v))
        i += 1

    total = known_prod(ishape)
    if infer_at >= 0:
        rest = known_prod(d for j, d in enumerate(out) if j != infer_at)
        if total is None or rest is None:
            out[infer_at] = None
        elif rest == 0:
            raise OpTypeError(_("{op}: newshape {newshape}: cannot infer -1 next to a zero-sized "
                                "dimension").format(op=name, newshape=list(newshape)))
        elif total % rest:
            raise OpTypeError(_("{op}: cannot reshape {ishape} ({total} elements) to {newshape}: "
                                "{total} is not a multiple of {rest}").format(
                    op=name, ishape=fmt_shape(ishape), total=total, newshape=list(newshape),
                    rest=rest))
        else:
            out[infer_at] = total // rest
    else:
        size = known_prod(out)
        if total is not None and size is not None and size != total:
            raise OpTypeError(_("{op}: cannot reshape {ishape} ({total} elements) to {out_shape} "
                                "({size} elements)").format(
                    op=name, ishape=fmt_shape(ishape), total=total,
                    out_shape=fmt_shape(tuple(out)), size=size))
    return tuple(out)


def _reshape_rel(name, args, attrs):
    (x,) = args
    return TensorType(reshape_dims(name, x.shape, attrs["newshape"], attrs["allowzero"]), x.dtype)


_reshape_runtime = runtime_type_error(reshape_dims)


def _reshape_kernel(args, attrs):
    x = args[0]
    shape = _reshape_runtime("reshape", x.shape, attrs["newshape"], attrs["allowzero"])
    return x.reshape(shape).copy()


register("reshape", 1, _reshape_rel, _reshape_kernel, "injective",
         attrs=[AttrSpec("newshape", "int_list"), AttrSpec("allowzero", "bool", False)],
         doc="reshape(x, newshape=[...]): 0 copies a dim, -1 infers one, -2/-3/-4 as in TVM")


# ---------------------------------------------------------------------------------------------
# transpose, expand_dims, squeeze, reverse


def _transpose_axes(name, ndim, axes):
    if axes is None:
        return list(range(ndim))[::-1]
    if len(axes) != ndim:
        raise OpTypeError(_("{op}: axes {axes} must list each of the {ndim} axes once").format(
                op=name, axes=list(axes), ndim=ndim))
    return norm_axes(name, axes, ndim, "axes")


def _transpose_rel(name, args, attrs):
    (x,) = args
    axes = _transpose_axes(name, len(x.shape), attrs["axes"])
    return TensorType(tuple(x.shape[a] for a in axes), x.dtype)


def _transpose_kernel(args, attrs):
    x = args[0]
    axes = attrs["axes"]
    return x.transpose(axes).copy() if axes is not None else x.transpose().copy()


register("transpose", 1, _transpose_rel, _transpose_kernel, "injective",
         attrs=[AttrSpec("axes", "int_list_or_none", None)],
         doc="permute the axes (reverse them when axes=None)")


def _expand_pivot(name, ndim, axis, num):
    if num < 0:
        raise OpTypeError(_("{op}: num_newaxis must be >= 0, got {num}").format(op=name, num=num))
    return norm_axis(name, axis, ndim, "axis", extra=1)


def _expand_dims_rel(name, args, attrs):
    (x,) = args
    p = _expand_pivot(name, len(x.shape), attrs["axis"], attrs["num_newaxis"])
    return TensorType(x.shape[:p] + (1,) * attrs["num_newaxis"] + x.shape[p:], x.dtype)


def _expand_dims_kernel(args, attrs):
    x = args[0]
    p = _expand_pivot("expand_dims", x.ndim, attrs["axis"], attrs["num_newaxis"])
    return x.reshape(x.shape[:p] + (1,) * attrs["num_newaxis"] + x.shape[p:]).copy()


register("expand_dims", 1, _expand_dims_rel, _expand_dims_kernel, "broadcast",
         attrs=[AttrSpec("axis", "int"), AttrSpec("num_newaxis", "int", 1)],
         doc="insert num_newaxis dimensions of size 1 at axis")


def _squeeze_rel(name, args, attrs):
    (x,) = args
    axis = attrs["axis"]
    if axis is None:
        # a `?` dimension might be 1 at run time, but TVM keeps it: only known 1s go
        return TensorType(tuple(d for d in x.shape if d != 1), x.dtype)
    axes = norm_axes(name, axis, len(x.shape))
    for a in axes:
        if x.shape[a] is not None and x.shape[a] != 1:
            raise OpTypeError(_("{op}: cannot squeeze axis {a} of {x}: its size is "
                                "{size}, not 1").format(op=name, a=a, x=x, size=x.shape[a]))
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _squeeze_kernel(args, attrs):
    x = args[0]
    axis = attrs["axis"]
    if axis is None:
        return x.reshape(tuple(d for d in x.shape if d != 1)).copy()
    axes = [a + x.ndim if a < 0 else a for a in axis]
    for a in axes:
        if x.shape[a] != 1:
            raise KernelError(_("squeeze: cannot squeeze axis {a} of a tensor of shape {x_shape}: "
                                "its size is {x_shape_dim}, not 1").format(a=a, x_shape=fmt_shape(x.shape), x_shape_dim=x.shape[a]))
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes)).copy()


def _squeeze_static_axes(args, attrs):
    """axis=None on a tensor with `?` dimensions means the axes known to be 1 (TVM's topi
    decides them from the static shape when it builds the kernel): a `?` that is 1 at run
    time stays, as the type says. None when there is nothing to fix."""
    (x,) = args
    if attrs["axis"] is not None or all(d is not None for d in x.shape):
        return None
    return Attrs("squeeze", axis=[i for i, d in enumerate(x.shape) if d == 1])


register("squeeze", 1, _squeeze_rel, _squeeze_kernel, "injective",
         attrs=[AttrSpec("axis", "int_list_or_none", None)],
         resolve_attrs=_squeeze_static_axes,
         doc="remove the given size-1 axes (all size-1 axes when axis=None; with `?` "
             "dimensions, those known to be 1)")


def _reverse_rel(name, args, attrs):
    (x,) = args
    norm_axis(name, attrs["axis"], len(x.shape))
    return TensorType(x.shape, x.dtype)


def _reverse_kernel(args, attrs):
    return np.flip(args[0], attrs["axis"]).copy()


register("reverse", 1, _reverse_rel, _reverse_kernel, "injective",
         attrs=[AttrSpec("axis", "int")], doc="reverse the order of elements along axis")


# ---------------------------------------------------------------------------------------------
# concatenate, stack, split


def _tuple_common(name, t: TupleType):
    fields = t.fields
    if not fields:
        raise OpTypeError(_("{op}: needs at least one tensor, got an empty tuple").format(
                op=name))
    first = fields[0]
    for f in fields[1:]:
        if f.dtype != first.dtype:
            raise OpTypeError(_("{op}: all tensors need the same dtype; got {first_dtype} and "
                                "{f_dtype} in {t}").format(
                    op=name, first_dtype=first.dtype, f_dtype=f.dtype, t=t))
        if len(f.shape) != len(first.shape):
            raise OpTypeError(_("{op}: all tensors need the same rank; got {first} and "
                                "{f}").format(op=name, first=first, f=f))
    return fields


def _concatenate_rel(name, args, attrs):
    (t,) = args
    fields = _tuple_common(name, t)
    ndim = len(fields[0].shape)
    if ndim == 0:
        raise OpTypeError(_("{op}: cannot concatenate 0-d tensors; use stack").format(op=name))
    axis = norm_axis(name, attrs["axis"], ndim)
    out = []
    for i in range(ndim):
        if i == axis:
            out.append(_sum_dims(f.shape[i] for f in fields))
            continue
        d = fields[0].shape[i]
        for f in fields[1:]:
            d = unify_dim(name, d, f.shape[i], _("dimension {i} differs in {t}; only axis {axis} "
                                                 "may differ").format(i=i, t=t, axis=axis))
        out.append(d)
    return TensorType(tuple(out), fields[0].dtype)


def _sum_dims(dims):
    total = 0
    for d in dims:
        if d is None:
            return None
        total += d
    return total


def _concatenate_kernel(args, attrs):
    parts = args[0]
    try:
        return np.concatenate(parts, axis=attrs["axis"])
    except ValueError:
        shapes = ", ".join(fmt_shape(p.shape) for p in parts)
        raise KernelError(_("concatenate: shapes {shapes} do not fit along axis {axis} at run "
                            "time").format(shapes=shapes, axis=attrs['axis'])) from None


register("concatenate", 1, _concatenate_rel, _concatenate_kernel, "injective",
         attrs=[AttrSpec("axis", "int", 0)], tuple_input=True,
         doc="concatenate((a, b, ...), axis=0): join tensors along an existing axis")


def _stack_rel(name, args, attrs):
    (t,) = args
    fields = _tuple_common(name, t)
    ndim = len(fields[0].shape)
    axis = norm_axis(name, attrs["axis"], ndim, extra=1)
    shape = list(fields[0].shape)
    for f in fields[1:]:
        shape = [unify_dim(name, a, b, _("all tensors need the same shape; got {t}").format(t=t))
                 for a, b in zip(shape, f.shape)]
    return TensorType(tuple(shape[:axis] + [len(fields)] + shape[axis:]), fields[0].dtype)


def _stack_kernel(args, attrs):
    parts = args[0]
    try:
        return np.stack(parts, axis=attrs["axis"])
    except ValueError:
        shapes = ", ".join(fmt_shape(p.shape) for p in parts)
        raise KernelError(_("stack: shapes {shapes} differ at run time").format(shapes=shapes)) from None


register("stack", 1, _stack_rel, _stack_kernel, "injective",
         attrs=[AttrSpec("axis", "int", 0)], tuple_input=True,
         doc="stack((a, b, ...), axis=0): join equal-shaped tensors along a new axis")


def split_dims(name: str, shape: tuple, ios, axis: int) -> list:
    """The shapes of split's pieces (TVM: sections must divide the axis; indices ascend)."""
    ndim = len(shape)
    if ndim == 0:
        raise OpTypeError(_("{op}: cannot split a 0-d tensor").format(op=name))
    axis = norm_axis(name, axis, ndim)
    dim = shape[axis]
    pieces = []
    if isinstance(ios, int):
        if ios <= 0:
            raise OpTypeError(_("{op}: indices_or_sections must be positive, got {ios}").format(
                    op=name, ios=ios))
        if dim is not None and dim % ios:
            raise OpTypeError(_("{op}: cannot split axis {axis} of size {dim} into {ios} equal "
                                "sections").format(op=name, axis=axis, dim=dim, ios=ios))
        size = None if dim is None else dim // ios
        pieces = [size] * ios
    else:
        begin = 0
        for idx in ios:
            if idx <= begin:
                raise OpTypeError(_("{op}: indices_or_sections {ios} must be positive and "
                                    "strictly ascending").format(op=name, ios=list(ios)))
            pieces.append(idx - begin)
            begin = idx
        if dim is not None and begin >= dim:
            raise OpTypeError(_("{op}: index {begin} in indices_or_sections {ios} is out of "
                                "range for axis {axis} of size {dim}").format(
                    op=name, begin=begin, ios=list(ios), axis=axis, dim=dim))
        pieces.append(None if dim is None else dim - begin)
    return [shape[:axis] + (p,) + shape[axis + 1:] for p in pieces]


def _split_rel(name, args, attrs):
    (x,) = args
    shapes = split_dims(name, x.shape, attrs["indices_or_sections"], attrs["axis"])
    return TupleType(tuple(TensorType(s, x.dtype) for s in shapes))


_split_runtime = runtime_type_error(split_dims)


def _split_kernel(args, attrs):
    x = args[0]
    shapes = _split_runtime("split", x.shape, attrs["indices_or_sections"], attrs["axis"])
    axis = norm_axis("split", attrs["axis"], x.ndim)
    out = []
    start = 0
    for s in shapes:
        n = s[axis]
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, start + n)
        out.append(x[tuple(index)].copy())
        start += n
    return tuple(out)


register("split", 1, _split_rel, _split_kernel, "injective",
         attrs=[AttrSpec("indices_or_sections", "int_or_int_list"), AttrSpec("axis", "int", 0)],
         doc="split(x, indices_or_sections=, axis=0): a tuple of pieces")


# ---------------------------------------------------------------------------------------------
# take


def _take_rel(name, args, attrs):
    data, indices = args
    # TakeRel's ICHECK is is_int() || is_uint(), and TVM's bool is a 1-bit uint: indices 0, 1
    if not (is_int(indices.dtype) or indices.dtype == "bool"):
        raise OpTypeError(_("{op}: indices must be an integer tensor, got {indices}").format(
                op=name, indices=indices))
    axis = attrs["axis"]
    bd = attrs["batch_dims"]
    if axis is None:
        if bd != 0:
            raise OpTypeError(_("{op}: batch_dims needs an axis").format(op=name))
        return TensorType(indices.shape, data.dtype)
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: cannot take along an axis of a 0-d tensor").format(op=name))
    axis = norm_axis(name, axis, len(data.shape))
    bd = _batch_dims(name, bd, len(indices.shape), axis)
    for i in range(bd):
        unify_dim(name, data.shape[i], indices.shape[i],
                  _("batch dimension {i} differs between {data} and {indices}").format(
                i=i, data=data, indices=indices))
    return TensorType(data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:], data.dtype)


def _batch_dims(name, bd, indices_ndim, axis):
    if bd < 0:
        bd += indices_ndim
    if not 0 <= bd <= min(axis, indices_ndim):
        raise OpTypeError(_("{op}: batch_dims {bd} must be in [0, {high}]").format(
                op=name, bd=bd, high=min(axis, indices_ndim)))
    return bd


def _take_indices(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    if n == 0 and idx.size:
        raise KernelError(_("take: cannot take from an axis of size 0"))
    idx = idx.astype(np.int64)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    bad = (idx < 0) | (idx >= n)
    if np.any(bad):
        v = int(idx[bad].flat[0]) if idx.ndim else int(idx)
        raise KernelError(_("take: index {v} is out of range for an axis of size {n} "
                            "(mode=\"fast\" does not clip)").format(v=v, n=n))
    return idx


def _take_kernel(args, attrs):
    data, indices = args
    axis = attrs["axis"]
    mode = attrs["mode"]
    if axis is None:
        flat = data.reshape(-1)
        return as_result(flat[_take_indices(indices, flat.shape[0], mode)], data.dtype)
    if axis < 0:
        axis += data.ndim
    idx = _take_indices(indices, data.shape[axis], mode)
    bd = attrs["batch_dims"]
    if bd < 0:
        bd += indices.ndim
    if bd == 0:
        return as_result(np.take(data, idx, axis=axis), data.dtype)
    batch = data.shape[:bd]
    if indices.shape[:bd] != batch:
        raise KernelError(_("take: batch dimensions {batch_shape} and {indices_shape} differ at "
                            "run time").format(batch_shape=fmt_shape(batch), indices_shape=fmt_shape(indices.shape[:bd])))
    nb = int(np.prod(batch))
    d = data.reshape((nb,) + data.shape[bd:])
    ix = idx.reshape((nb,) + idx.shape[bd:])
    parts = [np.take(d[i], ix[i], axis=axis - bd) for i in range(nb)]
    out_shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    if nb == 0:
        return np.zeros(out_shape, data.dtype)
    return np.stack(parts).reshape(out_shape)


register("take", 2, _take_rel, _take_kernel, "injective",
         attrs=[AttrSpec("axis", "int_or_none", None), AttrSpec("batch_dims", "int", 0),
                AttrSpec("mode", "str", "clip", choices=("clip", "wrap", "fast"))],
         doc="take(data, indices, axis=None, mode=\"clip\"): gather along axis (flat if None)")


# ---------------------------------------------------------------------------------------------
# shape_of


def _shape_of_rel(name, args, attrs):
    # ShapeOfRel: any dtype; topi casts each dimension to it (a float dtype rounds, bool is != 0)
    (x,) = args
    return TensorType((len(x.shape),), attrs["dtype"])


def _shape_of_kernel(args, attrs):
    with np.errstate(over="ignore"):  # float16 of a dimension over 65504 is inf, as in LLVM
        dims = np.array(args[0].shape, dtype=np.int64).astype(attrs["dtype"])
    return dims.reshape(args[0].ndim)


register("shape_of", 1, _shape_of_rel, _shape_of_kernel, "opaque",
         attrs=[AttrSpec("dtype", "dtype", "int32")],
         doc="the shape of a tensor as a rank-1 integer tensor")



# ---------------------------------------------------------------------------------------------
# strided_slice

_INT64_MAX = 2 ** 63 - 1


def _canonical_index(index: int, extent: int, stride: int) -> int:
    """topi's clamping: a negative index counts from the end, then it is clamped into
    [0, extent] going forwards or [-1, extent - 1] going backwards."""
    lo, hi = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, lo), hi)


def strided_slice_plan(name: str, shape: tuple, begin, end, strides, axes, mode: str) -> list:
    """Per sliced axis `(axis, first index or None, stride, length or None)` (None for a `?`
    dimension), following TVM's StridedSliceRel and topi: without `axes` the lists are padded
    to the rank (begin 0 or the end when going backwards, end the far side, stride 1); in
    "size" mode `end` holds lengths (negative: to the end) and the strides are 1."""
    ndim = len(shape)
    strides = [1] if strides is None else list(strides)
    begin, end = list(begin), list(end)
    if axes is None:
        for what, values in (("begin", begin), ("end", end), ("strides", strides)):
            if len(values) > ndim:
                raise OpTypeError(_("{op}: attribute '{what}' {values} has {len_values} values, "
                                    "more than the {ndim} axes of the input").format(
                        op=name, what=what, values=values, len_values=len(values), ndim=ndim))
        strides += [1] * (ndim - len(strides))
        begin += [0 if s > 0 else _INT64_MAX for s in strides[len(begin):]]
        end += [_INT64_MAX if s > 0 else 0 for s in strides[len(end):]]
        axes = list(range(ndim))
    else:
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise OpTypeError(_("{op}: attributes 'axes' {axes}, 'begin' {begin}, 'end' {end} "
                                "and 'strides' {strides} must have the same length").format(
                    op=name, axes=list(axes), begin=begin, end=end, strides=strides))
        axes = norm_axes(name, axes, ndim, "axes")
    if mode == "size":
        strides = [1] * len(axes)
    plan = []
    for axis, b, e, s in zip(axes, begin, end, strides):
        if s == 0:
            raise OpTypeError(_("{op}: attribute 'strides' {strides} has a 0 stride").format(
                    op=name, strides=strides))
        dim = shape[axis]
        if dim is None:
            plan.append((axis, None, s, None))
            continue
        first = _canonical_index(b, dim, s)
        if mode == "size":
            # the length counts from the clamped start (topi adds it to the raw begin)
            stop = dim if e < 0 else min(first + e, dim)
        else:
            stop = _canonical_index(e, dim, s)
        if (s > 0 and stop < first) or (s < 0 and stop > first):
            raise OpTypeError(_("{op}: begin {b} and end {e} select nothing on axis "
                                "{axis} of size {dim} with stride {s} (TVM rejects an "
                                "inverted range)").format(
                    op=name, b=b, e=e, axis=axis, dim=dim, s=s))
        plan.append((axis, first, s, (abs(stop - first) + abs(s) - 1) // abs(s)))
    return plan


def _strided_slice_rel(name, args, attrs):
    (x,) = args
    plan = strided_slice_plan(name, x.shape, attrs["begin"], attrs["end"], attrs["strides"],
                              attrs["axes"], attrs["slice_mode"])
    out = list(x.shape)
    for axis, _begin, _stride, length in plan:
        out[axis] = length
    return TensorType(tuple(out), x.dtype)


_strided_slice_runtime = runtime_type_error(strided_slice_plan)


def slice_by_plan(x: np.ndarray, plan: list) -> np.ndarray:
    """x sliced as a `strided_slice_plan` says (a fresh array); dyn.strided_slice shares it."""
    index = [slice(None)] * x.ndim
    for axis, first, s, length in plan:
        if length == 0:
            index[axis] = slice(0, 0)
            continue
        stop = first + length * s
        index[axis] = slice(first, stop if stop >= 0 else None, s)
    return x[tuple(index)].copy()


def _strided_slice_kernel(args, attrs):
    x = args[0]
    plan = _strided_slice_runtime("strided_slice", x.shape, attrs["begin"], attrs["end"],
                                  attrs["strides"], attrs["axes"], attrs["slice_mode"])
    return slice_by_plan(x, plan)


register("strided_slice", 1, _strided_slice_rel, _strided_slice_kernel, "injective",
         attrs=[AttrSpec("begin", "int_list"), AttrSpec("end", "int_list"),
                AttrSpec("strides", "int_list_or_none", None),
                AttrSpec("slice_mode", "str", "end", choices=("end", "size")),
                AttrSpec("axes", "int_list_or_none", None)],
         doc="strided_slice(x, begin=, end=, strides=, axes=None, slice_mode=\"end\"): TVM's "
             "clamped slice; slice_mode=\"size\" reads end as lengths")


# ---------------------------------------------------------------------------------------------
# tile, repeat


def _tile_rel(name, args, attrs):
    (x,) = args
    reps = attrs["reps"]
    if any(r <= 0 for r in reps):
        raise OpTypeError(_("{op}: attribute 'reps' {reps} must be positive").format(
                op=name, reps=reps))
    n = max(len(x.shape), len(reps))
    dims = (1,) * (n - len(x.shape)) + tuple(x.shape)
    reps = [1] * (n - len(reps)) + list(reps)
    return TensorType(tuple(None if d is None else d * r for d, r in zip(dims, reps)), x.dtype)


def _tile_kernel(args, attrs):
    if any(r <= 0 for r in attrs["reps"]):
        raise KernelError(_("tile: attribute 'reps' {reps} must be positive").format(reps=attrs['reps']))
    return np.tile(args[0], attrs["reps"])


register("tile", 1, _tile_rel, _tile_kernel, "broadcast",
         attrs=[AttrSpec("reps", "int_list")],
         doc="tile(x, reps=[...]): repeat the whole tensor reps[i] times along axis i")


def _repeat_rel(name, args, attrs):
    (x,) = args
    if attrs["repeats"] < 1:
        raise OpTypeError(_("{op}: attribute 'repeats' must be >= 1, got {repeats}").format(
                op=name, repeats=attrs['repeats']))
    axis = norm_axis(name, attrs["axis"], len(x.shape))
    d = x.shape[axis]
    out = x.shape[:axis] + (None if d is None else d * attrs["repeats"],) + x.shape[axis + 1:]
    return TensorType(out, x.dtype)


def _repeat_kernel(args, attrs):
    return np.repeat(args[0], attrs["repeats"], axis=attrs["axis"])


register("repeat", 1, _repeat_rel, _repeat_kernel, "broadcast",
         attrs=[AttrSpec("repeats", "int"), AttrSpec("axis", "int")],
         doc="repeat(x, repeats=, axis=): repeat each element along axis")


# ---------------------------------------------------------------------------------------------
# layout_transform


def _layouts(name, attrs, ndim):
    src = parse_layout(name, "src_layout", attrs["src_layout"])
    dst = parse_layout(name, "dst_layout", attrs["dst_layout"])
    if {c for c, _ in src if c.isupper()} != {c for c, _ in dst if c.isupper()}:
        raise OpTypeError(_("{op}: cannot transform layout {src_layout} to {dst_layout}: they "
                            "name different axes").format(
                op=name, src_layout=attrs['src_layout'], dst_layout=attrs['dst_layout']))
    if len(src) != ndim:
        raise OpTypeError(_("{op}: src_layout {src_layout} has {len_src} axes but the input has "
                            "rank {ndim}").format(
                op=name, src_layout=attrs['src_layout'], len_src=len(src), ndim=ndim))
    return src, dst


def layout_transform_shape(name: str, shape: tuple, attrs) -> tuple:
    src, dst = _layouts(name, attrs, len(shape))
    factor = {c: f for c, f in src if f}
    whole = {}
    for (c, f), d in zip(src, shape):
        if c.isupper():
            inner = factor.get(c.lower(), 1)
            whole[c] = None if d is None else d * inner
    out = []
    dst_factor = {c: f for c, f in dst if f}
    for c, f in dst:
        if c.islower():
            out.append(f)
            continue
        d, inner = whole[c], dst_factor.get(c.lower(), 1)
        if d is not None and d % inner:
            raise OpTypeError(_("{op}: axis {c} of size {d} does not split into {dst_layout}'s "
                                "factor {inner}").format(
                    op=name, c=c, d=d, dst_layout=attrs['dst_layout'], inner=inner))
        out.append(None if d is None else d // inner)
    return tuple(out)


def _layout_transform_rel(name, args, attrs):
    (x,) = args
    return TensorType(layout_transform_shape(name, x.shape, attrs), x.dtype)


_layout_transform_runtime = runtime_type_error(layout_transform_shape)


def _layout_transform_kernel(args, attrs):
    x = args[0]
    _layout_transform_runtime("layout_transform", x.shape, attrs)
    src, dst = _layouts("layout_transform", attrs, x.ndim)
    pos = {c: i for i, (c, _) in enumerate(src)}
    # to one axis per whole axis, in src's order: each sub-axis right after its axis, merged
    primal = [c for c, _ in src if c.isupper()]
    perm = []
    for c in primal:
        perm.append(pos[c])
        if c.lower() in pos:
            perm.append(pos[c.lower()])
    sizes = {c: x.shape[pos[c]] * (x.shape[pos[c.lower()]] if c.lower() in pos else 1)
             for c in primal}
    y = x.transpose(perm).reshape([sizes[c] for c in primal])
    # split the axes dst splits, then put every part where dst wants it
    dst_factor = {c.upper(): f for c, f in dst if f}
    split_shape, where = [], {}
    for c in primal:
        where[c] = len(split_shape)
        if c in dst_factor:
            split_shape += [sizes[c] // dst_factor[c], dst_factor[c]]
            where[c.lower()] = where[c] + 1
        else:
            split_shape.append(sizes[c])
    return y.reshape(split_shape).transpose([where[c] for c, _ in dst]).copy()


register("layout_transform", 1, _layout_transform_rel, _layout_transform_kernel, "injective",
         attrs=[AttrSpec("src_layout", "str"), AttrSpec("dst_layout", "str")],
         doc="layout_transform(x, src_layout=\"NCHW\", dst_layout=\"NCHW4c\"): permute and "
             "split axes between layouts")


# ---------------------------------------------------------------------------------------------
# collapse_sum_like, broadcast_to_like, reshape_like, contrib_reverse_reshape


def _broadcasts_to(name, x: TensorType, target: TensorType, what: str):
    """x must broadcast (NumPy rules) to exactly target's shape."""
    if x.dtype != target.dtype:
        raise OpTypeError(_("{op}: dtypes {x_dtype} and {target_dtype} differ").format(
                op=name, x_dtype=x.dtype, target_dtype=target.dtype))
    if len(x.shape) > len(target.shape):
        raise OpTypeError(_("{op}: {what}: {x} has more axes than {target}").format(
                op=name, what=_(what), x=x, target=target))
    for a, b in zip(reversed(x.shape), reversed(target.shape)):
        if a is not None and b is not None and a != 1 and a != b:
            raise OpTypeError(_("{op}: {what}: {x} does not broadcast to {target}").format(
                    op=name, what=_(what), x=x, target=target))


def _collapse_sum_like_rel(name, args, attrs):
    data, like = args
    _broadcasts_to(name, like, data, N_("the collapse type must broadcast to the data"))
    return like


def collapse_sum(x: np.ndarray, shape: tuple, name: str = "collapse_sum_like") -> np.ndarray:
    """Sum x down to `shape` (which broadcasts to x's shape): the inverse of broadcasting."""
    lead = x.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(shape, x.shape[lead:])):
        raise KernelError(_("{op}: shape {shape} does not broadcast to {x_shape} at run time").format(op=name, shape=fmt_shape(shape), x_shape=fmt_shape(x.shape)))
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    with np.errstate(all="ignore"):
        r = np.sum(x, axis=axes, dtype=x.dtype, keepdims=True) if axes else x.copy()
    return as_result(r.reshape(shape), x.dtype)


def _collapse_sum_like_kernel(args, attrs):
    data, like = args
    return collapse_sum(data, like.shape)


register("collapse_sum_like", 2, _collapse_sum_like_rel, _collapse_sum_like_kernel,
         "comm_reduce", doc="collapse_sum_like(data, like): sum data down to like's shape")


def _broadcast_to_like_rel(name, args, attrs):
    data, like = args
    _broadcasts_to(name, data, like, N_("the data must broadcast to the second argument"))
    return like


def _broadcast_to_like_kernel(args, attrs):
    data, like = args
    try:
        return np.broadcast_to(data, like.shape).copy()
    except ValueError:
        raise KernelError(_("broadcast_to_like: cannot broadcast shape {data_shape} to "
                            "{like_shape} at run time").format(data_shape=fmt_shape(data.shape), like_shape=fmt_shape(like.shape))) from None


register("broadcast_to_like", 2, _broadcast_to_like_rel, _broadcast_to_like_kernel, "broadcast",
         doc="broadcast_to_like(data, like): data broadcast to like's shape")


def reshape_like_shape(name: str, lhs: tuple, rhs: tuple, attrs) -> tuple:
    """lhs[:lhs_begin] + rhs[rhs_begin:rhs_end] + lhs[lhs_end:], sizes checked when known."""
    def bounds(shape, b, e, side):
        n = len(shape)
        e = n if e is None else e
        b, e = (b + n if b < 0 else b), (e + n if e < 0 else e)
        if not 0 <= b <= e <= n:
            raise OpTypeError(_("{op}: attributes '{side}_begin' and '{side}_end' select [{b}, "
                                "{e}), not a range of the {n} axes of {shape}").format(
                    op=name, side=side, b=b, e=e, n=n, shape=fmt_shape(shape)))
        return b, e
    lb, le = bounds(lhs, attrs["lhs_begin"], attrs["lhs_end"], "lhs")
    rb, re_ = bounds(rhs, attrs["rhs_begin"], attrs["rhs_end"], "rhs")
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re_]) + tuple(lhs[le:])
    a, b = known_prod(lhs), known_prod(out)
    if a is not None and b is not None and a != b:
        raise OpTypeError(_("{op}: cannot reshape {lhs_shape} ({a} elements) to {out_shape} ({b} "
                            "elements)").format(
                op=name, lhs_shape=fmt_shape(lhs), a=a, out_shape=fmt_shape(out), b=b))
    return out


def _reshape_like_rel(name, args, attrs):
    data, like = args
    return TensorType(reshape_like_shape(name, data.shape, like.shape, attrs), data.dtype)


_reshape_like_runtime = runtime_type_error(reshape_like_shape)


def _reshape_like_kernel(args, attrs):
    data, like = args
    return data.reshape(_reshape_like_runtime("reshape_like", data.shape, like.shape,
                                              attrs)).copy()


register("reshape_like", 2, _reshape_like_rel, _reshape_like_kernel, "injective",
         attrs=[AttrSpec("lhs_begin", "int", 0), AttrSpec("lhs_end", "int_or_none", None),
                AttrSpec("rhs_begin", "int", 0), AttrSpec("rhs_end", "int_or_none", None)],
         doc="reshape_like(data, like): data reshaped to like's shape (the ranges of axes "
             "lhs_begin:lhs_end of data replaced by rhs_begin:rhs_end of like)")


def reverse_reshape_dims(name: str, ishape: tuple, newshape, allowzero: bool = False) -> tuple:
    """reshape's special values read from the right: both shapes reversed, then reshaped."""
    out = reshape_dims(name, tuple(reversed(ishape)), list(reversed(newshape)), allowzero)
    return tuple(reversed(out))


def _reverse_reshape_rel(name, args, attrs):
    (x,) = args
    return TensorType(reverse_reshape_dims(name, x.shape, attrs["newshape"], attrs["allowzero"]),
                      x.dtype)


_reverse_reshape_runtime = runtime_type_error(reverse_reshape_dims)


def _reverse_reshape_kernel(args, attrs):
    x = args[0]
    return x.reshape(_reverse_reshape_runtime("contrib_reverse_reshape", x.shape,
                                              attrs["newshape"], attrs["allowzero"])).copy()


register("contrib_reverse_reshape", 1, _reverse_reshape_rel, _reverse_reshape_kernel,
         "injective",
         attrs=[AttrSpec("newshape", "int_list"), AttrSpec("allowzero", "bool", False)],
         doc="relay.reverse_reshape: reshape with 0, -1, -2, -3, -4 applied right to left")


# TVM 0.6's spelling of the same operator (renamed contrib_reverse_reshape in 0.7): its
# attributes are ReshapeAttrs, whose `reverse` (default false) ReshapeRel reads; the op's own
# constructor always sets it, so printed text carries reverse=True
def _v06_reverse_reshape_dims(name, ishape, newshape, reverse):
    return (reverse_reshape_dims if reverse else reshape_dims)(name, ishape, newshape)


def _v06_reverse_reshape_rel(name, args, attrs):
    (x,) = args
    return TensorType(_v06_reverse_reshape_dims(name, x.shape, attrs["newshape"],
                                                attrs["reverse"]), x.dtype)


_v06_reverse_reshape_runtime = runtime_type_error(_v06_reverse_reshape_dims)


def _v06_reverse_reshape_kernel(args, attrs):
    x = args[0]
    return x.reshape(_v06_reverse_reshape_runtime("_contrib_reverse_reshape", x.shape,
                                                  attrs["newshape"], attrs["reverse"])).copy()


register("_contrib_reverse_reshape", 1, _v06_reverse_reshape_rel, _v06_reverse_reshape_kernel,
         "injective",
         attrs=[AttrSpec("newshape", "int_list"), AttrSpec("reverse", "bool", False)],
         doc="TVM 0.6's reverse_reshape: reshape, with the special values read right to left "
             "when reverse=True")


# ---------------------------------------------------------------------------------------------
# annotation.stop_fusion


def _identity_rel(name, args, attrs):
    return args[0]


def _identity_kernel(args, attrs):
    return args[0].copy()


register("annotation.stop_fusion", 1, _identity_rel, _identity_kernel, "opaque",
         doc="identity that ends a fused group: FuseOps fuses nothing across it, then drops it")


# ---------------------------------------------------------------------------------------------
# arange, one_hot

_ARANGE_BOUNDS = ("start", "stop", "step")


def _arange_length(name, start, stop, step, allow_empty: bool = False) -> int:
    if step == 0:
        raise OpTypeError(_("{op}: step must not be 0").format(op=name))
    n = math.ceil((stop - start) / step)
    if allow_empty:
        return max(n, 0)
    if n <= 0:
        raise OpTypeError(_("{op}: start {start}, stop {stop}, step {step} give an empty range "
                            "(TVM requires at least one element)").format(
                op=name, start=start, stop=stop, step=step))
    return n


def _arange_rel(name, args, attrs):
    dt = attrs["dtype"]
    for what, t in zip(_ARANGE_BOUNDS, args):
        if t.shape != () or t.dtype != dt:
            raise OpTypeError(_("{op}: {what} must be a 0-d {dt} tensor (the dtype attribute), "
                                "got {t}").format(op=name, what=what, dt=dt, t=t))
    # a bound written as anything but a number (TVM may print an expression) is unknown
    bounds = [attrs[b] if isinstance(attrs[b], (int, float)) and not isinstance(attrs[b], bool)
              else None for b in _ARANGE_BOUNDS]
    if any(b is None for b in bounds):
        # the length depends on the values: (?,), planned at run time by the shape function
        return TensorType((None,), dt)
    return TensorType((_arange_length(name, *bounds),), dt)


def _arange_shape_func(inputs, attrs):
    """The output length from the values of start, stop and step (TVM's shape function;
    like it, an empty range is an empty tensor, which only constant bounds reject)."""
    return [(_arange_length("arange", *(x.item() for x in inputs), allow_empty=True),)]


def _arange_bounds_from_args(constants, attrs):
    """Constant start/stop/step become attributes too, as TVM's ArangeAttrs duplicate them."""
    if all(c is None for c in constants):
        return None
    out = Attrs(attrs.op_name, attrs) if isinstance(attrs, Attrs) else dict(attrs)
    for what, c in zip(_ARANGE_BOUNDS, constants):
        if c is not None and np.ndim(c) == 0:
            out[what] = c.item()
    return out


def _arange_kernel(args, attrs):
    start, stop, step = (a.item() for a in args)
    dt = np.dtype(attrs["dtype"])
    try:
        n = _arange_length("arange", start, stop, step, allow_empty=True)
    except OpTypeError as e:
        raise KernelError(e.message) from None
    # topi: start + step * i, computed in the dtype
    return as_result(np.asarray(start, dt) + np.asarray(step, dt) * np.arange(n).astype(dt), dt)


register("arange", 3, _arange_rel, _arange_kernel, "opaque",
         attrs=[AttrSpec("start", "any", None), AttrSpec("stop", "any", None),
                AttrSpec("step", "any", None), AttrSpec("dtype", "dtype", "float32")],
         attrs_from_args=_arange_bounds_from_args, shape_data=(True, True, True),
         shape_func=_arange_shape_func,
         doc="arange(start, stop, step, dtype=\"float32\"): evenly spaced values in "
             "[start, stop); the three are 0-d tensors (constants give a static length)")


def _one_hot_rel(name, args, attrs):
    # OneHotRel checks no dtype of the indices: any is compared with the position (the kernel)
    indices, on, off = args
    for what, t in (("on_value", on), ("off_value", off)):
        if t.shape != ():
            raise OpTypeError(_("{op}: {what} must be a 0-d tensor, got {t}").format(
                    op=name, what=what, t=t))
    if attrs["depth"] <= 0:
        raise OpTypeError(_("{op}: attribute 'depth' must be positive, got {depth}").format(
                op=name, depth=attrs['depth']))
    ndim = len(indices.shape)
    axis = attrs["axis"]
    if not -1 <= axis <= ndim:
        raise OpTypeError(_("{op}: attribute 'axis' {axis} is out of range for {ndim}-d indices; "
                            "valid: -1 (last) or [0, {ndim}]").format(
                op=name, axis=axis, ndim=ndim))
    axis = ndim if axis == -1 else axis
    shape = indices.shape[:axis] + (attrs["depth"],) + indices.shape[axis:]
    return TensorType(shape, attrs["dtype"] or on.dtype)


def _one_hot_kernel(args, attrs):
    indices, on, off = args
    axis = indices.ndim if attrs["axis"] == -1 else attrs["axis"]
    dt = np.dtype(attrs["dtype"] or on.dtype)
    # topi compares indices with the int32 position in TIR's common dtype: float indices with
    # the position cast to their float dtype (1.5 and NaN match nothing), bool as 0 and 1
    common = tir_binary_dtype(indices.dtype.name, "int32")
    position = np.arange(attrs["depth"], dtype=np.int64).astype(common)
    hit = np.expand_dims(indices.astype(common), axis) == position.reshape(
        (-1,) + (1,) * (indices.ndim - axis))
    with np.errstate(all="ignore"):
        return as_result(np.where(hit, on.astype(dt), off.astype(dt)), dt)


register("one_hot", 3, _one_hot_rel, _one_hot_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("depth", "int", 1), AttrSpec("axis", "int", -1),
                AttrSpec("dtype", "dtype_or_none", None)],
         doc="one_hot(indices, on_value, off_value, depth=, axis=-1, dtype=): on_value where "
             "the index along the new axis equals indices, else off_value")
