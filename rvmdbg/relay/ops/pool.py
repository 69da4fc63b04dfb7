"""Pooling: nn.max_pool1d/2d, nn.avg_pool1d/2d, nn.global_avg_pool2d, nn.global_max_pool2d,
nn.adaptive_avg_pool2d.

topi's semantics: max pooling pads with the dtype's lowest value, average pooling with zeros
and divides by the window's element count (the padded ones included when count_include_pad;
never the extra cells ceil_mode adds at the end, so a window wholly in those counts 0 or less
and gives NaN or -0.0, see `_cells_to_padding_end`). Kernels work in the written layout, one
vectorised pass per window position; adaptive windows run from floor(i*in/out) to
ceil((i+1)*in/out). Global and adaptive average pooling divide by TVM's factor: each axis's
window length cast to the dtype, multiplied in the dtype (see `_adaptive_divisor`); a bool
window sum is TVM's 1-bit one, the parity.
"""
from __future__ import annotations

import itertools

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, bool_parity, register,
    tvm_lowering_refuses,
)
from rvmdbg.relay.ops.layouts import (
    CANONICAL_DATA, StridePhases, expand_padding, layout_perm, spatial_values, window_out,
)
from rvmdbg.relay.ops.reduce import plain_extreme_is_tvms, tvm_reduce_max
from rvmdbg.relay.types import TensorType

# ---------------------------------------------------------------------------------------------
# Windowed pooling


def _spatial_axes(name, attrs, n):
    perm = layout_perm(name, "layout", attrs["layout"], CANONICAL_DATA[n])
    out_perm = layout_perm(name, "out_layout", attrs["out_layout"] or attrs["layout"],
                           CANONICAL_DATA[n])
    if out_perm != perm:
        raise OpTypeError(_("{op}: attribute 'out_layout' must equal 'layout' (\"{layout}\"), "
                            "got \"{out_layout}\"").format(
                op=name, layout=attrs['layout'], out_layout=attrs['out_layout']))
    return perm[2:]


def _window_attrs(name, attrs, n):
    pool = spatial_values(name, "pool_size", attrs["pool_size"], n)
    strides = spatial_values(name, "strides", attrs["strides"], n)
    dilation = spatial_values(name, "dilation", attrs["dilation"], n)
    before, after = expand_padding(name, attrs["padding"], n)
    return pool, strides, dilation, before, after


def _pool_rel(name, args, attrs, n):
    (x,) = args  # Pool*Rel: any dtype
    if len(x.shape) != n + 2:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor ({layout}), got {x}").format(
                op=name, rank=n + 2, layout=attrs["layout"], x=x))
    axes = _spatial_axes(name, attrs, n)
    pool, strides, dilation, before, after = _window_attrs(name, attrs, n)
    shape = list(x.shape)
    for ax, k, s, d, b, a in zip(axes, pool, strides, dilation, before, after):
        window = (k - 1) * d + 1
        o = window_out(shape[ax], b, a, window, s, attrs["ceil_mode"])
        if o is not None and o < 1:
            raise OpTypeError(_("{op}: a {window}-wide window (attribute 'pool_size' {pool}, "
                                "dilation {d}) does not fit an input of {size} padded by ({b}, "
                                "{a})").format(
                    op=name, window=window, pool=list(pool), d=d, size=shape[ax], b=b, a=a))
        shape[ax] = o
    return TensorType(tuple(shape), x.dtype)


