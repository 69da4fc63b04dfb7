"""Converters of quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear) through
Relay's `qnn` operators, as TVM's frontend emitted them."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


def _zero_point(g, zp, like_dtype="uint8"):
    if zp is None:
        return g.const(np.asarray(0, "int32")), like_dtype
    return c.cast(g, zp, "int32"), g.dtype_of(zp)


@converter("QuantizeLinear", since=10)
def quantize_v10(g, node, inputs, attrs):
    data, scale = inputs[0], inputs[1]
    zp, out_dtype = _zero_point(g, inputs[2] if len(inputs) > 2 else None)
    return g.call("qnn.quantize", [data, scale, zp], axis=0, out_dtype=out_dtype)


@converter("QuantizeLinear", since=13)
def quantize_v13(g, node, inputs, attrs):
    data, scale = inputs[0], inputs[1]
    zp, out_dtype = _zero_point(g, inputs[2] if len(inputs) > 2 else None)
    if attrs.get("output_dtype"):
        from rvmdbg.onnx.ops.tensor import _dtype_of_onnx
        out_dtype = _dtype_of_onnx(g, attrs["output_dtype"])
    if attrs.get("block_size"):
        return _quantize_blocked(g, data, scale, inputs[2] if len(inputs) > 2 else None,
                                 attrs, out_dtype)
    axis = attrs.get("axis", 1) if g.rank_of(data) >= 2 else 0
    return g.call("qnn.quantize", [data, scale, zp], axis=axis, out_dtype=out_dtype)


@converter("DequantizeLinear", since=10)
def dequantize_v10(g, node, inputs, attrs):
    data, scale = inputs[0], inputs[1]
    zp, _dt = _zero_point(g, inputs[2] if len(inputs) > 2 else None)
    return g.call("qnn.dequantize", [data, scale, zp], axis=0, out_dtype="float32")


@converter("DequantizeLinear", since=13)
def dequantize_v13(g, node, inputs, attrs):
    data, scale = inputs[0], inputs[1]
    zp, _dt = _zero_point(g, inputs[2] if len(inputs) > 2 else None)
    if attrs.get("block_size"):
        return _dequantize_blocked(g, data, scale, inputs[2] if len(inputs) > 2 else None,
                                   attrs)
    axis = attrs.get("axis", 1) if g.rank_of(data) > 1 else 0
    out = g.call("qnn.dequantize", [data, scale, zp], axis=axis, out_dtype="float32")
    sdt = g.dtype_of(scale)
    return out if sdt == "float32" else c.cast(g, out, sdt)


# Blocked quantization (opset 21, after TVM, whose qnn operators take one scale per channel at
# most): the scale and zero point repeated block_size times along the axis, cut to the data's
# length, and the formula of qnn.quantize / qnn.dequantize in plain elementwise operators
def _blocked(g, t, data, attrs):
    rank = g.rank_of(data)
    axis = attrs.get("axis", 1) % rank
    length = g.shape_of(data)[axis]
    if length is None:
        raise g.error("blocked quantization needs a static length along the axis")
    t = g.call("repeat", [t], repeats=int(attrs["block_size"]), axis=axis)
    begin, end = [0] * rank, list(g.shape_of(t))
    end[axis] = length
    return c.strided_slice(g, t, begin, end)


def _quantize_blocked(g, data, scale, zp, attrs, out_dtype):
    from rvmdbg.relay.ops.qnn import qrange
    lo, hi = qrange(out_dtype)
    dt = g.dtype_of(data)
    q = g.call("round", [g.call("divide", [data, _blocked(g, scale, data, attrs)])])
    if zp is not None:
        q = g.call("add", [q, c.cast(g, _blocked(g, zp, data, attrs), dt)])
    q = g.call("clip", [q], a_min=float(lo), a_max=float(hi))
    return c.cast(g, q, out_dtype)


def _dequantize_blocked(g, data, scale, zp, attrs):
    sdt = g.dtype_of(scale)
    x = c.cast(g, data, sdt)
    if zp is not None:
        x = g.call("subtract", [x, c.cast(g, _blocked(g, zp, data, attrs), sdt)])
    return g.call("multiply", [x, _blocked(g, scale, data, attrs)])


@converter("DynamicQuantizeLinear", since=11)
def dynamic_quantize(g, node, inputs, attrs):
    data = inputs[0]
    dt = g.dtype_of(data)
    zero = g.const(np.asarray(0, dt))
    full = dict(axis=None, keepdims=False, exclude=False)
    hi = g.call("maximum", [zero, g.call("max", [data], **full)])
    lo = g.call("minimum", [zero, g.call("min", [data], **full)])
    scale = g.call("divide", [g.call("subtract", [hi, lo]), g.const(np.asarray(255, dt))])
    zp = g.call("subtract", [zero, g.call("divide", [g.call("min", [data], **full), scale])])
    zp = c.cast(g, g.call("round", [g.call("clip", [zp], a_min=0.0, a_max=255.0)]), "uint8")
    q = g.call("qnn.quantize", [data, scale, c.cast(g, zp, "int32")], axis=0, out_dtype="uint8")
    return [q, scale, zp]
