"""Cheap scalars (rvmdbg/scalars.py): every scalar path of an operator gives exactly what the
operator's kernel gives on 0-d arrays, over random operands including overflow, NaN and
infinities; the boundary conversions keep dtype and value; scalar code under quiet() warns
about nothing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import get_op, normalize_attrs
from rvmdbg.scalars import (SCALAR_DTYPES, SCALAR_OPS, SCALAR_TYPES, is_scalar, quiet,
                            QuietSwitch, scalar_op, to_array, to_runtime)

TESTED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                 "float64")


def values_of(dtype: str):
    """Random values of `dtype`, edges (the range's ends, 0, -1, NaN, infinities) included."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans().map(np.bool_)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = st.sampled_from([info.min, info.max, 0, 1, info.max // 2 + 1, info.min // 2])
        return st.one_of(edges, st.integers(int(info.min), int(info.max))).map(dt.type)
    width = dt.itemsize * 8
    return st.floats(width=width, allow_nan=True, allow_infinity=True).map(dt.type)


def kernel_result(name, args):
    """The operator's own kernel on 0-d arrays: the reference."""
    op = get_op(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.kernel([np.asarray(a) for a in args], normalize_attrs(op, {}))


def same(got, want) -> bool:
    want = np.asarray(want)
    if not is_scalar(got) or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f":
        return (np.isnan(got) and np.isnan(want)) or (got == want and
                                                      np.signbit(got) == np.signbit(want))
    return bool(got == want)


def arity(name):
    return get_op(name).num_inputs


CASES = [(name, dtype) for name in sorted(SCALAR_OPS) for dtype in TESTED_DTYPES
         if scalar_op(name, (dtype,) * arity(name)) is not None]


def test_every_scalar_op_is_an_operator_and_has_cases():
    for name in SCALAR_OPS:
        assert get_op(name) is not None, name
        assert any(n == name for n, _ in CASES), name


@pytest.mark.parametrize("name,dtype", CASES)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_scalar_op_matches_the_kernel(name, dtype, data):
    fn = scalar_op(name, (dtype,) * arity(name))
    args = [data.draw(values_of(dtype)) for _ in range(arity(name))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # quiet() must leave nothing to report
        with quiet():
            got = fn(*args)
    want = kernel_result(name, args)
    assert same(got, want), (name, dtype, args, got, want)


def test_no_scalar_path_where_the_kernel_decides():
    assert scalar_op("divide", ("int32", "int32")) is None  # truncation, division by zero
    assert scalar_op("floor_mod", ("int32", "int32")) is None
    assert scalar_op("maximum", ("float32", "float32")) is None  # NaN propagation
    assert scalar_op("add", ("int32", "int64")) is None
    assert scalar_op("add", ("bool", "bool")) is None
    assert scalar_op("logical_and", ("int32", "int32")) is None


def test_int32_wraps_around_without_a_warning():
    big = np.int32(2 ** 31 - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with quiet():
            assert scalar_op("add", ("int32", "int32"))(big, np.int32(1)) == np.int32(-2 ** 31)
        switch = QuietSwitch()
        assert switch.call(lambda a: a * a, big) == np.int32(1)
        assert switch.call(lambda a: a - np.int32(1), np.int32(-2 ** 31)) == big
        token = switch.enter()
        try:
            assert big + big == np.int32(-2)
        finally:
            switch.leave(token)
    with pytest.warns(RuntimeWarning):  # left: NumPy reports again
        big + big


def test_float32_rounds_at_float32():
    a, b = np.float32(0.1), np.float32(0.2)
    r = scalar_op("add", ("float32", "float32"))(a, b)
    assert type(r) is np.float32 and r == np.float32(0.3)
    assert float(r) != 0.1 + 0.2  # a float64 sum would be 0.30000000000000004


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_boundary_keeps_dtype_and_value(dtype):
    a = np.array(1, dtype=dtype)
    s = to_runtime(a)
    assert type(s) in SCALAR_TYPES and s.dtype == a.dtype and s.shape == ()
    back = to_array(s)
    assert type(back) is np.ndarray and back.dtype == a.dtype and back.shape == () and back == a
    v = np.arange(3, dtype=dtype) if dtype != "bool" else np.array([True, False])
    assert to_runtime(v) is v and to_array(v) is v  # tensors stay arrays