def _lowest(dtype):
    if dtype.kind == "b":
        return False
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def pool_nd(x: np.ndarray, axes, pool, strides, dilation, before, after, ceil_mode: bool,
            kind: str, count_include_pad: bool = False) -> np.ndarray:
    """Max ("max") or average ("avg") pooling of `x` over `axes`, as topi computes it."""
    outs, pads = [], [(0, 0)] * x.ndim
    for ax, k, s, d, b, a in zip(axes, pool, strides, dilation, before, after):
        size = x.shape[ax]
        o = window_out(size, b, a, (k - 1) * d + 1, s, ceil_mode)
        if o < 1:
            raise KernelError(_("the pooling window does not fit an input of {size} at run time").format(size=size))
        outs.append(o)
        # ceil_mode's last windows may reach past the written padding: pad for them too
        pads[ax] = (b, max(a, (o - 1) * s + (k - 1) * d + 1 - size - b))
    fill = _lowest(x.dtype) if kind == "max" else 0
    # topi's max reducer is `acc > v ? acc : v` from the lowest finite value, an ordered
    # compare: NumPy's maximum is the same but for a NaN or a -0.0 (then the select itself)
    ordered = kind == "max" and x.dtype.kind == "f" and not plain_extreme_is_tvms(x)
    flat = not ordered and len(axes) == 2 and tuple(axes) == (x.ndim - 2, x.ndim - 1)
    with np.errstate(all="ignore"):
        if not flat:
            acc = _taps_general(x, axes, pads, fill, pool, strides, dilation, outs, kind,
                                ordered)
        elif _whole_image(x, pads, pool, dilation, outs):
            acc = _whole_image_taps(x, kind)
        else:
            acc = _taps_phased(x, pads[-2:], fill, pool, strides, dilation, outs, kind)
        if kind == "max":
            return acc
        count = np.ones((1,) * x.ndim, dtype=np.int64)
        for ax, k, s, d, b, a, o in zip(axes, pool, strides, dilation, before, after, outs):
            size = x.shape[ax]
            shape = [1] * x.ndim
            shape[ax] = o
            if count_include_pad:
                count = count * _cells_to_padding_end(o, size, k, s, d, b, a).reshape(shape)
            else:
                pos = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
                count = count * ((pos >= 0) & (pos < size)).sum(axis=1).reshape(shape)
        if not count_include_pad:
            count = np.maximum(count, 1)   # topi's max(count, 1): a window of padding alone
        elif x.dtype.kind != "f" and not count.all():
            raise KernelError(_("integer division by zero (a window lies wholly in "
                                "ceil_mode's extra padding)"))
        return _divide(acc, count)


def _taps_general(x, axes, pads, fill, pool, strides, dilation, outs, kind, ordered):
    """The window sum or max of a pool over any axes, tap by tap over strided views of the
    padded data; `ordered`: the max as topi's ordered select (a NaN or a -0.0 in the data)."""
    xp = x if all(p == (0, 0) for p in pads) else np.pad(x, pads, constant_values=fill)
    acc = None
    for offsets in itertools.product(*(range(k) for k in pool)):
        index = [slice(None)] * x.ndim
        for ax, off, s, d, o in zip(axes, offsets, strides, dilation, outs):
            start = off * d
            index[ax] = slice(start, start + (o - 1) * s + 1, s)
        part = xp[tuple(index)]
        if ordered:
            if acc is None:
                acc = np.full(part.shape, fill, x.dtype)
            acc = np.where(acc > part, acc, part)
        else:
            acc = _fold(acc, part, kind)
    if kind == "max" and x.dtype.kind == "f" and not ordered:
        # NumPy's maximum from the first element: the loop from the lowest finite value
        # lifts a window of only -inf to it
        acc = np.maximum(acc, fill)
    return acc


def _taps_phased(x, pads, fill, pool, strides, dilation, outs, kind):
    """The window sum or max of a pool over the last two axes, tap by tap in the general
    loop's order (so the same sums, bit for bit), each tap one contiguous run of a flattened
    stride phase of the padded image (`StridePhases`), so NumPy's loops run whole images
    instead of rows of ow values. A small image (under 400 values a run) of NCHW data of 8
    channels or more runs channels-last: a run is oh rows of W*C values, not one short image
    per channel (Inception v2's 3 x 3 pools over 576 x 14 x 14 and its 7 x 7 average over
    1024 channels)."""
    phases = StridePhases(x, pads, outs, pool, strides, dilation, fill)
    if x.ndim == 4 and phases.oh * phases.width < 400 and x.shape[1] >= 8:
        phases = StridePhases(x, pads, outs, pool, strides, dilation, fill, last=True)
    acc = None
    for i in range(pool[0]):
        for j in range(pool[1]):
            run = phases.run(i, j)
            if acc is None and kind == "max" and x.dtype.kind == "f":
                # from topi's start, the lowest finite value (max is order-free here: no NaN,
                # no -0.0), which spares a pass lifting windows of only -inf at the end
                acc = np.maximum(run, fill)
            else:
                acc = _fold(acc, run, kind)
    return phases.crop(acc)


