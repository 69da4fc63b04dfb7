"""Converters of the integer and quantized linear operators (MatMulInteger, QLinearMatMul,
ConvInteger, QLinearConv) through Relay's `qnn` operators, as TVM's frontend emitted them:
qnn.dense / qnn.batch_matmul / qnn.conv2d accumulate in int32, then qnn.requantize (a
constant output scale) or qnn.dequantize -> qnn.quantize (a scale given at run time)."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.ops.nn import conv_attrs


def _scalar(g, x, dtype=None):
    """A one-element scale or zero point as a scalar (TVM's ensure_scalar_shape), cast to dtype;
    a float16 scale becomes float32 (TVM asserted float32: see docs/differences.md)."""
    if x is None:
        return None
    shape = g.shape_of(x)
    if len(shape) and all(d == 1 for d in shape):
        x = c.reshape(g, x, [])
    want = dtype or ("float32" if g.dtype_of(x).startswith("float") else None)
    if want and g.dtype_of(x) != want:
        x = c.cast(g, x, want)
    return x


def _per_channel(g, x, dtype):
    """A scale or zero point, scalar or one per channel (TVM's get_scalar_or_1d_tensor)."""
    shape = g.shape_of(x)
    if len(shape) == 1 and shape[0] != 1:
        return x if g.dtype_of(x) == dtype else c.cast(g, x, dtype)
    return _scalar(g, x, dtype)


def _qmatmul(g, a, b, a_zp, b_zp, a_scale, b_scale):
    """TVM's qmatmul: qnn.dense for 2-d operands, else qnn.batch_matmul on 3-d views with the
    batch dims broadcast, reshaped back to the matmul's shape."""
    a_rank, b_rank = g.rank_of(a), g.rank_of(b)
    units = g.shape_of(b)[-1]
    q = (a_zp, b_zp, a_scale, b_scale)
    if a_rank <= 2 and b_rank <= 2:
        if a_rank == 1:
            out = g.call("qnn.dense", [c.expand_dims(g, a, 0), c.transpose(g, b), *q],
                         units=units, out_dtype="int32")
            return c.squeeze(g, out, [0])
        return g.call("qnn.dense", [a, c.transpose(g, b), *q], units=units, out_dtype="int32")
    sa, sb = list(g.shape_of(a)), list(g.shape_of(b))
    if None in sa or None in sb:
        raise g.error("QLinearMatMul with dynamic shapes is not supported")
    na = [1] * (len(sb) - len(sa)) + sa
    nb = [1] * (len(sa) - len(sb)) + sb
    batch = [max(x, y) for x, y in zip(na[:-2], nb[:-2])]
    if b_rank == 2:
        fa = c.flatten_to_nd(g, a, 2)
        out = g.call("qnn.dense", [fa, c.transpose(g, b), *q], units=units, out_dtype="int32")
    else:
        if sa != batch + sa[-2:]:
            a = c.broadcast_to(g, a, batch + sa[-2:])
        if sb != batch + sb[-2:]:
            b = c.broadcast_to(g, b, batch + sb[-2:])
        a3, b3 = c.flatten_to_nd(g, a, 3), c.flatten_to_nd(g, b, 3)
        out = g.call("qnn.batch_matmul", [a3, c.transpose(g, b3, [0, 2, 1]), *q],
                     out_dtype="int32", transpose_a=False, transpose_b=True)
    return c.reshape(g, out, batch + [sa[-2], sb[-1]])


def _requantize(g, acc, scale, y_scale, y_zp, out_dtype, axis):
    """requantize needs a constant output scale; otherwise dequantize -> quantize (TVM)."""
    zero = g.const(np.asarray(0, "int32"))
    if c.const_value(g, y_scale) is not None:
        return g.call("qnn.requantize", [acc, scale, zero, y_scale, y_zp], axis=axis,
                      rounding="TONEAREST", out_dtype=out_dtype)
    deq = g.call("qnn.dequantize", [acc, scale, zero], axis=axis, out_dtype="float32")
    return g.call("qnn.quantize", [deq, y_scale, y_zp], axis=axis, out_dtype=out_dtype)


@converter("QLinearMatMul", since=10)
def qlinear_matmul(g, node, inputs, attrs):
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp = inputs
    out_dtype = g.dtype_of(y_zp)
    a_scale, b_scale, y_scale = (_scalar(g, s) for s in (a_scale, b_scale, y_scale))
    a_zp, b_zp, y_zp = (_scalar(g, z, "int32") for z in (a_zp, b_zp, y_zp))
    acc = _qmatmul(g, a, b, a_zp, b_zp, a_scale, b_scale)
    scale = g.fold(g.call("multiply", [a_scale, b_scale]))
    return _requantize(g, acc, scale, y_scale, y_zp, out_dtype, axis=0)


@converter("MatMulInteger", since=10)
def matmul_integer(g, node, inputs, attrs):
    a, b = inputs[0], inputs[1]
    zero = g.const(np.asarray(0, "int32"))
    a_zp = _scalar(g, inputs[2], "int32") if len(inputs) > 2 and inputs[2] is not None else zero
    b_zp = _scalar(g, inputs[3], "int32") if len(inputs) > 3 and inputs[3] is not None else zero
    one = g.const(np.asarray(1.0, "float32"))
    return _qmatmul(g, a, b, a_zp, b_zp, one, one)


def _conv_attrs(g, op, data, weight, attrs, pad_value):
    """The qnn.conv2d attributes of an ONNX ConvInteger / QLinearConv node (2-d only, as TVM)."""
    if g.rank_of(data) != 4:
        raise g.error(f"only 2-d kernels are supported for {op}")
    data, attrs_ = conv_attrs(g, op, data, g.shape_of(weight), attrs, pad_value)
    return data, dict(attrs_, out_dtype="int32")


@converter("ConvInteger", since=10)
def conv_integer(g, node, inputs, attrs):
    data, weight = inputs[0], inputs[1]
    zero = g.const(np.asarray(0, "int32"))
    d_zp = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    w_zp = inputs[3] if len(inputs) > 3 and inputs[3] is not None else None
    d_zp = _scalar(g, d_zp, "int32") if d_zp is not None else zero
    w_zp = _per_channel(g, w_zp, "int32") if w_zp is not None else zero
    data, conv = _conv_attrs(g, "ConvInteger", data, weight, attrs, d_zp)
    one = g.const(np.asarray(1.0, "float32"))
    return g.call("qnn.conv2d", [data, weight, d_zp, w_zp, one, one], **conv)


@converter("QLinearConv", since=10)
def qlinear_conv(g, node, inputs, attrs):
    data, x_scale, x_zp, weight, w_scale, w_zp, y_scale, y_zp = inputs[:8]
    out_dtype = g.dtype_of(y_zp)
    x_scale, y_scale = _scalar(g, x_scale), _scalar(g, y_scale)
    x_zp, y_zp = _scalar(g, x_zp, "int32"), _scalar(g, y_zp, "int32")
    w_scale, w_zp = _per_channel(g, w_scale, "float32"), _per_channel(g, w_zp, "int32")
    data, conv = _conv_attrs(g, "QLinearConv", data, weight, attrs, x_zp)
    out = g.call("qnn.conv2d", [data, weight, x_zp, w_zp, x_scale, w_scale], **conv)
    if len(inputs) > 8 and inputs[8] is not None:
        out = g.call("nn.bias_add", [out, inputs[8]], axis=1)
    scale = g.fold(g.call("multiply", [x_scale, w_scale]))
    return _requantize(g, out, scale, y_scale, y_zp, out_dtype, axis=1)
