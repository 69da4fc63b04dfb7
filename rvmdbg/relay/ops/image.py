"""Resizing: image.resize2d and nn.upsampling (nearest, linear and cubic interpolation).

topi's semantics: every output pixel maps back to an input coordinate by the
coordinate_transformation_mode (computed in float32), nearest picks a pixel by the
rounding_method, linear blends the two neighbours on each axis and cubic the four (spline
coefficient cubic_alpha; cubic_exclude drops neighbours outside the image); pixel indices clamp
to the image. nn.upsampling is resize2d to round(size * scale) with "asymmetric" coordinates, or
"align_corners" when align_corners is set. Any dtype: linear and cubic blend integers and
bools in float32 and cast back (to bool: `!= 0`).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, register, tvm_cast,
)
from rvmdbg.relay.ops.layouts import layout_perm
from rvmdbg.relay.types import TensorType

# half_pixel_symmetric is ONNX's (Resize-19), which TVM lacked: see docs/differences.md
COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric")
ROUNDING_METHODS = ("", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_F32 = np.float32


def _source_coords(out: int, size: int, mode: str, start: float, end: float,
                   scale=None) -> np.ndarray:
    """The input coordinate (float32) of every output index along one axis; `scale` (ONNX's
    scale factor, an rvmdbg extension) maps by it and the unrounded length size * scale
    instead of by size / out."""
    if scale is not None:
        return _scaled_coords(out, size, mode, start, end, float(scale))
    x = np.arange(out, dtype=_F32)
    scale = _F32(size) / _F32(out)
    if mode in ("half_pixel", "half_pixel_symmetric"):  # the same when out is not rounded
        return (x + _F32(0.5)) * scale - _F32(0.5)
    if mode == "align_corners":
        if out == 1:
            return np.zeros(1, _F32)
        return _F32(size - 1) / _F32(out - 1) * x
    if mode == "asymmetric":
        return scale * x
    if mode == "pytorch_half_pixel":
        return (x + _F32(0.5)) * scale - _F32(0.5) if out > 1 else np.zeros(out, _F32)
    if mode == "tf_half_pixel_for_nn":
        return (x + _F32(0.5)) * scale
    # tf_crop_and_resize: the region of interest [start, end] in normalised coordinates
    if out > 1:
        return (_F32(start * (size - 1))
                + x * _F32(end - start) * _F32(size - 1) / _F32(out - 1)).astype(_F32)
    return np.full(out, _F32(0.5 * (start + end) * (size - 1)))


def _scaled_coords(out: int, size: int, mode: str, start: float, end: float,
                   scale: float) -> np.ndarray:
    """ONNX Resize's coordinates for a scale factor: the output length is size * scale before
    rounding (it differs from out when size * scale is not an integer)."""
    x = np.arange(out, dtype=np.float64)
    length = size * scale
    if mode == "half_pixel":
        c = (x + 0.5) / scale - 0.5
    elif mode == "half_pixel_symmetric":
        # the unrounded output's centre stays on the input's centre
        c = size / 2 * (1 - out / length) + (x + 0.5) / scale - 0.5
    elif mode == "align_corners":
        c = np.zeros(out) if length == 1 else x * (size - 1) / (length - 1)
    elif mode == "asymmetric":
        c = x / scale
    elif mode == "pytorch_half_pixel":
        c = (x + 0.5) / scale - 0.5 if length > 1 else np.zeros(out)
    elif mode == "tf_half_pixel_for_nn":
        c = (x + 0.5) / scale
    elif length > 1:
        c = start * (size - 1) + x * (end - start) * (size - 1) / (length - 1)
    else:
        c = np.full(out, 0.5 * (start + end) * (size - 1))
    return c.astype(_F32)


def _antialias_blend(x, ax, coords, scale, kernel, exclude):
    """Interpolate along `ax` with the filter widened by 1/scale (scale < 1, ONNX's
    antialias): each output mixes the taps whose distance d from its coordinate has
    kernel(d * scale) != 0, the weights normalised to sum 1."""
    size = x.shape[ax]
    reach = 1 if kernel == "linear" else 2
    half = int(np.ceil(reach / scale))  # taps on each side of floor(c)
    base = np.floor(coords.astype(np.float64)).astype(np.int64)
    taps = base[:, None] + np.arange(1 - half, half + 1)[None, :]
    d = np.abs((taps - coords.astype(np.float64)[:, None]) * scale)
    if kernel == "linear":
        w = np.clip(1 - d, 0, 1)
    else:
        a = kernel[1]
        w = np.where(d <= 1, (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1,
                     np.where(d < 2, a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a, 0.0))
    w = w / w.sum(axis=1, keepdims=True)
    if exclude:
        w = np.where((taps < 0) | (taps >= size), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    shape = [1] * x.ndim
    shape[ax] = len(coords)
    out = None
    for k in range(taps.shape[1]):
        part = x.take(np.clip(taps[:, k], 0, size - 1), axis=ax) * \
            w[:, k].astype(_F32).reshape(shape)
        out = part if out is None else out + part
    return out


def _nearest(coords: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "round":  # halves away from zero, as TVM's round on LLVM
        idx = np.sign(coords) * np.floor(np.abs(coords) + _F32(0.5))
    elif rounding == "round_prefer_floor":
        idx = np.ceil(coords - _F32(0.5))
    elif rounding == "round_prefer_ceil":
        idx = np.floor(coords + _F32(0.5))
    elif rounding == "floor":  # topi nudges by 1e-5 against rounding error
        idx = np.floor(coords + _F32(1e-5))
    else:
        idx = np.ceil(coords - _F32(1e-5))
    return idx.astype(np.int64)


def _linear_weights(t, _size, _first):
    return [_F32(1) - t, t]


def _cubic_weights(t, size, first, alpha, exclude):
    """The 4 cubic spline weights of the neighbours first .. first + 3 (exclude: drop those
    outside the image and renormalise)."""
    a = _F32(alpha)
    t2, t3 = t * t, t * t * t
    w = [a * (t3 - 2 * t2 + t),
         (a + 2) * t3 - (3 + a) * t2 + 1,
         -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t,
         -a * t3 + a * t2]
    if exclude:
        w = [np.where((first + k < 0) | (first + k >= size), _F32(0), wk)
             for k, wk in enumerate(w)]
        total = w[0] + w[1] + w[2] + w[3]
        w = [wk / total for wk in w]
    return w


def _blend(x, ax, coords, offset, weights):
    """Interpolate along `ax`: each output mixes the neighbours floor(c) + offset + k with the
    weights `weights[0](t, size, first, *weights[1:])` of t = c - floor(c)."""
    base = np.floor(coords)
    t = (coords - base).astype(_F32)
    size = x.shape[ax]
    first = base.astype(np.int64) + offset
    ws = weights[0](t, size, first, *weights[1:])
    shape = [1] * x.ndim
    shape[ax] = len(coords)
    out = None
    for k, wk in enumerate(ws):
        part = x.take(np.clip(first + k, 0, size - 1), axis=ax) * wk.reshape(shape)
        out = part if out is None else out + part
    return out


def resize_2d(x: np.ndarray, axes: tuple, out_hw: tuple, method: str, mode: str,
              rounding: str, roi=(0.0, 0.0, 0.0, 0.0), extrapolation: float = 0.0,
              out_dtype=None, cubic_alpha: float = -0.5, cubic_exclude: int = 0,
              scales=None, antialias: int = 0) -> np.ndarray:
    """topi's resize2d of `x` over its (height, width) `axes` to `out_hw` ("nearest_neighbor",
    "linear" or "cubic"); `scales` and `antialias` are ONNX's (rvmdbg extensions)."""
    ah, aw = axes
    dt = np.dtype(out_dtype or x.dtype)
    starts, ends = (roi[0], roi[1]), (roi[2], roi[3])
    coords, picks = [], []
    factors = list(scales) if scales is not None else [None, None]
    for ax, out, start, end, sc in zip(axes, out_hw, starts, ends, factors):
        size = x.shape[ax]
        c = _source_coords(out, size, mode, start, end, sc)
        coords.append(c)
        if method == "nearest_neighbor":
            # topi's integer division (floor) ignores the rounding; rvmdbg keeps it for TVM's
            # own methods and honours ONNX's (docs/differences.md)
            if mode == "asymmetric" and out % size == 0 and sc is None and \
                    rounding in ("", "floor", "round"):
                idx = np.arange(out) // (out // size)  # topi divides integers here
            else:
                rnd = rounding or ("round" if mode == "align_corners" else "floor")
                if mode == "tf_crop_and_resize":
                    rnd = "round"
                idx = _nearest(c, rnd)
            picks.append(np.clip(idx, 0, size - 1))
    with np.errstate(all="ignore"):
        if method == "nearest_neighbor":
            out = x.take(picks[0], axis=ah).take(picks[1], axis=aw)
        else:
            # separable: blend along the width first, then the height, as topi does
            out = x
            for ax, c, sc in reversed(list(zip(axes, coords, factors))):
                f = sc if sc is not None else out_hw[axes.index(ax)] / x.shape[ax]
                if antialias and f < 1:
                    kernel = "linear" if method == "linear" else ("cubic", cubic_alpha)
                    out = _antialias_blend(out, ax, c, f, kernel, cubic_exclude)
                elif method == "linear":
                    out = _blend(out, ax, c, 0, (_linear_weights,))
                else:
                    out = _blend(out, ax, c, -1, (_cubic_weights, cubic_alpha, cubic_exclude))
        if mode == "tf_crop_and_resize":
            for ax, c in zip(axes, coords):
                shape = [1] * x.ndim
                shape[ax] = len(c)
                outside = ((c < 0) | (c > x.shape[ax] - 1)).reshape(shape)
                out = np.where(outside, _F32(extrapolation), out)
        if dt.kind in "iu" and out.dtype.kind == "f":
            out = np.trunc(out)
        elif dt == BOOL:
            out = tvm_cast(out, BOOL)  # a blend of bools (float32) becomes `!= 0`
        return as_result(out, dt)


