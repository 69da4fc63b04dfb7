"""Tests of argwhere and unique: TVM's relations (argwhere `(?, rank)` int32, unique's padded
tuple), topi's results (the examples of topi's unique docstring), the data-dependent shape
function, ONNX's NonZero and Unique as the oracle, and Relay text on the interpreter and the
VM (the graph executor refuses `?` outputs)."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpTypeError, infer_shape, shape_data_inputs
from rvmdbg.relay.types import TensorType, TupleType

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("argwhere", [T((2, 3), "bool")], {}, "Tensor[(?, 2), int32]"),
    ("unique", [T((8,), "int32")], {"return_counts": True},
     "(Tensor[(8,), int32], Tensor[(8,), int32], Tensor[(8,), int32], Tensor[(1,), int32], "
     "Tensor[(8,), int32])"),
]

DATA = A([4, 5, 1, 2, 3, 3, 4, 5], "int32")
KERNEL_CASES = [
    ("argwhere", [A([[1, 0], [0, 3]])], {}, A([[0, 0], [1, 1]], "int32")),
    # topi's docstring example, padding written as rvmdbg writes it
    ("unique", [DATA], {},
     (A([1, 2, 3, 4, 5, 0, 0, 0], "int32"), A([2, 3, 4, 0, 1, 8, 8, 8], "int32"),
      A([3, 4, 0, 1, 2, 2, 3, 4], "int32"), A([5], "int32"))),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns_and_data_dependence():
    assert OPS["argwhere"].pattern == OPS["unique"].pattern == "opaque"
    assert shape_data_inputs("argwhere") == (True,)
    cond = A([[0, 2, 0], [1, 0, np.nan]])  # NaN != 0 is false: TVM's ordered compare
    assert infer_shape("argwhere", [cond], ["float32"]) == [(2, 2)]
    assert run("argwhere", cond).tolist() == [[0, 1], [1, 0]]


def test_unique_unsorted_with_counts_is_topis_example():
    out = run("unique", DATA, sorted=False, return_counts=True)
    assert [o.tolist() for o in out] == [
        [4, 5, 1, 2, 3, 0, 0, 0], [0, 1, 2, 3, 4, 8, 8, 8], [0, 1, 2, 3, 4, 4, 0, 1], [5],
        [2, 2, 1, 1, 2, 0, 0, 0]]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("is_sorted", [True, False])
def test_unique_agrees_with_onnx(seed, is_sorted):
    x = np.random.default_rng(seed).integers(-3, 4, 12).astype("float32")
    want = onnx_node("Unique", [x], n_outputs=4, sorted=int(is_sorted))
    got = run("unique", x, sorted=is_sorted, return_counts=True)
    n = int(got[3][0])
    assert n == len(want[0])
    np.testing.assert_array_equal(got[0][:n], want[0])
    np.testing.assert_array_equal(got[1][:n], want[1])
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[4][:n], want[3])


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 2, 2)])
def test_argwhere_agrees_with_onnx_nonzero(shape):
    x = np.random.default_rng(1).integers(0, 2, shape).astype("int32")
    (want,) = onnx_node("NonZero", [x])
    np.testing.assert_array_equal(run("argwhere", x), want.T)


def test_unique_needs_1d():
    with pytest.raises(OpTypeError, match="1-d"):
        rel("unique", T((2, 2)))
    assert rel("unique", T((None,))) == TupleType((T((None,)), T((None,), "int32"),
                                                   T((None,), "int32"), T((1,), "int32")))
    assert rel("argwhere", T(())) == TensorType((None, 0), "int32")


def test_relay_text_runs_on_the_interpreter_and_the_vm():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(2, 3), int32]) {\n"
            "  %0 = argwhere(%x);\n"
            "  %1 = unique(reshape(%x, newshape=[-1]), return_counts=True);\n"
            "  (%0, %1.0, %1.3)\n}\n")
    x = np.array([[3, 0, 3], [0, 1, 0]], np.int32)
    results = run_text_everywhere(text, [x])
    assert set(results) == {"interp", "vm"}
    for got in results.values():
        a, b, c = got.fields
        assert a.tolist() == [[0, 0], [0, 2], [1, 1]]
        assert b.tolist() == [0, 1, 3, 0, 0, 0] and c.tolist() == [3]
