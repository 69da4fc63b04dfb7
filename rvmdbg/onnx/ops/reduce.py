"""Converters of reductions (Reduce*), arg max/min, TopK and CumSum."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


def _axes(g, node, inputs, attrs):
    """The reduced axes: the `axes` attribute, or the second input (opset 13 for ReduceSum,
    18 for the others); None for every axis. The second element says whether nothing is
    reduced (noop_with_empty_axes with no axes)."""
    if len(inputs) > 1 and inputs[1] is not None:
        v = c.const_value(g, inputs[1])
        if v is None:
            raise g.needs_value("the axes", inputs[1])
        axes = c.ints(v)
        if axes:
            return axes, False
    elif "axes" in attrs:
        return c.ints(attrs["axes"]), False
    if attrs.get("noop_with_empty_axes", 0):
        return None, True
    return None, False


def _reduce(relay_op: str, before=None, after=None):
    def convert(g, node, inputs, attrs):
        x = inputs[0]
        if not g.shape_of(x):
            x = c.expand_dims(g, x, 0)  # TVM promoted a scalar to 1-D
        axes, noop = _axes(g, node, inputs, attrs)
        if noop:
            return inputs[0] if before is None else before(g, inputs[0])
        if axes is None:
            axes = list(range(g.rank_of(x)))
        if before is not None:
            x = before(g, x)
        keep = bool(attrs.get("keepdims", 1))
        if relay_op in ("max", "min"):
            empty = _empty_max_min(g, x, axes, keep, relay_op)
            if empty is not None:
                return empty
        if relay_op == "logsumexp":
            out = _logsumexp(g, x, axes, keep)
        else:
            out = g.call(relay_op, [x], axis=axes, keepdims=keep, exclude=False)
            if relay_op in ("max", "min") and g.dtype_of(x).startswith("float"):
                out = _infinite_rows(g, x, out, axes, keep, relay_op)
        return after(g, out) if after is not None else out
    return convert


def _infinite_rows(g, x, out, axes, keepdims, relay_op):
    """ReduceMax of a row of only -inf is -inf in ONNX (ReduceMin of only +inf, +inf); topi's
    max and min start from the dtype's finite lowest/highest, so TVM's converter gave
    -3.4e38 there, and a masked-attention graph that tests `max == -inf` (ONNX's Attention,
    opset 23) then missed its fully masked rows. The importer puts the infinity back:
    `where(all(x == -inf), -inf, max(x))`."""
    dtype = g.dtype_of(x)
    inf = np.asarray(-np.inf if relay_op == "max" else np.inf, dtype)
    only = g.call("all", [g.call("equal", [x, g.const(inf)])], axis=axes, keepdims=keepdims,
                  exclude=False)
    return g.call("where", [only, g.const(inf), out])


def _empty_max_min(g, x, axes, keepdims, relay_op):
    """ReduceMax/ReduceMin over an empty set (a reduced axis of static extent 0): ONNX says
    -inf/+inf for floats and the dtype's lowest/highest for integers; topi's max and min start
    from the dtype's finite lowest/highest, so the importer writes the full tensor instead
    (TVM's converter did not: it gave +-3.4e38 for float32)."""
    shape = g.shape_of(x)
    rank = len(shape)
    axes = sorted({a % rank for a in axes})
    if not any(shape[a] == 0 for a in axes) or any(d is None for d in shape):
        return None
    dtype = g.dtype_of(x)
    if dtype.startswith("float"):
        fill = -np.inf if relay_op == "max" else np.inf
    elif dtype == "bool":
        fill = relay_op == "min"          # max of nothing is False, min of nothing True
    else:
        info = np.iinfo(dtype)
        fill = info.min if relay_op == "max" else info.max
    out_shape = [1 if a in axes else d for a, d in enumerate(shape)
                 if keepdims or a not in axes]
    return g.call("full", [g.const(np.asarray(fill, dtype))], shape=out_shape, dtype=dtype)


def _logsumexp(g, x, axes, keepdims):
    """relay.logsumexp, which TVM's Python API composes (no operator of its own): log(sum(
    exp(x - max))) + max, the max and sum kept; over an empty set, log(0) + lowest = -inf."""
    m = g.call("max", [x], axis=axes, keepdims=True, exclude=False)
    e = g.call("exp", [g.call("subtract", [x, m])])
    s = g.call("sum", [e], axis=axes, keepdims=True, exclude=False)
    out = g.call("add", [g.call("log", [s]), m])
    return out if keepdims else c.squeeze(g, out, axes)


def _square(g, x):
    return g.call("multiply", [x, x])


def _abs(g, x):
    return g.call("abs", [x])


for _op_type, _relay, _before, _after in (
        ("ReduceMax", "max", None, None), ("ReduceMin", "min", None, None),
        ("ReduceSum", "sum", None, None), ("ReduceMean", "mean", None, None),
        ("ReduceProd", "prod", None, None), ("ReduceLogSumExp", "logsumexp", None, None),
        ("ReduceSumSquare", "sum", _square, None), ("ReduceL1", "sum", _abs, None),
        ("ReduceL2", "sum", _square, lambda g, x: g.call("sqrt", [x])),
        ("ReduceLogSum", "sum", None, lambda g, x: g.call("log", [x]))):
    converter(_op_type, since=1)(_reduce(_relay, _before, _after))


def _arg(relay_op: str):
    def convert(g, node, inputs, attrs):
        out = g.call(relay_op, [inputs[0]], axis=[int(attrs.get("axis", 0))],
                     keepdims=bool(attrs.get("keepdims", 1)), exclude=False,
                     select_last_index=bool(attrs.get("select_last_index", 0)))
        return c.cast(g, out, "int64")
    return convert


converter("ArgMax", since=1)(_arg("argmax"))
converter("ArgMin", since=1)(_arg("argmin"))


# dtypes TVM's run-time sort has no kernel for, sorted through an order-keeping int64 key
_SIGN = np.uint64(1 << 63)


@converter("TopK", since=1)
def topk(g, node, inputs, attrs):
    x = inputs[0]
    dt = g.dtype_of(x)
    if dt in ("int16", "uint16", "uint32"):
        vals, idx = topk(g, node, [c.cast(g, x, "int64"), *inputs[1:]], attrs)
        return [c.cast(g, vals, dt), idx]
    if dt == "uint64":
        # flipping the top bit maps uint64's order onto int64's (TVM refused uint64)
        key = g.call("reinterpret", [g.call("bitwise_xor", [x, g.const(_SIGN)])], dtype="int64")
        vals, idx = topk(g, node, [key, *inputs[1:]], attrs)
        back = g.call("reinterpret", [vals], dtype="uint64")
        return [g.call("bitwise_xor", [back, g.const(_SIGN)]), idx]
    k = inputs[1] if len(inputs) > 1 else g.const(np.array([attrs["k"]], "int64"))
    axis = attrs.get("axis", -1)
    ndim = g.rank_of(x)
    if axis < 0:
        axis += ndim
    kv = c.const_value(g, k)
    if kv is None:
        raise g.needs_value("k", k)
    kv = int(np.asarray(kv).reshape(-1)[0])
    if attrs.get("largest", 1) == 0:
        srt = g.call("sort", [x], axis=axis, is_ascend=True)
        idx = g.call("argsort", [x], axis=axis, is_ascend=True, dtype="int64")
        big = np.iinfo(np.int64).max
        end = [big] * axis + [kv] + [big] * (ndim - axis - 1)
        return [c.strided_slice(g, srt, [0] * ndim, end, [1] * ndim),
                c.strided_slice(g, idx, [0] * ndim, end, [1] * ndim)]
    out = g.call("topk", [x], k=kv, axis=axis, ret_type="both", is_ascend=False,
                 dtype="int64")
    return [g.get(out, 0), g.get(out, 1)]


def _scan(g, op, inputs, attrs):
    x = inputs[0]
    axis = c.const_value(g, inputs[1])
    if axis is None:
        raise g.needs_value("the axis", inputs[1])
    axis = int(np.asarray(axis).reshape(-1)[0])
    exclusive = bool(attrs.get("exclusive", 0))
    if attrs.get("reverse", 0):
        out = g.call("reverse", [x], axis=axis)
        out = g.call(op, [out], axis=axis, dtype=None, exclusive=exclusive)
        return g.call("reverse", [out], axis=axis)
    return g.call(op, [x], axis=axis, dtype=None, exclusive=exclusive)


@converter("CumSum", since=11)
def cumsum(g, node, inputs, attrs):
    return _scan(g, "cumsum", inputs, attrs)


# CumProd came after Relay; TVM's relay.cumprod has CumSum's attributes and relation
@converter("CumProd", since=26)
def cumprod(g, node, inputs, attrs):
    return _scan(g, "cumprod", inputs, attrs)