def _whole_image(x, pads, pool, dilation, outs) -> bool:
    """Is the one window the whole unpadded image (a global pool written as a pool), over 8
    images or more? (With one image NumPy's reduction runs down the column itself, pairwise,
    not tap after tap.)"""
    return (tuple(outs) == (1, 1) and all(p == (0, 0) for p in pads[-2:])
            and tuple(dilation) == (1, 1) and tuple(pool) == x.shape[-2:]
            and x.size >= 8 * x.shape[-2] * x.shape[-1])


def _whole_image_taps(x, kind):
    """The window sum or max of a pool whose one window is the whole image, in the taps'
    order as the general loop adds them: the image's values made rows of one matrix (one
    transposing copy), then one reduction down the rows, which NumPy adds row after row
    (each tap one row) where the phased loop made a NumPy call a tap (ShuffleNet's 7 x 7
    average over 544 channels: 114 -> 42 us a call, ResNet-50's over 2,048: 217 -> 104)."""
    lead = x.shape[:-2]
    taps = np.ascontiguousarray(x.reshape(-1, x.shape[-2] * x.shape[-1]).T)
    if kind == "max":
        top = np.maximum.reduce(taps, axis=0)
        if x.dtype.kind == "f":   # from topi's start, the lowest finite value, as the phases
            top = np.maximum(top, _lowest(x.dtype))
        return top.reshape(*lead, 1, 1)
    # in the data's dtype (NumPy's reduction would widen int32 to int64; the loop wraps),
    # from topi's 0, as `_fold` starts
    return np.add.reduce(taps, axis=0, dtype=x.dtype, initial=0).reshape(*lead, 1, 1)


def _fold(acc, part, kind):
    """One more tap into the window's running max or sum: the max starts as a copy of the
    first tap, the sum as topi's does, 0 + the first tap (a window of only -0.0 sums to
    +0.0)."""
    if acc is None:
        return part.copy() if kind == "max" else np.add(part, part.dtype.type(0))
    if kind == "max":
        np.maximum(acc, part, out=acc)
    else:
        acc += part
    return acc


def _cells_to_padding_end(o: int, size: int, k: int, s: int, d: int, b: int, a: int):
    """topi's count_include_pad count along one axis, for each of the `o` windows:
    (last - first) / d + 1 in C's truncating division, where `last` is the window's last cell
    or the written padding's last one, whichever comes first; a window wholly in ceil_mode's
    extra cells (first past that end) counts 1 - floor(excess / d), 0 or less, and topi does
    not lift the count to 1 there (0 / 0 is NaN, 0 / -1 is -0.0)."""
    first = np.arange(o) * s - b
    span = np.minimum(first + (k - 1) * d, size + a - 1) - first
    return np.where(span >= 0, span // d, -(-span // d)) + 1


def _divide(total: np.ndarray, count) -> np.ndarray:
    """total / count in total's dtype; integers truncate toward zero as topi's div does (the
    count may be negative once wrapped to a narrow dtype; the caller has refused zero)."""
    if total.dtype.kind == "f":
        return total / count.astype(total.dtype)
    count = np.asarray(count).astype(total.dtype)
    with np.errstate(all="ignore"):
        # the remainder takes the dividend's sign (C's), so what is left divides exactly
        return ((total - np.fmod(total, count)) // count).astype(total.dtype)


# the integer dtypes whose average pooling TVM computes (the int32 count promotes to them)
_AVG_INT_DTYPES = frozenset(np.dtype(d) for d in ("int32", "int64", "uint32", "uint64"))


def _pool_kernel(name, n, kind):
    def kernel(args, attrs):
        (x,) = args
        axes = _spatial_axes(name, attrs, n)
        pool, strides, dilation, before, after = _window_attrs(name, attrs, n)
        if kind == "avg" and x.dtype.kind in "biu" and x.dtype not in _AVG_INT_DTYPES:
            # topi divides by an int32 count: the quotient of a narrower integer is int32,
            # and its kernel's int32 output does not fit the relation's result tensor
            raise tvm_lowering_refuses(name, x.dtype, _("its kernel divides by an int32 count "
                                                        "and returns int32"),
                                       _("cast to int32 or a float dtype first"))
        try:
            out = pool_nd(x, axes, pool, strides, dilation, before, after, attrs["ceil_mode"],
                          kind, attrs.get("count_include_pad", False))
        except KernelError as e:
            raise KernelError(_("{op}: {message}").format(op=name, message=e.message)) from None
        return as_result(out, x.dtype)
    return kernel


def _pool_attrs(n, avg):
    attrs = [AttrSpec("pool_size", "int_list"),
             AttrSpec("strides", "int_list", [1] * n),
             AttrSpec("dilation", "int_list", [1] * n),
             AttrSpec("padding", "int_list", [0] * n),
             AttrSpec("layout", "str", CANONICAL_DATA[n]),
             AttrSpec("out_layout", "str", ""),
             AttrSpec("ceil_mode", "bool", False)]
    if avg:
        attrs.append(AttrSpec("count_include_pad", "bool", False))
    return attrs


def _register_pool(name, n, kind):
    register(name, 1, lambda op, args, attrs: _pool_rel(op, args, attrs, n),
             _pool_kernel(name, n, kind), "out_elemwise_fusable",
             attrs=_pool_attrs(n, kind == "avg"),
             doc=f"{name}(data, pool_size=, strides=, padding=, ceil_mode=): "
                 f"{'maximum' if kind == 'max' else 'mean'} over each window")


_register_pool("nn.max_pool1d", 1, "max")
_register_pool("nn.max_pool2d", 2, "max")
_register_pool("nn.avg_pool1d", 1, "avg")
_register_pool("nn.avg_pool2d", 2, "avg")
_register_pool("nn.max_pool3d", 3, "max")
_register_pool("nn.avg_pool3d", 3, "avg")


# ---------------------------------------------------------------------------------------------
# Global and adaptive pooling


def _hw_axes(name, attrs, x):
    if len(x.shape) != 4:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor ({layout}), got {x}").format(
                op=name, rank=4, layout=attrs["layout"], x=x))
    return _spatial_axes(name, attrs, 2)


