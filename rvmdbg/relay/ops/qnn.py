"""Quantized operators (`qnn.*`): quantize, dequantize, requantize, dense, conv2d, add, mul and
concatenate, with TVM's arguments (scales and zero points are tensor arguments), attributes
and results.

TVM defines these results by lowering each op to integer Relay (its QNN canonicalization); the
kernels here compute the same integers directly: int32 accumulation, TVM's fixed-point
requantization (a 31-bit multiplier and a shift, rounding UPWARD or TONEAREST) and saturation
to the output dtype. Scales are float32, zero points int32, each a scalar (per tensor) or a
vector along `axis` (per channel). TVM requires scales to be constants; here they may be any
tensor, read when the kernel runs.
"""
from __future__ import annotations

import math

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    AttrSpec, KernelError, OpTypeError, broadcast_dims, fmt_shape, norm_axis, register,
)
from rvmdbg.relay.types import TensorType

I32 = np.dtype("int32")
I64 = np.dtype("int64")
F32 = np.dtype("float32")

# ---------------------------------------------------------------------------------------------
# Type checks shared by the relations


def _need(name: str, t: TensorType, dtypes: tuple, what: str) -> None:
    if t.dtype not in dtypes:
        choices = dtypes[0]
        for d in dtypes[1:]:
            choices = _("{left} or {right}").format(left=choices, right=d)
        raise OpTypeError(_("{op}: {what} must be {dtypes}, got {t}").format(
                op=name, what=what, dtypes=choices, t=t))


def _qparam(name: str, t: TensorType, what: str, dtype: str, length=None, each: bool = False,
            per_channel: bool = True) -> None:
    """A scale (float32) or zero point (int32): a scalar, or when per_channel a vector of
    `length` values (`None`: not known statically); `each`: t is one of the tuple `what`."""
    if t.dtype != dtype:
        text = (_("{op}: each of {what} must be {dtype}, got {t}") if each else
                _("{op}: {what} must be {dtype}, got {t}"))
        raise OpTypeError(text.format(op=name, what=what, dtype=dtype, t=t))
    if t.shape == ():
        return
    if not per_channel:
        text = (_("{op}: each of {what} must be a scalar {dtype}, got {t}") if each else
                _("{op}: {what} must be a scalar {dtype}, got {t}"))
        raise OpTypeError(text.format(op=name, what=what, dtype=dtype, t=t))
    if len(t.shape) != 1 or (length is not None and t.shape[0] is not None
                             and t.shape[0] != length):
        if length is None:
            text = _("{op}: {what} must be a scalar or a vector of the channel count values (one "
                     "per channel), got {t}")
        else:
            text = _("{op}: {what} must be a scalar or a vector of {n} values (one per channel), "
                     "got {t}")
        raise OpTypeError(text.format(op=name, what=what, n=length, t=t))


def _channel_axis(name: str, axis: int, data: TensorType, attr: str = "axis") -> int:
    """TVM's channel axis: negative counts from the end; a 0-d tensor's axis is 0."""
    rank = len(data.shape)
    if rank == 0:
        return 0
    try:
        return norm_axis(name, axis, rank, attr)
    except OpTypeError as e:
        raise OpTypeError(e.message) from None


def _channels(data: TensorType, axis: int):
    return data.shape[axis] if data.shape else 1


def _runtime_axis(axis: int, ndim: int) -> int:
    if ndim == 0:
        return 0
    return axis + ndim if axis < 0 else axis


# ---------------------------------------------------------------------------------------------
# The arithmetic TVM's canonicalization defines


def qrange(dtype) -> tuple:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def saturate(x: np.ndarray, dtype) -> np.ndarray:
    """Clip to dtype's range and cast (TVM: Clip then Cast)."""
    lo, hi = qrange(dtype)
    return np.clip(x, lo, hi).astype(dtype)


