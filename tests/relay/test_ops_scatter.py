"""Tests of scatter_elements and scatter_nd: TVM's relations (only the indices' dtype for
scatter_elements; ScatterNDRel's shape rules), topi's semantics (negative indices wrap in
scatter_elements, not in scatter_nd; repeated indices apply in order), ONNX's ScatterElements
and ScatterND as the oracle, and Relay text through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, KernelError, OpAttrError, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("scatter_elements", [T((3, 3)), T((2, 3), "int64"), T((2, 3))], {"axis": 0},
     "Tensor[(3, 3), float32]"),
    ("scatter_nd", [T((4, 4, 4)), T((2, 3), "int64"), T((3, 4))], {},
     "Tensor[(4, 4, 4), float32]"),
]

KERNEL_CASES = [
    ("scatter_elements", [A([[1, 2, 3, 4, 5]]), A([[1, 3]], "int64"), A([[1.1, 2.1]])],
     {"axis": 1}, A([[1, 1.1, 3, 2.1, 5]])),
    ("scatter_nd", [A([1, 2, 3, 4, 5, 6, 7, 8]), A([[4, 3, 1, 7]], "int64"),
                    A([9, 10, 11, 12])], {}, A([1, 11, 3, 10, 9, 6, 7, 12])),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns_and_defaults():
    assert OPS["scatter_elements"].pattern == OPS["scatter_nd"].pattern == "opaque"
    assert {a.name: a.default for a in OPS["scatter_elements"].attrs} == {
        "axis": 0, "reduction": "update"}
    assert {a.name: a.default for a in OPS["scatter_nd"].attrs} == {"mode": "update"}


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "min", "max"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_agrees_with_onnx(reduction, axis):
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3, 4)).astype("float32")
    shape = (2, 4) if axis == 0 else (3, 2)
    size = data.shape[axis]
    # distinct indices along the axis (ONNX leaves repeated ones unordered for update)
    idx = np.stack([rng.permutation(size)[:shape[axis]] for _ in range(
        shape[1 - axis % 2])], axis=1 - axis % 2)
    idx = idx.astype("int64") - size * (rng.random(shape) < 0.3)  # some negative
    upd = rng.standard_normal(shape).astype("float32")
    (want,) = onnx_node("ScatterElements", [data, idx, upd], axis=axis,
                        reduction="none" if reduction == "update" else reduction)
    np.testing.assert_allclose(run("scatter_elements", data, idx, upd, axis=axis,
                                   reduction=reduction), want, rtol=1e-6)


def test_scatter_elements_repeated_indices_apply_in_order_and_mean():
    data = A([[0.0, 0.0, 0.0]])
    idx = A([[1, 1, 1]], "int64")
    upd = A([[2.0, 4.0, 8.0]])
    assert run("scatter_elements", data, idx, upd, axis=1).tolist() == [[0, 8, 0]]
    assert run("scatter_elements", data, idx, upd, axis=1, reduction="add").tolist() == [
        [0, 14, 0]]
    # mean: ((((0 + 2) / 2) + 4) / 2 + 8) / 2
    assert run("scatter_elements", data, idx, upd, axis=1, reduction="mean").tolist() == [
        [0, 5.25, 0]]
    ints = run("scatter_elements", A([[0, 7]], "int32"), A([[1]], "int64"), A([[-2]], "int32"),
               axis=1, reduction="mean")
    assert ints.tolist() == [[0, 2]]  # (7 - 2) / 2 truncates


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "min", "max"])
def test_scatter_nd_agrees_with_onnx(reduction):
    rng = np.random.default_rng(6)
    data = rng.standard_normal((4, 4, 4)).astype("float32")
    onnx_idx = np.array([[0], [2]], "int64")
    upd = rng.standard_normal((2, 4, 4)).astype("float32")
    (want,) = onnx_node("ScatterND", [data, onnx_idx, upd],
                        reduction="none" if reduction == "update" else reduction)
    # TVM's indices are ONNX's with the index tuple axis first
    got = run("scatter_nd", data, np.ascontiguousarray(onnx_idx.T), upd, mode=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_nd_repeated_indices_accumulate():
    got = run("scatter_nd", A([0, 0, 0], "int32"), A([[1, 1, 2]], "int64"),
              A([5, 6, 7], "int32"), mode="add")
    assert got.tolist() == [0, 11, 7]


def test_errors():
    with pytest.raises(OpTypeError, match="indices must be a tensor of integers"):
        rel("scatter_elements", T((3,)), T((3,)), T((3,)))
    with pytest.raises(OpTypeError, match="reduction"):
        rel("scatter_elements", T((3,)), T((3,), "int32"), T((3,)), reduction="sum")
    with pytest.raises(OpAttrError):
        rel("scatter_nd", T((3,)), T((1, 2), "int32"), T((2,)), reductoin="add")
    with pytest.raises(OpTypeError, match="static shape"):
        rel("scatter_nd", T((3,)), T((None, 2), "int32"), T((2,)))
    with pytest.raises(OpTypeError, match="differ"):
        rel("scatter_nd", T((3, 4)), T((1, 2), "int32"), T((2, 5)))
    with pytest.raises(KernelError, match="out of range"):
        run("scatter_elements", A([1.0, 2.0]), A([2], "int64"), A([3.0]))
    with pytest.raises(KernelError, match="out of range"):
        run("scatter_nd", A([1.0, 2.0]), A([[-1]], "int64"), A([3.0]))


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%d: Tensor[(3, 3), float32], %i: Tensor[(2, 3), int64], "
            "%u: Tensor[(2, 3), float32], %j: Tensor[(1, 2), int64]) {\n"
            '  %0 = scatter_elements(%d, %i, %u, axis=0, reduction="add");\n'
            '  scatter_nd(%0, %j, %u, mode="max")\n}\n')
    d = np.arange(9, dtype=np.float32).reshape(3, 3)
    i = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    u = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    j = np.array([[2, 0]], np.int64)
    step = d.copy()
    for r in range(2):
        for c in range(3):
            step[i[r, c], c] += u[r, c]
    for k, row in enumerate(j[0]):
        step[row] = np.maximum(step[row], u[k])
    results = run_text_everywhere(text, [d, i, u, j])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, step)
