"""Normalisation: nn.batch_norm, nn.layer_norm, nn.group_norm, nn.instance_norm,
nn.l2_normalize, nn.lrn.

nn.batch_norm returns TVM's 3-tuple (normalised data, moving_mean, moving_var) computed for
inference as topi does: (x - mean) / sqrt(var + epsilon), times gamma when `scale`, plus beta
when `center`. Layer, group and instance norm normalise with the statistics of the data itself
(mean and biased variance over the normalised axes).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    AttrSpec, KernelError, OpTypeError, as_result, float_intrinsic_refusal, fmt_shape, norm_axis, norm_axes,
    register, unify_dim,
)
from rvmdbg.relay.types import TensorType, TupleType


def _channel_vectors(name, data, vectors, names, axis):
    """Each of `vectors` must be 1-d, of data's dtype and as long as data's `axis`; returns
    that length (None while unknown everywhere)."""
    dim = data.shape[axis]
    for what, t in zip(names, vectors):
        if t.dtype != data.dtype:
            raise OpTypeError(_("{op}: {what} {t} must have data's dtype {data_dtype}").format(
                    op=name, what=what, t=t, data_dtype=data.dtype))
        if len(t.shape) != 1:
            raise OpTypeError(_("{op}: {what} must be {rank}-d, got {t}").format(
                    op=name, what=what, rank=1, t=t))
        dim = unify_dim(name, t.shape[0], dim,
                        _("{what} {t} does not match axis {axis} (attribute 'axis') of data "
                          "{data}").format(what=what, t=t, axis=axis, data=data))
    return dim


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _check_len(name, v, x, axis, what):
    if v.shape[0] != x.shape[axis]:
        raise KernelError(_("{op}: {what} of length {v_shape_first} does not match axis {axis} "
                            "of {x_shape} at run time").format(op=name, what=what, v_shape_first=v.shape[0], axis=axis, x_shape=fmt_shape(x.shape)))


# ---------------------------------------------------------------------------------------------
# batch_norm


def _batch_norm_rel(name, args, attrs):
    data = args[0]
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=1, t=data))
    axis = norm_axis(name, attrs["axis"], len(data.shape), "attribute 'axis'")
    dim = _channel_vectors(name, data, args[1:], ("gamma", "beta", "moving_mean", "moving_var"),
                           axis)
    vec = TensorType((dim,), data.dtype)
    return TupleType((TensorType(data.shape, data.dtype), vec, vec))


def _floats_only(name, kernel):
    """TVM's norm relations accept any dtype; its SimplifyInference (or topi) then takes a
    sqrt or pow, which has no integer kernel: refused when it runs, with that reason."""
    def checked(args, attrs):
        if args[0].dtype.kind != "f":
            raise float_intrinsic_refusal(name, args[0].dtype)
        return kernel(args, attrs)
    return checked


def _batch_norm_kernel(args, attrs):
    x, gamma, beta, mean, var = args
    axis = attrs["axis"] % x.ndim
    for what, v in zip(("gamma", "beta", "moving_mean", "moving_var"), args[1:]):
        _check_len("nn.batch_norm", v, x, axis, what)
    dt = x.dtype
    eps = dt.type(attrs["epsilon"])
    with np.errstate(all="ignore"):
        # TVM's SimplifyInference form (rvmdbg/passes/simplify_inference.py), operator for
        # operator in the data's dtype, so the VM's rewritten program agrees bit for bit:
        # data * scale + shift, scale = 1 / sqrt(var + eps) * gamma, shift = -mean * scale + beta
        scale = dt.type(1) / np.sqrt(var + eps)
        if attrs["scale"]:
            scale = scale * gamma
        shift = -mean * scale
        if attrs["center"]:
            shift = shift + beta
        out = x * _along(scale.astype(dt, copy=False), axis, x.ndim)
        out += _along(shift.astype(dt, copy=False), axis, x.ndim)
    return as_result(out, dt), mean.copy(), var.copy()


_NORM_FLAGS = [AttrSpec("epsilon", "float", 1e-5), AttrSpec("center", "bool", True),
               AttrSpec("scale", "bool", True)]

register("nn.batch_norm", 5, _batch_norm_rel,
         _floats_only("nn.batch_norm", _batch_norm_kernel), "out_elemwise_fusable",
         attrs=[AttrSpec("axis", "int", 1)] + _NORM_FLAGS,
         doc="nn.batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5): "
             "(normalised data, moving_mean, moving_var)")


# ---------------------------------------------------------------------------------------------
# layer_norm, group_norm, instance_norm: statistics of the data itself


def _affine_norm_rel(name, args, attrs):
    data, gamma, beta = args
    if name == "nn.instance_norm" and len(data.shape) < 3:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=3, t=data))
    if len(data.shape) == 0:
        raise OpTypeError(_("{op}: {what} must have rank >= {rank}, got {t}").format(
                op=name, what="data", rank=1, t=data))
    axis = norm_axis(name, attrs["axis"], len(data.shape), "attribute 'axis'")
    _channel_vectors(name, data, (gamma, beta), ("gamma", "beta"), axis)
    if name == "nn.group_norm":
        groups = attrs["num_groups"]
        if groups < 1:
            raise OpTypeError(_("{op}: attribute '{attr}' must be >= {minimum}, got "
                                "{value}").format(op=name, attr="num_groups", minimum=1,
                                                  value=groups))
        c = data.shape[axis]
        if c is not None and c % groups:
            raise OpTypeError(_("{op}: {c} channels do not split into attribute "
                                "'num_groups'={groups}").format(op=name, c=c, groups=groups))
    return TensorType(data.shape, data.dtype)


def _normalise(x, reduce_axes, eps):
    mean = x.mean(axis=reduce_axes, keepdims=True, dtype=x.dtype)
    centred = x - mean
    var = np.mean(np.square(centred), axis=reduce_axes, keepdims=True, dtype=x.dtype)
    return centred / np.sqrt(var + eps)


def _affine_norm_kernel(name):
    def kernel(args, attrs):
        x, gamma, beta = args
        axis = attrs["axis"] % x.ndim
        _check_len(name, gamma, x, axis, "gamma")
        _check_len(name, beta, x, axis, "beta")
        eps = x.dtype.type(attrs["epsilon"])
        with np.errstate(all="ignore"):
            if name == "nn.layer_norm":
                out = _normalise(x, (axis,), eps)
            elif name == "nn.instance_norm":
                out = _normalise(x, tuple(a for a in range(1, x.ndim) if a != axis), eps)
            else:  # group_norm: channels split into groups, each normalised with the rest
                groups = attrs["num_groups"]
                c = x.shape[axis]
                if c % groups:
                    raise KernelError(_("{op}: {c} channels do not split into {groups} groups at run time").format(op=name, c=c, groups=groups))
                split = x.reshape(x.shape[:axis] + (groups, c // groups) + x.shape[axis + 1:])
                rest = tuple(a for a in range(1, split.ndim) if a != axis)
                out = _normalise(split, rest, eps).reshape(x.shape)
            if attrs["scale"]:
                out = out * _along(gamma, axis, x.ndim)
            if attrs["center"]:
                out = out + _along(beta, axis, x.ndim)
        return as_result(out, x.dtype)
    return _floats_only(name, kernel)


# TVM has no kernels of its own for these: SimplifyInference rewrites them into elementwise
# operators, so no fusion pattern is registered (kOpaque)
register("nn.layer_norm", 3, _affine_norm_rel, _affine_norm_kernel("nn.layer_norm"), "opaque",
         attrs=[AttrSpec("axis", "int", -1)] + _NORM_FLAGS,
         doc="nn.layer_norm(data, gamma, beta, axis=-1): normalise along axis")
register("nn.group_norm", 3, _affine_norm_rel, _affine_norm_kernel("nn.group_norm"), "opaque",
         attrs=[AttrSpec("num_groups", "int", 0), AttrSpec("axis", "int", 1)] + _NORM_FLAGS,
         doc="nn.group_norm(data, gamma, beta, num_groups=): normalise groups of channels")
register("nn.instance_norm", 3, _affine_norm_rel, _affine_norm_kernel("nn.instance_norm"),
         "opaque", attrs=[AttrSpec("axis", "int", 1)] + _NORM_FLAGS,
         doc="nn.instance_norm(data, gamma, beta, axis=1): normalise each instance's channels")


# ---------------------------------------------------------------------------------------------
# l2_normalize, lrn


def _l2_rel(name, args, attrs):
    (x,) = args
    norm_axes(name, attrs["axis"], len(x.shape), "attribute 'axis'")
    return TensorType(x.shape, x.dtype)


def _l2_kernel(args, attrs):
    (x,) = args
    axes = tuple(a % x.ndim for a in attrs["axis"])
    with np.errstate(all="ignore"):
        ssq = np.sum(np.square(x), axis=axes, keepdims=True, dtype=x.dtype)
        out = x / np.sqrt(np.maximum(ssq, x.dtype.type(attrs["eps"])))
    return as_result(out, x.dtype)


register("nn.l2_normalize", 1, _l2_rel, _floats_only("nn.l2_normalize", _l2_kernel), "opaque",
         attrs=[AttrSpec("eps", "float"), AttrSpec("axis", "int_list", [])],
         doc="nn.l2_normalize(data, eps=, axis=[...]): x / sqrt(max(sum(x^2, axis), eps))")


def _lrn_rel(name, args, attrs):
    (x,) = args
    if len(x.shape) != 4:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor, got {x}").format(op=name, rank=4,
                                                                             x=x))
    axis = norm_axis(name, attrs["axis"], 4, "attribute 'axis'")
    if axis not in (1, 3):
        raise OpTypeError(_("{op}: attribute 'axis' must be 1 or 3, got {axis}").format(
                op=name, axis=attrs['axis']))
    if attrs["size"] < 1 or attrs["size"] % 2 == 0:
        raise OpTypeError(_("{op}: attribute 'size' must be a positive odd number, got "
                            "{size}").format(op=name, size=attrs['size']))
    return TensorType(x.shape, x.dtype)


def _lrn_kernel(args, attrs):
    (x,) = args
    axis, size = attrs["axis"] % 4, attrs["size"]
    dt = x.dtype.type
    half = size // 2
    pads = [(0, 0)] * 4
    pads[axis] = (half, half)
    sq = np.pad(np.square(x), pads)
    total = np.zeros_like(x)
    n = x.shape[axis]
    with np.errstate(all="ignore"):
        for k in range(size):  # the window of `size` channels centred on each channel
            index = [slice(None)] * 4
            index[axis] = slice(k, k + n)
            total += sq[tuple(index)]
        denom = np.power(dt(attrs["bias"]) + dt(attrs["alpha"]) * total / dt(size),
                         dt(attrs["beta"]))
        return as_result(x / denom, x.dtype)


register("nn.lrn", 1, _lrn_rel, _floats_only("nn.lrn", _lrn_kernel), "opaque",
         attrs=[AttrSpec("size", "int", 5), AttrSpec("axis", "int", 1),
                AttrSpec("bias", "float", 2.0), AttrSpec("alpha", "float", 0.0001),
                AttrSpec("beta", "float", 0.75)],
         doc="nn.lrn(data, size=5, axis=1, bias=2, alpha=1e-4, beta=0.75): local response "
             "normalisation across channels")