def _hw_axes(name, layout):
    return layout_perm(name, "layout", layout, "NCHW")[2:]


def _resize_rel(name, args, attrs):
    (x,) = args
    if len(x.shape) != 4:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor ({layout}), got {x}").format(
                op=name, rank=4, layout=attrs["layout"], x=x))
    axes = _hw_axes(name, attrs["layout"])
    size = attrs["size"]
    if len(size) != 2 or min(size) < 1:
        raise OpTypeError(_("{op}: attribute 'size' must be 2 positive integers, got "
                            "{size}").format(op=name, size=size))
    scales = attrs["scales"]
    if scales is not None and (not isinstance(scales, list) or len(scales) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in scales)):
        raise OpTypeError(_("{op}: attribute 'scales' must be 2 positive numbers, got "
                            "{scales}").format(op=name, scales=repr(scales)))
    roi = attrs["roi"]
    if roi is not None and (not isinstance(roi, list) or len(roi) != 4 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in roi)):
        raise OpTypeError(_("{op}: attribute 'roi' must be 4 numbers, got {roi}").format(
                op=name, roi=repr(roi)))
    shape = list(x.shape)
    shape[axes[0]], shape[axes[1]] = size
    return TensorType(tuple(shape), attrs["out_dtype"] or x.dtype)


