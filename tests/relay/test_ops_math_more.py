"""Tests of the transformer math: erf and the fast_* forms (elementwise), and the reductions
variance, std and logsumexp. References are math.erf/exp/tanh and the textbook formulas
written as loops in Python floats."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from op_cases import check_kernel_case, check_type_case
from rvmdbg.relay.ops import OPS, SCALAR_FAST, OpTypeError
from rvmdbg.relay.types import TensorType

from op_cases import A, T, rel, run


TYPE_CASES = [
    ("reinterpret", [T((2, None))], {"dtype": "int32"}, "Tensor[(2, ?), int32]"),
    ("erf", [T((None, 3))], {}, "Tensor[(?, 3), float32]"),
    ("fast_exp", [T((2,), "float16")], {}, "Tensor[(2,), float16]"),
    ("fast_tanh", [T(())], {}, "float32"),
    ("fast_erf", [T((4,), "float64")], {}, "Tensor[(4,), float64]"),
    ("variance", [T((2, 3, 4)), T((2, 3, 1))], {"axis": [-1]}, "Tensor[(2, 3), float32]"),
    ("variance", [T((None, 4)), T((1, 1))], {}, "float32"),
    ("variance", [T((2, 3, 4)), T((1, 3, 1))], {"axis": [1], "exclude": True,
                                                "keepdims": True},
     "Tensor[(1, 3, 1), float32]"),
    ("std", [T((None, 4)), T((None, 1))], {"axis": [1]}, "Tensor[(?,), float32]"),
    ("logsumexp", [T((2, None))], {"axis": [1], "keepdims": True}, "Tensor[(2, 1), float32]"),
    ("logsumexp", [T((2, 3), "float64")], {}, "float64"),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPE_CASES)])
def test_type_relation(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


_ERF = [math.erf(v) for v in (-2.0, -0.5, 0.0, 0.5, 3.0)]

KERNEL_CASES = [
    ("reinterpret", [A([0x40000000], "int32")], {"dtype": "float32"}, A([2.0])),
    ("erf", [A([-2.0, -0.5, 0.0, 0.5, 3.0])], {}, A(_ERF)),
    ("fast_erf", [A([-2.0, -0.5, 0.0, 0.5, 3.0])], {}, A(_ERF)),
    ("fast_exp", [A([0.0, 1.0, -3.5])], {}, A([1.0, math.e, math.exp(-3.5)])),
    ("fast_tanh", [A([0.0, 0.5, -20.0])], {}, A([0.0, math.tanh(0.5), -1.0])),
    ("variance", [A([[1, 2, 3, 4]]), A([[2.5]])], {"axis": [1]}, A([1.25])),
    ("variance", [A([[1, 2, 3, 4]]), A([[2.5]])], {"axis": [1], "unbiased": True},
     A([5 / 3])),
    ("std", [A([[1, 3], [5, 7]]), A([[4.0]])], {"keepdims": True}, A([[math.sqrt(5.0)]])),
    ("logsumexp", [A([[0.0, math.log(3.0)], [1000.0, 1000.0]])], {"axis": [1]},
     A([math.log(4.0), 1000.0 + math.log(2.0)])),
]


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_kernel(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns():
    assert {n: OPS[n].pattern for n in ("erf", "fast_exp", "fast_tanh", "fast_erf")} == \
        dict.fromkeys(("erf", "fast_exp", "fast_tanh", "fast_erf"), "elemwise")
    assert {n: OPS[n].pattern for n in ("variance", "std", "logsumexp")} == \
        dict.fromkeys(("variance", "std", "logsumexp"), "comm_reduce")
    specs = OPS["variance"].attr_specs
    assert [specs[a].default for a in ("axis", "keepdims", "exclude", "unbiased")] == \
        [None, False, False, False]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-6, 6, width=32), min_size=1, max_size=8))
def test_erf_is_the_nearest_float32(values):
    x = A(values)
    for op in ("erf",):
        out = run(op, x)
        assert out.dtype == np.float32
        assert out.tolist() == [float(np.float32(math.erf(v))) for v in x.tolist()]
        for v, e in zip(x, out):  # the 0-d fast path agrees with the array path
            assert SCALAR_FAST[op](np.asarray(v)) == e


F = np.float32


def _topi_fast_exp(v):
    """topi's fast_exp, one float32 at a time (constants from topi/elemwise.h)."""
    x = min(max(v, F(-88.3762626647949)), F(88.3762626647950))
    n = np.floor(x * F(1.44269504088896341) + F(0.5))
    f = x - n * F(0.6931471805599453)
    y = F(1.9875691500e-4)
    for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
              5.0000001201e-1):
        y = y * f + F(c)
    y = y * f * f + f + F(1)
    scale = np.array([int(n) + 127 << 23], np.int32).view(np.float32)[0]
    return max(scale * y, v)


