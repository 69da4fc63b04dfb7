"""Neural-network operators: nn.dense, nn.matmul, nn.batch_matmul, nn.bias_add, nn.softmax,
nn.log_softmax, nn.batch_flatten, nn.leaky_relu, nn.prelu, nn.dropout, nn.pad (nn.relu lives
with the elementwise ops; convolution, pooling, normalisation and resizing have files of their
own).

TVM's conventions: dense computes data @ weight.T (weight is (units, in)); matmul computes
a @ b with either side transposed on request; batch_matmul computes x @ y per batch (x @ y^T
with transpose_b=True, which TVM's Python API passes and its printer shows: the attribute's
default, which the printer omits, is False), batch dims of size 1 broadcast. nn.dropout at inference returns its input
and a mask of ones; nn.pad takes its pad value as a second (0-d) argument, or, as TVM before
0.8 printed it, as the attribute pad_value.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    IN_PLACE, AttrSpec, KernelError, OpTypeError, as_result, float_intrinsic_refusal, fmt_shape,
    known_prod, norm_axis, register, same_dtype, tvm_cast, tvm_lowering_refuses, unify_dim,
)
from rvmdbg.relay.types import TensorType, TupleType

# ---------------------------------------------------------------------------------------------
# dense and batch_matmul


def _dense_rel(name, args, attrs):
    # TVM's MatmulRel (dense): the dtypes are not compared; the result is out_dtype, else
    # data's, and topi casts both inputs to it
    data, weight = args
    dt = data.dtype
    if len(data.shape) < 1:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=1, t=data))
    if len(weight.shape) != 2:
        raise OpTypeError(_("{op}: weight must be 2-d (units, in_features), got {weight}").format(
                op=name, weight=weight))
    unify_dim(name, data.shape[-1], weight.shape[1],
              _("data {data} has {features} input features but weight {weight} expects "
                "{expected} (weight is (units, in_features))").format(
            data=data, features=data.shape[-1], weight=weight, expected=weight.shape[1]))
    units = attrs["units"]
    n = weight.shape[0]
    if units is not None:
        n = unify_dim(name, n, units, _("units={units} but weight {weight} has {n} rows").format(
                units=units, weight=weight, n=n))
    return TensorType(data.shape[:-1] + (n,), attrs["out_dtype"] or dt)


def _dense_kernel(args, attrs):
    data, weight = args
    dt = np.dtype(attrs["out_dtype"] or data.dtype)
    if data.shape[-1] != weight.shape[1]:
        raise KernelError(_("nn.dense: data {data_shape} and weight {weight_shape} disagree on "
                            "in_features at run time").format(data_shape=fmt_shape(data.shape), weight_shape=fmt_shape(weight.shape)))
    return _matmul_in(dt, data, weight.T)


def _matmul_in(dt, a, b):
    """a @ b with both cast to dtype dt first, as topi's sums of products are; a bool sum of
    products is TVM's 1-bit one: the parity of the ands."""
    if dt == np.bool_:
        return as_result((np.matmul(a.astype(np.int64), b.astype(np.int64)) & 1) != 0, dt)
    with np.errstate(all="ignore"):
        return as_result(np.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False)), dt)


register("nn.dense", 2, _dense_rel, _dense_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("units", "int_or_none", None),
                AttrSpec("out_dtype", "dtype_or_none", None)],
         doc="nn.dense(data, weight, units=None): data @ weight.T, weight is (units, in)")


