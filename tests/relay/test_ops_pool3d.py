"""Tests of nn.max_pool3d and nn.avg_pool3d: the pooling family's relation and kernel over three
spatial axes (NCDHW or NDHWC), ONNX's MaxPool and AveragePool as the oracle, and Relay text
through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, run, run_text_everywhere

TYPE_CASES = [
    ("nn.max_pool3d", [T((1, 2, 4, 4, None))], {"pool_size": [2, 2, 2], "strides": [2, 2, 2]},
     "Tensor[(1, 2, 2, 2, ?), float32]"),
    ("nn.avg_pool3d", [T((1, 4, 4, 4, 3))], {"pool_size": [3, 3, 3], "padding": [1, 1, 1],
                                            "layout": "NDHWC"},
     "Tensor[(1, 4, 4, 4, 3), float32]"),
]

CUBE = np.arange(8, dtype="float32").reshape(1, 1, 2, 2, 2)
KERNEL_CASES = [
    ("nn.max_pool3d", [CUBE], {"pool_size": [2, 2, 2]}, A([[[[[7.0]]]]])),
    ("nn.avg_pool3d", [CUBE], {"pool_size": [2, 2, 2]}, A([[[[[3.5]]]]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns():
    assert OPS["nn.max_pool3d"].pattern == OPS["nn.avg_pool3d"].pattern == "out_elemwise_fusable"


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pads, strides, include", [([0, 0, 0], [1, 1, 1], 0),
                                                    ([1, 0, 1], [2, 1, 2], 0),
                                                    ([1, 1, 1], [2, 2, 2], 1)])
def test_agrees_with_onnx(kind, pads, strides, include):
    x = np.random.default_rng(12).standard_normal((1, 2, 5, 6, 4)).astype("float32")
    attrs = {"kernel_shape": [3, 2, 3], "strides": strides, "pads": pads + pads}
    if kind == "avg":
        attrs["count_include_pad"] = include
    (want,) = onnx_node("MaxPool" if kind == "max" else "AveragePool", [x], **attrs)
    relay_attrs = {"pool_size": [3, 2, 3], "strides": strides, "padding": pads + pads}
    if kind == "avg":
        relay_attrs["count_include_pad"] = bool(include)
    got = run(f"nn.{kind}_pool3d", x, **relay_attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 1, 2, 2, 2), float32]) {\n"
            "  %0 = nn.max_pool3d(%x, pool_size=[1, 2, 2]);\n"
            "  nn.avg_pool3d(%0, pool_size=[2, 1, 1])\n}\n")
    results = run_text_everywhere(text, [CUBE])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        assert got.tolist() == [[[[[5.0]]]]]
