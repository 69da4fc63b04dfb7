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


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%re: Tensor[(2, 4), float32], %im: Tensor[(2, 4), float32]) {\n"
            "  %0 = dft(%re, %im, inverse=True);\n"
            "  add(%0.0, %0.1)\n}\n")
    re = np.arange(8, dtype="float32").reshape(2, 4)
    im = np.ones((2, 4), "float32")
    want = np.fft.ifft(re + 1j * im, axis=-1)
    results = run_text_everywhere(text, [re, im])
    assert set(results) >= {"interp", "vm"}
    for got in results.values():
        np.testing.assert_allclose(got, want.real + want.imag, rtol=1e-5, atol=1e-5)
