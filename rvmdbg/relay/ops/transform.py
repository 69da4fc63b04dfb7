"""Shape-changing (injective) operators: reshape, transpose, expand_dims, squeeze, concatenate,
stack, split, take, reverse, and shape_of.

Each shape computation is one function used twice: by the type relation on static or `?`
dimensions, and by the kernel on the concrete input shape (where its errors become KernelError).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.relay.ops.core import (
    Attrs, AttrSpec, KernelError, OpTypeError, as_result, fmt_shape, is_int, known_prod, norm_axes,
    norm_axis, register, runtime_type_error, unify_dim,
)
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
            raise OpTypeError(f"{name}: newshape {list(newshape)}: {what} needs input "
                              f"dimension {src + k - 1}, but the input has rank {n_in}")

    while i < len(newshape):
        v = newshape[i]
        if v > 0:
            out.append(v)
            src += 1
        elif v == 0:
            if allowzero:
                out.append(0)
            else:
                need_src(1, "0 (copy a dimension)")
                out.append(ishape[src])
            src += 1
        elif v == -1:
            if infer_at >= 0:
                raise OpTypeError(f"{name}: newshape {list(newshape)} has more than one -1")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out.extend(ishape[src:])
            src = n_in
        elif v == -3:
            need_src(2, "-3 (merge two dimensions)")
            d1, d2 = ishape[src], ishape[src + 1]
            out.append(None if d1 is None or d2 is None else d1 * d2)
            src += 2
        elif v == -4:
            if i + 2 >= len(newshape):
                raise OpTypeError(f"{name}: newshape {list(newshape)}: -4 must be followed by "
                                  f"two values")
            need_src(1, "-4 (split a dimension)")
            d0 = ishape[src]
            d1, d2 = newshape[i + 1], newshape[i + 2]
            if d1 == -1 and d2 == -1:
                raise OpTypeError(f"{name}: newshape {list(newshape)}: -4 splits into -1, -1")
            if d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0:
                raise OpTypeError(f"{name}: newshape {list(newshape)}: after -4 give two "
                                  f"positive sizes (one may be -1)")
            if d1 == -1:
                d1 = None if d0 is None else d0 // d2
            if d2 == -1:
                d2 = None if d0 is None else d0 // d1
            if d0 is not None and d1 is not None and d2 is not None and d1 * d2 != d0:
                raise OpTypeError(f"{name}: newshape {list(newshape)}: cannot split dimension "
                                  f"{d0} into {d1} x {d2}")
            out.extend((d1, d2))
            src += 1
            i += 2
        else:
            raise OpTypeError(f"{name}: newshape {list(newshape)}: invalid value {v}; use a "
                              f"positive size, 0, -1, -2, -3 or -4")
        i += 1

    total = known_prod(ishape)
    if infer_at >= 0:
        rest = known_prod(d for j, d in enumerate(out) if j != infer_at)
        if total is None or rest is None:
            out[infer_at] = None
        elif rest == 0:
            raise OpTypeError(f"{name}: newshape {list(newshape)}: cannot infer -1 next to a "
                              f"zero-sized dimension")
        elif total % rest:
            raise OpTypeError(f"{name}: cannot reshape {fmt_shape(ishape)} ({total} elements) "
                              f"to {list(newshape)}: {total} is not a multiple of {rest}")
        else:
            out[infer_at] = total // rest
    else:
        size = known_prod(out)
        if total is not None and size is not None and size != total:
            raise OpTypeError(f"{name}: cannot reshape {fmt_shape(ishape)} ({total} elements) "
                              f"to {fmt_shape(tuple(out))} ({size} elements)")
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
        raise OpTypeError(f"{name}: axes {list(axes)} must list each of the {ndim} axes once")
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
        raise OpTypeError(f"{name}: num_newaxis must be >= 0, got {num}")
    return norm_axis(name, axis, ndim, "axis", extra=1)


def _expand_dims_rel(name, args, attrs):
    (x,) = args
    p = _expand_pivot(name, len(x.shape), attrs["axis"], attrs["num_newaxis"])
    return TensorType(x.shape[:p] + (1,) * attrs["num_newaxis"] + x.shape[p:], x.dtype)


def _expand_dims_kernel(args, attrs):
    x = args[0]
    p = _expand_pivot("expand_dims", x.ndim, attrs["axis"], attrs["num_newaxis"])
    return x.reshape(x.shape[:p] + (1,) * attrs["num_newaxis"] + x.shape[p:]).copy()


register("expand_dims", 1, _expand_dims_rel, _expand_dims_kernel, "injective",
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
            raise OpTypeError(f"{name}: cannot squeeze axis {a} of {x}: its size is "
                              f"{x.shape[a]}, not 1")
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _squeeze_kernel(args, attrs):
    x = args[0]
    axis = attrs["axis"]
    if axis is None:
        return x.reshape(tuple(d for d in x.shape if d != 1)).copy()
    axes = [a + x.ndim if a < 0 else a for a in axis]
    for a in axes:
        if x.shape[a] != 1:
            raise KernelError(f"squeeze: cannot squeeze axis {a} of a tensor of shape "
                              f"{fmt_shape(x.shape)}: its size is {x.shape[a]}, not 1")
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
        raise OpTypeError(f"{name}: needs at least one tensor, got an empty tuple")
    first = fields[0]
    for f in fields[1:]:
        if f.dtype != first.dtype:
            raise OpTypeError(f"{name}: all tensors need the same dtype; got {first.dtype} "
                              f"and {f.dtype} in {t}")
        if len(f.shape) != len(first.shape):
            raise OpTypeError(f"{name}: all tensors need the same rank; got {first} and {f}")
    return fields


def _concatenate_rel(name, args, attrs):
    (t,) = args
    fields = _tuple_common(name, t)
    ndim = len(fields[0].shape)
    if ndim == 0:
        raise OpTypeError(f"{name}: cannot concatenate 0-d tensors; use stack")
    axis = norm_axis(name, attrs["axis"], ndim)
    out = []
    for i in range(ndim):
        if i == axis:
            out.append(_sum_dims(f.shape[i] for f in fields))
            continue
        d = fields[0].shape[i]
        for f in fields[1:]:
            d = unify_dim(name, d, f.shape[i], f"dimension {i} differs in {t}; only axis "
                                                f"{axis} may differ")
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
        raise KernelError(f"concatenate: shapes {shapes} do not fit along axis "
                          f"{attrs['axis']} at run time") from None


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
        shape = [unify_dim(name, a, b, f"all tensors need the same shape; got {t}")
                 for a, b in zip(shape, f.shape)]
    return TensorType(tuple(shape[:axis] + [len(fields)] + shape[axis:]), fields[0].dtype)


def _stack_kernel(args, attrs):
    parts = args[0]
    try:
        return np.stack(parts, axis=attrs["axis"])
    except ValueError:
        shapes = ", ".join(fmt_shape(p.shape) for p in parts)
        raise KernelError(f"stack: shapes {shapes} differ at run time") from None


register("stack", 1, _stack_rel, _stack_kernel, "injective",
         attrs=[AttrSpec("axis", "int", 0)], tuple_input=True,
         doc="stack((a, b, ...), axis=0): join equal-shaped tensors along a new axis")


def split_dims(name: str, shape: tuple, ios, axis: int) -> list:
    """The shapes of split's pieces (TVM: sections must divide the axis; indices ascend)."""
    ndim = len(shape)
    if ndim == 0:
        raise OpTypeError(f"{name}: cannot split a 0-d tensor")
    axis = norm_axis(name, axis, ndim)
    dim = shape[axis]
    pieces = []
    if isinstance(ios, int):
        if ios <= 0:
            raise OpTypeError(f"{name}: indices_or_sections must be positive, got {ios}")
        if dim is not None and dim % ios:
            raise OpTypeError(f"{name}: cannot split axis {axis} of size {dim} into {ios} "
                              f"equal sections")
        size = None if dim is None else dim // ios
        pieces = [size] * ios
    else:
        begin = 0
        for idx in ios:
            if idx <= begin:
                raise OpTypeError(f"{name}: indices_or_sections {list(ios)} must be positive "
                                  f"and strictly ascending")
            pieces.append(idx - begin)
            begin = idx
        if dim is not None and begin >= dim:
            raise OpTypeError(f"{name}: index {begin} in indices_or_sections {list(ios)} is "
                              f"out of range for axis {axis} of size {dim}")
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
    if not is_int(indices.dtype):
        raise OpTypeError(f"{name}: indices must be an integer tensor, got {indices}")
    axis = attrs["axis"]
    bd = attrs["batch_dims"]
    if axis is None:
        if bd != 0:
            raise OpTypeError(f"{name}: batch_dims needs an axis")
        return TensorType(indices.shape, data.dtype)
    if len(data.shape) == 0:
        raise OpTypeError(f"{name}: cannot take along an axis of a 0-d tensor")
    axis = norm_axis(name, axis, len(data.shape))
    bd = _batch_dims(name, bd, len(indices.shape), axis)
    for i in range(bd):
        unify_dim(name, data.shape[i], indices.shape[i],
                  f"batch dimension {i} differs between {data} and {indices}")
    return TensorType(data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:], data.dtype)