def _bmm_rel(name, args, attrs):
    x, y = args
    dt = x.dtype  # BatchMatmulRel: out_dtype, else x's; the dtypes are not compared
    for what, t in (("x", x), ("y", y)):
        if len(t.shape) != 3:
            raise OpTypeError(_("{op}: {what} must be 3-d (batch, rows, cols), got {t}").format(
                    op=name, what=what, t=t))
    bx, by = x.shape[0], y.shape[0]
    if bx == 1:
        b = by
    elif by == 1:
        b = bx
    else:
        b = unify_dim(name, bx, by, _("batch sizes differ: {x} and {y}").format(x=x, y=y))
    m, kx = (x.shape[2], x.shape[1]) if attrs["transpose_a"] else (x.shape[1], x.shape[2])
    n, ky = (y.shape[1], y.shape[2]) if attrs["transpose_b"] else (y.shape[2], y.shape[1])
    unify_dim(name, kx, ky, _("inner dimensions differ: {x} and {y} (transpose_a={transpose_a}, "
                              "transpose_b={transpose_b})").format(
            x=x, y=y, transpose_a=attrs['transpose_a'], transpose_b=attrs['transpose_b']))
    return TensorType((b, m, n), attrs["out_dtype"] or dt)


def _bmm_kernel(args, attrs):
    x, y = args
    dt = np.dtype(attrs["out_dtype"] or x.dtype)
    if attrs["transpose_a"]:
        x = x.transpose(0, 2, 1)
    if attrs["transpose_b"]:
        y = y.transpose(0, 2, 1)
    try:
        return _matmul_in(dt, x, y)
    except ValueError:
        raise KernelError(_("nn.batch_matmul: shapes {args_shape} and {args_shape_b} do not fit "
                            "at run time").format(args_shape=fmt_shape(args[0].shape), args_shape_b=fmt_shape(args[1].shape))) from None


register("nn.batch_matmul", 2, _bmm_rel, _bmm_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("out_dtype", "dtype_or_none", None),
                # False: TVM's C++ default (BatchMatmulAttrs), which its printer omits; the
                # Python API's True is always printed
                AttrSpec("transpose_a", "bool", False), AttrSpec("transpose_b", "bool", False)],
         doc="nn.batch_matmul(x, y, transpose_b=True): per batch x @ y^T (TVM's Python API "
             "passes transpose_b=True; the attribute's default is False)")


# ---------------------------------------------------------------------------------------------
# bias_add, softmax, log_softmax, batch_flatten, leaky_relu


def _bias_add_rel(name, args, attrs):
    data, bias = args
    dt = same_dtype(name, data, bias)  # BiasAddRel assigns the bias data's dtype
    if len(bias.shape) != 1:
        raise OpTypeError(_("{op}: {what} must be {rank}-d, got {t}").format(
                op=name, what="bias", rank=1, t=bias))
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=1, t=data))
    axis = norm_axis(name, attrs["axis"], len(data.shape))
    unify_dim(name, data.shape[axis], bias.shape[0],
              _("bias {bias} does not match axis {axis} of {data}").format(
            bias=bias, axis=axis, data=data))
    return TensorType(data.shape, dt)


def _bias_along(data, bias, attrs):
    """The bias reshaped to broadcast along the data's `axis`."""
    axis = attrs["axis"]
    if axis < 0:
        axis += data.ndim
    if data.shape[axis] != bias.shape[0]:
        raise KernelError(_("nn.bias_add: bias of length {bias_shape_first} does not match axis "
                            "{axis} of shape {data_shape} at run time").format(bias_shape_first=bias.shape[0], axis=axis, data_shape=fmt_shape(data.shape)))
    shape = [1] * data.ndim
    shape[axis] = bias.shape[0]
    return bias.reshape(shape)


def _bias_add_kernel(args, attrs):
    data, bias = args
    bias = _bias_along(data, bias, attrs)
    if data.dtype == np.bool_:
        return data ^ bias  # topi's add of 1-bit integers
    with np.errstate(all="ignore"):
        return as_result(data + bias, data.dtype)


def _bias_add_in_place(args, attrs):
    data, bias = args
    if bias.dtype != data.dtype:
        return _bias_add_kernel(args, attrs)   # a result of its own dtype, or its refusal
    with np.errstate(all="ignore"):
        return np.add(data, _bias_along(data, bias, attrs), out=data)


IN_PLACE["nn.bias_add"] = _bias_add_in_place


register("nn.bias_add", 2, _bias_add_rel, _bias_add_kernel, "broadcast",
         attrs=[AttrSpec("axis", "int", 1)],
         doc="nn.bias_add(data, bias, axis=1): add a 1-d bias along axis")


