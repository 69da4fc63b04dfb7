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
        "sample_ratio": -1, "layout": "NCHW", "mode": "avg", "aligned": False}


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_onnx_extensions_agree_with_onnx(mode, ratio):
    # rvmdbg's aligned (ONNX's half_pixel) and weighted_max (ONNX's max)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 10, 10)).astype("float32")
    boxes = np.array([[0, 0, 9, 9], [2, 5, 2.4, 5.3], [5, 5, 9, 9], [-3, 2, 12, 7.5]], "float32")
    batch = np.zeros(4, "int64")
    rois = np.concatenate([batch[:, None].astype("float32"), boxes], axis=1)
    for aligned in (True, False):
        (want,) = onnx_node("RoiAlign", [x, boxes, batch], output_height=3, output_width=2,
                            sampling_ratio=ratio, spatial_scale=0.5, mode=mode,
                            coordinate_transformation_mode="half_pixel" if aligned
                            else "output_half_pixel")
        got = run("vision.roi_align", x, rois, pooled_size=[3, 2], spatial_scale=0.5,
                  sample_ratio=ratio, aligned=aligned,
                  mode="weighted_max" if mode == "max" else "avg")
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


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


@pytest.mark.parametrize("text_attrs, attrs", [
    ("", {}),
    # rvmdbg's extensions for ONNX RoiAlign
    (', mode="weighted_max", aligned=True', {"mode": "weighted_max", "aligned": True}),
], ids=["tvm", "onnx-extensions"])
def test_relay_text_runs_everywhere(text_attrs, attrs):
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 1, 4, 4), float32], %r: Tensor[(2, 5), float32]) {\n"
            "  vision.roi_align(%x, %r, pooled_size=[2, 2], spatial_scale=1f, sample_ratio=2"
            f"{text_attrs})\n}}\n")
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 2, 2]], np.float32)
    want = run("vision.roi_align", IMAGE, rois, pooled_size=[2, 2], spatial_scale=1.0,
               sample_ratio=2, **attrs)
    results = run_text_everywhere(text, [IMAGE, rois])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, want)


# ---------------------------------------------------------------------------------------------
# vision.all_class_non_max_suppression

BOXES = A([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
            [0, 10.1, 1, 11.1], [0, 100, 1, 101]]])
SCORES = A([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]])
NMS_ARGS = [BOXES, SCORES, A(3, "int64"), A(0.5), A(0.0)]
TYPE_CASES.append(("vision.all_class_non_max_suppression",
                   [T((2, 6, 4)), T((2, 3, 6)), T((), "int64"), T(()), T(())], {},
                   "(Tensor[(36, 3), int64], Tensor[(1,), int64])"))
KERNEL_CASES.append(("vision.all_class_non_max_suppression", NMS_ARGS, {},
                     (A([[0, 0, 3], [0, 0, 0], [0, 0, 5]] + [[0, 0, 0]] * 3, "int64"),
                      A([3], "int64"))))


@pytest.mark.parametrize("limit, iou, score", [(3, 0.5, 0.0), (2, 0.4, 0.4), (0, 0.5, 0.0),
                                               (10, 0.7, 0.55)])
def test_nms_agrees_with_onnx(limit, iou, score):
    args = [BOXES, SCORES, A([limit], "int64"), A([iou]), A([score])]
    (want,) = onnx_node("NonMaxSuppression", args)
    out, count = run("vision.all_class_non_max_suppression", BOXES, SCORES, A(limit, "int64"),
                     A(iou), A(score))
    if limit == 0:  # TVM's loop reads 0 as no limit; ONNX keeps nothing
        assert len(want) == 0 and count[0] == 3
        return
    np.testing.assert_array_equal(out[:count[0]], want)


def test_nms_tvm_quirks():
    # an IoU equal to the threshold suppresses (TVM's >=), an iou_threshold <= 0 keeps nothing
    boxes = A([[[0, 0, 1, 1], [0, 0, 1, 1]]])
    scores = A([[[0.9, 0.8]]])
    _, count = run("vision.all_class_non_max_suppression", boxes, scores, A(5, "int64"),
                   A(1.0), A(0.0))
    assert count.tolist() == [1]
    _, count = run("vision.all_class_non_max_suppression", boxes, scores, A(5, "int64"),
                   A(0.0), A(0.0))
    assert count.tolist() == [0]
    with pytest.raises(OpTypeError, match="onnx"):
        rel("vision.all_class_non_max_suppression", T((1, 2, 4)), T((1, 1, 2)),
            T((), "int64"), T(()), T(()), output_format="tensorflow")


def test_nms_table_rows():
    check_type_case(*TYPE_CASES[-1])
    check_kernel_case(*KERNEL_CASES[-1])


def test_nms_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%b: Tensor[(1, 6, 4), float32], %s: Tensor[(1, 1, 6), float32],\n"
            "          %begin: Tensor[(1), int64], %step: Tensor[(1), int64]) {\n"
            "  %0 = vision.all_class_non_max_suppression(%b, %s, 3i64, 0.5f, 0f);\n"
            "  dyn.strided_slice(%0.0, %begin, %0.1, %step)\n}\n")
    results = run_text_everywhere(text, [BOXES, SCORES, A([0], "int64"), A([1], "int64")])
    assert {"interp", "vm"} <= set(results)
    for got in results.values():
        assert got.tolist() == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]