def _batch_dims(name, bd, indices_ndim, axis):
    if bd < 0:
        bd += indices_ndim
    if not 0 <= bd <= min(axis, indices_ndim):
        raise OpTypeError(f"{name}: batch_dims {bd} must be in [0, {min(axis, indices_ndim)}]")
    return bd


def _take_indices(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    if n == 0 and idx.size:
        raise KernelError("take: cannot take from an axis of size 0")
    idx = idx.astype(np.int64)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    bad = (idx < 0) | (idx >= n)
    if np.any(bad):
        v = int(idx[bad].flat[0]) if idx.ndim else int(idx)
        raise KernelError(f"take: index {v} is out of range for an axis of size {n} "
                          f"(mode=\"fast\" does not clip)")
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
        raise KernelError(f"take: batch dimensions {fmt_shape(batch)} and "
                          f"{fmt_shape(indices.shape[:bd])} differ at run time")
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
    (x,) = args
    if not is_int(attrs["dtype"]):
        raise OpTypeError(f"{name}: dtype must be an integer type, got {attrs['dtype']}")
    return TensorType((len(x.shape),), attrs["dtype"])


def _shape_of_kernel(args, attrs):
    return np.array(args[0].shape, dtype=attrs["dtype"]).reshape(args[0].ndim)


register("shape_of", 1, _shape_of_rel, _shape_of_kernel, "opaque",
         attrs=[AttrSpec("dtype", "dtype", "int32")],
         doc="the shape of a tensor as a rank-1 integer tensor")

