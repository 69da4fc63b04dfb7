"""dft and stft, TVM's signal operators (src/relay/op/tensor/transform.cc's DFTRel and STFTRel,
topi's signal.py; both pattern opaque).

dft (DFTAttrs: inverse; two arguments, the real and imaginary parts; a tuple of the two parts
as the result).

The transform runs along the last axis, as topi's kernel does: out[n] = sum over k of
in[k] * exp(sign * -2 pi i n k / N), sign -1 for the inverse, which then divides by N. topi
computes each angle in float32 (`-2 pi n / N`, times k), its cosine and sine cast to the
output's dtype, and sums in that dtype; here the same angles and the sums as two matrix
products per part.

stft (StftAttrs: n_fft, hop_length, win_length, normalized, onesided; the data, 1-d or a
2-d batch, and a window of win_length values): (batch,) n_fft // 2 + 1 (onesided) or n_fft
rows, (length - n_fft) // hop_length + 1 frames, and (real, imaginary) last. topi's kernel
sums window[w] * data[frame * hop + w] * (cos, -sin)(2 pi row w / win_length) over w <
win_length, divided by sqrt(n_fft) when normalized; here in float64, rounded once.
"""
from __future__ import annotations

import math

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import AttrSpec, KernelError, OpTypeError, register
from rvmdbg.relay.types import TensorType, TupleType


def _tensors(name, args, parts):
    """The arguments, each checked to be a tensor (named by `parts` in the error)."""
    for part, t in zip(parts, args):
        if not isinstance(t, TensorType):
            raise OpTypeError(_("{op}: {part} must be a tensor, got {t}").format(
                op=name, part=part, t=t))
    return args


def _dft_rel(name, args, attrs):
    re, im = _tensors(name, args, ("re_data", "im_data"))
    return TupleType((TensorType(re.shape, re.dtype), TensorType(im.shape, im.dtype)))


def _angles(n_fft: int, inverse: bool) -> np.ndarray:
    """topi's angle for output n and input k, in float32: (sign * -2 pi * n / N) * k."""
    sign = -1 if inverse else 1
    n = np.arange(n_fft, dtype=np.float32)
    w = np.float32(sign * -2 * math.pi) * n / np.float32(n_fft)
    return w[:, None] * n[None, :]


def dft(re: np.ndarray, im: np.ndarray, inverse: bool):
    n_fft = re.shape[-1]
    w = _angles(n_fft, inverse)
    cos, sin = np.cos(w).astype(re.dtype), np.sin(w).astype(re.dtype)
    # out_re[n] = sum_k re[k] cos(w_nk) - im[k] sin(w_nk); out_im[n] = re sin + im cos
    out_re = re @ cos.T - im @ sin.T
    out_im = re @ sin.T + im @ cos.T
    if inverse:
        factor = re.dtype.type(1.0 / n_fft)
        out_re, out_im = out_re * factor, out_im * factor
    return out_re.astype(re.dtype), out_im.astype(im.dtype)


def _dft_kernel(args, attrs):
    re, im = args
    if re.shape != im.shape:
        raise KernelError(_("dft: the real part {re} and the imaginary part {im} differ in "
                            "shape").format(re=list(re.shape), im=list(im.shape)))
    if re.dtype.kind != "f" or im.dtype != re.dtype:
        raise KernelError(_("dft: topi transforms floats of one dtype, got {re} and "
                            "{im}").format(re=re.dtype, im=im.dtype))
    if re.ndim == 0:
        raise KernelError(_("dft: the data needs an axis to transform"))
    with np.errstate(all="ignore"):
        return dft(re, im, bool(attrs["inverse"]))


register("dft", 2, _dft_rel, _dft_kernel, "opaque",
         attrs=[AttrSpec("inverse", "bool", False)],
         doc="dft(re_data, im_data, inverse=False): the discrete Fourier transform along the "
             "last axis, as (real part, imaginary part); inverse divides by its length")


def _stft_rel(name, args, attrs):
    data, window = _tensors(name, args, ("data", "window"))
    if len(data.shape) not in (1, 2):
        raise OpTypeError(_("{op}: the data must be 1-d or a 2-d batch, got {t}").format(
            op=name, t=data))
    n_fft, hop = attrs["n_fft"], attrs["hop_length"]
    if n_fft < 1 or hop < 1 or attrs["win_length"] < 1:
        raise OpTypeError(_("{op}: n_fft, hop_length and win_length must be positive, got "
                            "{n_fft}, {hop} and {win}").format(
            op=name, n_fft=n_fft, hop=hop, win=attrs["win_length"]))
    length = data.shape[-1]
    frames = None if length is None else (length - n_fft) // hop + 1
    rows = n_fft // 2 + 1 if attrs["onesided"] else n_fft
    return TensorType(tuple(data.shape[:-1]) + (rows, frames, 2), data.dtype)


def stft(data, window, n_fft, hop, win_length, normalized, onesided):
    """topi's stft of a 2-d batch: (batch, rows, frames, 2), computed in float64 and rounded
    once to the data's dtype (topi sums in the dtype with float32 angles: its own tests allow
    1e-3; a deliberate difference, docs/differences.md)."""
    dt = data.dtype
    rows = n_fft // 2 + 1 if onesided else n_fft
    frames = (data.shape[-1] - n_fft) // hop + 1
    w = np.arange(win_length)
    # (frames, win_length) of data positions col * hop + w
    taken = (data.astype(np.float64)[:, np.arange(frames)[:, None] * hop + w[None, :]]
             * window.astype(np.float64)[None, None, :])
    angle = 2 * math.pi * np.arange(rows)[:, None] * w[None, :] / win_length
    out = np.empty((data.shape[0], rows, frames, 2), np.float64)
    out[..., 0] = np.einsum("bfw,rw->brf", taken, np.cos(angle))
    out[..., 1] = -np.einsum("bfw,rw->brf", taken, np.sin(angle))
    if normalized:
        out /= math.sqrt(n_fft)
    return out.astype(dt)


def _stft_kernel(args, attrs):
    data, window = args
    n_fft, hop, win = attrs["n_fft"], attrs["hop_length"], attrs["win_length"]
    if data.dtype.kind != "f" or window.dtype.kind not in "fiub":
        raise KernelError(_("stft: topi transforms float data with a numeric window, got "
                            "{data} and {window}").format(data=data.dtype, window=window.dtype))
    window = window.astype(data.dtype, copy=False)   # TVM's tests pass an int32 window
    if window.shape != (win,):
        raise KernelError(_("stft: the window has shape {shape}, win_length is {win}").format(
            shape=list(window.shape), win=win))
    if data.shape[-1] < n_fft or (data.shape[-1] - n_fft) // hop * hop + win > data.shape[-1]:
        raise KernelError(_("stft: {length} samples do not hold a frame of {n_fft} (win_length "
                            "{win})").format(length=data.shape[-1], n_fft=n_fft, win=win))
    batch = data if data.ndim == 2 else data[None]
    with np.errstate(all="ignore"):
        out = stft(batch, window, n_fft, hop, win, attrs["normalized"], attrs["onesided"])
    return out if data.ndim == 2 else out[0]


register("stft", 2, _stft_rel, _stft_kernel, "opaque",
         attrs=[AttrSpec("n_fft", "int", -1), AttrSpec("hop_length", "int", -1),
                AttrSpec("win_length", "int", -1), AttrSpec("normalized", "bool", False),
                AttrSpec("onesided", "bool", True)],
         doc="stft(data, window, n_fft=, hop_length=, win_length=, normalized=False, "
             "onesided=True): the Fourier transform of each frame, (batch,) rows, frames, 2")
