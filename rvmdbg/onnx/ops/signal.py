"""The converters of DFT (opset 17; opset 20 takes the axis as an input), through Relay's `dft`
as TVM's converter did: the real and imaginary parts split off the last axis, the transformed
axis swapped to the end, `dft`, swapped back, merged again.

Beyond TVM's converter (which had opset 17 only): opset 20's axis input (a constant; the
default -2), and the one-sided inverse (`inverse=1, onesided=1`, NumPy's irfft): the
one-sided spectrum cropped or zero-padded to n // 2 + 1 values, extended to n by Hermitian
symmetry (X[n - k] = conj(X[k]), one `take` and a sign), transformed, the real part kept.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


def _length(g, x, axis: int, n: int):
    """x cropped or zero-padded along `axis` to `n` values (TVM's _maybe_crop_or_pad)."""
    shape = g.shape_of(x)
    size = shape[axis]
    if size == n:
        return x
    if size is None:
        raise g.error(f"DFT needs the static extent of axis {axis}")
    if size > n:
        return c.strided_slice(g, x, [0], [n], axes=[axis])
    width = [[0, 0] for _ in shape]
    width[axis] = [0, n - size]
    return g.call("nn.pad", [x, g.const(np.asarray(0, g.dtype_of(x)))], pad_width=width,
                  pad_mode="constant")


def _parts(g, x):
    """(real, imaginary) of ONNX's [..., 1] (real) or [..., 2] (complex) layout."""
    last = g.shape_of(x)[-1]
    if last == 1:
        re = c.squeeze(g, x, [-1])
        return re, g.call("zeros_like", [re])
    if last != 2:
        raise g.error(f"DFT's input must end in a dimension of 1 or 2, got {last}")
    halves = g.call("split", [x], indices_or_sections=2, axis=-1)
    return c.squeeze(g, g.get(halves, 0), [-1]), c.squeeze(g, g.get(halves, 1), [-1])


def _along(g, re, im, axis: int, inverse: bool):
    """Relay's dft (which runs along the last axis) along `axis`."""
    rank = g.rank_of(re)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    if axis != rank - 1:
        re, im = c.transpose(g, re, perm), c.transpose(g, im, perm)
    out = g.call("dft", [re, im], inverse=bool(inverse))
    re, im = g.get(out, 0), g.get(out, 1)
    if axis != rank - 1:
        re, im = c.transpose(g, re, perm), c.transpose(g, im, perm)
    return re, im


def _scalar(g, e, what: str):
    """The value of the one-element input `e` the converter needs at import time (a
    constant, or a bound graph input), else the NeedsValue error naming `what`."""
    v = c.const_value(g, e)
    if v is None:
        raise g.needs_value(f"the {what}", e)
    return np.asarray(v).reshape(-1)[0]


def _dft(g, node, inputs, attrs, axis):
    x = inputs[0]
    dtype = g.dtype_of(x)
    if not dtype.startswith("float"):
        raise g.error(f"DFT transforms floats, got {dtype}")
    rank = g.rank_of(x)
    axis = int(axis)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank - 1:
        raise g.error(f"DFT's axis {axis} must name one of the first {rank - 1} axes")
    inverse = bool(attrs.get("inverse", 0))
    onesided = bool(attrs.get("onesided", 0))
    size = g.shape_of(x)[axis]
    length = inputs[1] if len(inputs) > 1 else None
    if length is not None:
        n = int(_scalar(g, length, "dft_length"))
    elif size is None:
        raise g.error(f"DFT needs the static extent of axis {axis}")
    else:
        n = 2 * (size - 1) if inverse and onesided else size
    if n < 1:
        raise g.error(f"DFT's length must be positive, got {n}")
    re, im = _parts(g, x)
    if inverse and onesided:
        half = n // 2 + 1
        re, im = _length(g, re, axis, half), _length(g, im, axis, half)
        # the full spectrum: X[k] for k < half, conj(X[n - k]) after
        index = np.array(list(range(half)) + [n - k for k in range(half, n)], "int64")
        sign = np.ones([n if a == axis else 1 for a in range(rank - 1)], dtype)
        sign.reshape(-1)[half:] = -1
        re = g.call("take", [re, g.const(index)], axis=axis, batch_dims=0, mode="clip")
        im = g.call("multiply", [g.call("take", [im, g.const(index)], axis=axis,
                                        batch_dims=0, mode="clip"), g.const(sign)])
        re, _im = _along(g, re, im, axis, True)
        return c.expand_dims(g, re, -1)
    re, im = _length(g, re, axis, n), _length(g, im, axis, n)
    re, im = _along(g, re, im, axis, inverse)
    if onesided:
        keep = n // 2 + 1
        re = c.strided_slice(g, re, [0], [keep], axes=[axis])
        im = c.strided_slice(g, im, [0], [keep], axes=[axis])
    return c.concat(g, [c.expand_dims(g, re, -1), c.expand_dims(g, im, -1)], axis=-1)


@converter("DFT", since=17)
def dft_v17(g, node, inputs, attrs):
    return _dft(g, node, inputs, attrs, attrs.get("axis", 1))


@converter("DFT", since=20)
def dft_v20(g, node, inputs, attrs):
    axis = inputs[2] if len(inputs) > 2 else None
    return _dft(g, node, inputs, attrs, -2 if axis is None else int(_scalar(g, axis, "axis")))


@converter("STFT", since=17)
def stft(g, node, inputs, attrs):
    """STFT (opset 17; TVM's ONNX frontend had none, its PyTorch frontend made Relay's `stft`):
    the real signal (batch, length, 1) as a 2-d batch, `stft` with n_fft = win_length = the
    frame length and hop_length = frame_step, then (batch, rows, frames, 2) transposed to
    ONNX's (batch, frames, bins, 2). A complex signal ((..., 2): Relay's stft takes real data)
    is refused."""
    signal, step = inputs[0], inputs[1]
    window = inputs[2] if len(inputs) > 2 else None
    frame_length = inputs[3] if len(inputs) > 3 else None
    dtype = g.dtype_of(signal)
    shape = g.shape_of(signal)
    if len(shape) != 3 or shape[-1] != 1:
        raise g.error(f"STFT takes a real signal (batch, length, 1); got shape {list(shape)} "
                      "(Relay's stft has no complex input)")
    hop = int(_scalar(g, step, "frame_step"))
    if frame_length is not None:
        n = int(_scalar(g, frame_length, "frame_length"))
    elif window is not None and g.shape_of(window)[0] is not None:
        n = g.shape_of(window)[0]
    else:
        raise g.error("STFT needs a frame_length or a window of static length")
    if window is None:
        window = g.const(np.ones(n, dtype))
    elif g.dtype_of(window) != dtype:
        window = c.cast(g, window, dtype)
    data = c.squeeze(g, signal, [-1])
    out = g.call("stft", [data, window], n_fft=n, hop_length=hop, win_length=n,
                 normalized=False, onesided=bool(attrs.get("onesided", 1)))
    return c.transpose(g, out, [0, 2, 1, 3])


@converter("MelWeightMatrix", since=17)
def mel_weight_matrix(g, node, inputs, attrs):
    """MelWeightMatrix (opset 17; TVM had none): every input is a scalar the matrix is made
    from, so the importer computes it and the program holds it as a constant (a graph input
    must be bound). The triangles as ONNX's reference draws them: num_mel_bins + 2 points
    evenly spaced in mel (2595 log10(1 + f / 700)) from the lower to the upper edge, each
    mapped to a spectrogram bin ((dft_length + 1) * f // sample_rate); bin i rises from point
    i to i + 1 and falls to i + 2."""
    from rvmdbg.onnx.ops.tensor import _dtype_of_onnx
    bins, length, rate, low, high = (
        _scalar(g, e, what) for what, e in zip(("num_mel_bins", "dft_length", "sample_rate",
                                                "lower_edge_hertz", "upper_edge_hertz"), inputs))
    bins, length = int(bins), int(length)
    if bins < 1 or length < 1 or rate <= 0:
        raise g.error(f"MelWeightMatrix needs positive num_mel_bins, dft_length and "
                      f"sample_rate, got {bins}, {length} and {rate}")
    dtype = _dtype_of_onnx(g, attrs["output_datatype"]) if "output_datatype" in attrs \
        else "float32"
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    mels = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    hertz = 700 * np.expm1(mels / 2595 * np.log(10))
    points = (((length + 1) * hertz) // rate).astype(int)
    matrix = np.zeros((length // 2 + 1, bins))
    if points.min() < 0 or points.max() >= matrix.shape[0]:
        raise g.error(f"MelWeightMatrix: the edges {low} to {high} Hz fall outside the "
                      f"{matrix.shape[0]} spectrogram bins of a {length}-point DFT at "
                      f"{rate} Hz")
    for i in range(bins):
        left, centre, right = points[i], points[i + 1], points[i + 2]
        if centre == left:
            matrix[centre, i] = 1
        else:
            for j in range(left, centre + 1):
                matrix[j, i] = (j - left) / (centre - left)
        for j in range(centre, right):
            matrix[j, i] = (right - j) / (right - centre)
    return g.const(matrix.astype(dtype))