def _resize_kernel(args, attrs):
    (x,) = args
    roi = attrs["roi"] or [0.0, 0.0, 0.0, 0.0]
    return resize_2d(x, _hw_axes("image.resize2d", attrs["layout"]), tuple(attrs["size"]),
                     attrs["method"], attrs["coordinate_transformation_mode"],
                     attrs["rounding_method"], roi, attrs["extrapolation_value"],
                     attrs["out_dtype"], attrs["cubic_alpha"], attrs["cubic_exclude"],
                     attrs["scales"], attrs["antialias"])


register("image.resize2d", 1, _resize_rel, _resize_kernel, "injective",
         attrs=[AttrSpec("size", "int_list"), AttrSpec("roi", "any", None),
                AttrSpec("layout", "str", "NCHW"),
                AttrSpec("method", "str", "linear",
                         choices=("nearest_neighbor", "linear", "cubic")),
                AttrSpec("coordinate_transformation_mode", "str", "half_pixel",
                         choices=COORDINATE_MODES),
                AttrSpec("rounding_method", "str", "round", choices=ROUNDING_METHODS),
                AttrSpec("cubic_alpha", "float", -0.5), AttrSpec("cubic_exclude", "int", 0),
                AttrSpec("extrapolation_value", "float", 0.0),
                AttrSpec("out_dtype", "dtype_or_none", None),
                # rvmdbg extensions for ONNX Resize (TVM had neither): the scale factors the
                # coordinates map by, and the widened filter when downsampling
                AttrSpec("scales", "any", None), AttrSpec("antialias", "int", 0)],
         doc="image.resize2d(data, size=[h, w], method=, coordinate_transformation_mode=): "
             "resize height and width (rvmdbg's scales=[sh, sw], antialias=1: ONNX's)")


