"""Converters of image operators: Resize and Upsample."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c

_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}


def _method(g, attrs) -> str:
    mode = attrs.get("mode", "nearest")
    if mode not in _METHODS:
        raise g.error(f"value {mode} of attribute mode of Resize is not valid")
    return _METHODS[mode]


def _resize(g, x, size, roi, method, coord, nearest, alpha, exclude, extrapolation,
            scales=None, antialias=0):
    ndims = g.rank_of(x)
    sv = c.const_value(g, size)
    if sv is None:
        raise g.needs_value("the output size", size)
    out_size = [int(v) for v in np.asarray(sv).reshape(-1)[2:ndims]]
    extra = {}
    in_shape = g.shape_of(x)[2:ndims]
    if scales is not None and any(d is None or d * float(f) != o
                                  for d, f, o in zip(in_shape, scales[2:ndims], out_size)):
        # ONNX maps coordinates by the scale when size * scale is not an integer (TVM used
        # size / out): resize2d's rvmdbg extension attribute
        extra["scales"] = [float(f) for f in scales[2:ndims]]
    if antialias and method != "nearest_neighbor":
        extra["antialias"] = 1
    if extra and ndims != 4:
        raise g.error("Resize with antialias, or a scale whose output size is rounded, is "
                      "supported for 4-D data only")
    if roi is not None:
        rv = c.const_value(g, roi)
        if rv is None:
            raise g.needs_value("the roi", roi)
        rv = np.asarray(rv, "float64").reshape(-1)
        roi = [float(v) for v in np.concatenate([rv[2:ndims], rv[ndims + 2:2 * ndims]])]
    name = {3: "image.resize1d", 4: "image.resize2d", 5: "image.resize3d"}.get(ndims)
    if name is None:
        raise g.error("Resize supports 3-D, 4-D and 5-D data only")
    layout = {3: "NCW", 4: "NCHW", 5: "NCDHW"}[ndims]
    return g.call(name, [x], size=out_size, roi=roi or [0.0] * (2 * (ndims - 2)),
                  layout=layout, method=method, coordinate_transformation_mode=coord,
                  rounding_method=nearest, cubic_alpha=float(alpha),
                  cubic_exclude=int(exclude), extrapolation_value=float(extrapolation),
                  out_dtype="", **extra)


def _size_from_scale(g, x, scale, axes=None):
    if axes is not None:
        # opset 18: scales for the axes given, 1 elsewhere
        sv = c.const_value(g, scale)
        if sv is None:
            raise g.needs_value("the scales", scale)
        rank = g.rank_of(x)
        full = np.ones(rank, str(np.asarray(sv).dtype))
        for a, v in zip(axes, np.asarray(sv).reshape(-1)):
            full[a % rank] = v
        scale = g.const(full)
    return g.call("multiply", [c.cast(g, c.shape_of(g, x), g.dtype_of(scale)), scale])


@converter("Resize", since=10)
def resize_v10(g, node, inputs, attrs):
    x, scale = inputs[0], inputs[1]
    size = g.fold(_size_from_scale(g, x, scale))
    return _resize(g, x, size, None, _method(g, attrs), "asymmetric", "", -0.5, 0, 0.0)


def _common(g, inputs, size, attrs, scales=None):
    x = inputs[0]
    roi = inputs[1] if len(inputs) > 1 else None
    if roi is not None and g.shape_of(roi)[0] == 0:
        roi = None
    axes = attrs.get("axes")
    policy = attrs.get("keep_aspect_ratio_policy", "stretch")
    if axes is not None or policy != "stretch":
        # opset 18: sizes/scales/roi for the axes given, and sizes kept to the aspect ratio
        size, roi = _opset18_size(g, x, size, roi, axes, policy)
    return _resize(g, x, g.fold(size), roi, _method(g, attrs),
                   attrs.get("coordinate_transformation_mode", "half_pixel"),
                   attrs.get("nearest_mode", "round_prefer_floor"),
                   attrs.get("cubic_coeff_a", -0.75), attrs.get("exclude_outside", 0),
                   attrs.get("extrapolation_value", 0.0), scales,
                   attrs.get("antialias", 0))


def _full_scales(g, x, scale, axes):
    """The constant scale factors of every axis (1 where Resize-18's axes leave one out)."""
    sv = c.const_value(g, scale)
    if sv is None:
        return None
    sv = np.asarray(sv, "float64").reshape(-1)
    if axes is None:
        return list(sv)
    rank = g.rank_of(x)
    full = [1.0] * rank
    for a, v in zip(axes, sv):
        full[a % rank] = float(v)
    return full


def _opset18_size(g, x, size, roi, axes, policy):
    """The full-rank size (and roi) for Resize-18's `axes` and `keep_aspect_ratio_policy`,
    computed at import time from constants."""
    shape = g.shape_of(x)
    rank = len(shape)
    axes = [a % rank for a in (axes if axes is not None else range(rank))]
    sv = c.const_value(g, size)
    if sv is None or any(d is None for d in shape):
        raise g.needs_value("the output size", size)
    sv = np.asarray(sv, "float64").reshape(-1)
    full = np.asarray(shape, "float64")
    if len(sv) == len(axes):
        given = dict(zip(axes, sv))
    else:
        given = dict(zip(range(rank), sv))
    if policy != "stretch":
        ratios = [given[a] / shape[a] for a in axes]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        for a in axes:
            given[a] = np.floor(scale * shape[a] + 0.5)
    for a, v in given.items():
        full[a] = v
    if roi is not None and len(axes) < rank:
        rv = c.const_value(g, roi)
        if rv is None:
            raise g.needs_value("the roi", roi)
        rv = np.asarray(rv, "float32").reshape(-1)
        lo, hi = np.zeros(rank, "float32"), np.ones(rank, "float32")
        for i, a in enumerate(axes):
            lo[a], hi[a] = rv[i], rv[i + len(axes)]
        roi = g.const(np.concatenate([lo, hi]))
    return g.const(full.astype("int64")), roi


@converter("Resize", since=11)
def resize_v11(g, node, inputs, attrs):
    scale = inputs[2] if len(inputs) > 2 else None
    size = inputs[3] if len(inputs) > 3 else None
    scales = None
    if size is None or (scale is not None and g.shape_of(scale) and g.shape_of(scale)[0]):
        size = _size_from_scale(g, inputs[0], scale, attrs.get("axes"))
        scales = _full_scales(g, inputs[0], scale, attrs.get("axes"))
    return _common(g, inputs, size, attrs, scales)


@converter("Resize", since=13)
def resize_v13(g, node, inputs, attrs):
    scale = inputs[2] if len(inputs) > 2 else None
    size = inputs[3] if len(inputs) > 3 else None
    if scale is not None and size is not None:
        return resize_v11(g, node, inputs, attrs)
    scales = None
    if size is None:
        size = _size_from_scale(g, inputs[0], scale, attrs.get("axes"))
        scales = _full_scales(g, inputs[0], scale, attrs.get("axes"))
    return _common(g, inputs, size, attrs, scales)


@converter("Upsample", since=9)
def upsample(g, node, inputs, attrs):
    x = inputs[0]
    scales = c.const_value(g, inputs[1]) if len(inputs) > 1 else np.asarray(attrs["scales"])
    if scales is None:
        raise g.needs_value("the scales", inputs[1])
    mode = attrs.get("mode", "nearest")
    method = "nearest_neighbor" if mode == "nearest" else "linear"
    shape = g.shape_of(x)
    size = np.floor(np.asarray(shape, "float64") * np.asarray(scales, "float64"))
    return _resize(g, x, g.const(size.astype("int64")), None, method,
                   "asymmetric", "", -0.5, 0, 0.0)


converter("Upsample", since=7)(upsample)
