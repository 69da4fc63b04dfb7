"""Tests of nn.depth_to_space and nn.space_to_depth: TVM's relation (the channel count divided
down, `?` kept), DCR and CRD modes and NHWC, ONNX's DepthToSpace and SpaceToDepth as the oracle,
the two as inverses, and Relay text through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpAttrError, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("nn.depth_to_space", [T((1, 8, 2, None))], {"block_size": 2},
     "Tensor[(1, 2, 4, ?), float32]"),
    ("nn.space_to_depth", [T((1, 4, 6, 3))], {"block_size": 2, "layout": "NHWC"},
     "Tensor[(1, 2, 3, 12), float32]"),
]

KERNEL_CASES = [
    ("nn.depth_to_space", [A(np.arange(4).reshape(1, 4, 1, 1), "int32")], {"block_size": 2},
     A([[[[0, 1], [2, 3]]]], "int32")),
    ("nn.space_to_depth", [A([[[[0, 1], [2, 3]]]], "int32")], {"block_size": 2},
     A(np.arange(4).reshape(1, 4, 1, 1), "int32")),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns_and_defaults():
    for name in ("nn.depth_to_space", "nn.space_to_depth"):
        assert OPS[name].pattern == "injective"
        assert {a.name: a.default for a in OPS[name].attrs if not a.required} == {
            "layout": "NCHW", "mode": "DCR"}


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("block", [2, 3])
def test_agree_with_onnx(mode, block):
    x = np.random.default_rng(7).standard_normal((2, 2 * block * block, 3, 4)).astype("float32")
    (want,) = onnx_node("DepthToSpace", [x], blocksize=block, mode=mode)
    got = run("nn.depth_to_space", x, block_size=block, mode=mode)
    np.testing.assert_array_equal(got, want)
    nhwc = run("nn.depth_to_space", x.transpose(0, 2, 3, 1), block_size=block, mode=mode,
               layout="NHWC")
    np.testing.assert_array_equal(nhwc.transpose(0, 3, 1, 2), want)
    (back,) = onnx_node("SpaceToDepth", [want], blocksize=block)
    np.testing.assert_array_equal(run("nn.space_to_depth", want, block_size=block), back)
    if mode == "DCR":
        np.testing.assert_array_equal(back, x)


def test_errors():
    with pytest.raises(OpTypeError, match="4-d"):
        rel("nn.depth_to_space", T((4, 2, 2)), block_size=2)
    with pytest.raises(OpTypeError, match="block_size"):
        rel("nn.space_to_depth", T((1, 4, 2, 2)), block_size=0)
    with pytest.raises(OpAttrError):
        rel("nn.depth_to_space", T((1, 4, 2, 2)), block_size=2, mode="RDC")


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 8, 2, 3), float32]) {\n"
            '  %0 = nn.depth_to_space(%x, block_size=2, mode="CRD");\n'
            "  nn.space_to_depth(%0, block_size=2)\n}\n")
    x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
    want = run("nn.space_to_depth", run("nn.depth_to_space", x, block_size=2, mode="CRD"),
               block_size=2)
    results = run_text_everywhere(text, [x])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_array_equal(got, want)