def along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast along `axis` of an ndim tensor (TVM's
    ExpandBiasToMatchAxis); a scalar stays as it is."""
    v = np.asarray(v)
    if v.ndim == 0 or ndim == 0:
        return v.reshape(()) if v.size == 1 else v
    shape = [1] * ndim
    shape[axis] = v.size
    return v.reshape(shape)


def fixed_point(multiplier: float) -> tuple:
    """TVM's GetFixedPointMultiplierShift: multiplier = m * 2**(shift - 31), m an int32 with
    the binary point after bit 30 (frexp's significand, rounded half away from zero)."""
    if multiplier == 0.0:
        return 0, 0
    significand, exponent = math.frexp(multiplier)
    m = math.copysign(math.floor(abs(significand) * 2.0 ** 31 + 0.5), significand)
    m = int(m)
    if abs(m) == 1 << 31:
        m //= 2
        exponent += 1
    return m, exponent


def fixed_point_multiply(x: np.ndarray, multipliers, rounding: str) -> np.ndarray:
    """int32 x times a real multiplier (a scalar, or an array broadcasting against x) in TVM's
    fixed point: in int64, shift left by max(shift, 0), multiply by m, add the rounding term,
    shift right by 31 + max(-shift, 0), back to int32. UPWARD adds half (ties go up),
    TONEAREST adds half minus one below zero (ties go away from zero)."""
    mult = np.asarray(multipliers, dtype=np.float64)
    pairs = [fixed_point(float(v)) for v in mult.reshape(-1)]
    m = np.array([p[0] for p in pairs], dtype=I64).reshape(mult.shape)
    shift = np.array([p[1] for p in pairs], dtype=I64).reshape(mult.shape)
    return q_multiply_shift(x, m, shift, rounding)


def q_multiply_shift(x: np.ndarray, m, shift, rounding: str = "UPWARD") -> np.ndarray:
    """int32 x times the fixed-point number m * 2**(shift - 31) (m an int32, arrays broadcast),
    as TVM's q_multiply_shift with q = 31."""
    left = np.maximum(shift, 0)
    total = np.maximum(-shift, 0) + 31
    v = np.left_shift(x.astype(I64), left) * m
    half = np.left_shift(np.int64(1), total - 1)
    if rounding == "UPWARD":
        v = v + half
    else:
        v = v + np.where(v >= 0, half, half - 1)
    return np.right_shift(v, total).astype(I32)


# ---------------------------------------------------------------------------------------------
# fixed_point_multiply: the integer multiply-and-shift QNN lowers requantize to (a plain Relay
# operator in TVM, not qnn.*, with the multiplier already split into an int32 and a shift)


def _fixed_point_multiply_rel(name, args, attrs):
    (x,) = args
    if x.dtype != "int32":
        raise OpTypeError(_("{op}: data must be int32, got {x}").format(op=name, x=x))
    if not -(1 << 31) <= attrs["multiplier"] < (1 << 31):
        raise OpTypeError(_("{op}: multiplier={multiplier} is not an int32").format(
                op=name, multiplier=attrs['multiplier']))
    if not -31 <= attrs["shift"] <= 31:
        raise OpTypeError(_("{op}: shift={shift} is outside [-31, 31]").format(
                op=name, shift=attrs['shift']))
    return x


def _fixed_point_multiply_kernel(args, attrs):
    return q_multiply_shift(args[0], np.int64(attrs["multiplier"]), np.int64(attrs["shift"]))


register("fixed_point_multiply", 1, _fixed_point_multiply_rel, _fixed_point_multiply_kernel,
         "elemwise", attrs=[AttrSpec("multiplier", "int"), AttrSpec("shift", "int")],
         doc="fixed_point_multiply(x, multiplier, shift): int32 x * multiplier * "
             "2**(shift - 31), rounded half up (TVM's q_multiply_shift)")


def _round_away(f: np.ndarray) -> np.ndarray:
    """Round half away from zero (TVM's round, LLVM's llvm.round), exactly."""
    t = np.trunc(f)
    return t + np.where(np.abs(f - t) >= 0.5, np.sign(f), 0).astype(f.dtype)


def requantize_values(x: np.ndarray, in_scale, in_zp, out_scale, out_zp, axis: int,
                      rounding: str, compute_dtype: str, out_dtype) -> np.ndarray:
    """TVM's requantize: out_zp + in_scale / out_scale * (x - in_zp), rounded and saturated to
    out_dtype. compute_dtype int64 is the fixed-point form (TVM's default), float32/float64
    the floating form."""
    in_scale, in_zp = np.asarray(in_scale, F32), np.asarray(in_zp, I32)
    out_scale, out_zp = np.asarray(out_scale, F32), np.asarray(out_zp, I32)
    if float(out_scale) == 0.0:
        raise KernelError(_("qnn.requantize: the output scale is 0"))
    ndim = x.ndim
    axis = _runtime_axis(axis, ndim)
    _fit_channels("qnn.requantize", x, axis, (in_scale, in_zp))
    per_tensor = in_scale.ndim == 0
    multiplier = in_scale.astype(np.float64) / np.float64(out_scale)
    if compute_dtype == "int64":
        with np.errstate(over="ignore"):
            t = x.astype(I32)
            if np.any(in_zp != 0):
                t = t - along(in_zp, axis, ndim)
            if not (per_tensor and in_scale == out_scale):
                t = fixed_point_multiply(t, along(multiplier, axis, ndim), rounding)
            if out_zp != 0:
                t = (out_zp + t).astype(I32)
        if np.dtype(out_dtype) == I32:
            return t
        return saturate(t, out_dtype)
    fdt = np.dtype(compute_dtype)
    f = x.astype(fdt)
    if np.any(in_zp != 0):
        f = f - along(in_zp, axis, ndim).astype(fdt)
    if not (per_tensor and in_scale == out_scale):
        f = f * along(multiplier, axis, ndim).astype(fdt)
    if out_zp != 0:
        f = f + out_zp.astype(fdt)
    with np.errstate(invalid="ignore"):
        f = np.floor(f + fdt.type(0.5)) if rounding == "UPWARD" else _round_away(f)
        t = f.astype(I32)
    if np.dtype(out_dtype) == I32:
        return t
    return saturate(t, out_dtype)


def _fit_channels(name: str, x: np.ndarray, axis: int, params) -> None:
    """A per-channel scale or zero point must match the channel count at run time."""
    n = x.shape[axis] if x.ndim else 1
    for p in params:
        if p.ndim and p.size != n:
            raise KernelError(_("{op}: {p_size} per-channel values for an axis of size {n} (shape "
                                "{x_shape})").format(op=name, p_size=p.size, n=n, x_shape=fmt_shape(x.shape)))


def _rounding(attrs) -> str:
    # TVM's "None" means the requantize config's default, UPWARD
    return "UPWARD" if attrs["rounding"] == "None" else attrs["rounding"]


def _compute_dtype(attrs) -> str:
    return "int64" if attrs["compute_dtype"] == "None" else attrs["compute_dtype"]


def requantize_or_upcast(x, scale, zp, out_scale, out_zp, axis) -> np.ndarray:
    """TVM's RequantizeOrUpcast: to int32 at (out_scale, out_zp), requantizing (UPWARD, int64)
    unless scale and zero point are already the output's."""
    scale, zp = np.asarray(scale), np.asarray(zp)
    if scale.ndim == 0 and zp.ndim == 0 and scale == out_scale and zp == out_zp:
        return x.astype(I32)
    return requantize_values(x, scale, zp, out_scale, out_zp, axis, "UPWARD", "int64", I32)


# ---------------------------------------------------------------------------------------------
# qnn.quantize, qnn.dequantize, qnn.requantize

_QUANTIZED = ("int8", "uint8", "int16", "uint16", "int32")


def _scale_and_zero_point(name, data, scale, zp, axis, what, one_is_scalar=False) -> None:
    """A scale and zero point pair of data: scalars, or vectors along its channel axis (checked
    only when one is a vector; with one_is_scalar, a 1-element vector counts as a scalar, as
    qnn.dequantize has it)."""
    def vector(t):
        return bool(t.shape) and not (one_is_scalar and t.shape == (1,))
    n = _channels(data, _channel_axis(name, axis, data)) if vector(scale) or vector(zp) else 1
    _qparam(name, scale, f"{what}_scale", "float32", n)
    _qparam(name, zp, f"{what}_zero_point", "int32", n)


def _quantize_rel(name, args, attrs):
    data, scale, zp = args
    _need(name, data, ("float32",), "data")
    _scale_and_zero_point(name, data, scale, zp, attrs["axis"], "output")
    return TensorType(data.shape, attrs["out_dtype"])


def _quantize_kernel(args, attrs):
    x, scale, zp = args
    axis = _runtime_axis(attrs["axis"], x.ndim)
    _fit_channels("qnn.quantize", x, axis, (scale, zp))
    lo, hi = qrange(attrs["out_dtype"])
    with np.errstate(all="ignore"):
        q = _round_away(x / along(scale, axis, x.ndim)) + along(zp, axis, x.ndim).astype(F32)
        return np.clip(q, lo, hi).astype(attrs["out_dtype"])


register("qnn.quantize", 3, _quantize_rel, _quantize_kernel, "elemwise",
         attrs=[AttrSpec("axis", "int", -1),
                AttrSpec("out_dtype", "dtype", "int8",
                         choices=("int8", "uint8", "int16", "uint16", "int32"))],
         doc="qnn.quantize(data, output_scale, output_zero_point, axis=-1, out_dtype=\"int8\"):"
             " clip(round(data / scale) + zero_point)")


def _dequantize_rel(name, args, attrs):
    data, scale, zp = args
    _need(name, data, _QUANTIZED, "data")
    _scale_and_zero_point(name, data, scale, zp, attrs["axis"], "input", one_is_scalar=True)
    return TensorType(data.shape, attrs["out_dtype"])


def _dequantize_kernel(args, attrs):
    x, scale, zp = args
    axis = _runtime_axis(attrs["axis"], x.ndim)
    if scale.size > 1 or zp.size > 1:
        _fit_channels("qnn.dequantize", x, axis, (scale, zp))
    else:
        scale, zp = scale.reshape(()), zp.reshape(())
    with np.errstate(over="ignore"):
        shifted = x.astype(I32) - along(zp, axis, x.ndim).astype(I32)
    out = shifted.astype(F32) * along(scale, axis, x.ndim)
    if attrs["out_dtype"] == "float32":
        return out.astype(F32)
    info = np.finfo(np.float16)
    return np.clip(out, float(info.min), float(info.max)).astype(np.float16)


register("qnn.dequantize", 3, _dequantize_rel, _dequantize_kernel, "elemwise",
         attrs=[AttrSpec("axis", "int", -1),
                AttrSpec("out_dtype", "dtype", "float32", choices=("float16", "float32"))],
         doc="qnn.dequantize(data, input_scale, input_zero_point, axis=-1, "
             "out_dtype=\"float32\"): scale * (data - zero_point)")


def _requantize_rel(name, args, attrs):
    data, in_scale, in_zp, out_scale, out_zp = args
    _need(name, data, ("int8", "uint8", "int16", "int32", "int64"), "data")
    n = _channels(data, _channel_axis(name, attrs["axis"], data))
    _qparam(name, in_scale, "input_scale", "float32", n)
    _qparam(name, in_zp, "input_zero_point", "int32", n)
    _qparam(name, out_scale, "output_scale", "float32", per_channel=False)
    _qparam(name, out_zp, "output_zero_point", "int32", per_channel=False)
    return TensorType(data.shape, attrs["out_dtype"])


def _requantize_kernel(args, attrs):
    x, in_scale, in_zp, out_scale, out_zp = args
    return requantize_values(x, in_scale, in_zp, out_scale, out_zp, attrs["axis"],
                             _rounding(attrs), _compute_dtype(attrs), attrs["out_dtype"])


register("qnn.requantize", 5, _requantize_rel, _requantize_kernel, "elemwise",
         attrs=[AttrSpec("axis", "int", -1),
                AttrSpec("rounding", "str", "None", choices=("None", "UPWARD", "TONEAREST")),
                AttrSpec("compute_dtype", "str", "None",
                         choices=("None", "int64", "float32", "float64")),
                AttrSpec("out_dtype", "dtype", "int8",
                         choices=("int8", "uint8", "int16", "int32"))],
         doc="qnn.requantize(data, input_scale, input_zero_point, output_scale, "
             "output_zero_point, axis=-1, rounding=\"None\" (UPWARD), out_dtype=\"int8\")")


# ---------------------------------------------------------------------------------------------
# qnn.add, qnn.mul


def _binary_rel(name, args, attrs):
    lhs, rhs, lscale, lzp, rscale, rzp, oscale, ozp = args
    _need(name, lhs, _QUANTIZED, "lhs")
    if lhs.dtype != rhs.dtype:
        raise OpTypeError(_("{op}: lhs and rhs need the same dtype, got {lhs} and {rhs}").format(
                op=name, lhs=lhs, rhs=rhs))
    if name == "qnn.mul" and (lscale.shape or rscale.shape) and \
            attrs["lhs_axis"] != attrs["rhs_axis"]:
        raise OpTypeError(_("{op}: per-channel scales need lhs_axis == rhs_axis, got {lhs_axis} "
                            "and {rhs_axis} (as in TVM)").format(
                op=name, lhs_axis=attrs['lhs_axis'], rhs_axis=attrs['rhs_axis']))
    for data, scale, zp, side in ((lhs, lscale, lzp, "lhs"), (rhs, rscale, rzp, "rhs")):
        # TVM: the channel axis of a tensor of rank <= 1 is 0
        axis = attrs[f"{side}_axis"] if len(data.shape) > 1 else 0
        _scale_and_zero_point(name, data, scale, zp, axis, side)
    _qparam(name, oscale, "output_scale", "float32", per_channel=False)
    _qparam(name, ozp, "output_zero_point", "int32", per_channel=False)
    return TensorType(broadcast_dims(name, [lhs, rhs]), lhs.dtype)


def _side_axis(x, attrs, side):
    return 0 if x.ndim <= 1 else _runtime_axis(attrs[f"{side}_axis"], x.ndim)


def _add_kernel(args, attrs):
    lhs, rhs, lscale, lzp, rscale, rzp, oscale, ozp = args
    with np.errstate(over="ignore"):
        a = requantize_or_upcast(lhs, lscale, lzp, oscale, ozp, _side_axis(lhs, attrs, "lhs"))
        b = requantize_or_upcast(rhs, rscale, rzp, oscale, ozp, _side_axis(rhs, attrs, "rhs"))
        out = _broadcast("qnn.add", np.add, a, b)
        if ozp != 0:
            out = out - ozp.astype(I32)
    return saturate(out, lhs.dtype)


def _broadcast(name, fn, a, b):
    try:
        return fn(a, b).astype(I32)
    except ValueError:
        raise KernelError(_("{op}: shapes {a_shape} and {b_shape} do not broadcast at run time").format(op=name, a_shape=fmt_shape(a.shape), b_shape=fmt_shape(b.shape))) from None


def _mul_kernel(args, attrs):
    lhs, rhs, lscale, lzp, rscale, rzp, oscale, ozp = args
    la, ra = _side_axis(lhs, attrs, "lhs"), _side_axis(rhs, attrs, "rhs")
    with np.errstate(over="ignore"):
        a = lhs.astype(I32) - along(lzp, la, lhs.ndim).astype(I32)
        b = rhs.astype(I32) - along(rzp, ra, rhs.ndim).astype(I32)
        product = _broadcast("qnn.mul", np.multiply, a, b)
    if lscale.ndim == 0 and rscale.ndim == 0:
        # per tensor: TVM multiplies the two float32 scales in float32
        scale = np.float32(lscale) * np.float32(rscale)
        axis = -1
    else:
        scale = (lscale.astype(np.float64) * rscale.astype(np.float64)).astype(F32)
        axis = attrs["lhs_axis"]
    return requantize_values(product, scale, np.int32(0), oscale, ozp, axis, "UPWARD",
                             "int64", lhs.dtype)


_BINARY_ATTRS = [AttrSpec("lhs_axis", "int", -1), AttrSpec("rhs_axis", "int", -1)]
register("qnn.add", 8, _binary_rel, _add_kernel, "broadcast", attrs=_BINARY_ATTRS,
         doc="qnn.add(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, "
             "output_scale, output_zero_point): both requantized to the output, added")
register("qnn.mul", 8, _binary_rel, _mul_kernel, "broadcast", attrs=_BINARY_ATTRS,
         doc="qnn.mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, "
             "output_scale, output_zero_point): the int32 product requantized to the output")


# ---------------------------------------------------------------------------------------------
# qnn.concatenate


def _concatenate_rel(name, args, attrs):
    from rvmdbg.relay.ops import OPS
    data, scales, zps, oscale, ozp = args
    n = len(data.fields)
    for t, what, dtype in ((scales, "input_scales", "float32"),
                           (zps, "input_zero_points", "int32")):
        if len(t.fields) != n:
            raise OpTypeError(_("{op}: {what} has {len_t_fields} values for {n} tensors").format(
                    op=name, what=what, len_t_fields=len(t.fields), n=n))
        for f in t.fields:
            _qparam(name, f, what, dtype, per_channel=False, each=True)
    _qparam(name, oscale, "output_scale", "float32", per_channel=False)
    _qparam(name, ozp, "output_zero_point", "int32", per_channel=False)
    out = OPS["concatenate"].type_rel([data], {"axis": attrs["axis"]})
    _need(name, out, _QUANTIZED, "data")
    return out


def _concatenate_kernel(args, attrs):
    from rvmdbg.relay.ops import OPS
    data, scales, zps, oscale, ozp = args
    parts = []
    for x, scale, zp in zip(data, scales, zps):
        if scale == oscale and zp == ozp:
            parts.append(x)
        else:
            parts.append(requantize_values(x, scale, zp, oscale, ozp, -1, "UPWARD", "int64",
                                           x.dtype))
    return OPS["concatenate"].kernel([tuple(parts)], {"axis": attrs["axis"]})


register("qnn.concatenate", 5, _concatenate_rel, _concatenate_kernel, "injective",
         attrs=[AttrSpec("axis", "int", 0)], tuple_input=(0, 1, 2),
         doc="qnn.concatenate((x, ...), (scale, ...), (zero_point, ...), output_scale, "
             "output_zero_point, axis=): each requantized to the output, then joined")


# ---------------------------------------------------------------------------------------------
# qnn.dense


def _dense_rel(name, args, attrs):
    from rvmdbg.relay.ops import OPS
    data, weight, in_zp, k_zp, in_scale, k_scale = args
    _need(name, data, ("int8", "uint8", "int16", "uint16"), "data")
    _need(name, weight, ("int8", "uint8"), "weight")
    _qparam(name, in_zp, "input_zero_point", "int32", per_channel=False)
    _qparam(name, in_scale, "input_scale", "float32", per_channel=False)
    units = weight.shape[0] if len(weight.shape) == 2 else None
    _qparam(name, k_zp, "kernel_zero_point", "int32", units)
    _qparam(name, k_scale, "kernel_scale", "float32", units)
    # the shapes as nn.dense has them (its relation wants one dtype: give it the data's)
    out = OPS["nn.dense"].type_rel([data, TensorType(weight.shape, data.dtype)],
                                   {"units": attrs["units"], "out_dtype": attrs["out_dtype"]})
    return out


def max_abs_shifted(x: np.ndarray, zp, axis: int = 0) -> int:
    """max |x - zp| (zp a scalar, or one per channel along axis) without a shifted copy of x."""
    if x.size == 0:
        return 0
    zp = np.asarray(zp, I64)
    if zp.ndim == 0:
        return max(abs(int(x.max()) - int(zp)), abs(int(x.min()) - int(zp)))
    others = tuple(i for i in range(x.ndim) if i != axis)
    hi = x.max(axis=others).astype(I64) - zp
    lo = x.min(axis=others).astype(I64) - zp
    return int(max(np.abs(hi).max(), np.abs(lo).max()))


def exact_dtype(a_max: int, b_max: int, k: int) -> str:
    """The dtype in which a sum of k products of values up to a_max and b_max in magnitude is
    exact: a float type for BLAS when its significand holds every partial sum (float32: 24
    bits, enough for small 8-bit windows; float64: 53 bits, any 8-bit layer), else int64."""
    bound = k * max(a_max, 1) * max(b_max, 1)
    if bound < 2 ** 24:
        return "float32"
    return "float64" if bound < 2 ** 53 else "int64"


def shifted(x: np.ndarray, zp, axis: int, dt: str) -> np.ndarray:
    """x - zp in dtype dt (exact there: exact_dtype chose dt)."""
    out = x.astype(dt)
    out -= along(np.asarray(zp).astype(dt), axis, x.ndim)
    return out


def to_out_dtype(acc: np.ndarray, bound: int, dtype) -> np.ndarray:
    """An exact accumulation as dtype, wrapping as TVM's int32 arithmetic does (a float beyond
    int32 goes through int64 first: float-to-int32 casts do not wrap)."""
    if acc.dtype.kind == "f" and bound >= 2 ** 31:
        acc = acc.astype(I64)
    with np.errstate(over="ignore", invalid="ignore"):
        return acc.astype(dtype)


def _dense_kernel(args, attrs):
    data, weight, in_zp, k_zp, in_scale, k_scale = args
    if data.shape[-1] != weight.shape[1]:
        raise KernelError(_("qnn.dense: data {data_shape} and weight {weight_shape} disagree on "
                            "in_features at run time").format(data_shape=fmt_shape(data.shape), weight_shape=fmt_shape(weight.shape)))
    k = weight.shape[1]
    a_max, b_max = max_abs_shifted(data, in_zp), max_abs_shifted(weight, k_zp, 0)
    dt = exact_dtype(a_max, b_max, k)
    acc = np.matmul(shifted(data, in_zp, 0, dt), shifted(weight, k_zp, 0, dt).T)
    return to_out_dtype(acc, k * a_max * b_max, attrs["out_dtype"])


register("qnn.dense", 6, _dense_rel, _dense_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("units", "int_or_none", None),
                AttrSpec("out_dtype", "dtype", "int32", choices=("int32", "int64"))],
         doc="qnn.dense(data, weight, input_zero_point, kernel_zero_point, input_scale, "
             "kernel_scale, units=None, out_dtype=\"int32\"): (data - zp) @ (weight - kzp).T "
             "accumulated in int32")


