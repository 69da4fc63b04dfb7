"""Relay-building helpers the converters share, as TVM's Python API behaved: an argument that
is a constant becomes the static operator's attribute, any other expression the `dyn.*`
operator (`reshape` with a shape tensor, `broadcast_to`, `full`, `tile`, `strided_slice`)."""
from __future__ import annotations

import numpy as np

from rvmdbg.relay.ast import Constant


def ints(value) -> list:
    return [int(x) for x in np.asarray(value).reshape(-1)]


def const_value(g, e):
    """The value of `e` when it folds to a constant, else None (TVM's try_infer_value)."""
    if e is None:
        return None
    if not isinstance(e, Constant):
        e = g.fold(e)
    return e.data if isinstance(e, Constant) else None


def shape_of(g, x, dtype: str = "int32"):
    return g.call("shape_of", [x], dtype=dtype)


def reshape(g, x, newshape, allowzero=False):
    if not hasattr(newshape, "checked_type"):
        return g.call("reshape", [x], newshape=ints(newshape), allowzero=bool(allowzero))
    v = const_value(g, newshape)
    if v is not None:
        return g.call("reshape", [x], newshape=ints(v), allowzero=bool(allowzero))
    return g.call("dyn.reshape", [x, newshape], allowzero=bool(allowzero))


def broadcast_to(g, x, shape):
    if not hasattr(shape, "checked_type"):
        return g.call("broadcast_to", [x], shape=ints(shape))
    v = const_value(g, shape)
    if v is not None:
        return g.call("broadcast_to", [x], shape=ints(v))
    return g.call("dyn.broadcast_to", [x, shape])


def concat(g, exprs: list, axis: int = 0):
    return g.call("concatenate", [g.tuple(exprs)], axis=int(axis))


def strided_slice(g, x, begin, end, strides=None, axes=None):
    attrs = dict(begin=ints(begin), end=ints(end),
                 strides=ints(strides) if strides is not None else [1])
    if axes is not None:
        attrs["axes"] = ints(axes)
    return g.call("strided_slice", [x], **attrs)


def expand_dims(g, x, axis: int, num_newaxis: int = 1):
    return g.call("expand_dims", [x], axis=int(axis), num_newaxis=int(num_newaxis))


def squeeze(g, x, axis=None):
    return g.call("squeeze", [x], axis=None if axis is None else ints(axis))


def transpose(g, x, axes=None):
    return g.call("transpose", [x], axes=None if axes is None else ints(axes))


def cast(g, x, dtype: str):
    return g.call("cast", [x], dtype=dtype)


def binary(g, op: str, a, b):
    return g.call(op, [a, b])


def scalar(g, value, dtype: str):
    return g.const(np.asarray(value, dtype=dtype))


def flatten_to_nd(g, x, nd: int):
    """x reshaped to rank nd, the leading dims merged (TVM's flatten_to_nd)."""
    xs = shape_of(g, x)
    ndims = g.rank_of(x)
    if ndims == nd:
        return x
    newshape = concat(g, [g.const(np.array([-1], "int32")),
                          strided_slice(g, xs, [ndims - nd + 1], [ndims])], 0)
    return reshape(g, x, g.fold(newshape))


def autopad(g, data, strides, kernel_shape, dilations, mode="SAME_UPPER", deconv=False,
            pad_value=0.0, pad_type="constant"):
    """Explicit `nn.pad` for auto_pad SAME_UPPER/SAME_LOWER, as TVM's frontend computed it."""
    ndim = g.rank_of(data)
    strides_c = g.const(np.array(strides, "int64"))
    dk = g.const(np.array([(k - 1) * d + 1 for k, d in zip(kernel_shape, dilations)], "int64"))
    shape = strided_slice(g, shape_of(g, data, "int64"), [2], [ndim])
    zero, one, two = (g.const(np.array(v, "int64")) for v in (0, 1, 2))
    mod = g.call("mod", [shape, strides_c])
    left = g.call("maximum", [g.call("subtract", [dk, strides_c]), zero])
    right = g.call("maximum", [g.call("subtract", [dk, mod]), zero])
    total = g.call("where", [g.call("equal", [mod, zero]), left, right])
    if deconv:
        total = g.call("subtract", [g.call("subtract", [
            g.const(np.array(kernel_shape, "int64")), one]), total])
    before = g.call("floor_divide", [total, two])
    after = g.call("subtract", [total, before])
    parts = [before, after] if "LOWER" not in mode else [after, before]
    pad = concat(g, [reshape(g, parts[0], [-1, 1]), reshape(g, parts[1], [-1, 1])], 1)
    pad = concat(g, [g.const(np.zeros([2, 2], "int64")), pad], 0)
    pad = const_value(g, pad)
    if pad is None:
        raise g.error("auto_pad on an input of unknown spatial size is not supported",
                      hint="give the input's shape with --shape")
    value = g.const(np.asarray(pad_value, "float32")) if not hasattr(pad_value, "checked_type") \
        else pad_value
    return g.call("nn.pad", [data, value], pad_width=[ints(r) for r in pad],
                  pad_mode=pad_type)
