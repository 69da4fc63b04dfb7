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


def max_pool_indices(g, x, attrs, kernel, strides, pads):
    """MaxPool's second output (TVM's converter made none): per window the flat index (row
    major over N, C, H, W, or column major inside each plane with storage_order=1) of its
    first largest element: the kernel's taps as strided slices of the padded input, stacked,
    `argmax` over the taps, and the index computed from the tap and the window position."""
    shape = g.shape_of(x)
    if len(shape) != 4 or None in shape:
        raise g.error("MaxPool's Indices output needs static 4-d data")
    if attrs.get("ceil_mode", 0) or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise g.error("MaxPool's Indices output with ceil_mode or auto_pad is not supported")
    n, ch, h, w = shape
    kh, kw = kernel
    sh, sw = c.ints(strides)
    dh, dw = c.ints(attrs.get("dilations", [1, 1]))
    pads = c.ints(pads) if attrs.get("auto_pad", "NOTSET") == "NOTSET" else [0] * 4
    pt, pl, pb, pr = pads if len(pads) == 4 else pads + pads
    dt = g.dtype_of(x)
    lowest = np.iinfo(dt).min if "int" in dt else -np.inf
    padded = g.call("nn.pad", [x, g.const(np.array(lowest, dt))],
                    pad_width=[[0, 0], [0, 0], [pt, pb], [pl, pr]], pad_mode="constant")
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pl + pr - (kw - 1) * dw - 1) // sw + 1
    taps = [c.strided_slice(g, padded, [0, 0, i * dh, j * dw],
                            [n, ch, i * dh + (oh - 1) * sh + 1, j * dw + (ow - 1) * sw + 1],
                            [1, 1, sh, sw])
            for i in range(kh) for j in range(kw)]
    best = c.cast(g, g.call("argmax", [g.call("stack", [g.tuple(taps)], axis=4)], axis=[4],
                            keepdims=False, exclude=False, select_last_index=False), "int64")
    k_w = g.const(np.array(kw, "int64"))
    row = g.call("add", [g.call("multiply", [g.call("floor_divide", [best, k_w]),
                                             g.const(np.array(dh, "int64"))]),
                         g.const((np.arange(oh) * sh - pt).astype("int64").reshape(1, 1, oh, 1))])
    col = g.call("add", [g.call("multiply", [g.call("floor_mod", [best, k_w]),
                                             g.const(np.array(dw, "int64"))]),
                         g.const((np.arange(ow) * sw - pl).astype("int64").reshape(1, 1, 1, ow))])
    plane = g.const((np.arange(n * ch, dtype="int64") * h * w).reshape(n, ch, 1, 1))
    if attrs.get("storage_order", 0) == 1:
        inner = g.call("add", [g.call("multiply", [col, g.const(np.array(h, "int64"))]), row])
    else:
        inner = g.call("add", [g.call("multiply", [row, g.const(np.array(w, "int64"))]), col])
    return g.call("add", [plane, inner])