def _global_rel(name, args, attrs):
    (x,) = args
    axes = _hw_axes(name, attrs, x)
    shape = list(x.shape)
    for ax in axes:
        shape[ax] = 1
    return TensorType(tuple(shape), x.dtype)


def _global_kernel(name, kind):
    def kernel(args, attrs):
        (x,) = args
        axes = tuple(layout_perm("", "layout", attrs["layout"], "NCHW")[2:])
        with np.errstate(all="ignore"):
            if kind == "max":
                out = tvm_reduce_max(x, tuple(sorted(axes)), True)  # max's loop; bool: or
            elif x.dtype == BOOL:  # the factor (1 when TVM lowers it at all) checks the sizes
                _adaptive_divisor(name, x.dtype, x.shape[axes[0]], 1, x.shape[axes[1]], 1)
                out = bool_parity(x.sum(axis=axes, keepdims=True, dtype=np.int64))
            else:
                out = _divide(x.sum(axis=axes, keepdims=True, dtype=x.dtype),
                              _adaptive_divisor(name, x.dtype, x.shape[axes[0]], 1,
                                                x.shape[axes[1]], 1)[0, 0])
        return as_result(out, x.dtype)
    return kernel


_GLOBAL_ATTRS = [AttrSpec("layout", "str", "NCHW"), AttrSpec("out_layout", "str", "")]
register("nn.global_avg_pool2d", 1, _global_rel, _global_kernel("nn.global_avg_pool2d", "avg"),
         "out_elemwise_fusable", attrs=_GLOBAL_ATTRS,
         doc="mean over height and width: (N, C, H, W) -> (N, C, 1, 1)")
register("nn.global_max_pool2d", 1, _global_rel, _global_kernel("nn.global_max_pool2d", "max"),
         "out_elemwise_fusable", attrs=_GLOBAL_ATTRS,
         doc="maximum over height and width: (N, C, H, W) -> (N, C, 1, 1)")


def _output_size(name, attrs, in_h, in_w):
    size = attrs["output_size"]
    if size is None:
        size = []
    elif isinstance(size, int) and not isinstance(size, bool):
        size = [size]
    if not isinstance(size, list) or len(size) > 2 or not all(
            v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in size):
        raise OpTypeError(_("{op}: attribute 'output_size' must be a list of up to 2 integers, "
                            "got {size}").format(op=name, size=repr(size)))
    if len(size) == 0:
        size = [None, None]
    elif len(size) == 1:
        size = size * 2
    out = [in_h if size[0] is None else size[0], in_w if size[1] is None else size[1]]
    for v in out:
        if v is not None and v < 1:
            raise OpTypeError(_("{op}: attribute '{attr}' must be positive, got {value}").format(
                    op=name, attr="output_size", value=size))
    return out


