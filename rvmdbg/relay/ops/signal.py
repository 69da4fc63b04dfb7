"""dft (TVM's DFTAttrs: inverse; two arguments, the real and imaginary parts; pattern opaque, a
tuple of the two parts as the result: src/relay/op/tensor/transform.cc's DFTRel, topi's
signal.py).

The transform runs along the last axis, as topi's kernel does: out[n] = sum over k of
in[k] * exp(sign * -2 pi i n k / N), sign -1 for the inverse, which then divides by N. topi
computes each angle in float32 (`-2 pi n / N`, times k), its cosine and sine cast to the
output's dtype, and sums in that dtype; here the same angles and the sums as two matrix
products per part.
"""
from __future__ import annotations

import math

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import AttrSpec, KernelError, OpTypeError, register
from rvmdbg.relay.types import TensorType, TupleType


def _dft_rel(name, args, attrs):
    re, im = args
    for part, t in (("re_data", re), ("im_data", im)):
        if not isinstance(t, TensorType):
            raise OpTypeError(_("{op}: {part} must be a tensor, got {t}").format(
                op=name, part=part, t=t))
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
