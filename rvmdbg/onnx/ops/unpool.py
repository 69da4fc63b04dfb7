"""The MaxUnpool converter, as TVM's relay.frontend.onnx emitted it: each value scattered
(`scatter_elements` on the flattened tensors) to its index in a zero tensor of the shape the
strides, kernel and pads give, reshaped to that shape; a larger output_shape pads it with
zeros at the end of each dim, as ONNX defines (TVM scattered the indices into output_shape
itself, which places them wrongly: docs/differences.md)."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.registry import converter


@converter("MaxUnpool", since=11)
def max_unpool(g, node, inputs, attrs):
    data, indices = inputs[0], inputs[1]
    out_shape = inputs[2] if len(inputs) > 2 else None
    kernel = c.ints(attrs["kernel_shape"])
    strides = c.ints(attrs.get("strides", [1] * len(kernel)))
    pads = c.ints(attrs.get("pads", [0] * 2 * len(kernel)))
    dims = g.shape_of(data)
    if None in dims:
        raise g.error("MaxUnpool needs static dims")
    n = len(kernel)
    # (in - 1) * stride + kernel - the pads on both sides of each spatial dim
    shape = list(dims[:2]) + [
        (d - 1) * s + k - pads[i] - pads[i + n]
        for i, (d, s, k) in enumerate(zip(dims[2:], strides, kernel))]
    zeros = g.call("zeros", [], shape=shape, dtype=g.dtype_of(data))
    flat = g.call("scatter_elements", [c.reshape(g, zeros, [-1]), c.reshape(g, indices, [-1]),
                                       c.reshape(g, data, [-1])], axis=0, reduction="update")
    out = c.reshape(g, flat, shape)
    if out_shape is not None:
        v = c.const_value(g, out_shape)
        if v is None:
            raise g.needs_value("the output shape", out_shape)
        want = c.ints(v)
        if len(want) != len(shape) or any(w < s for w, s in zip(want, shape)):
            raise g.error(f"MaxUnpool's output_shape {want} is smaller than {shape}")
        if want != shape:
            zero = g.const(np.array(0, g.dtype_of(data)))
            out = g.call("nn.pad", [out, zero],
                         pad_width=[[0, w - s] for w, s in zip(want, shape)],
                         pad_mode="constant")
    return out