def _softmax_rel(name, args, attrs):
    # TVM's SoftmaxRel checks the axis only: an integer tensor type-checks, and lowering
    # finds no integer exp (the kernels below refuse it when they run)
    (x,) = args
    if len(x.shape) == 0:
        raise OpTypeError(_("{op}: needs a tensor of rank >= 1, got {x}").format(op=name, x=x))
    norm_axis(name, attrs["axis"], len(x.shape))
    return TensorType(x.shape, x.dtype)


def _softmax_kernel(args, attrs):
    x = args[0]
    if x.dtype.kind != "f":
        raise float_intrinsic_refusal("nn.softmax", x.dtype)
    axis = attrs["axis"]
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return as_result(e / np.sum(e, axis=axis, keepdims=True), x.dtype)


def _log_softmax_kernel(args, attrs):
    x = args[0]
    if x.dtype.kind != "f":
        raise float_intrinsic_refusal("nn.log_softmax", x.dtype)
    axis = attrs["axis"]
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        lse = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
        return as_result(shifted - lse, x.dtype)


register("nn.softmax", 1, _softmax_rel, _softmax_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("axis", "int", -1)], doc="softmax along axis (default -1)")
register("nn.log_softmax", 1, _softmax_rel, _log_softmax_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("axis", "int", -1)], doc="log of softmax along axis (default -1)")


def _batch_flatten_rel(name, args, attrs):
    (x,) = args
    if len(x.shape) == 0:
        raise OpTypeError(_("{op}: needs a tensor of rank >= 1, got {x}").format(op=name, x=x))
    return TensorType((x.shape[0], known_prod(x.shape[1:])), x.dtype)


def _batch_flatten_kernel(args, attrs):
    x = args[0]
    rest = 1
    for d in x.shape[1:]:
        rest *= d
    return x.reshape((x.shape[0], rest)).copy()


register("nn.batch_flatten", 1, _batch_flatten_rel, _batch_flatten_kernel, "injective",
         doc="flatten every dimension but the first: (n, ...) -> (n, rest)")


def _leaky_relu_rel(name, args, attrs):
    (x,) = args  # IdentityRel: any dtype
    return TensorType(x.shape, x.dtype)


def _leaky_relu_kernel(args, attrs):
    # topi: x > 0 ? x : x * alpha, alpha a constant of x's dtype (truncated toward zero for
    # integers, refused when negative for unsigned ones)
    x = args[0]
    alpha = attrs["alpha"]
    if x.dtype.kind in "biu":
        if x.dtype.kind in "bu" and alpha <= -1:
            raise tvm_lowering_refuses("nn.leaky_relu", x.dtype,
                                       _("lowering refuses: cannot make an unsigned {alpha}")
                                       .format(alpha=int(alpha)),
                                       _("cast to a signed dtype first"))
        if x.dtype.kind == "b":
            return as_result(x & (int(alpha) != 0), x.dtype)  # x if x, else x * alpha: x
        a = x.dtype.type(int(alpha))
    else:
        a = x.dtype.type(alpha)
    with np.errstate(all="ignore"):
        return as_result(np.where(x > 0, x, x * a), x.dtype)


register("nn.leaky_relu", 1, _leaky_relu_rel, _leaky_relu_kernel, "elemwise",
         # 0.25 is TVM's C++ default (LeakyReluAttrs), the one its printer omits; 0.01 is only
         # the Python API's
         attrs=[AttrSpec("alpha", "float", 0.25)], doc="x if x > 0 else alpha * x")


# ---------------------------------------------------------------------------------------------
# matmul, prelu, dropout, pad


