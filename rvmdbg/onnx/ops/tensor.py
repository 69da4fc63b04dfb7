"""Converters of shape manipulation, gathering, slicing, casting and constants."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


@converter("Reshape", since=1)
def reshape_v1(g, node, inputs, attrs):
    return c.reshape(g, inputs[0], attrs["shape"])


@converter("Reshape", since=5)
def reshape_v5(g, node, inputs, attrs):
    allowzero = bool(attrs.get("allowzero", 0))
    return c.reshape(g, inputs[0], inputs[1], allowzero)


@converter("Identity", since=1)
def identity(g, node, inputs, attrs):
    from rvmdbg.relay.types import TupleType
    if isinstance(g.type_of(inputs[0]), TupleType):
        return [inputs[0]]  # a sequence (a tuple) is itself; `copy` takes a tensor
    return g.call("copy", [inputs[0]])


@converter("Constant", since=1)
def constant(g, node, inputs, attrs):
    if "value" in attrs:
        return g.const(np.asarray(attrs["value"]))
    for key, dtype in (("value_float", "float32"), ("value_floats", "float32"),
                       ("value_int", "int64"), ("value_ints", "int64")):
        if key in attrs:
            return g.const(np.asarray(attrs[key], dtype=dtype))
    raise g.error("Constant has no value attribute Relay can hold (value_string(s) or a "
                  "sparse value)")


def _dtype_of_onnx(g, to: int) -> str:
    from rvmdbg.onnx.names import dtype_name
    dt = dtype_name(int(to))
    if dt is None:
        import onnx
        raise g.error(f"Relay has no dtype for ONNX's "
                      f"{onnx.TensorProto.DataType.Name(int(to)).lower()}")
    return dt


@converter("Cast", since=1)
def cast(g, node, inputs, attrs):
    to = attrs["to"]
    dt = to.lower() if isinstance(to, str) else _dtype_of_onnx(g, to)
    return c.cast(g, inputs[0], dt)


# BitCast came after Relay: Relay's reinterpret (the same bits read as another dtype) is it
@converter("BitCast", since=26)
def bitcast(g, node, inputs, attrs):
    to = attrs["to"]
    dt = to.lower() if isinstance(to, str) else _dtype_of_onnx(g, to)
    if g.dtype_of(inputs[0]) == "bool" and dt in ("uint8", "int8"):
        # ONNX's bool is a byte holding 0 or 1, so its bits are the cast's (TVM's 1-bit bool
        # refused the reinterpret: docs/differences.md)
        return c.cast(g, inputs[0], dt)
    return g.call("reinterpret", [inputs[0]], dtype=dt)


@converter("CastLike", since=15)
def cast_like(g, node, inputs, attrs):
    return g.call("cast_like", [inputs[0], inputs[1]])


@converter("Transpose", since=1)
def transpose(g, node, inputs, attrs):
    return c.transpose(g, inputs[0], attrs.get("perm"))


@converter("Concat", since=1)
def concat(g, node, inputs, attrs):
    return c.concat(g, [x for x in inputs if x is not None], attrs.get("axis", 0))


@converter("Shape", since=1)
def shape(g, node, inputs, attrs):
    out = c.shape_of(g, inputs[0], "int64")
    start, end = attrs.get("start"), attrs.get("end")
    if start is None and end is None:
        return out
    rank = g.rank_of(inputs[0])
    lo, hi, _ = slice(start, end).indices(rank)
    return c.strided_slice(g, out, [lo], [max(hi, lo)], [1])


@converter("Size", since=1)
def size(g, node, inputs, attrs):
    return g.call("ndarray_size", [inputs[0]], dtype="int64")


@converter("Unsqueeze", since=1)
def unsqueeze_v1(g, node, inputs, attrs):
    return _unsqueeze(g, inputs[0], attrs["axes"])


def _unsqueeze(g, x, axes):
    rank = g.rank_of(x)
    axes = c.ints(axes)  # a 0-d axes tensor is one axis
    axes = [a + rank + len(axes) if a < 0 else a for a in axes]
    for a in sorted(axes):
        x = c.expand_dims(g, x, a, 1)
    return x


@converter("Unsqueeze", since=13)
def unsqueeze_v13(g, node, inputs, attrs):
    axes = c.const_value(g, inputs[1])
    if axes is None:
        raise g.needs_value("the axes", inputs[1])
    return _unsqueeze(g, inputs[0], axes)


@converter("Squeeze", since=1)
def squeeze_v1(g, node, inputs, attrs):
    axes = attrs.get("axes")
    return c.squeeze(g, inputs[0], axes)


@converter("Squeeze", since=13)
def squeeze_v13(g, node, inputs, attrs):
    x = inputs[0]
    shape = g.shape_of(x)
    axes = inputs[1] if len(inputs) > 1 else None
    if axes is None:
        if not shape:
            return x
        return c.squeeze(g, x, [i for i, d in enumerate(shape) if d == 1])
    v = c.const_value(g, axes)
    if v is None:
        raise g.needs_value("the axes", axes)
    return c.squeeze(g, x, [a + len(shape) if a < 0 else a for a in c.ints(v)])


def _split(g, node, x, splits, axis):
    n_out = len(node.output)
    if splits is not None and any(int(s) == 0 for s in splits):
        # Relay's split takes strictly ascending cut points: an empty part is a slice
        out, at = [], 0
        for s in splits:
            out.append(c.strided_slice(g, x, [at], [at + int(s)], [1], [axis]))
            at += int(s)
        return out if len(out) > 1 else out[0]
    if splits is not None and len(splits) > 1:
        indices, index = [], 0
        for s in splits[:-1]:
            index += int(s)
            indices.append(index)
        sections = indices
    else:
        sections = n_out
    out = g.call("split", [x], indices_or_sections=sections, axis=int(axis))
    count = n_out if not isinstance(sections, list) else len(sections) + 1
    if count == 1:
        return g.get(out, 0)
    return [g.get(out, i) for i in range(count)]


@converter("Split", since=1)
def split_v1(g, node, inputs, attrs):
    splits = attrs.get("split")
    if splits is None and len(inputs) > 1 and inputs[1] is not None:
        splits = c.const_value(g, inputs[1])
    return _split(g, node, inputs[0], splits, attrs.get("axis", 0))


@converter("Split", since=13)
def split_v13(g, node, inputs, attrs):
    splits = inputs[1] if len(inputs) > 1 else None
    if splits is not None:
        v = c.const_value(g, splits)
        if v is None:
            raise g.needs_value("the split sizes", splits)
        splits = c.ints(v) if np.ndim(v) > 0 else None
    axis = attrs.get("axis", 0)
    if splits is None and "num_outputs" in attrs:
        # opset 18: num_outputs parts, the last one smaller when the size does not divide
        n = int(attrs["num_outputs"])
        size = g.shape_of(inputs[0])[axis]
        if size is not None and size % n:
            step = -(-size // n)
            splits = [step] * (size // step) + ([size % step] if size % step else [])
    return _split(g, node, inputs[0], splits, axis)


@converter("Slice", since=1)
def slice_v1(g, node, inputs, attrs):
    starts, ends = list(attrs["starts"]), list(attrs["ends"])
    if "axes" in attrs:
        axes = attrs["axes"]
        n = max(axes) + 1
        new_s, new_e = [0] * n, [np.iinfo(np.int32).max] * n
        for i, a in enumerate(axes):
            new_s[a], new_e[a] = starts[i], ends[i]
        starts, ends = new_s, new_e
    return g.call("strided_slice", [inputs[0]], begin=c.ints(starts), end=c.ints(ends),
                  strides=[1])


@converter("Slice", since=10)
def slice_v10(g, node, inputs, attrs):
    x = inputs[0]
    starts, ends = inputs[1], inputs[2]
    axes = inputs[3] if len(inputs) > 3 else None
    steps = inputs[4] if len(inputs) > 4 else None
    shape = g.shape_of(x)
    rank = len(shape)
    sv, ev = c.const_value(g, starts), c.const_value(g, ends)
    av = (c.const_value(g, axes) if axes is not None
          else np.arange(g.shape_of(starts)[0] if g.shape_of(starts) else 1))
    tv = c.const_value(g, steps) if steps is not None else None
    if av is None:
        raise g.needs_value("the axes", [axes])
    if sv is None or ev is None or (steps is not None and tv is None):
        return _dynamic_slice(g, x, starts, ends, [a + rank if a < 0 else a for a in c.ints(av)],
                              steps)
    av = [a + rank if a < 0 else a for a in c.ints(av)]
    tv = c.ints(tv) if tv is not None else [1] * len(av)
    return g.call("strided_slice", [x], begin=c.ints(sv), end=c.ints(ev), strides=tv,
                  axes=av)


def _dynamic_slice(g, x, starts, ends, axes, steps):
    """`dyn.strided_slice` with begin/end/strides over every axis, the sliced axes' bounds
    taken from the run-time tensors (TVM scattered them into full-rank vectors)."""
    rank = g.rank_of(x)
    dtype = "int64"
    shape = c.shape_of(g, x, dtype)

    def pick(t, i):
        return c.reshape(g, c.cast(g, g.call("take", [t, g.const(np.asarray(i, "int64"))],
                                             axis=None, batch_dims=0, mode="clip"), dtype), [1])
    begin, end, stride = [], [], []
    for d in range(rank):
        if d in axes:
            i = axes.index(d)
            begin.append(pick(starts, i))
            end.append(pick(ends, i))
            stride.append(pick(steps, i) if steps is not None else g.const(np.ones(1, dtype)))
        else:
            begin.append(g.const(np.zeros(1, dtype)))
            end.append(c.strided_slice(g, shape, [d], [d + 1]))
            stride.append(g.const(np.ones(1, dtype)))
    return g.call("dyn.strided_slice", [x, c.concat(g, begin, 0), c.concat(g, end, 0),
                                        c.concat(g, stride, 0)], slice_mode="end")


def _normalize_indices(g, data, indices, axis):
    """Negative indices counted from the end (TVM's normalize_gather_indices)."""
    dtype = g.dtype_of(indices)
    size = g.call("take", [c.shape_of(g, data, dtype), g.const(np.asarray(axis, "int64"))],
                  axis=None, batch_dims=0, mode="clip")
    cond = g.fold(g.call("less", [indices, g.const(np.asarray(0, dtype))]))
    v = c.const_value(g, cond)
    if v is not None and v.size == 1:
        return g.call("add", [indices, size]) if v.item() else indices
    return g.call("where", [cond, g.call("add", [indices, size]), indices])


@converter("Gather", since=1)
def gather(g, node, inputs, attrs):
    data, indices = inputs
    axis = attrs.get("axis", 0)
    indices = _normalize_indices(g, data, indices, axis)
    return g.call("take", [data, indices], axis=axis, batch_dims=0, mode="clip")


@converter("GatherElements", since=1)
def gather_elements(g, node, inputs, attrs):
    data, indices = inputs
    axis = attrs.get("axis", 0)
    indices = _normalize_indices(g, data, indices, axis)
    return g.call("gather", [data, indices], axis=axis)


def _gather_nd(g, data, indices, batch_dims=0):
    shape = g.shape_of(indices)
    nd = len(shape)
    indices = c.transpose(g, indices, [-1 % nd] + list(range(nd - 1)))
    return g.call("gather_nd", [data, indices], batch_dims=batch_dims, index_rank=shape[-1])


@converter("GatherND", since=1)
def gather_nd(g, node, inputs, attrs):
    return _gather_nd(g, inputs[0], inputs[1], attrs.get("batch_dims", 0))


@converter("Expand", since=8)
def expand(g, node, inputs, attrs):
    x, shape = inputs
    dtype = g.dtype_of(shape)
    in_shape = c.shape_of(g, x, dtype)
    in_dims, new_dims = g.rank_of(x), g.shape_of(shape)[0]
    if in_dims < new_dims:
        in_shape = c.concat(g, [g.const(np.ones(new_dims - in_dims, dtype)), in_shape], 0)
    elif new_dims < in_dims:
        shape = c.concat(g, [g.const(np.ones(in_dims - new_dims, dtype)), shape], 0)
    return c.broadcast_to(g, x, g.fold(g.call("maximum", [in_shape, shape])))


@converter("Tile", since=6)
def tile(g, node, inputs, attrs):
    reps = c.const_value(g, inputs[1])
    if reps is not None:
        return g.call("tile", [inputs[0]], reps=c.ints(reps))
    return g.call("dyn.tile", [inputs[0], inputs[1]])


@converter("Where", since=9)
def where(g, node, inputs, attrs):
    return g.call("where", list(inputs))


@converter("ConstantOfShape", since=9)
def constant_of_shape(g, node, inputs, attrs):
    if "value" in attrs:
        v = np.asarray(attrs["value"]).reshape(-1)[0]
        value, dtype = g.const(np.asarray(v)), str(np.asarray(v).dtype)
    else:
        value, dtype = g.const(np.asarray(0.0, "float32")), "float32"
    shape = c.const_value(g, inputs[0])
    if shape is not None:
        return g.call("full", [value], shape=c.ints(shape), dtype=dtype)
    return g.call("dyn.full", [value, inputs[0]], dtype=dtype)


@converter("Range", since=11)
def range_(g, node, inputs, attrs):
    # a one-element tensor stands for the scalar ONNX asks for (AffineGrid's body gives one)
    start, limit, delta = (c.reshape(g, x, []) if g.shape_of(x) == (1,) else x for x in inputs)
    return g.call("arange", [start, limit, delta], dtype=g.dtype_of(start))


@converter("OneHot", since=9)
def one_hot(g, node, inputs, attrs):
    indices, depth, values = inputs
    ndim = g.rank_of(indices)
    off = g.call("take", [values, g.const(np.asarray(0, "int32"))], axis=None, batch_dims=0,
                 mode="clip")
    on = g.call("take", [values, g.const(np.asarray(1, "int32"))], axis=None, batch_dims=0,
                mode="clip")
    dtype = g.dtype_of(values)
    idt = g.dtype_of(indices)
    indices = g.call("where", [g.call("less", [indices, g.const(np.asarray(0, idt))]),
                               g.call("add", [indices, c.cast(g, depth, idt)]), indices])
    axis = attrs.get("axis", -1)
    if axis < 0:
        axis += ndim + 1
    d = c.const_value(g, depth)
    if d is None:
        raise g.needs_value("the depth", depth)
    return g.call("one_hot", [indices, on, off], depth=int(np.asarray(d).reshape(-1)[0]),
                  axis=axis, dtype=dtype)


@converter("Pad", since=1)
def pad_v1(g, node, inputs, attrs):
    pads = attrs.get("paddings", attrs.get("pads"))
    return _pad(g, inputs[0], pads, float(attrs.get("value", 0.0)), attrs.get("mode", "constant"))


converter("Pad", since=2)(pad_v1)


def _pad(g, x, pads, value, mode):
    if mode == "wrap":
        return _pad_wrap(g, x, pads)
    if mode not in ("constant", "edge", "reflect"):
        raise g.error(f"value {mode} of attribute mode of Pad is not supported")
    n = len(pads) // 2
    width = [[int(pads[i]), int(pads[i + n])] for i in range(n)]
    pv = value if hasattr(value, "checked_type") else g.const(np.asarray(value, "float32"))
    return g.call("nn.pad", [x, pv], pad_width=width, pad_mode=mode)


def _pad_wrap(g, x, pads):
    """mode="wrap" (opset 19; nn.pad has no such mode, and TVM's converter refused it): along
    each padded axis, `take` with mode="wrap" of the indices -before .. dim+after, so the
    padding repeats the tensor from its other end (a negative pad crops)."""
    n = len(pads) // 2
    shape = g.shape_of(x)
    for axis in range(n):
        before, after = int(pads[axis]), int(pads[axis + n])
        if before == 0 and after == 0:
            continue
        dim = shape[axis]
        if dim is None:
            raise g.error(f"Pad with mode wrap needs the static extent of axis {axis}")
        idx = np.arange(-before, dim + after, dtype="int64")
        x = g.call("take", [x, g.const(idx)], axis=axis, batch_dims=0, mode="wrap")
    return x


@converter("Pad", since=11)
def pad_v11(g, node, inputs, attrs):
    x, pads = inputs[0], inputs[1]
    value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    pv = c.const_value(g, pads)
    if pv is None:
        raise g.needs_value("the pads", pads)
    pv = c.ints(pv)
    axes = inputs[3] if len(inputs) > 3 else None
    if axes is not None:
        # opset 18: pads only for the axes given
        av = c.const_value(g, axes)
        if av is None:
            raise g.needs_value("the axes", axes)
        av = c.ints(av)
        rank = g.rank_of(x)
        full = [0] * (2 * rank)
        for i, a in enumerate(av):
            a %= rank
            full[a], full[a + rank] = pv[i], pv[i + len(av)]
        pv = full
    if value is not None:
        value = g.fold(g.call("take", [value, g.const(np.asarray(0, "int32"))], axis=None,
                              batch_dims=0, mode="clip"))
    else:
        value = 0.0
    return _pad(g, x, pv, value, attrs.get("mode", "constant"))


@converter("Trilu", since=14)
def trilu(g, node, inputs, attrs):
    k = inputs[1] if len(inputs) > 1 and inputs[1] is not None else g.const(
        np.asarray(0, "int64"))
    return g.call("trilu", [inputs[0], k], upper=bool(attrs.get("upper", 1)))


@converter("EyeLike", since=9)
def eye_like(g, node, inputs, attrs):
    # TVM's form: scatter_nd of ones into zeros at (i, i + k); the pairs are computed here
    # from the static shape, keeping those inside the matrix (TVM's could fall outside)
    x = inputs[0]
    dtype = _dtype_of_onnx(g, attrs["dtype"]) if "dtype" in attrs else g.dtype_of(x)
    rows, cols = g.shape_of(x)
    if rows is None or cols is None:
        raise g.error("EyeLike of a tensor of unknown shape is not supported")
    k = int(attrs.get("k", 0))
    pairs = [(i, i + k) for i in range(rows) if 0 <= i + k < cols]
    zeros = g.call("zeros", [], shape=[rows, cols], dtype=dtype)
    if not pairs:
        return zeros
    idx = g.const(np.array(pairs, "int32").T.copy())
    ones = g.call("ones", [], shape=[len(pairs)], dtype=dtype)
    return g.call("scatter_nd", [zeros, idx, ones], mode="update")


@converter("Compress", since=9)
def compress(g, node, inputs, attrs):
    x, cond = inputs
    picked = c.reshape(g, g.call("argwhere", [cond]), [-1])
    axis = attrs.get("axis")
    if axis is not None:
        return g.call("take", [x, picked], axis=int(axis), batch_dims=0, mode="clip")
    return g.call("take", [c.reshape(g, x, [-1]), picked], axis=0, batch_dims=0, mode="clip")