def _adaptive_rel(name, args, attrs):
    (x,) = args
    axes = _hw_axes(name, attrs, x)
    shape = list(x.shape)
    out = _output_size(name, attrs, shape[axes[0]], shape[axes[1]])
    for ax, o in zip(axes, out):
        shape[ax] = o
    return TensorType(tuple(shape), x.dtype)


def _window_sums(size: int, out: int) -> tuple:
    """(0/1 matrix (out, size) marking each adaptive window, the window lengths)."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)  # ceil
    pos = np.arange(size)
    mark = (pos[None, :] >= start[:, None]) & (pos[None, :] < end[:, None])
    return mark, end - start


def _axis_factor(name, dtype, size: int, out: int) -> np.ndarray:
    """One axis of topi's divide factor: each window's length cast to the dtype. Equal windows
    (size % out == 0) make it a constant, which TVM's make_const refuses when it does not fit
    the dtype; unequal ones are cast when the kernel runs (to bool: `!= 0`; integers wrap)."""
    lengths = _window_sums(size, out)[1]
    if dtype.kind in "biu" and size % out == 0:
        top = 1 if dtype == BOOL else int(np.iinfo(dtype).max)
        if size // out > top:
            raise tvm_lowering_refuses(
                name, dtype, _("lowering refuses: the window size {n} exceeds the maximum of "
                               "{dtype}").format(n=size // out, dtype=dtype.name),
                _("cast to a wider dtype first"))
    return (lengths != 0).astype(np.int64) if dtype == BOOL else lengths


def _adaptive_divisor(name, dtype, in_h: int, out_h: int, in_w: int, out_w: int) -> np.ndarray:
    """topi's divide factor (out_h, out_w) for average pooling: cast(1) * cast(height window)
    * cast(width window), multiplied in the dtype (integers wrap: int8 over 12 x 12 divides by
    -112; bool is 1 where TVM has a kernel at all)."""
    fh = _axis_factor(name, dtype, in_h, out_h)
    fw = _axis_factor(name, dtype, in_w, out_w)
    if dtype.kind == "f":
        return fh[:, None].astype(dtype) * fw[None, :].astype(dtype)
    with np.errstate(all="ignore"):
        factor = (fh[:, None] * fw[None, :]).astype(dtype)
    if not factor.all():  # wrapped to 0 (uint8 over 16 x 16)
        raise KernelError(_("{op}: integer division by zero").format(op=name))
    return factor


def _adaptive_avg_kernel(args, attrs):
    (x,) = args
    name = "nn.adaptive_avg_pool2d"
    ah, aw = layout_perm(name, "layout", attrs["layout"], "NCHW")[2:]
    oh, ow = _output_size(name, attrs, x.shape[ah], x.shape[aw])
    mh = _window_sums(x.shape[ah], oh)[0]
    mw = _window_sums(x.shape[aw], ow)[0]
    divisor = _adaptive_divisor(name, x.dtype, x.shape[ah], oh, x.shape[aw], ow)
    # move H, W last, sum each window with two products by 0/1 matrices, divide by its count
    rest = [a for a in range(4) if a not in (ah, aw)]
    xt = x.transpose(rest + [ah, aw])
    acc = np.dtype(np.int64) if x.dtype == BOOL else x.dtype
    with np.errstate(all="ignore"):
        sums = np.matmul(np.matmul(mh.astype(acc), xt.astype(acc, copy=False)), mw.T.astype(acc))
        # a bool sum is the parity; the bool factor is 1, so the quotient is the sum
        out = bool_parity(sums) if x.dtype == BOOL else _divide(sums, divisor)
    back = np.argsort(rest + [ah, aw])
    return as_result(np.ascontiguousarray(out.transpose(back)), x.dtype)


register("nn.adaptive_avg_pool2d", 1, _adaptive_rel, _adaptive_avg_kernel,
         "out_elemwise_fusable",
         attrs=[AttrSpec("output_size", "any", None), AttrSpec("layout", "str", "NCHW"),
                AttrSpec("out_layout", "str", "")],
         doc="nn.adaptive_avg_pool2d(data, output_size=[h, w]): mean over adaptive windows")