def _matmul_rel(name, args, attrs):
    a, b = args
    dt = a.dtype  # MatmulRel: out_dtype, else tensor_a's; the dtypes are not compared
    if len(a.shape) < (2 if attrs["transpose_a"] else 1):
        raise OpTypeError(_("{op}: tensor_a {a} has too few dimensions").format(op=name, a=a))
    if len(b.shape) != 2:
        raise OpTypeError(_("{op}: {what} must be {rank}-d, got {t}").format(
                op=name, what="tensor_b", rank=2, t=b))
    if attrs["transpose_a"]:
        lead, k_a = a.shape[:-2] + (a.shape[-1],), a.shape[-2]
    else:
        lead, k_a = a.shape[:-1], a.shape[-1]
    k_b, n = (b.shape[1], b.shape[0]) if attrs["transpose_b"] else (b.shape[0], b.shape[1])
    unify_dim(name, k_a, k_b, _("inner dimensions differ: {x} and {y} "
                                "(transpose_a={transpose_a}, transpose_b={transpose_b})").format(
            x=a, y=b, transpose_a=attrs['transpose_a'], transpose_b=attrs['transpose_b']))
    if attrs["units"] is not None:
        n = unify_dim(name, n, attrs["units"], _("attribute 'units'={units} but tensor_b {b} "
                                                 "gives {n} columns").format(
                units=attrs['units'], b=b, n=n))
    return TensorType(lead + (n,), attrs["out_dtype"] or dt)


def _matmul_kernel(args, attrs):
    a, b = args
    dt = np.dtype(attrs["out_dtype"] or a.dtype)
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = b.T
    if a.shape[-1] != b.shape[0]:
        raise KernelError(_("nn.matmul: inner dimensions {a_shape_last} and {b_shape_first} "
                            "differ at run time").format(a_shape_last=a.shape[-1], b_shape_first=b.shape[0]))
    return _matmul_in(dt, a, b)


register("nn.matmul", 2, _matmul_rel, _matmul_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("units", "int_or_none", None),
                AttrSpec("out_dtype", "dtype_or_none", None),
                AttrSpec("transpose_a", "bool", False), AttrSpec("transpose_b", "bool", False)],
         doc="nn.matmul(a, b, transpose_a=False, transpose_b=False): a @ b, b is 2-d")


def _prelu_rel(name, args, attrs):
    data, alpha = args
    same_dtype(name, data, alpha)  # PReluRel assigns alpha data's dtype
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=1, t=data))
    axis = norm_axis(name, attrs["axis"], len(data.shape), "attribute 'axis'")
    if len(alpha.shape) != 1:
        raise OpTypeError(_("{op}: {what} must be {rank}-d, got {t}").format(
                op=name, what="alpha", rank=1, t=alpha))
    unify_dim(name, alpha.shape[0], data.shape[axis],
              _("alpha {alpha} does not match axis {axis} (attribute 'axis') of {data}").format(
            alpha=alpha, axis=axis, data=data))
    return TensorType(data.shape, data.dtype)


def _prelu_kernel(args, attrs):
    x, alpha = args
    axis = attrs["axis"] % x.ndim
    if alpha.shape[0] != x.shape[axis]:
        raise KernelError(_("nn.prelu: alpha of length {alpha_shape_first} does not match axis "
                            "{axis} of {x_shape} at run time").format(alpha_shape_first=alpha.shape[0], axis=axis, x_shape=fmt_shape(x.shape)))
    shape = [1] * x.ndim
    shape[axis] = alpha.shape[0]
    with np.errstate(all="ignore"):
        # topi: x > 0 ? x : x * alpha (-0.0 and NaN take the product)
        return as_result(np.where(x > 0, x, x * alpha.reshape(shape)), x.dtype)


register("nn.prelu", 2, _prelu_rel, _prelu_kernel, "broadcast",
         attrs=[AttrSpec("axis", "int", 1)],
         doc="nn.prelu(data, alpha, axis=1): x if x >= 0 else alpha * x, alpha per channel")


def _dropout_rel(name, args, attrs):
    (x,) = args  # DropoutRel: any dtype (SimplifyInference makes it the identity)
    if not 0.0 <= attrs["rate"] < 1.0:
        raise OpTypeError(_("{op}: attribute 'rate' must be in [0, 1), got {rate}").format(
                op=name, rate=attrs['rate']))
    t = TensorType(x.shape, x.dtype)
    return TupleType((t, t))


