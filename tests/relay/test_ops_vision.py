"""Tests of vision.roi_align: TVM's relation (NCHW and NHWC), TVM's CPU kernel's semantics
(adaptive grid, points outside the image, max mode), ONNX's RoiAlign (output_half_pixel, avg)
as the oracle, and Relay text through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, KernelError, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("vision.roi_align", [T((1, 3, 8, 8)), T((5, 5))], {"pooled_size": [2, 2],
                                                         "spatial_scale": 0.5},
     "Tensor[(5, 3, 2, 2), float32]"),
    ("vision.roi_align", [T((1, 8, 8, 3)), T((None, 5))],
     {"pooled_size": [3, 1], "spatial_scale": 1.0, "layout": "NHWC"},
     "Tensor[(?, 3, 1, 3), float32]"),
]

IMAGE = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
KERNEL_CASES = [
    # one bin over [0, 2] x [0, 2], grid 2 x 2 at 0.5 and 1.5: the mean of the bilinear samples
    ("vision.roi_align", [IMAGE, A([[0, 0, 0, 2, 2]])],
     {"pooled_size": [1, 1], "spatial_scale": 1.0, "sample_ratio": 2},
     A([[[[5.0]]]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_pattern_and_defaults():
    op = OPS["vision.roi_align"]
    assert op.pattern == "out_elemwise_fusable"
    assert {a.name: a.default for a in op.attrs if not a.required} == {
        "sample_ratio": -1, "layout": "NCHW", "mode": "avg"}


@pytest.mark.parametrize("ratio", [0, 1, 2, 3])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_avg_agrees_with_onnx(ratio, scale):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 10, 10)).astype("float32")
    boxes = np.array([[0, 0, 9, 9], [0, 5, 4, 9], [5, 5, 9, 9], [-3, 2, 12, 7.5]], "float32")
    batch = np.array([0, 1, 1, 0], "int64")
    (want,) = onnx_node("RoiAlign", [x, boxes, batch], output_height=3, output_width=4,
                        sampling_ratio=ratio, spatial_scale=scale,
                        coordinate_transformation_mode="output_half_pixel")
    rois = np.concatenate([batch[:, None].astype("float32"), boxes], axis=1)
    got = run("vision.roi_align", x, rois, pooled_size=[3, 4], spatial_scale=scale,
              sample_ratio=ratio)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    nhwc = run("vision.roi_align", x.transpose(0, 2, 3, 1), rois, pooled_size=[3, 4],
               spatial_scale=scale, sample_ratio=ratio, layout="NHWC")
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), got, rtol=1e-6)


def test_max_mode_keeps_the_largest_sample():
    got = run("vision.roi_align", IMAGE, A([[0, 0, 0, 2, 2]]), pooled_size=[1, 1],
              spatial_scale=1.0, sample_ratio=2, mode="max")
    assert got.item() == pytest.approx(7.5)  # the sample at (1.5, 1.5)


def test_errors():
    with pytest.raises(OpTypeError, match="4-d"):
        rel("vision.roi_align", T((3, 8, 8)), T((1, 5)), pooled_size=[1, 1], spatial_scale=1.0)
    with pytest.raises(OpTypeError, match="pooled_size"):
        rel("vision.roi_align", T((1, 3, 8, 8)), T((1, 5)), pooled_size=[0, 1],
            spatial_scale=1.0)
    with pytest.raises(KernelError, match="batch 3"):
        run("vision.roi_align", IMAGE, A([[3, 0, 0, 2, 2]]), pooled_size=[1, 1],
            spatial_scale=1.0)


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 1, 4, 4), float32], %r: Tensor[(2, 5), float32]) {\n"
            "  vision.roi_align(%x, %r, pooled_size=[2, 2], spatial_scale=1f, sample_ratio=2)"
            "\n}\n")
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 2, 2]], np.float32)
    want = run("vision.roi_align", IMAGE, rois, pooled_size=[2, 2], spatial_scale=1.0,
               sample_ratio=2)
    results = run_text_everywhere(text, [IMAGE, rois])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, want)