def _upsampled(size, scale):
    # TVM rounds the scaled size halves away from zero
    return None if size is None else int(np.floor(size * scale + 0.5))


def _upsampling_rel(name, args, attrs):
    (x,) = args
    if len(x.shape) != 4:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor ({layout}), got {x}").format(
                op=name, rank=4, layout=attrs["layout"], x=x))
    axes = _hw_axes(name, attrs["layout"])
    shape = list(x.shape)
    for ax, attr in zip(axes, ("scale_h", "scale_w")):
        if attrs[attr] <= 0:
            raise OpTypeError(_("{op}: attribute '{attr}' must be positive, got {value}").format(
                    op=name, attr=attr, value=attrs[attr]))
        shape[ax] = _upsampled(shape[ax], attrs[attr])
        if shape[ax] == 0:
            raise OpTypeError(_("{op}: attribute '{attr}' shrinks the image to nothing").format(
                    op=name, attr=attr))
    return TensorType(tuple(shape), x.dtype)


def _upsampling_kernel(args, attrs):
    (x,) = args
    axes = _hw_axes("nn.upsampling", attrs["layout"])
    out_hw = (_upsampled(x.shape[axes[0]], attrs["scale_h"]),
              _upsampled(x.shape[axes[1]], attrs["scale_w"]))
    method = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs["method"], attrs["method"])
    mode = "align_corners" if attrs["align_corners"] else "asymmetric"
    return resize_2d(x, axes, out_hw, method, mode, "")


register("nn.upsampling", 1, _upsampling_rel, _upsampling_kernel, "injective",
         attrs=[AttrSpec("scale_h", "float"), AttrSpec("scale_w", "float"),
                AttrSpec("layout", "str", "NCHW"),
                AttrSpec("method", "str", "nearest_neighbor",
                         choices=("nearest_neighbor", "bilinear", "bicubic")),
                AttrSpec("align_corners", "bool", False)],
         doc="nn.upsampling(data, scale_h=, scale_w=, method=): enlarge height and width")


# ---------------------------------------------------------------------------------------------
# image.grid_sample: topi/image/grid_sample.py. The grid holds (x, y) in [-1, 1] per output
# pixel (N, 2, H_out, W_out); align_corners maps -1 and 1 to the corner pixels' centres
# (else their outer edges); padding_mode zeros reads 0 outside, border clamps the coordinate,
# reflection folds it back (then clamps); nearest rounds half to even (nearbyint); bicubic uses
# A = -0.75 over 4 x 4 neighbours. 5-d (NCDHW) data takes a grid (N, 3, D_out, H_out, W_out) of
# (x, y, z) and samples trilinearly or at the nearest voxel, as topi's 3-d grid_sample
# (bicubic is 2-d only there too).