def _topi_rational(v, clamp, odd, even):
    """x P(x^2) / Q(x^2) on x clamped to [-clamp, clamp], coefficients lowest power first."""
    x = min(max(v, F(-clamp)), F(clamp))
    x2 = x * x
    p = F(odd[-1])
    for c in odd[-2::-1]:
        p = x2 * p + F(c)
    q = F(even[-1])
    for c in even[-2::-1]:
        q = x2 * q + F(c)
    return x * p / q


TANH_ODD = (4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
            5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
            -2.76076847742355e-16)
TANH_EVEN = (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04,
             1.19825839466702e-06)
ERF_ODD = (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
           -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
           -2.72614225801306e-10)
ERF_EVEN = (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
            -2.13374055278905e-04, -1.45660718464996e-05)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-90, 90, width=32), min_size=1, max_size=8))
def test_fast_forms_are_topis_approximations(values):
    x = A(values)
    cases = (("fast_exp", _topi_fast_exp, math.exp),
             ("fast_tanh", lambda v: _topi_rational(v, 9, TANH_ODD, TANH_EVEN), math.tanh),
             ("fast_erf", lambda v: _topi_rational(v, 4, ERF_ODD, ERF_EVEN), math.erf))
    for op, topi, exact in cases:
        out = run(op, x)
        assert out.dtype == np.float32
        np.testing.assert_array_max_ulp(out, A([topi(v) for v in x]), maxulp=1)
        for v, o in zip(x.tolist(), out.tolist()):
            try:
                e = exact(v)
            except OverflowError:
                continue
            if op == "fast_exp" and v > 88.37:
                continue  # topi clamps at 127.5 ln 2; its 2^128 is inf
            # fast_exp: n ln 2 rounded to float32 costs up to half an ulp of x, 4e-6 at 88
            tolerance = 5e-6 if op == "fast_exp" else 1e-6
            assert math.isclose(o, e, rel_tol=tolerance, abs_tol=1e-37), (op, v, o, e)


def test_fast_forms_fall_back_to_the_exact_function_in_other_dtypes():
    x = np.linspace(-3, 3, 13)
    np.testing.assert_array_max_ulp(run("fast_exp", x), np.exp(x), maxulp=4)
    np.testing.assert_array_max_ulp(run("fast_tanh", x), np.tanh(x), maxulp=4)
    np.testing.assert_allclose(run("fast_erf", x), [math.erf(v) for v in x], rtol=4e-16)
    half = run("fast_erf", A([0.5, -3.0, 5.0], "float16"))
    # float16 is evaluated in float32 and rounded once (topi's float16 evaluation gives 1.04)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float64), [math.erf(v) for v in (0.5, -3, 5)],
                               atol=1e-3)
    assert np.all(np.abs(half) <= 1)


def test_erf_over_its_range_and_special_values():
    x = np.concatenate([np.linspace(-7, 7, 20001), [1e-30, -1e-30, 5.999, 6.0, 6.5, 40.0]])
    out = run("erf", x.astype(np.float64))
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(out, expected, rtol=4e-16, atol=1e-300)
    f32 = x.astype(np.float32)
    assert run("erf", f32).tolist() == [float(np.float32(math.erf(v))) for v in f32.tolist()]
    special = run("erf", A([np.inf, -np.inf, np.nan, -0.0]))
    assert special[:2].tolist() == [1.0, -1.0] and np.isnan(special[2])
    assert special[3] == 0 and np.signbit(special[3])


@pytest.mark.parametrize("name", ["erf", "exp", "log", "sqrt", "tanh", "sigmoid", "fast_exp"])
def test_float_functions_check_integers_as_tvm_does_and_refuse_to_run_them(name):
    # TVM's relation is IdentityRel (an int32 type-checks); lowering finds no int kernel
    from rvmdbg.relay.ops import KernelError
    assert rel(name, T((2,), "int32")) == T((2,), "int32")
    for x in (np.array([1, 2], dtype="int32"), np.array(3, dtype="int64")):
        with pytest.raises(KernelError, match=f"{name}: TVM has no int.. kernel"):
            run(name, x)
    if SCALAR_FAST.get(name) is not None:
        with pytest.raises(KernelError):
            SCALAR_FAST[name](np.array(3, dtype="int32"))


def _reference_variance(x, axes, unbiased):
    """Per kept index, the mean of squared differences from the mean, by loops in doubles."""
    kept = [i for i in range(x.ndim) if i not in axes]
    out = {}
    for pos in itertools.product(*[range(x.shape[i]) for i in kept]):
        vals = []
        for red in itertools.product(*[range(x.shape[i]) for i in axes]):
            full = [0] * x.ndim
            for i, p in zip(kept, pos):
                full[i] = p
            for i, r in zip(axes, red):
                full[i] = r
            vals.append(float(x[tuple(full)]))
        m = sum(vals) / len(vals)
        out[pos] = sum((v - m) ** 2 for v in vals) / (len(vals) - (1 if unbiased else 0))
    return out


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.booleans(), st.booleans(),
       st.data())
