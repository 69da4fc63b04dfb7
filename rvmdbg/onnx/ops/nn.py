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


def conv_attrs(g, op: str, data, kshape, attrs, pad_value=0.0):
    """The data (padded explicitly for auto_pad SAME_*) and the nn.conv attributes of an ONNX
    convolution node (Conv, ConvInteger, QLinearConv)."""
    ndim = g.rank_of(data)
    kernel_shape = list(attrs.get("kernel_shape", kshape[2:]))
    strides = attrs.get("strides", [1] * (ndim - 2))
    dilations = attrs.get("dilations", [1] * (ndim - 2))
    pads = attrs.get("pads")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        data = c.autopad(g, data, strides, kernel_shape, dilations, mode=auto_pad,
                         pad_value=pad_value)
        pads = None
    elif auto_pad == "VALID":
        pads = None
    elif auto_pad != "NOTSET":
        raise g.error(f"value {auto_pad} of attribute auto_pad of {op} is invalid")
    if pads is None:
        pads = [0] * (ndim - 2)
    return data, dict(strides=c.ints(strides), padding=_padding(pads, ndim - 2),
                      dilation=c.ints(dilations), groups=int(attrs.get("group", 1)),
                      channels=kshape[0], kernel_size=c.ints(kernel_shape))


@converter("Conv", since=1)
def conv(g, node, inputs, attrs):
    data, kernel = inputs[0], inputs[1]
    data, settings = conv_attrs(g, "Conv", data, g.shape_of(kernel), attrs)
    out = g.call(_dims_op("nn.conv", settings["kernel_size"]), [data, kernel], **settings)
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


def _f(g, value, like):
    """A scalar constant of `like`'s dtype (TVM's `_expr.const(v, dtype)`)."""
    return g.const(np.asarray(value, g.dtype_of(like)))


def _f32(g, value, like=None):
    """A Python-float constant: float32 as `relay.const(float)` made it, or `like`'s dtype
    (TVM's float32 constants refuse a float16 or float64 input)."""
    return g.const(np.asarray(value, g.dtype_of(like) if like is not None else "float32"))


@converter("LeakyRelu", since=1)
def leaky_relu(g, node, inputs, attrs):
    return g.call("nn.leaky_relu", [inputs[0]], alpha=float(attrs.get("alpha", 0.01)))


@converter("Elu", since=1)
def elu(g, node, inputs, attrs):
    x = inputs[0]
    alpha = float(attrs.get("alpha", 1.0))
    neg = g.call("multiply", [_f32(g, -alpha, x), g.call("nn.relu", [
        g.call("subtract", [_f32(g, 1.0, x), g.call("exp", [x])])])])
    return g.call("add", [neg, g.call("nn.relu", [x])])