def _unnormalize(v, size, align_corners):
    if align_corners:
        return (v + 1) * (size - 1) / 2
    return -0.5 + (v + 1) * size / 2


def _reflect(v, size, align_corners):
    span, start = (size - 1, 0.0) if align_corners else (size, -0.5)
    if span <= 0:
        return np.zeros_like(v)
    dist = np.abs(v - start)
    times = np.trunc(dist.astype(np.int32) / span).astype(np.int32)  # truncdiv of int32 casts
    extra = dist - times * span
    folded = np.where(times % 2 == 0, extra + start, span - extra + start)
    return np.where((v >= start) & (v <= span + start), v, folded).astype(v.dtype)


def _pixels(img, ys, xs):
    """img (C, H, W) at integer (ys, xs) arrays: 0 outside the image."""
    h, w = img.shape[1:]
    inside = (ys >= 0) & (xs >= 0) & (ys < h) & (xs < w)
    vals = img[:, np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)]
    return np.where(inside, vals, img.dtype.type(0))


def _cubic_weights_075(t):
    a = -0.75
    w1 = lambda f: ((a + 2) * f - (a + 3)) * f * f + 1  # noqa: E731
    w2 = lambda f: ((a * f - 5 * a) * f + 8 * a) * f - 4 * a  # noqa: E731
    return [w2(t + 1), w1(t), w1(1 - t), w2(2 - t)]


def grid_sample_2d(data, grid, method, padding_mode, align_corners):
    n_batch, channels, h, w = data.shape
    dt = data.dtype
    out = np.empty((n_batch, channels) + grid.shape[2:], dt)
    for n in range(n_batch):
        img = data[n]
        y = _unnormalize(grid[n, 1].astype(dt), h, align_corners).astype(dt)
        x = _unnormalize(grid[n, 0].astype(dt), w, align_corners).astype(dt)
        if method == "bicubic":
            y0, x0 = np.floor(y).astype(np.int32), np.floor(x).astype(np.int32)
            wy, wx = _cubic_weights_075(y - y0), _cubic_weights_075(x - x0)

            def fix(idx, size):
                if padding_mode == "border":
                    return np.clip(idx, 0, size - 1)
                if padding_mode == "reflection":
                    r = _reflect(idx.astype(dt), size, align_corners)
                    return np.clip(r, 0, size - 1).astype(np.int32)
                return idx
            rows = []
            for i in range(4):
                yi = fix(y0 - 1 + i, h)
                row = sum(_pixels(img, yi, fix(x0 - 1 + j, w)) * wx[j] for j in range(4))
                rows.append(row)
            out[n] = sum(rows[i] * wy[i] for i in range(4))
            continue
        if padding_mode == "reflection":
            y = np.clip(_reflect(y, h, align_corners), 0, h - 1)
            x = np.clip(_reflect(x, w, align_corners), 0, w - 1)
        elif padding_mode == "border":
            y, x = np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)
        if method == "nearest":
            out[n] = _pixels(img, np.rint(y).astype(np.int32), np.rint(x).astype(np.int32))
            continue
        y0, x0 = np.floor(y).astype(np.int32), np.floor(x).astype(np.int32)
        ty, tx = (y - y0).astype(dt), (x - x0).astype(dt)
        one = dt.type(1)
        out[n] = (_pixels(img, y0, x0) * (one - ty) * (one - tx)
                  + _pixels(img, y0, x0 + 1) * (one - ty) * tx
                  + _pixels(img, y0 + 1, x0) * ty * (one - tx)
                  + _pixels(img, y0 + 1, x0 + 1) * ty * tx)
    return out


def _voxels(vol, zs, ys, xs):
    """vol (C, D, H, W) at integer (zs, ys, xs) arrays: 0 outside the volume."""
    d, h, w = vol.shape[1:]
    inside = (zs >= 0) & (ys >= 0) & (xs >= 0) & (zs < d) & (ys < h) & (xs < w)
    vals = vol[:, np.clip(zs, 0, d - 1), np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)]
    return np.where(inside, vals, vol.dtype.type(0))