# ---------------------------------------------------------------------------------------------
# qnn.batch_matmul (nn.batch_matmul's relation on the zero-point-shifted integers; TVM's maker
# sets transpose_b=True, scalar scales and zero points only)


def _batch_matmul_rel(name, args, attrs):
    from rvmdbg.relay.ops import OPS
    x, y, x_zp, y_zp, x_scale, y_scale = args
    _need(name, x, ("int8", "uint8"), "x")
    _need(name, y, ("int8", "uint8"), "y")
    for t, what, dt in ((x_zp, "x_zero_point", "int32"), (y_zp, "y_zero_point", "int32"),
                        (x_scale, "x_scale", "float32"), (y_scale, "y_scale", "float32")):
        _qparam(name, t, what, dt, per_channel=False)
    return OPS["nn.batch_matmul"].type_rel([x, TensorType(y.shape, x.dtype)], dict(attrs))


def _batch_matmul_kernel(args, attrs):
    x, y, x_zp, y_zp, x_scale, y_scale = args
    a = np.swapaxes(x, 1, 2) if attrs["transpose_a"] else x
    b = np.swapaxes(y, 1, 2) if attrs["transpose_b"] else y
    if a.shape[2] != b.shape[1] or (a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0])):
        raise KernelError(_("qnn.batch_matmul: x {x_shape} and y {y_shape} disagree at run "
                            "time").format(x_shape=fmt_shape(x.shape), y_shape=fmt_shape(y.shape)))
    k = a.shape[2]
    a_max, b_max = max_abs_shifted(a, x_zp), max_abs_shifted(b, y_zp)
    dt = exact_dtype(a_max, b_max, k)
    acc = np.matmul(shifted(a, x_zp, 0, dt), shifted(b, y_zp, 0, dt))
    return to_out_dtype(acc, k * a_max * b_max, attrs["out_dtype"])


