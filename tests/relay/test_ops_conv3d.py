"""Tests of nn.conv3d, nn.conv3d_transpose and nn.conv1d_transpose: the convolution family's
relation over three spatial axes (and one, transposed), topi's NCDHW kernels (groups, strides, dilation, padding, output_padding, other
layouts), ONNX's Conv and ConvTranspose as the oracle, and Relay text through every
executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("nn.conv3d", [T((1, 4, 5, 6, None)), T((6, 2, 3, 3, 3))], {"groups": 2, "padding": [1]},
     "Tensor[(1, 6, 5, 6, ?), float32]"),
    ("nn.conv3d_transpose", [T((1, 4, 3, 3, 3)), T((4, 2, 2, 2, 2))], {"strides": [2, 2, 2]},
     "Tensor[(1, 2, 6, 6, 6), float32]"),
    ("nn.conv1d_transpose", [T((1, 4, 3)), T((4, 2, 3))], {"strides": [2]},
     "Tensor[(1, 2, 7), float32]"),
]

ONES = np.ones((1, 1, 2, 2, 2), "float32")
KERNEL_CASES = [
    ("nn.conv3d", [ONES, ONES], {}, A([[[[[8.0]]]]])),
    ("nn.conv3d_transpose", [A([[[[[2.0]]]]]), ONES], {}, ONES * 2),
    ("nn.conv1d_transpose", [A([[[1.0, 2.0]]]), A([[[1.0, 1.0]]])], {}, A([[[1.0, 3.0, 2.0]]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_patterns_and_layouts():
    assert OPS["nn.conv3d"].pattern == OPS["nn.conv3d_transpose"].pattern == \
        "out_elemwise_fusable"
    assert OPS["nn.conv3d"].attr_specs["kernel_layout"].default == "OIDHW"
    assert OPS["nn.conv3d_transpose"].attr_specs["kernel_layout"].default == "IODHW"


@pytest.mark.parametrize("groups, strides, pads, dilation", [
    (1, [1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 1, 1]),
    (2, [1, 2, 2], [1, 0, 1, 1, 0, 1], [1, 2, 1]),
    (4, [2, 1, 1], [0, 1, 0, 2, 1, 0], [1, 1, 2])])
def test_conv3d_agrees_with_onnx(groups, strides, pads, dilation):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 4, 5, 6, 7)).astype("float32")
    w = rng.standard_normal((8, 4 // groups, 3, 2, 3)).astype("float32")
    (want,) = onnx_node("Conv", [x, w], group=groups, strides=strides, pads=pads,
                        dilations=dilation)
    got = run("nn.conv3d", x, w, groups=groups, strides=strides, padding=pads,
              dilation=dilation)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ndhwc = run("nn.conv3d", x.transpose(0, 2, 3, 4, 1), w.transpose(2, 3, 4, 1, 0),
                groups=groups, strides=strides, padding=pads, dilation=dilation,
                data_layout="NDHWC", kernel_layout="DHWIO")
    np.testing.assert_allclose(ndhwc.transpose(0, 4, 1, 2, 3), got, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides, pads, opad, dilation", [
    ([1, 1, 1], [0, 0, 0, 0, 0, 0], [0, 0, 0], [1, 1, 1]),
    ([1, 2, 2], [1, 0, 1, 1, 0, 1], [0, 1, 0], [1, 2, 1])])
def test_conv3d_transpose_agrees_with_onnx(strides, pads, opad, dilation):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((1, 3, 3, 4, 2)).astype("float32")
    w = rng.standard_normal((3, 2, 3, 2, 3)).astype("float32")
    (want,) = onnx_node("ConvTranspose", [x, w], strides=strides, pads=pads,
                        output_padding=opad, dilations=dilation)
    got = run("nn.conv3d_transpose", x, w, strides=strides, padding=pads, output_padding=opad,
              dilation=dilation)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("groups", [1, 3])
def test_conv1d_transpose_agrees_with_onnx_and_tvms_default_padding(groups):
    rng = np.random.default_rng(15)
    x = rng.standard_normal((2, 3, 7)).astype("float32")
    w = rng.standard_normal((3, 2, 3)).astype("float32")
    got = run("nn.conv1d_transpose", x, w, strides=[2], padding=[1, 0], dilation=[2],
              output_padding=[1], groups=groups)
    if groups == 1:  # the reference evaluator's grouped ConvTranspose does not run
        (want,) = onnx_node("ConvTranspose", [x, w], strides=[2], pads=[1, 0], dilations=[2],
                            output_padding=[1])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        parts = [run("nn.conv1d_transpose", x[:, i:i + 1], w[i:i + 1], strides=[2],
                     padding=[1, 0], dilation=[2], output_padding=[1]) for i in range(3)]
        np.testing.assert_allclose(got, np.concatenate(parts, axis=1), rtol=1e-5, atol=1e-6)
    assert OPS["nn.conv1d_transpose"].attr_specs["padding"].default == [0]


def test_errors():
    with pytest.raises(OpTypeError, match="5-d"):
        rel("nn.conv3d", T((1, 4, 5, 5)), T((2, 4, 3, 3, 3)))
    with pytest.raises(OpTypeError, match="groups"):
        rel("nn.conv3d", T((1, 4, 5, 5, 5)), T((2, 3, 3, 3, 3)))


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 1, 2, 2, 2), float32], "
            "%w: Tensor[(1, 1, 2, 2, 2), float32]) {\n"
            "  %0 = nn.conv3d(%x, %w, padding=[1, 1, 1]);\n"
            "  nn.conv3d_transpose(%0, %w)\n}\n")
    want = run("nn.conv3d_transpose", run("nn.conv3d", ONES, ONES, padding=[1, 1, 1]), ONES)
    results = run_text_everywhere(text, [ONES, ONES])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, want)