def grid_sample_3d(data, grid, method, padding_mode, align_corners):
    n_batch, channels = data.shape[:2]
    sizes = data.shape[2:]                       # (D, H, W)
    dt = data.dtype
    out = np.empty((n_batch, channels) + grid.shape[2:], dt)
    for n in range(n_batch):
        # the grid's channel 0 is x (W), 1 is y (H), 2 is z (D)
        coords = [_unnormalize(grid[n, 2 - i].astype(dt), sizes[i], align_corners).astype(dt)
                  for i in range(3)]
        if padding_mode == "reflection":
            coords = [np.clip(_reflect(v, size, align_corners), 0, size - 1)
                      for v, size in zip(coords, sizes)]
        elif padding_mode == "border":
            coords = [np.clip(v, 0, size - 1) for v, size in zip(coords, sizes)]
        if method == "nearest":
            out[n] = _voxels(data[n], *(np.rint(v).astype(np.int32) for v in coords))
            continue
        low = [np.floor(v).astype(np.int32) for v in coords]
        frac = [(v - v0).astype(dt) for v, v0 in zip(coords, low)]
        one = dt.type(1)
        acc = np.zeros((channels,) + grid.shape[2:], dt)
        for corner in range(8):
            bits = [(corner >> (2 - i)) & 1 for i in range(3)]
            weight = np.ones(grid.shape[2:], dt)
            for b, t in zip(bits, frac):
                weight = weight * (t if b else one - t)
            acc = acc + _voxels(data[n], *(v0 + b for v0, b in zip(low, bits))) * weight
        out[n] = acc
    return out


def _grid_sample_rel(name, args, attrs):
    data, grid = args
    rank = len(data.shape)
    if (rank, attrs["layout"]) not in ((4, "NCHW"), (5, "NCDHW")):
        raise OpTypeError(_("{op}: rvmdbg samples 4-d NCHW or 5-d NCDHW data, got {x} "
                            "({layout})").format(op=name, x=data, layout=attrs["layout"]))
    if rank == 4 and (len(grid.shape) != 4 or grid.shape[1] not in (2, None)):
        raise OpTypeError(_("{op}: grid must be (batch, 2, height, width), got {t}").format(
                op=name, t=grid))
    if rank == 5 and (len(grid.shape) != 5 or grid.shape[1] not in (3, None)):
        raise OpTypeError(_("{op}: grid must be (batch, 3, depth, height, width), got "
                            "{t}").format(op=name, t=grid))
    if rank == 5 and attrs["method"] == "bicubic":
        raise OpTypeError(_("{op}: bicubic sampling is 2-d only (as in topi)").format(op=name))
    return TensorType(tuple(data.shape[:2]) + tuple(grid.shape[2:]), data.dtype)


def _grid_sample_kernel(args, attrs):
    data, grid = args
    if data.dtype.kind != "f":
        raise KernelError(_("image.grid_sample: topi interpolates floats, got {dtype}").format(
                dtype=data.dtype))
    with np.errstate(all="ignore"):
        sample = grid_sample_3d if data.ndim == 5 else grid_sample_2d
        return as_result(sample(data, grid, attrs["method"], attrs["padding_mode"],
                                attrs["align_corners"]), data.dtype)


register("image.grid_sample", 2, _grid_sample_rel, _grid_sample_kernel, "injective",
         attrs=[AttrSpec("method", "str", "bilinear",
                         choices=("bilinear", "nearest", "bicubic")),
                AttrSpec("layout", "str", "NCHW"),
                AttrSpec("padding_mode", "str", "zeros",
                         choices=("zeros", "border", "reflection")),
                AttrSpec("align_corners", "bool", True)],
         doc="image.grid_sample(data, grid, method=\"bilinear\", padding_mode=\"zeros\", "
             "align_corners=True): sample data at the grid's normalised (x, y) points")
