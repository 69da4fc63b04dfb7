"""Tests of the bitwise family (bitwise_and/or/xor/not, left_shift, right_shift): TVM's
relations and patterns, topi's integer semantics (arithmetic right shift of signed integers,
bool as 1-bit), floats refused at run time, ONNX's BitShift/Bitwise* as the oracle, and Relay
text through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, KernelError, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("bitwise_and", [T((2, 3), "int32"), T((3,), "int32")], {}, "Tensor[(2, 3), int32]"),
    ("bitwise_or", [T((None,), "uint8"), T((), "uint8")], {}, "Tensor[(?,), uint8]"),
    ("bitwise_xor", [T((2,), "bool"), T((2,), "bool")], {}, "Tensor[(2,), bool]"),
    ("bitwise_not", [T((4,), "int64")], {}, "Tensor[(4,), int64]"),
    ("left_shift", [T((3,), "uint16"), T((3,), "uint16")], {}, "Tensor[(3,), uint16]"),
    ("right_shift", [T((1, 3), "int8"), T((2, 1), "int8")], {}, "Tensor[(2, 3), int8]"),
]

KERNEL_CASES = [
    ("bitwise_and", [A([12, 10], "int32"), A([10, 6], "int32")], {}, A([8, 2], "int32")),
    ("bitwise_or", [A([12, 1], "uint8"), A([3, 2], "uint8")], {}, A([15, 3], "uint8")),
    ("bitwise_xor", [A([True, True], "bool"), A([True, False], "bool")], {},
     A([False, True], "bool")),
    ("bitwise_not", [A([0, 5, -1], "int8")], {}, A([-1, -6, 0], "int8")),
    ("left_shift", [A([1, 3], "uint8"), A([7, 2], "uint8")], {}, A([128, 12], "uint8")),
    ("right_shift", [A([-8, 8], "int32"), A([1, 2], "int32")], {}, A([-4, 2], "int32")),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns():
    assert {n: OPS[n].pattern for n in ("bitwise_and", "left_shift", "bitwise_not")} == {
        "bitwise_and": "broadcast", "left_shift": "broadcast", "bitwise_not": "elemwise"}


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int8", "int32"])
@pytest.mark.parametrize("onnx_op, direction, relay_op", [
    ("BitwiseAnd", None, "bitwise_and"), ("BitwiseOr", None, "bitwise_or"),
    ("BitwiseXor", None, "bitwise_xor"), ("BitShift", "LEFT", "left_shift"),
    ("BitShift", "RIGHT", "right_shift")])
def test_agrees_with_onnx_reference(dtype, onnx_op, direction, relay_op):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 100, (3, 4)).astype(dtype)
    b = rng.integers(-2, 10, (4,)).astype(dtype)  # out-of-range shifts too
    attrs = {"direction": direction} if direction else {}
    # ONNX's BitShift takes signed integers from opset 28
    (want,) = onnx_node(onnx_op, [a, b], opset=28, **attrs)
    np.testing.assert_array_equal(run(relay_op, a, b), want)
    (want,) = onnx_node("BitwiseNot", [a])
    np.testing.assert_array_equal(run("bitwise_not", a), want)


def test_floats_type_check_and_stop_at_run_time_with_tvms_reason():
    assert rel("bitwise_and", T((2,)), T((2,))) == T((2,))
    with pytest.raises(KernelError, match="integer arguments"):
        run("bitwise_and", A([1.0]), A([2.0]))
    with pytest.raises(KernelError, match="integer arguments"):
        run("bitwise_not", A([1.0]))


def test_shift_out_of_range_gives_the_limit():
    # undefined in TVM's lowering; ONNX's BitShift defines it, and rvmdbg follows that
    assert run("left_shift", A([1, 3], "uint8"), A([8, 200], "uint8")).tolist() == [0, 0]
    assert run("left_shift", A([-8, 4], "int8"), A([-1, 9], "int8")).tolist() == [0, 0]
    got = run("right_shift", A([-8, 4, -1], "int32"), A([32, -1, 100], "int32"))
    assert got.tolist() == [-1, 0, -1]
    assert run("right_shift", A([200], "uint8"), A([9], "uint8")).tolist() == [0]


def test_mismatched_dtypes_are_refused():
    with pytest.raises(OpTypeError):
        rel("bitwise_or", T((2,), "int32"), T((2,), "int64"))


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%a: Tensor[(2, 3), uint8], %b: Tensor[(3), uint8]) {\n"
            "  %0 = bitwise_and(%a, %b);\n  %1 = left_shift(%0, 1u8);\n"
            "  %2 = right_shift(%1, 2u8);\n  %3 = bitwise_xor(%2, %a);\n"
            "  bitwise_not(bitwise_or(%3, %b))\n}\n")
    a = np.arange(6, dtype=np.uint8).reshape(2, 3) * 7
    b = np.array([3, 12, 255], np.uint8)
    want = ~(((((a & b) << 1) >> 2) ^ a) | b)
    results = run_text_everywhere(text, [a, b])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_array_equal(got, want)
