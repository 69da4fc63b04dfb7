"""Tests of dft: TVM's relation (a tuple of the two parts' types), topi's transform along the
last axis (NumPy's fft and ifft as the oracle), errors, and Relay text through every
executor."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, KernelError

from op_cases import A, T, rel, run, run_text_everywhere


def test_relation_and_pattern():
    assert str(rel("dft", T((2, None, 8)), T((2, None, 8)))) == (
        "(Tensor[(2, ?, 8), float32], Tensor[(2, ?, 8), float32])")
    op = OPS["dft"]
    assert op.pattern == "opaque"
    assert {a.name: a.default for a in op.attrs} == {"inverse": False}


@settings(max_examples=50, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64"]), inverse=st.booleans(),
       shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), seed=st.integers(0, 99))
def test_agrees_with_numpys_fft(dtype, inverse, shape, seed):
    rng = np.random.default_rng(seed)
    re = rng.standard_normal(shape).astype(dtype)
    im = rng.standard_normal(shape).astype(dtype)
    got_re, got_im = run("dft", re, im, inverse=inverse)
    want = (np.fft.ifft if inverse else np.fft.fft)(re + 1j * im, axis=-1)
    assert got_re.dtype == got_im.dtype == np.dtype(dtype)
    # topi's angles are float32 whatever the dtype: agreement to float32's precision
    np.testing.assert_allclose(got_re, want.real, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_im, want.imag, rtol=1e-4, atol=1e-4)


def test_errors():
    with pytest.raises(KernelError, match="differ in shape"):
        run("dft", A(np.zeros((2, 3))), A(np.zeros((2, 4))))
    with pytest.raises(KernelError, match="floats"):
        run("dft", A(np.zeros(3), "int32"), A(np.zeros(3), "int32"))


def _stft_reference(data, n_fft, hop, win_length, window, normalized, onesided):
    """The formula TVM's own stft test checks against (tests/python/relay/test_op_level3.py),
    for a window as long as n_fft, in float64."""
    import math
    rows = n_fft // 2 + 1 if onesided else n_fft
    cols = (data.shape[-1] - n_fft) // hop + 1
    out = np.zeros((data.shape[0], rows, cols, 2))
    for b in range(data.shape[0]):
        for w in range(rows):
            for m in range(cols):
                for k in range(n_fft):
                    v = window[k] * data[b][m * hop + k]
                    out[b][w][m][0] += v * math.cos(2 * math.pi * w * k / n_fft)
                    out[b][w][m][1] -= v * math.sin(2 * math.pi * w * k / n_fft)
                if normalized:
                    out[b][w][m] /= math.sqrt(n_fft)
    return out


# TVM's own stft test cases (their data, an int32 window beside float32 data)
TVM_STFT = [
    (np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 5, 7, 8, 5, 6, 7, 3, 2]], np.float32), 2, 1, 2,
     np.array([1, 3], np.int32), True, True),
    (np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 5, 7, 8, 5, 6, 7, 3, 2]], np.float32), 2, 1, 2,
     np.array([1, 3], np.int32), False, False),
]


@pytest.mark.parametrize("data,n_fft,hop,win,window,normalized,onesided", TVM_STFT)
def test_stft_on_tvms_cases(data, n_fft, hop, win, window, normalized, onesided):
    got = run("stft", data, window, n_fft=n_fft, hop_length=hop, win_length=win,
              normalized=normalized, onesided=onesided)
    want = _stft_reference(data, n_fft, hop, win, window, normalized, onesided)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(n_fft=st.integers(1, 8), hop=st.integers(1, 4), extra=st.integers(0, 12),
       batch=st.integers(1, 3), onesided=st.booleans(), normalized=st.booleans(),
       seed=st.integers(0, 99))
def test_stft_is_tvms_formula(n_fft, hop, extra, batch, onesided, normalized, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((batch, n_fft + extra)).astype("float32")
    window = rng.random(n_fft).astype("float32")
    got = run("stft", data, window, n_fft=n_fft, hop_length=hop, win_length=n_fft,
              normalized=normalized, onesided=onesided)
    want = _stft_reference(data, n_fft, hop, n_fft, window, normalized, onesided)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    one = run("stft", data[0], window, n_fft=n_fft, hop_length=hop, win_length=n_fft,
              normalized=normalized, onesided=onesided)
    np.testing.assert_array_equal(one, got[0])   # 1-d data: the batch of one, squeezed


def test_stft_errors():
    from rvmdbg.relay.ops import OpTypeError
    with pytest.raises(OpTypeError, match="1-d or a 2-d batch"):
        rel("stft", T((2, 3, 4)), T((2,)), n_fft=2, hop_length=1, win_length=2)
    with pytest.raises(KernelError, match="win_length is 3"):
        run("stft", A(np.zeros((1, 8))), A(np.ones(2)), n_fft=3, hop_length=1, win_length=3)
    with pytest.raises(KernelError, match="do not hold a frame"):
        run("stft", A(np.zeros((1, 2))), A(np.ones(4)), n_fft=4, hop_length=1, win_length=4)


def _ifft_sum(re, im):
    got = np.fft.ifft(re + 1j * im, axis=-1)
    return got.real + got.imag


TEXTS = [
    ("def @main(%a: Tensor[(2, 4), float32], %b: Tensor[(2, 4), float32]) {\n"
     "  %0 = dft(%a, %b, inverse=True);\n  add(%0.0, %0.1)\n}\n",
     [np.arange(8, dtype="float32").reshape(2, 4), np.ones((2, 4), "float32")], _ifft_sum),
    ("def @main(%a: Tensor[(2, 12), float32], %b: Tensor[(4), float32]) {\n"
     "  stft(%a, %b, n_fft=4, hop_length=2, win_length=4, normalized=True, onesided=False)\n"
     "}\n",
     [np.arange(24, dtype="float32").reshape(2, 12), np.array([0.5, 1, 1, 0.5], "float32")],
     lambda x, w: _stft_reference(x, 4, 2, 4, w, True, False)),
]


@pytest.mark.parametrize("body, args, reference", TEXTS, ids=["dft", "stft"])
def test_relay_text_runs_everywhere(body, args, reference):
    # printed, read back unchanged, and run on the interpreter, the VM (and the graph executor)
    want = reference(*args)
    results = run_text_everywhere('#[version = "0.0.5"]\n' + body, args)
    assert set(results) >= {"interp", "vm"}
    for got in results.values():
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
