"""Tests of ndarray_size and trilu: TVM's relations (a 0-d count of dtype; trilu's 0-d k),
topi's semantics, ONNX's Size and Trilu as the oracle, and Relay text through every
executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("ndarray_size", [T((2, None))], {"dtype": "int64"}, "int64"),
    ("trilu", [T((3, None)), T((), "int64")], {"upper": False}, "Tensor[(3, ?), float32]"),
    ("reverse_sequence", [T((4, 2, 3)), T((2,), "int64")], {"seq_axis": 0, "batch_axis": 1},
     "Tensor[(4, 2, 3), float32]"),
]

KERNEL_CASES = [
    ("ndarray_size", [A(np.zeros((2, 3)))], {}, A(6, "int32")),
    ("trilu", [A(np.arange(9).reshape(3, 3), "int32"), A(0, "int64")], {},
     A([[0, 1, 2], [0, 4, 5], [0, 0, 8]], "int32")),  # topi's docstring example
    ("reverse_sequence", [A(np.arange(8).reshape(2, 4), "int32"), A([3, 9], "int32")], {},
     A([[2, 1, 0, 3], [7, 6, 5, 4]], "int32")),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns_and_defaults():
    assert OPS["ndarray_size"].pattern == "injective"
    assert OPS["trilu"].pattern == "elemwise"
    assert OPS["trilu"].attr_specs["upper"].default is True


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("k", [-7, -1, 0, 2, 6])
def test_trilu_agrees_with_onnx(upper, k):
    x = np.random.default_rng(8).standard_normal((2, 4, 5)).astype("float32")
    kk = np.array(k, "int64")
    (want,) = onnx_node("Trilu", [x, kk], upper=int(upper))
    np.testing.assert_array_equal(run("trilu", x, kk, upper=upper), want)


def test_ndarray_size_agrees_with_onnx_size():
    x = np.zeros((3, 0, 2), "float32")
    (want,) = onnx_node("Size", [x])
    assert run("ndarray_size", x, dtype="int64") == want


@pytest.mark.parametrize("time_axis, batch_axis", [(0, 1), (1, 0)])
def test_reverse_sequence_agrees_with_onnx(time_axis, batch_axis):
    x = np.arange(16, dtype="float32").reshape(4, 4, 1)
    lengths = np.array([1, 4, 2, 3], "int64")
    (want,) = onnx_node("ReverseSequence", [x, lengths], time_axis=time_axis,
                        batch_axis=batch_axis)
    got = run("reverse_sequence", x, lengths, seq_axis=time_axis, batch_axis=batch_axis)
    np.testing.assert_array_equal(got, want)


def test_errors():
    with pytest.raises(OpTypeError, match="0-d"):
        rel("trilu", T((3, 3)), T((1,), "int64"))
    with pytest.raises(OpTypeError, match="rank 2"):
        rel("trilu", T((3,)), T((), "int64"))


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(3, 4), float32]) {\n"
            "  %0 = trilu(%x, 1i64, upper=False);\n"
            '  (%0, ndarray_size(%0, dtype="int64"))\n}\n')
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    results = run_text_everywhere(text, [x])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        a, b = got.fields if hasattr(got, "fields") else got
        np.testing.assert_array_equal(a, np.tril(x, 1))
        assert b.tolist() == 12 and b.dtype == np.int64