def _dropout_kernel(args, attrs):
    x = args[0]
    # inference: nothing is dropped, so the data passes through and the mask keeps everything
    return x.copy(), np.ones_like(x)


register("nn.dropout", 1, _dropout_rel, _dropout_kernel, "opaque",
         attrs=[AttrSpec("rate", "float", 0.5)],
         doc="nn.dropout(data, rate=0.5): (data, mask) at inference: data unchanged, mask ones")


PAD_MODES = ("constant", "edge", "reflect")


def _pad_rel(name, args, attrs):
    data = args[0]  # PadRel: any dtype; PadCompute casts the pad value to data's dtype
    widths = _pad_widths(name, attrs["pad_width"], len(data.shape))
    if len(args) == 2:
        value = args[1]
        if value.shape != ():
            raise OpTypeError(_("{op}: the pad value must be a 0-d tensor, got {value}").format(
                    op=name, value=value))
        if attrs["pad_value"] is not None:
            raise OpTypeError(_("{op}: give the pad value as the second argument or as attribute "
                                "'pad_value', not both").format(op=name))
    shape = []
    for d, (before, after) in zip(data.shape, widths):
        if attrs["pad_mode"] == "reflect" and d is not None and max(before, after) >= d:
            raise OpTypeError(_("{op}: attribute 'pad_width' {pair} reflects past the edge of a "
                                "dimension of {d} (pad_mode=\"reflect\")").format(
                    op=name, pair=[before, after], d=d))
        if attrs["pad_mode"] == "edge" and d == 0 and (before or after):
            raise OpTypeError(_("{op}: pad_mode=\"edge\" cannot pad an empty dimension").format(
                    op=name))
        shape.append(None if d is None else d + before + after)
    return TensorType(tuple(shape), data.dtype)


def _pad_widths(name, pad_width, ndim):
    ok = isinstance(pad_width, list) and all(
        isinstance(p, list) and len(p) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in p) for p in pad_width)
    if not ok:
        raise OpTypeError(_("{op}: attribute 'pad_width' must be a list of [before, after] "
                            "integer pairs, got {pad_width}").format(
                op=name, pad_width=repr(pad_width)))
    if len(pad_width) != ndim:
        raise OpTypeError(_("{op}: attribute 'pad_width' has {len_pad_width} pairs for a "
                            "{ndim}-d tensor").format(
                op=name, len_pad_width=len(pad_width), ndim=ndim))
    if any(v < 0 for p in pad_width for v in p):
        raise OpTypeError(_("{op}: attribute 'pad_width' must not be negative, got "
                            "{pad_width}").format(op=name, pad_width=pad_width))
    return [tuple(p) for p in pad_width]


def _pad_kernel(args, attrs):
    x = args[0]
    widths = [tuple(p) for p in attrs["pad_width"]]
    mode = attrs["pad_mode"]
    if mode == "reflect" and any(max(w) >= d for w, d in zip(widths, x.shape)):
        raise KernelError(_("nn.pad: pad_width {pad_width} reflects past the edge of {x_shape} "
                            "at run time").format(pad_width=attrs['pad_width'], x_shape=fmt_shape(x.shape)))
    if mode == "constant":
        value = args[1] if len(args) == 2 else np.array(attrs["pad_value"] or 0.0)
        fill = tvm_cast(np.asarray(value), x.dtype)
        return np.pad(x, widths, mode="constant", constant_values=fill)
    return np.pad(x, widths, mode=mode)


register("nn.pad", 2, _pad_rel, _pad_kernel, "injective", min_inputs=1,
         attrs=[AttrSpec("pad_width", "any"),
                AttrSpec("pad_mode", "str", "constant", choices=PAD_MODES),
                AttrSpec("pad_value", "float_or_none", None)],
         doc="nn.pad(data, pad_value, pad_width=[[before, after], ...], pad_mode=\"constant\")")
