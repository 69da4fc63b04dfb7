"""Converters of convolutions, pooling, normalisations and activations."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


@converter("Relu", since=1)
def relu(g, node, inputs, attrs):
    return g.call("nn.relu", [inputs[0]])


def _dims_op(prefix: str, kernel_shape, suffix="") -> str:
    n = len(kernel_shape)
    if n not in (1, 2, 3):
        raise ValueError(f"only 1-D, 2-D and 3-D kernels are supported ({n}-D given)")
    return f"{prefix}{n}d{suffix}"


@converter("Conv", since=1)
def conv(g, node, inputs, attrs):
    data, kernel = inputs[0], inputs[1]
    ndim = g.rank_of(data)
    kshape = g.shape_of(kernel)
    kernel_shape = list(attrs.get("kernel_shape", kshape[2:]))
    strides = attrs.get("strides", [1] * (ndim - 2))
    dilations = attrs.get("dilations", [1] * (ndim - 2))
    pads = attrs.get("pads")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        data = c.autopad(g, data, strides, kernel_shape, dilations, mode=auto_pad)
    elif auto_pad == "VALID":
        pads = [0] * (ndim - 2)
    elif auto_pad != "NOTSET":
        raise g.error(f"value {auto_pad} of attribute auto_pad of Conv is invalid")
    if pads is None:
        pads = [0] * (ndim - 2)
    padding = _padding(pads, ndim - 2)
    out = g.call(_dims_op("nn.conv", kernel_shape), [data, kernel],
                 strides=c.ints(strides), padding=padding, dilation=c.ints(dilations),
                 groups=int(attrs.get("group", 1)), channels=kshape[0],
                 kernel_size=c.ints(kernel_shape))
    if len(inputs) > 2 and inputs[2] is not None:
        out = g.call("nn.bias_add", [out, inputs[2]], axis=1)
    return out


def _padding(pads, spatial: int) -> list:
    """Relay's padding tuple for ONNX pads (TVM's get_pad_tuple: one value each side, a
    half-length list repeated)."""
    pads = c.ints(pads)
    if len(pads) == spatial:
        pads = pads + pads
    return pads
