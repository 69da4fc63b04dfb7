"""Tests of nn.pad (both of TVM's printed forms), nn.prelu, nn.dropout (its tuple, projected
with `%x.0` on the VM and the interpreter) and nn.matmul, against NumPy formulas."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import OPS, OpAttrError, OpTypeError
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

from op_cases import T, rel, run


RNG = np.random.default_rng(2)


def both(text, *args):
    mod = load_module('#[version = "0.0.5"]\n' + text, "<test>")
    vm = VirtualMachine(compile_module(mod)).invoke("main", list(args))
    return vm, Interpreter(mod).run("main", list(args))


# ---------------------------------------------------------------------------------------------
# pad


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(),
       mode=st.sampled_from(["constant", "edge", "reflect"]))
def test_pad_modes(shape, data, mode):
    widths = [[data.draw(st.integers(0, d - 1 if mode == "reflect" else 2)) for _ in range(2)]
              for d in shape]
    x = RNG.standard_normal(shape).astype("float32")
    value = np.array(1.5, dtype="float32")
    got = run("nn.pad", x, value, pad_width=widths, pad_mode=mode)
    # written out: index the source with clipped or mirrored positions
    out = np.empty([d + a + b for d, (a, b) in zip(shape, widths)], dtype="float32")
    for idx in np.ndindex(*out.shape):
        src, inside = [], True
        for i, d, (a, _) in zip(idx, shape, widths):
            p = i - a
            if not 0 <= p < d:
                inside = False
                p = min(max(p, 0), d - 1) if mode == "edge" else (-p if p < 0 else 2 * (d - 1) - p)
            src.append(p)
        out[idx] = 1.5 if (mode == "constant" and not inside) else x[tuple(src)]
    np.testing.assert_array_equal(got, out)
    assert rel("nn.pad", T(shape), T(()), pad_width=widths, pad_mode=mode) == T(out.shape)


PAD_NEW = """def @main(%x: Tensor[(1, 2), float32]) -> Tensor[(3, 5), float32] {
  nn.pad(%x, 7f, pad_width=[[1, 1], [2, 1]])
}"""
PAD_OLD = """def @main(%x: Tensor[(1, 2), float32]) -> Tensor[(3, 5), float32] {
  nn.pad(%x, pad_width=[[1, 1], [2, 1]], pad_value=7f)
}"""


@pytest.mark.parametrize("text", [PAD_NEW, PAD_OLD])
def test_pad_reads_both_printed_forms(text):
    x = np.array([[1, 2]], dtype="float32")
    vm, interp = both(text, x)
    want = np.full((3, 5), 7, dtype="float32")
    want[1, 2:4] = [1, 2]
    np.testing.assert_array_equal(vm, want)
    np.testing.assert_array_equal(interp, want)


def test_pad_errors_name_the_attribute():
    with pytest.raises(OpTypeError, match="'pad_width'"):
        rel("nn.pad", T((2, 3)), T(()), pad_width=[[1, 1]])
    with pytest.raises(OpTypeError, match="'pad_width'"):
        rel("nn.pad", T((2, 3)), T(()), pad_width=[[1, 1], [-1, 0]])
    with pytest.raises(OpTypeError, match="'pad_width'"):
        rel("nn.pad", T((2, 3)), T(()), pad_width=[[2, 0], [0, 0]], pad_mode="reflect")
    with pytest.raises(OpTypeError, match="'pad_value'"):
        rel("nn.pad", T((2, 3)), T(()), pad_width=[[0, 0], [0, 0]], pad_value=1.0)
    with pytest.raises(OpAttrError) as e:
        rel("nn.pad", T((2, 3)), pad_width=[[0, 0], [0, 0]], pad_mode="wrap")
    assert e.value.attr_name == "pad_mode"
    assert rel("nn.pad", T((None, 3)), T(()), pad_width=[[1, 1], [0, 2]]) == T((None, 5))
    assert OPS["nn.pad"].pattern == "injective"


# ---------------------------------------------------------------------------------------------
# prelu, dropout, matmul


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_prelu(axis):
    x = RNG.standard_normal((3, 4, 5)).astype("float32")
    alpha = RNG.standard_normal(x.shape[axis]).astype("float32")
    got = run("nn.prelu", x, alpha, axis=axis)
    shape = [1, 1, 1]
    shape[axis] = -1
    np.testing.assert_allclose(got, np.where(x >= 0, x, x * alpha.reshape(shape)), rtol=1e-6)
    with pytest.raises(OpTypeError, match="'axis'"):
        rel("nn.prelu", T((3, 4, 5)), T((4,)), axis=2)
    assert OPS["nn.prelu"].pattern == "broadcast"


def test_dropout_is_identity_and_a_mask_at_inference():
    x = RNG.standard_normal((2, 3)).astype("float32")
    out, mask = run("nn.dropout", x, rate=0.3)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(mask, np.ones_like(x))
    assert rel("nn.dropout", T((None, 3))) == TupleType((T((None, 3)), T((None, 3))))
    with pytest.raises(OpTypeError, match="'rate'"):
        rel("nn.dropout", T((2,)), rate=1.5)
    text = """def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = nn.dropout(%x, rate=0.5f);
  %1 = %0.0;
  nn.relu(%1)
}"""
    vm, interp = both(text, x)
    np.testing.assert_array_equal(vm, np.maximum(x, 0))
    np.testing.assert_array_equal(interp, np.maximum(x, 0))
    assert OPS["nn.dropout"].pattern == "opaque"


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul(ta, tb):
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    b = RNG.standard_normal((4, 5)).astype("float32")
    a_in = np.swapaxes(a, -1, -2).copy() if ta else a
    b_in = b.T.copy() if tb else b
    got = run("nn.matmul", a_in, b_in, transpose_a=ta, transpose_b=tb)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
    assert rel("nn.matmul", T(a_in.shape), T(b_in.shape), transpose_a=ta,
               transpose_b=tb) == T((2, 3, 5))
    with pytest.raises(OpTypeError, match="'units'"):
        rel("nn.matmul", T(a_in.shape), T(b_in.shape), transpose_a=ta, transpose_b=tb, units=6)
    assert OPS["nn.matmul"].pattern == "out_elemwise_fusable"


_BITS = {"float16": np.int16, "float32": np.int32, "float64": np.int64}


@settings(max_examples=100, deadline=None)
@given(dtype=st.sampled_from(sorted(_BITS)),
       values=st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, 1e-30, -1e-30, np.inf, -np.inf,
                                        np.nan, "-nan"]), min_size=0, max_size=16),
       step=st.integers(1, 2), reps=st.sampled_from([2048, 2900, 5000]),
       rows=st.sampled_from([1, 2, 4]))
def test_relu_is_the_select_bit_for_bit(dtype, values, step, reps, rows):
    # topi's relu is `x > 0 ? x : 0`: NaNs of either sign and -0.0 give +0.0, on strided
    # views too (the kernel runs on the bits, in blocks of 16,384 and a tail)
    x = np.array([np.nan if v == "-nan" else v for v in values], dtype)
    x[[i for i, v in enumerate(values) if v == "-nan"]] *= -1
    x = np.tile(x, reps)   # past the size where the kernel works on the bits
    x = x[:x.size // rows * rows].reshape(rows, -1)[:, ::step]
    want = np.where(x > 0, x, np.zeros((), dtype))
    got = run("nn.relu", x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(_BITS[dtype]), want.view(_BITS[dtype]))
