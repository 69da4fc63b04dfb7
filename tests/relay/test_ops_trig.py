"""Tests of the hyperbolic and inverse trigonometric functions (sinh, cosh, asin, acos, atan,
asinh, acosh, atanh: TVM's RELAY_REGISTER_UNARY_OP, IdentityRel, float intrinsics) against
ONNX's reference evaluator; integers type-check and stop at run time, as TVM's lowering."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, KernelError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, run

TYPE_CASES = []
KERNEL_CASES = []

TRIG = [("sinh", "Sinh"), ("cosh", "Cosh"), ("asin", "Asin"), ("acos", "Acos"),
        ("atan", "Atan"), ("asinh", "Asinh"), ("acosh", "Acosh"), ("atanh", "Atanh")]
TYPE_CASES += [(name, [T((2, None))], {}, "Tensor[(2, ?), float32]") for name, _ in TRIG]
KERNEL_CASES += [
    (name, [A([0.5, 0.25] if name != "acosh" else [1.5, 2.0])], {},
     getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                  "acosh": "arccosh", "atanh": "arctanh"}.get(name, name))(
         A([0.5, 0.25] if name != "acosh" else [1.5, 2.0])))
    for name, _ in TRIG]


@pytest.mark.parametrize("name, onnx_op", TRIG)
def test_trig_agrees_with_onnx_and_refuses_integers_at_run_time(name, onnx_op):
    x = np.linspace(1.1, 3.0, 7) if name == "acosh" else np.linspace(-0.9, 0.9, 7)
    x = x.astype("float32")
    (want,) = onnx_node(onnx_op, [x])
    np.testing.assert_allclose(run(name, x), want, rtol=1e-6, atol=1e-7)
    assert OPS[name].pattern == "elemwise"
    with pytest.raises(KernelError):
        run(name, A([1, 2], "int32"))


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)