register("qnn.batch_matmul", 6, _batch_matmul_rel, _batch_matmul_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("out_dtype", "dtype", "int32", choices=("int32", "int64")),
                AttrSpec("transpose_a", "bool", False), AttrSpec("transpose_b", "bool", True)],
         doc="qnn.batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, "
             "out_dtype=\"int32\"): per batch (x - xzp) @ (y - yzp)^T accumulated in int32")


# ---------------------------------------------------------------------------------------------
# qnn.conv2d (nn.conv2d's relation and kernel, ops/conv.py, on the zero-point-shifted integers)


def _conv2d_attr_specs() -> list:
    """nn.conv2d's attributes (TVM's Conv2DAttrs), with qnn.conv2d's default out_dtype."""
    from rvmdbg.relay.ops import OPS
    specs = [a for a in OPS["nn.conv2d"].attrs if a.name != "out_dtype"]
    return specs + [AttrSpec("out_dtype", "dtype", "int32", choices=("int16", "int32", "int64"))]


def _as_conv2d(name: str, call):
    """Run nn.conv2d's relation or kernel, its messages naming qnn.conv2d."""
    try:
        return call()
    except (OpTypeError, KernelError) as e:
        text = e.message.replace("nn.conv2d:", f"{name}:", 1)
        raise type(e)(text) from None


