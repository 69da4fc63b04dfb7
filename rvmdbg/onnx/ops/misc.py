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
        raise g.error("blocked quantization (block_size) is not supported")
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
        raise g.error("blocked quantization (block_size) is not supported")
    axis = attrs.get("axis", 1) if g.rank_of(data) > 1 else 0
    out = g.call("qnn.dequantize", [data, scale, zp], axis=axis, out_dtype="float32")
    sdt = g.dtype_of(scale)
    return out if sdt == "float32" else c.cast(g, out, sdt)


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