@converter("Selu", since=1)
def selu(g, node, inputs, attrs):
    x = inputs[0]
    alpha = float(attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(attrs.get("gamma", 1.05070102214813232421875))
    neg = g.call("multiply", [_f32(g, -alpha, x), g.call("nn.relu", [
        g.call("subtract", [_f32(g, 1.0, x), g.call("exp", [x])])])])
    return g.call("multiply", [_f32(g, gamma, x), g.call("add", [neg, g.call("nn.relu", [x])])])


@converter("Celu", since=12)
def celu(g, node, inputs, attrs):
    x = inputs[0]
    alpha = _f(g, attrs.get("alpha", 1.0), x)
    zero, one = _f(g, 0, x), _f(g, 1, x)
    neg = g.call("minimum", [zero, g.call("multiply", [alpha, g.call("subtract", [
        g.call("exp", [g.call("divide", [x, alpha])]), one])])])
    return g.call("add", [g.call("maximum", [zero, x]), neg])


@converter("HardSigmoid", since=1)
def hard_sigmoid(g, node, inputs, attrs):
    x = inputs[0]
    t = g.call("add", [g.call("multiply", [x, _f32(g, attrs.get("alpha", 0.2), x)]),
                       _f32(g, attrs.get("beta", 0.5), x)])
    return g.call("clip", [t], a_min=0.0, a_max=1.0)


@converter("HardSwish", since=14)
def hard_swish(g, node, inputs, attrs):
    x = inputs[0]
    t = g.call("add", [g.call("multiply", [x, _f32(g, 1 / 6, x)]), _f32(g, 0.5, x)])
    return g.call("multiply", [x, g.call("clip", [t], a_min=0.0, a_max=1.0)])


@converter("Softplus", since=1)
def softplus(g, node, inputs, attrs):
    x = inputs[0]
    return g.call("log", [g.call("add", [g.call("exp", [x]), _f(g, 1, x)])])


@converter("Softsign", since=1)
def softsign(g, node, inputs, attrs):
    x = inputs[0]
    return g.call("divide", [x, g.call("add", [_f32(g, 1.0, x), g.call("abs", [x])])])


@converter("ThresholdedRelu", since=1)
def thresholded_relu(g, node, inputs, attrs):
    x = inputs[0]
    alpha = g.call("full_like", [x, _f32(g, float(attrs.get("alpha", 1.0)), x)])
    mask = g.call("cast", [g.call("greater", [x, alpha])], dtype=g.dtype_of(x))
    return g.call("multiply", [x, mask])


@converter("Shrink", since=9)
def shrink(g, node, inputs, attrs):
    x = inputs[0]
    lambd, bias = _f(g, attrs.get("lambd", 0.5), x), _f(g, attrs.get("bias", 0.0), x)
    zeros = g.call("zeros_like", [x])
    lo = g.call("where", [g.call("less", [x, g.call("negative", [lambd])]),
                          g.call("add", [x, bias]), zeros])
    hi = g.call("where", [g.call("greater", [x, lambd]), g.call("subtract", [x, bias]), zeros])
    return g.call("add", [lo, hi])


@converter("Gelu", since=20)
def gelu(g, node, inputs, attrs):
    x = inputs[0]
    if attrs.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = g.call("multiply", [_f(g, np.sqrt(2 / np.pi), x), g.call("add", [
            x, g.call("multiply", [_f(g, 0.044715, x), g.call("power", [x, _f(g, 3.0, x)])])])])
        return g.call("multiply", [g.call("multiply", [_f(g, 0.5, x), x]), g.call("add", [
            _f(g, 1.0, x), g.call("tanh", [inner])])])
    term1 = g.call("multiply", [_f(g, 0.5, x), x])
    erf = g.call("erf", [g.call("divide", [x, _f(g, np.sqrt(2), x)])])
    return g.call("multiply", [term1, g.call("add", [_f(g, 1.0, x), erf])])


@converter("Mish", since=18)
def mish(g, node, inputs, attrs):
    x = inputs[0]
    sp = g.call("log", [g.call("add", [_f(g, 1.0, x), g.call("exp", [x])])])
    return g.call("multiply", [x, g.call("tanh", [sp])])


@converter("PRelu", since=1)
def prelu(g, node, inputs, attrs):
    x, slope = inputs
    shape = c.shape_of(g, x)
    xs, ss = g.shape_of(x), g.shape_of(slope)
    if g.opset < 7 and len(ss) == 1 and len(xs) > 2 and ss[0] not in (1, None):
        # before opset 7 (no broadcasting) a slope of C values is one per channel, as
        # PyTorch exported nn.PReLU(C); TVM's converter broadcast it from the right and failed
        slope = c.reshape(g, slope, [ss[0]] + [1] * (len(xs) - 2))
    alpha = c.reshape(g, g.call("broadcast_to_like", [slope, x]), [-1])
    out = g.call("nn.prelu", [c.reshape(g, x, [-1]), alpha], axis=0)
    return c.reshape(g, out, g.fold(shape))


@converter("Softmax", since=1)
def softmax_v1(g, node, inputs, attrs):
    x = inputs[0]
    shape = g.shape_of(x)
    ndim = len(shape)
    axis = attrs.get("axis", 1)
    if axis < 0:
        axis += ndim
    if axis == ndim - 1:
        return g.call("nn.softmax", [x], axis=axis)
    flat = [-1] if axis == 0 else [int(np.prod(shape[:axis])), -1]
    out = g.call("nn.softmax", [c.reshape(g, x, flat)], axis=-1)
    return c.reshape(g, out, list(shape))


@converter("Softmax", since=13)
def softmax_v13(g, node, inputs, attrs):
    axis = attrs.get("axis", -1)
    if axis < 0:
        axis += g.rank_of(inputs[0])
    return g.call("nn.softmax", [inputs[0]], axis=axis)


@converter("LogSoftmax", since=1)
def log_softmax_v1(g, node, inputs, attrs):
    return g.call("log", [softmax_v1(g, node, inputs, attrs)])


@converter("LogSoftmax", since=13)
def log_softmax_v13(g, node, inputs, attrs):
    return g.call("log", [softmax_v13(g, node, inputs, attrs)])


@converter("Hardmax", since=13)
def hardmax_v13(g, node, inputs, attrs):
    x = inputs[0]
    dtype = g.dtype_of(x)
    axis = attrs.get("axis", -1) % g.rank_of(x)
    argmax = g.call("argmax", [x], axis=[axis], keepdims=False, exclude=False,
                    select_last_index=False)
    depth = g.fold(g.call("take", [c.shape_of(g, x), g.const(np.array([axis], "int64"))],
                          axis=None, batch_dims=0, mode="clip"))
    return g.call("one_hot", [argmax, _f(g, 1.0, x), _f(g, 0.0, x)],
                  depth=int(c.const_value(g, depth).reshape(-1)[0]), axis=axis, dtype=dtype)


@converter("Dropout", since=1)
def dropout(g, node, inputs, attrs):
    # inference: the data unchanged, the mask all true (TVM made nn.dropout and no mask)
    x = inputs[0]
    out = g.get(g.call("nn.dropout", [x], rate=float(attrs.get("ratio", 0.5))), 0)
    if len(node.output) > 1 and node.output[1]:
        return [out, g.call("cast", [g.call("ones_like", [x])], dtype="bool")]
    return out


@converter("Flatten", since=1)
def flatten(g, node, inputs, attrs):
    x = inputs[0]
    shape = c.shape_of(g, x)
    ndim = g.rank_of(x)
    axis = attrs.get("axis", 1)
    if axis < 0:
        axis += ndim
    if axis == 1:
        return g.call("nn.batch_flatten", [x])
    pre = g.call("prod", [c.strided_slice(g, shape, [0], [axis], [1])], axis=None,
                 keepdims=True, exclude=False)
    post = g.call("prod", [c.strided_slice(g, shape, [axis], [ndim], [1])], axis=None,
                  keepdims=True, exclude=False)
    return c.reshape(g, x, g.fold(c.concat(g, [pre, post], 0)))


@converter("ConvTranspose", since=1)
def conv_transpose(g, node, inputs, attrs):
    data, kernel = inputs[0], inputs[1]
    kshape = g.shape_of(kernel)
    groups = int(attrs.get("group", 1))
    channels = kshape[1] * groups
    kernel_shape = list(attrs.get("kernel_shape", kshape[2:]))
    in_shape = g.shape_of(data)
    ndim = len(in_shape)
    k = len(kernel_shape)
    dilations = attrs.get("dilations", [1] * k)
    output_padding = attrs.get("output_padding", [0] * k)
    strides = attrs.get("strides", [1] * k)
    pads = attrs.get("pads")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if "output_shape" in attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if "output_shape" in attrs:
            out_shape = attrs["output_shape"][-k:]
            total = [strides[i] * (in_shape[ndim - k + i] - 1) + output_padding[i]
                     + ((kernel_shape[i] - 1) * dilations[i] + 1) - out_shape[i]
                     for i in range(k)]
        else:
            total = [output_padding[i] + ((kernel_shape[i] - 1) * dilations[i] + 1)
                     - strides[i] for i in range(k)]
        for i in range(k):
            if total[i] < 0:
                # the output is larger than the pads allow: the rest is output padding
                output_padding = list(output_padding)
                output_padding[i] -= total[i]
                total[i] = 0
        left = [p // 2 for p in total]
        right = [t - l for t, l in zip(total, left)]
        # onnxruntime after 1.12.1 puts the extra pad at the end for SAME_UPPER (ONNX's rule)
        pads = left + right if auto_pad == "SAME_UPPER" else right + left
        if "output_shape" in attrs and auto_pad == "NOTSET":
            pads = right + left
    elif auto_pad == "VALID":
        pads = [0] * k
    if pads is None:
        pads = [0] * k
    out = g.call(_dims_op("nn.conv", kernel_shape, "_transpose"), [data, kernel],
                 strides=c.ints(strides), output_padding=c.ints(output_padding),
                 padding=_padding(pads, k), dilation=c.ints(dilations), groups=groups,
                 channels=channels, kernel_size=c.ints(kernel_shape))
    if len(inputs) > 2 and inputs[2] is not None:
        out = g.call("nn.bias_add", [out, inputs[2]], axis=1)
    return out


def _ceil_mode(attrs, spatial, kernel, strides, pads) -> bool:
    """Relay's ceil_mode for an ONNX pool: ONNX drops a last window that would start in the
    end padding, topi keeps it; where every dimension drops it, floor mode makes the same
    windows (the same pads, so the same averages)."""
    ceil = bool(attrs.get("ceil_mode", 0))
    if not ceil or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID") or \
            any(d is None for d in spatial):
        return ceil
    k = len(kernel)
    dil = attrs.get("dilations", [1] * k)
    pads = list(pads) * 2 if len(pads) == k else list(pads)
    floor_all = True
    for i in range(k):
        span = spatial[i] + pads[i] + pads[k + i] - ((kernel[i] - 1) * dil[i] + 1)
        floors, ceils = span // strides[i] + 1, -(-span // strides[i]) + 1
        if ceils > floors and (ceils - 1) * strides[i] < spatial[i] + pads[i]:
            floor_all = False  # this dimension keeps its ceil window in ONNX too
    return not floor_all


def _pool(kind: str):
    def convert(g, node, inputs, attrs):
        data = inputs[0]
        in_shape = list(g.shape_of(data))
        ndim = len(in_shape)
        dtype = g.dtype_of(data)
        kernel = list(attrs["kernel_shape"])
        k = len(kernel)
        strides = attrs.get("strides", [1] * k)
        pads = attrs.get("pads")
        auto_pad = attrs.get("auto_pad", "NOTSET")
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            if kind == "avg":
                pairs = []
                for i in range(k):
                    size, s = in_shape[2 + i], strides[i]
                    pad = max(kernel[i] - s, 0) if size % s == 0 else max(kernel[i] - size % s, 0)
                    b, a = pad // 2, pad - pad // 2
                    pairs.append([a, b] if "LOWER" in auto_pad else [b, a])
                pads = [p[0] for p in pairs] + [p[1] for p in pairs]
            else:
                lowest = (np.iinfo(dtype).min if "int" in dtype else np.finfo(dtype).min)
                data = c.autopad(g, data, strides, kernel, [1] * ndim, mode=auto_pad,
                                 pad_value=float(lowest))
        elif auto_pad == "VALID":
            pads = [0] * k
        if pads is None:
            pads = [0] * k
        squeeze = False
        if ndim - k == 1:
            data = c.expand_dims(g, data, 0)
            squeeze = True
            ndim += 1
        layout = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[k]
        extra = {}
        if kind == "avg":
            extra["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
        out = g.call(_dims_op(f"nn.{kind}_pool", kernel), [data],
                     pool_size=kernel, strides=c.ints(strides),
                     dilation=c.ints(attrs.get("dilations", [1] * k)),
                     padding=_padding(pads, k), layout=layout, out_layout="",
                     ceil_mode=_ceil_mode(attrs, in_shape[-k:], kernel, strides, pads),
                     **extra)
        if squeeze:
            out = c.squeeze(g, out, [0])
        if kind == "max" and len(node.output) > 1 and node.output[1]:
            from rvmdbg.onnx.ops.unpool import max_pool_indices  # the Indices output
            return [out, max_pool_indices(g, inputs[0], attrs, kernel, strides, pads)]
        return out
    return convert


converter("MaxPool", since=1)(_pool("max"))
converter("AveragePool", since=1)(_pool("avg"))


def _global_pool(kind: str):
    def convert(g, node, inputs, attrs):
        rank = g.rank_of(inputs[0])
        if rank not in (3, 4, 5):
            raise g.error(f"global pooling needs 1-D to 3-D data, got rank {rank}")
        return g.call(f"nn.global_{kind}_pool{rank - 2}d", [inputs[0]])
    return convert


converter("GlobalAveragePool", since=1)(_global_pool("avg"))
converter("GlobalMaxPool", since=1)(_global_pool("max"))


@converter("BatchNormalization", since=1)
def batch_norm(g, node, inputs, attrs):
    if attrs.get("training_mode", 0):
        return _batch_norm_training(g, node, inputs, attrs)
    # inference mode: data, then the running mean and variance standing for the saved ones
    out = g.call("nn.batch_norm", inputs[:5], axis=1, epsilon=float(attrs.get("epsilon", 1e-5)),
                 center=True, scale=True)
    y = g.get(out, 0)
    if len([o for o in node.output if o]) == 1:
        return y
    mean, var = g.get(out, 1), g.get(out, 2)
    return [y, mean, var, mean, var]


def _batch_norm_training(g, node, inputs, attrs):
    """training_mode=1 (opset 14): normalized by the batch's own mean and (biased) variance
    over every axis but the channel; the running mean and variance outputs are the inputs
    moved towards them by `momentum`. TVM's converter ignored the attribute (inference mode
    always); this is the ONNX operator's definition, in Relay's mean, variance and
    nn.batch_norm."""
    x, scale, bias, mean, var = inputs[:5]
    dtype = g.dtype_of(x)
    axes = [0] + list(range(2, g.rank_of(x)))
    batch_mean = g.call("mean", [x], axis=axes, keepdims=True, exclude=False)
    batch_var = g.call("variance", [x, batch_mean], axis=axes, keepdims=False, exclude=False,
                       unbiased=False)
    batch_mean = c.squeeze(g, batch_mean, axes)
    out = g.call("nn.batch_norm", [x, scale, bias, batch_mean, batch_var], axis=1,
                 epsilon=float(attrs.get("epsilon", 1e-5)), center=True, scale=True)
    momentum = float(attrs.get("momentum", 0.9))

    def moved(running, batch):
        return g.call("add", [g.call("multiply", [running, g.const(np.asarray(momentum, dtype))]),
                              g.call("multiply", [batch, g.const(np.asarray(1 - momentum, dtype))])])
    return [g.get(out, 0), moved(mean, batch_mean), moved(var, batch_var)]


@converter("InstanceNormalization", since=1)
def instance_norm(g, node, inputs, attrs):
    return g.call("nn.instance_norm", inputs[:3], axis=1,
                  epsilon=float(attrs.get("epsilon", 1e-5)), center=True, scale=True)


@converter("LayerNormalization", since=17)
def layer_norm(g, node, inputs, attrs):
    x, gamma = inputs[0], inputs[1]
    beta = inputs[2] if len(inputs) > 2 else None
    axis = attrs.get("axis", -1)
    eps = attrs.get("epsilon", 1e-5)
    rank = g.rank_of(x)
    axes = list(range(axis, rank)) if axis >= 0 else list(range(rank + axis, rank))
    dtype = g.dtype_of(x)
    mean = g.call("mean", [x], axis=axes, keepdims=True, exclude=False)
    var = g.call("variance", [x, mean], axis=axes, keepdims=True, exclude=False,
                 unbiased=False)
    inv = g.call("divide", [g.const(np.asarray(1, dtype)), g.call("sqrt", [
        g.call("add", [var, g.const(np.asarray(eps, dtype))])])])
    out = g.call("multiply", [g.call("multiply", [g.call("subtract", [x, mean]), inv]), gamma])
    if beta is not None:
        out = g.call("add", [out, beta])
    return [out, mean, inv]


@converter("MeanVarianceNormalization", since=1)
def mean_variance_normalization(g, node, inputs, attrs):
    x = inputs[0]
    axes = c.ints(attrs.get("axes", [0, 2, 3]))
    mean = g.call("mean", [x], axis=axes, keepdims=True, exclude=False)
    mean_sq = g.call("power", [mean, _f32(g, 2)])
    sq_mean = g.call("mean", [g.call("power", [x, _f32(g, 2)])], axis=axes, keepdims=True,
                     exclude=False)
    return g.call("divide", [g.call("subtract", [x, mean]),
                             g.call("sqrt", [g.call("subtract", [sq_mean, mean_sq])])])


@converter("LpPool", since=1)
def lp_pool(g, node, inputs, attrs):
    x = inputs[0]
    dtype = g.dtype_of(x)
    k = list(attrs["kernel_shape"])
    p = attrs.get("p", 2)
    # |x|^p (ONNX's definition; TVM raised x itself, wrong for odd p and negative x)
    data = g.call("power", [g.call("abs", [x]), g.const(np.asarray(p, dtype))])
    pads = attrs.get("pads")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    strides = attrs.get("strides", [1] * len(k))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        data = c.autopad(g, data, strides, k, [1] * (len(k) + 2), mode=auto_pad)
    elif auto_pad == "VALID":
        pads = [0] * len(k)
    out = g.call(_dims_op("nn.avg_pool", k), [data], pool_size=k, strides=c.ints(strides),
                 dilation=c.ints(attrs.get("dilations", [1] * len(k))),
                 padding=_padding(pads or [0] * len(k), len(k)),
                 layout={1: "NCW", 2: "NCHW", 3: "NCDHW"}[len(k)], out_layout="",
                 ceil_mode=bool(attrs.get("ceil_mode", 0)), count_include_pad=True)
    out = g.call("multiply", [g.call("abs", [out]),
                              g.const(np.asarray(np.prod(k), dtype))])
    return g.call("power", [out, g.const(np.asarray(1.0 / p, dtype))])


@converter("GlobalLpPool", since=1)
def global_lp_pool(g, node, inputs, attrs):
    attrs = dict(attrs, kernel_shape=list(g.shape_of(inputs[0])[2:]))
    return lp_pool(g, node, inputs, attrs)


@converter("LpNormalization", since=1)
def lp_normalization(g, node, inputs, attrs):
    # not in TVM's frontend: x over its p-norm along the axis, 0 where the norm is 0 (as
    # ONNX's reference)
    x = inputs[0]
    axis = attrs.get("axis", -1)
    p = attrs.get("p", 2)
    if p == 1:
        norm = g.call("sum", [g.call("abs", [x])], axis=[axis], keepdims=True, exclude=False)
    elif p == 2:
        norm = g.call("sqrt", [g.call("sum", [g.call("multiply", [x, x])], axis=[axis],
                                      keepdims=True, exclude=False)])
    else:
        raise g.error(f"LpNormalization with p={p} is not defined (p is 1 or 2)")
    zero = _f(g, 0, x)
    return g.call("where", [g.call("equal", [norm, zero]), g.call("zeros_like", [x]),
                            g.call("divide", [x, norm])])


@converter("Col2Im", since=18)
def col2im(g, node, inputs, attrs):
    """Col2Im (opset 18, after TVM's converters) as the transposed convolution it is: the
    columns (N, C*K, L) reshaped to (N, C*K, *blocks), then `nn.convNd_transpose` with
    groups=C and a constant one-hot weight (input channel c*K + k puts 1 at kernel position k),
    so each block's values are added back at their window's place; strides, dilations and
    pads are the convolution's, and output_padding the remainder the block count leaves."""
    x, image, block = inputs[0], inputs[1], inputs[2]
    image_v, block_v = c.const_value(g, image), c.const_value(g, block)
    if image_v is None or block_v is None:
        raise g.needs_value("the image and block shapes", [image, block])
    image_shape, kernel = c.ints(image_v), c.ints(block_v)
    k = len(kernel)
    if k != len(image_shape) or k not in (1, 2, 3):
        raise g.error(f"Col2Im takes 1 to 3 spatial dims, with image_shape {image_shape} and "
                      f"block_shape {kernel}")
    dilations = c.ints(attrs.get("dilations", [1] * k))
    strides = c.ints(attrs.get("strides", [1] * k))
    pads = c.ints(attrs.get("pads", [0] * (2 * k)))
    n, ck, length = g.shape_of(x)
    taps = int(np.prod(kernel))
    if ck is None or ck % taps:
        raise g.error(f"Col2Im's input has {ck} rows, not a multiple of the block's {taps}")
    channels = ck // taps
    blocks, extra = [], []
    for d in range(k):
        span = image_shape[d] + pads[d] + pads[d + k] - dilations[d] * (kernel[d] - 1) - 1
        if span < 0:
            raise g.error(f"Col2Im's block does not fit the image along dim {d}")
        blocks.append(span // strides[d] + 1)
        extra.append(span % strides[d])
    if length is not None and length != int(np.prod(blocks)):
        raise g.error(f"Col2Im's input has {length} blocks, the shapes make "
                      f"{int(np.prod(blocks))}")
    data = c.reshape(g, x, [-1 if n is None else n, ck] + blocks)
    weight = np.zeros((ck, 1, taps), g.dtype_of(x))
    for row in range(ck):
        weight[row, 0, row % taps] = 1
    weight = weight.reshape([ck, 1] + kernel)
    return g.call(_dims_op("nn.conv", kernel, "_transpose"), [data, g.const(weight)],
                  strides=strides, output_padding=extra, padding=_padding(pads, k),
                  dilation=dilations, groups=channels, channels=channels, kernel_size=kernel)