def _conv2d_rel(name, args, attrs):
    from rvmdbg.relay.ops import OPS
    data, weight, in_zp, k_zp, in_scale, k_scale = args
    _need(name, data, ("int8", "uint8", "int16"), "data")
    _need(name, weight, ("int8", "uint8", "int16"), "weight")
    _qparam(name, in_zp, "input_zero_point", "int32", per_channel=False)
    _qparam(name, in_scale, "input_scale", "float32", per_channel=False)
    out = _as_conv2d(name, lambda: OPS["nn.conv2d"].type_rel([data, weight], dict(attrs)))
    # one kernel scale (and zero point) per output channel, or one for all
    layout = attrs["out_layout"] or attrs["data_layout"]
    channels = out.shape[layout.index("C")]
    _qparam(name, k_zp, "kernel_zero_point", "int32", channels)
    _qparam(name, k_scale, "kernel_scale", "float32", channels)
    return out


def _conv2d_kernel(args, attrs):
    from rvmdbg.relay.ops import OPS
    data, weight, in_zp, k_zp, in_scale, k_scale = args
    o_axis = attrs["kernel_layout"].index("O")
    # TVM pads with the input zero point: the shifted data pads with 0, as nn.conv2d does
    k = weight.size // max(weight.shape[o_axis], 1)
    a_max, b_max = max_abs_shifted(data, in_zp), max_abs_shifted(weight, k_zp, o_axis)
    dt = exact_dtype(a_max, b_max, k)
    a, b = shifted(data, in_zp, 0, dt), shifted(weight, k_zp, o_axis, dt)
    out = _as_conv2d("qnn.conv2d", lambda: OPS["nn.conv2d"].kernel(
        [a, b], {**attrs, "out_dtype": dt}))
    return to_out_dtype(out, k * a_max * b_max, attrs["out_dtype"])  # int32 wraps


register("qnn.conv2d", 6, _conv2d_rel, _conv2d_kernel, "out_elemwise_fusable",
         attrs=_conv2d_attr_specs(),
         doc="qnn.conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, "
             "kernel_scale, ...nn.conv2d's attributes, out_dtype=\"int32\"): the convolution "
             "of (data - zp) and (kernel - kzp) accumulated in int32")
