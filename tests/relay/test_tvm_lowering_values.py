"""The kernels that compute what TVM's lowering computes for inputs its relations accept
(docs/tvm-parity.md), against references written as TVM's loops are: one element at a time,
with LLVM's ordered float compares (`a > b` is false when either is NaN).

- max/min: `acc = acc > v ? acc : v` from the dtype's finite lowest (highest) value;
- argmax/argmin: topi's (index, value) reducer from (-1, that bound);
- gather_nd with float indices: each index truncated to int32;
- one_hot with float indices: `indices[i] == float(position)`;
- variance of mixed dtypes: data - mean in TIR's common dtype;
- max pooling: the max loop over each window."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, KernelError

NAN, INF = float("nan"), float("inf")


def _gt(a, b) -> bool:
    return bool(a > b)  # NumPy scalars compare as LLVM's ordered fcmp: False with a NaN


def _lt(a, b) -> bool:
    return bool(a < b)


def _bound(dt, kind):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.bool_(kind == "min")
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    return dt.type(info.min if kind == "max" else info.max)


def ref_extreme(row: np.ndarray, kind: str):
    better = _gt if kind == "max" else _lt
    acc = _bound(row.dtype, kind)
    for v in row:
        acc = acc if better(acc, v) else v
    return acc


def ref_arg(row: np.ndarray, kind: str, last: bool) -> int:
    better = _gt if kind == "max" else _lt
    idx, val = -1, _bound(row.dtype, kind)
    for j, v in enumerate(row):
        same = bool(val == v)
        proper = idx > j if last else idx < j
        keep_index = better(val, v) or (same and proper)
        idx, val = (idx if keep_index else j), (val if better(val, v) else v)
    return idx


_SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.0, 3.4028235e38, -3.4028235e38]
rows = st.lists(st.sampled_from(_SPECIAL), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(rows, min_size=1, max_size=3).map(
    lambda rs: [r + [0.0] * (max(map(len, rs)) - len(r)) for r in rs]))
def test_float_max_min_argmax_argmin_follow_tvms_loop(rows):
    x = np.array(rows, "float32")
    for kind in ("max", "min"):
        got = OPS[kind].kernel([x], {"axis": [1]})
        want = np.array([ref_extreme(r, kind) for r in x], "float32")
        assert np.array_equal(got, want, equal_nan=True), (kind, x, got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (kind, x, got, want)
        for last in (False, True):
            got = OPS["arg" + kind].kernel([x], {"axis": [1], "select_last_index": last})
            want = np.array([ref_arg(r, kind, last) for r in x], "int32")
            assert np.array_equal(got, want), (kind, last, x, got, want)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "float16"])
def test_reductions_over_several_axes_follow_tvms_loop_in_row_major_order(dtype):
    rng = np.random.default_rng(7)
    x = rng.integers(-2, 3, size=(2, 3, 4)).astype(dtype)
    if dtype == "float16":
        x[rng.random(x.shape) < 0.2] = NAN
    if dtype == "uint8":
        x[0] = 0  # a block of the dtype's lowest value: argmax -1
    for kind in ("max", "min"):
        got = OPS[kind].kernel([x], {"axis": [0, 2], "keepdims": True})
        rows = np.transpose(x, (1, 0, 2)).reshape(3, 8)
        want = np.array([ref_extreme(r, kind) for r in rows], dtype).reshape(1, 3, 1)
        assert np.array_equal(got, want, equal_nan=dtype == "float16"), (kind, got, want)
        got = OPS["arg" + kind].kernel([x], {"axis": [0, 2]})
        assert np.array_equal(got, [ref_arg(r, kind, False) for r in rows]), (kind, got)
        got = OPS["arg" + kind].kernel([x], {"axis": [1]})
        flat = np.transpose(x, (0, 2, 1)).reshape(8, 3)
        assert np.array_equal(got.reshape(8), [ref_arg(r, kind, False) for r in flat])


@settings(max_examples=60, deadline=None)
@given(idx=st.lists(st.floats(-0.75, 3.75, width=32), min_size=1, max_size=5))
def test_gather_nd_truncates_float_indices_as_topis_int32_cast(idx):
    data = np.arange(4, dtype="float32") * 10
    got = OPS["gather_nd"].kernel([data, np.array([idx], "float32")], {})
    want = [data[int(v)] for v in np.array(idx, "float32")]  # int() truncates toward zero
    assert np.array_equal(got, want)


def test_gather_nd_refuses_an_index_truncating_out_of_range():
    for bad in (4.0, -1.0, INF, NAN):
        with pytest.raises(KernelError, match="out of range for axis 0 of size 4"):
            OPS["gather_nd"].kernel([np.zeros(4, "float32"), np.array([[bad]], "float32")], {})


@settings(max_examples=60, deadline=None)
@given(idx=st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, -0.0, NAN, 2049.0, 2048.0]),
                    min_size=1, max_size=5),
       dtype=st.sampled_from(["float16", "float32"]))
def test_one_hot_compares_float_indices_with_the_cast_position(idx, dtype):
    depth = 2050
    x = np.array(idx, dtype)
    got = OPS["one_hot"].kernel([x, np.array(1, "int32"), np.array(0, "int32")],
                                {"depth": depth, "dtype": "int32"})
    pos = np.arange(depth).astype(dtype)  # TIR casts the int32 position to the float dtype
    want = np.array([[int(v == p) for p in pos] for v in x], "int32")
    assert np.array_equal(got, want)


@pytest.mark.parametrize("data,mean,want_dtype", [
    ("float32", "float16", "float32"), ("float16", "float32", "float16"),
    ("float64", "int32", "float64"), ("int64", "int8", "int64"), ("uint64", "int64", "uint64"),
])
def test_variance_of_mixed_dtypes_subtracts_in_tirs_common_dtype(data, mean, want_dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 9, size=(2, 5)).astype(data)
    m = rng.integers(0, 9, size=(2, 1)).astype(mean)
    got = OPS["variance"].kernel([x, m], {"axis": [1]})
    common = {"float32": "float32", "float16": "float32", "float64": "float64",
              "int64": "int64", "uint64": "uint64"}[data]
    want = []
    for r, mu in zip(x, m[:, 0]):
        total = sum((float(v) - float(mu)) ** 2 for v in r)  # small integers: exact
        want.append(total / 5 if common.startswith("float") else total // 5)
    assert got.dtype == np.dtype(want_dtype)
    assert np.allclose(got.astype("float64"), want, rtol=1e-3)


def test_shape_of_casts_each_dimension_to_a_float_dtype():
    got = OPS["shape_of"].kernel([np.zeros((3, 2049, 1), "int8")], {"dtype": "float16"})
    assert got.dtype == np.float16 and got.tolist() == [3.0, 2048.0, 1.0]  # rounded to even


@settings(max_examples=60, deadline=None)
@given(row=st.lists(st.sampled_from(_SPECIAL), min_size=3, max_size=8),
       pool=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 1))
def test_max_pool_follows_tvms_max_loop_over_each_window(row, pool, stride, pad):
    x = np.array(row, "float32")
    got = OPS["nn.max_pool1d"].kernel([x.reshape(1, 1, -1)], {
        "pool_size": [pool], "strides": [stride], "padding": [pad]})[0, 0]
    padded = np.concatenate([np.full(pad, np.finfo(np.float32).min, "float32"), x,
                             np.full(pad, np.finfo(np.float32).min, "float32")])
    want = [ref_extreme(padded[i:i + pool], "max")
            for i in range(0, len(padded) - pool + 1, stride)]
    assert np.array_equal(got, np.array(want, "float32"), equal_nan=True), (x, got, want)
