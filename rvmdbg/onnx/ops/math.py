"""Converters of elementwise math, comparison, logic and matrix products (MatMul, Gemm)."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


def _binary(op_type: str, relay_op: str, since=(1,)):
    def convert(g, node, inputs, attrs):
        a, b = inputs[0], inputs[1]
        if attrs.get("broadcast", 0) and "axis" in attrs:
            # opset < 7 broadcast with an axis: TVM expanded the second operand
            ra, rb = g.rank_of(a), g.rank_of(b)
            axis = attrs["axis"] % ra if ra else 0
            trailing = ra - axis - rb
            if trailing > 0:
                b = c.expand_dims(g, b, -1, trailing)
        return g.call(relay_op, [a, b])
    for s in since:
        converter(op_type, since=s)(convert)


_binary("Add", "add")
_binary("Sub", "subtract")
_binary("Mul", "multiply")
_binary("Div", "divide")


@converter("MatMul", since=1)
def matmul(g, node, inputs, attrs):
    a, b = inputs
    return matmul_out_dtype(g, a, b, g.dtype_of(a))


def matmul_out_dtype(g, a, b, out_dtype):
    """TVM's matmul_out_dtype: dense for a 2-D right side, batch_matmul on 3-D views
    otherwise, the batch dims broadcast; 1-D sides through matmul and squeeze."""
    a_shape, b_shape = c.shape_of(g, a), c.shape_of(g, b)
    a_rank, b_rank = g.rank_of(a), g.rank_of(b)
    if a_rank > 2 or b_rank > 2:
        new_a, new_b = a_shape, b_shape
        if a_rank > b_rank:
            new_b = c.concat(g, [g.const(np.ones(a_rank - b_rank, "int32")), b_shape], 0)
        elif a_rank < b_rank:
            new_a = c.concat(g, [g.const(np.ones(b_rank - a_rank, "int32")), a_shape], 0)
        out_batch = c.concat(g, [
            g.call("maximum", [c.strided_slice(g, new_b, [i], [i + 1]),
                               c.strided_slice(g, new_a, [i], [i + 1])])
            for i in range(max(a_rank, b_rank) - 2)], 0)
        b_static = all(d is not None for d in g.shape_of(b))
        if b_rank == 2 and b_static:
            fa = c.flatten_to_nd(g, a, 2)
            out = g.call("nn.dense", [fa, c.transpose(g, b)], units=None, out_dtype=out_dtype)
        elif b_rank == 1 and a_rank > 3:
            # TVM's batch_matmul path needs 3-d operands: a vector on the right is one dense
            # over a's rows
            sa = g.shape_of(a)
            rows = c.reshape(g, a, [-1, sa[-1]])
            out = g.call("nn.dense", [rows, c.expand_dims(g, b, 0)], units=None,
                         out_dtype=out_dtype)
            return c.reshape(g, out, list(sa[:-1]))
        elif a_rank == 1 or b_rank == 1:
            sa, sb = g.shape_of(a), g.shape_of(b)
            if a_rank == 1:
                axis = -2
                a = c.expand_dims(g, a, 0)
                a = c.broadcast_to(g, a, (*sb[:-2], 1, sa[0]))
            else:
                axis = -1
                b = c.expand_dims(g, b, -1)
                b = c.broadcast_to(g, b, (*sa[:-2], sb[0], 1))
            out = g.call("nn.batch_matmul", [a, b], out_dtype=out_dtype, transpose_a=False,
                         transpose_b=False)
            return c.squeeze(g, out, [axis])
        else:
            a_b = g.fold(c.concat(g, [out_batch, c.strided_slice(g, a_shape, [a_rank - 2],
                                                                  [a_rank])], 0))
            b_b = g.fold(c.concat(g, [out_batch, c.strided_slice(g, b_shape, [b_rank - 2],
                                                                  [b_rank])], 0))
            av, bv = c.const_value(g, a_shape), c.const_value(g, b_shape)
            abv, bbv = c.const_value(g, a_b), c.const_value(g, b_b)
            if av is None or abv is None or list(av) != list(abv):
                a = c.broadcast_to(g, a, a_b)
            if bv is None or bbv is None or list(bv) != list(bbv):
                b = c.broadcast_to(g, b, b_b)
            a = c.flatten_to_nd(g, a, 3)
            b = c.flatten_to_nd(g, b, 3)
            out = g.call("nn.batch_matmul", [a, b], out_dtype=out_dtype, transpose_a=False,
                         transpose_b=False)
        final = c.concat(g, [out_batch,
                             c.strided_slice(g, a_shape, [a_rank - 2], [a_rank - 1]),
                             c.strided_slice(g, b_shape, [b_rank - 1], [b_rank])], 0)
        return c.reshape(g, out, g.fold(final))
    if a_rank == 1 or b_rank == 1:
        axis = []
        lhs, rhs = a, b
        if a_rank == 1:
            lhs = c.expand_dims(g, a, 0)
            axis.append(0)
        if b_rank == 1:
            rhs = c.expand_dims(g, b, 1)
            axis.append(-1)
        return c.squeeze(g, g.call("nn.matmul", [lhs, rhs], units=None, out_dtype="",
                                   transpose_a=False, transpose_b=False), axis)
    return g.call("nn.dense", [a, c.transpose(g, b, [1, 0])], units=None, out_dtype=out_dtype)


@converter("Gemm", since=1)
def gemm(g, node, inputs, attrs):
    a, b = inputs[0], inputs[1]
    cc = inputs[2] if len(inputs) > 2 else None
    dtype = g.dtype_of(a)
    alpha = float(attrs.get("alpha", 1.0))
    beta = float(attrs.get("beta", 1.0))
    trans_a = int(attrs.get("transA", 0))
    trans_b = int(attrs.get("transB", 0))
    b_shape = g.shape_of(b)
    channels = b_shape[1] if not trans_b else b_shape[0]  # TVM's infer_channels
    if trans_a:
        a = c.transpose(g, a, [1, 0])
    if not trans_b:
        b = c.transpose(g, b, [1, 0])
    if g.rank_of(inputs[0]) != 2:
        a = g.call("nn.batch_flatten", [a])
    if alpha != 1.0:
        a = g.call("multiply", [a, g.const(np.asarray(alpha, dtype))])
    out = g.call("nn.dense", [a, b], units=channels, out_dtype="")
    if cc is not None:
        if beta != 1.0:
            out = g.call("add", [out, g.call("multiply", [g.const(np.asarray(beta, dtype)), cc])])
        else:
            out = g.call("add", [out, cc])
    return out


# ---- elementwise unary: TVM's Renamer and Unary converters, one Relay operator each
_UNARY = {
    "Neg": "negative", "Abs": "abs", "Floor": "floor", "Ceil": "ceil", "IsNaN": "isnan",
    "Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Acos": "acos", "Acosh": "acosh",
    "Asin": "asin", "Asinh": "asinh", "Atan": "atan", "Atanh": "atanh", "Cos": "cos",
    "Cosh": "cosh", "Sin": "sin", "Sinh": "sinh", "Tan": "tan", "Tanh": "tanh",
    "Sigmoid": "sigmoid", "Sign": "sign", "Erf": "erf", "Not": "logical_not",
}


def _unary(op_type: str, relay_op: str):
    @converter(op_type, since=1)
    def convert(g, node, inputs, attrs):
        return g.call(relay_op, [inputs[0]])
    return convert


for _op_type, _relay_op in _UNARY.items():
    _unary(_op_type, _relay_op)

_binary("Equal", "equal")
_binary("Greater", "greater")
_binary("GreaterOrEqual", "greater_equal")
_binary("Less", "less")
_binary("LessOrEqual", "less_equal")
_binary("And", "logical_and")
_binary("Or", "logical_or")
_binary("Xor", "logical_xor")


@converter("Mod", since=1)
def mod(g, node, inputs, attrs):
    # fmod=0 is NumPy's mod (Relay's floor_mod), fmod=1 C's fmod (Relay's mod)
    x, y = inputs[0], inputs[1]
    if attrs.get("fmod", 0) != 0:
        return g.call("mod", [x, y])
    dtype = g.dtype_of(x)
    if not dtype.startswith("float"):
        return g.call("floor_mod", [x, y])
    return _float_floor_mod(g, x, y, dtype)


def _float_floor_mod(g, x, y, dtype):
    """NumPy's float mod, which ONNX's Mod (fmod=0) defines: topi's floor_mod computes x -
    floor(x / y) * y, NaN for a finite x and an infinite y, where NumPy gives x when the signs
    agree (or x is 0) and y when they differ; float16 is computed in float32 and rounded
    once, as NumPy's float16 loop does (topi's float16 rounds every step)."""
    if dtype == "float16":
        x, y = c.cast(g, x, "float32"), c.cast(g, y, "float32")
    out = g.call("floor_mod", [x, y])
    wide = "float32" if dtype == "float16" else dtype
    zero = g.const(np.asarray(0, wide))
    finite_x = g.call("isfinite", [x])
    by_inf = g.call("logical_and", [g.call("isinf", [y]), finite_x])
    differ = g.call("logical_and", [g.call("not_equal", [x, zero]),
                                    g.call("not_equal", [g.call("less", [x, zero]),
                                                         g.call("less", [y, zero])])])
    out = g.call("where", [by_inf, g.call("where", [differ, y, x]), out])
    return c.cast(g, out, "float16") if dtype == "float16" else out


@converter("Reciprocal", since=1)
def reciprocal(g, node, inputs, attrs):
    return g.call("divide", [g.const(np.asarray(1.0, g.dtype_of(inputs[0]))), inputs[0]])


@converter("Pow", since=1)
def power(g, node, inputs, attrs):
    x, y = inputs
    out_dtype = x_dtype = g.dtype_of(x)
    if not x_dtype.startswith("float"):
        x_dtype = "float32"
        x = c.cast(g, x, x_dtype)
    if g.dtype_of(y) != x_dtype:
        y = c.cast(g, y, x_dtype)
    out = g.call("power", [x, y])
    return out if x_dtype == out_dtype else c.cast(g, out, out_dtype)


def _fold_variadic(relay_op):
    def convert(g, node, inputs, attrs):
        out = inputs[0]
        for x in inputs[1:]:
            out = g.call(relay_op, [out, x])
        return out
    return convert


converter("Max", since=1)(_fold_variadic("maximum"))
converter("Min", since=1)(_fold_variadic("minimum"))
converter("Sum", since=1)(_fold_variadic("add"))


@converter("Mean", since=1)
def mean(g, node, inputs, attrs):
    if len(inputs) == 1:
        return inputs[0]
    stacked = c.concat(g, [c.expand_dims(g, x, 0) for x in inputs], 0)
    return g.call("mean", [stacked], axis=[0], keepdims=False, exclude=False)


@converter("IsInf", since=10)
def isinf(g, node, inputs, attrs):
    x = inputs[0]
    dtype = g.dtype_of(x)
    out = g.call("isinf", [x])
    if not attrs.get("detect_negative", 1):
        out = g.call("multiply", [out, g.call("greater", [x, g.const(np.asarray(0, dtype))])])
    if not attrs.get("detect_positive", 1):
        out = g.call("multiply", [out, g.call("less", [x, g.const(np.asarray(0, dtype))])])
    return out


@converter("Round", since=11)
def round_(g, node, inputs, attrs):
    # ONNX rounds half to even: TVM's frontend built it from ceil, floor and mod
    x = inputs[0]
    dtype = g.dtype_of(x)
    half, one, two = (g.const(np.asarray(v, dtype)) for v in (0.5, 1, 2))
    rounded = g.call("ceil", [g.call("subtract", [x, half])])
    mask = g.call("subtract", [one, g.call("subtract", [
        g.call("ceil", [g.call("add", [x, half])]), g.call("floor", [g.call("add", [x, half])])])])
    non_even = g.call("abs", [g.call("mod", [rounded, two])])
    return g.call("add", [rounded, g.call("multiply", [mask, non_even])])


@converter("Clip", since=1)
def clip_v1(g, node, inputs, attrs):
    return g.call("clip", [inputs[0]], a_min=float(attrs.get("min", -np.inf)),
                  a_max=float(attrs.get("max", np.inf)))


@converter("Clip", since=11)
def clip_v11(g, node, inputs, attrs):
    x = inputs[0]
    lo = inputs[1] if len(inputs) > 1 else None
    hi = inputs[2] if len(inputs) > 2 else None
    a_min = a_max = None
    if hi is not None and isinstance(g.fold(hi), c.Constant):
        a_max = g.fold(hi).data.item()
        hi = None
    if lo is not None and isinstance(g.fold(lo), c.Constant):
        a_min = g.fold(lo).data.item()
        lo = None
    if lo is None and hi is None and (a_min is not None or a_max is not None
                                      or len(inputs) == 1):
        return g.call("clip", [x], a_min=float(-np.inf if a_min is None else a_min),
                      a_max=float(np.inf if a_max is None else a_max))
    out = x
    if lo is not None:
        out = g.call("maximum", [out, lo])
    elif a_min is not None:
        out = g.call("maximum", [out, g.const(np.asarray(a_min, g.dtype_of(x)))])
    if hi is not None:
        out = g.call("minimum", [out, hi])
    elif a_max is not None:
        out = g.call("minimum", [out, g.const(np.asarray(a_max, g.dtype_of(x)))])
    return out


_DET_MAX = 4   # 4! = 24 products of 4; past it the expansion grows as n!


@converter("Det", since=11)
def det(g, node, inputs, attrs):
    """Det (TVM had none) by the Leibniz expansion the static size allows: the matrices
    flattened to (..., n * n), `take` of each permutation's n entries ((..., n!, n)), `prod`,
    times each permutation's sign, `sum`. Up to 4 x 4 (24 products); a larger matrix is
    refused, naming its size. ONNX's reference (NumPy's LU) rounds differently, within
    float32's last bits for these sizes."""
    import itertools
    x = inputs[0]
    shape = g.shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] is None:
        raise g.error(f"Det takes square matrices of a static size, got shape {list(shape)}")
    n = shape[-1]
    if n > _DET_MAX:
        raise g.error(f"Det of {n} x {n} matrices is not supported: the importer expands the "
                      f"determinant over the {n}! permutations, up to {_DET_MAX} x {_DET_MAX}")
    dtype = g.dtype_of(x)
    perms = list(itertools.permutations(range(n)))
    index = np.array([[i * n + p[i] for i in range(n)] for p in perms], "int64")
    sign = np.array([(-1) ** sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
                     for p in perms], dtype)
    lead = [-1 if d is None else d for d in shape[:-2]]
    flat = c.reshape(g, x, lead + [n * n])
    terms = g.call("prod", [g.call("take", [flat, g.const(index)], axis=len(lead),
                                   batch_dims=0, mode="clip")],
                   axis=[-1], keepdims=False, exclude=False)
    return g.call("sum", [g.call("multiply", [terms, g.const(sign)])], axis=[-1],
                  keepdims=False, exclude=False)