def test_variance_and_std_match_the_formula(shape, unbiased, keepdims, data):
    n = int(np.prod(shape))
    x = np.array(data.draw(st.lists(st.floats(-10, 10, width=32), min_size=n, max_size=n)),
                 np.float32).reshape(shape)
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    if unbiased and all(shape[a] == 1 for a in axes):
        unbiased = False  # n - 1 = 0: a division by zero in TVM too
    mean = run("mean", x, axis=axes, keepdims=True)
    var = run("variance", x, mean, axis=axes, keepdims=keepdims, unbiased=unbiased)
    std = run("std", x, mean, axis=axes, keepdims=keepdims, unbiased=unbiased)
    ref = _reference_variance(x, axes, unbiased)
    flat_var = var.reshape(-1).tolist()
    flat_std = std.reshape(-1).tolist()
    for i, pos in enumerate(sorted(ref)):
        assert math.isclose(flat_var[i], ref[pos], rel_tol=1e-4, abs_tol=1e-4)
        assert math.isclose(flat_std[i], math.sqrt(ref[pos]), rel_tol=1e-4, abs_tol=1e-3)
    assert var.dtype == std.dtype == np.float32
    assert rel("variance", T(shape), T(mean.shape), axis=axes, keepdims=keepdims) == \
        T(var.shape)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.booleans(), st.data())
def test_logsumexp_matches_the_formula(shape, keepdims, data):
    n = int(np.prod(shape))
    x = np.array(data.draw(st.lists(st.floats(-30, 30, width=32), min_size=n, max_size=n)),
                 np.float32).reshape(shape)
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    out = run("logsumexp", x, axis=axes, keepdims=keepdims)
    kept = [i for i in range(x.ndim) if i not in axes]
    flat = out.reshape(-1).tolist()
    for i, pos in enumerate(itertools.product(*[range(x.shape[k]) for k in kept])):
        vals = []
        for red in itertools.product(*[range(x.shape[a]) for a in axes]):
            full = dict(zip(kept, pos))
            full.update(zip(axes, red))
            vals.append(float(x[tuple(full[k] for k in range(x.ndim))]))
        top = max(vals)
        expected = top + math.log(sum(math.exp(v - top) for v in vals))
        assert math.isclose(flat[i], expected, rel_tol=1e-5, abs_tol=1e-5)
    assert rel("logsumexp", T(shape), axis=axes, keepdims=keepdims) == T(out.shape)


def test_reduction_errors_name_the_operator():
    with pytest.raises(OpTypeError, match="variance: mean .* must have the rank of data"):
        rel("variance", T((2, 3)), T((2,)), axis=[1])
    with pytest.raises(OpTypeError, match="variance: mean .* does not broadcast to data"):
        rel("variance", T((2, 3)), T((2, 2)), axis=[1])
    # VarianceRel compares no dtypes (float32 data, float64 mean: the kernel stops at run time)
    assert rel("std", T((2, 3)), T((2, 1), "float64")) == T(())
    with pytest.raises(OpTypeError, match="logsumexp: axis 2 is out of range"):
        rel("logsumexp", T((2, 3)), axis=[2])


# ---------------------------------------------------------------------------------------------
# reinterpret (TVM's relay.reinterpret: CastRel's type, the same bits read as another dtype)


def test_reinterpret_reads_the_same_bits():
    assert rel("reinterpret", T((2, None)), dtype="int32") == T((2, None), "int32")
    assert OPS["reinterpret"].pattern == "elemwise"
    out = run("reinterpret", A([1.0, -2.0]), dtype="int32")
    assert out.dtype == np.int32 and out.tolist() == [0x3F800000, -0x40000000]
    back = run("reinterpret", A([0x3F800000], "int32"), dtype="float32")
    assert back.tolist() == [1.0]
    # a 0-d tensor stays 0-d
    assert run("reinterpret", A(-1, "int8"), dtype="uint8").shape == ()
    assert run("reinterpret", A(-1, "int8"), dtype="uint8") == 255


def test_reinterpret_refuses_different_bit_widths():
    from rvmdbg.relay.ops import KernelError
    # the relation does not check widths; tir's reinterpret does when it lowers
    assert rel("reinterpret", T((2,), "bool"), dtype="uint8") == T((2,), "uint8")
    with pytest.raises(KernelError, match="reinterpret: TVM cannot reinterpret bool"):
        run("reinterpret", A([True], "bool"), dtype="uint8")
    with pytest.raises(KernelError, match="bit widths must match"):
        run("reinterpret", A([1.0]), dtype="int64")
