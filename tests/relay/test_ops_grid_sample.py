"""Tests of image.grid_sample: TVM's relation, topi's bilinear, nearest and bicubic sampling
with zeros, border and reflection padding, ONNX's GridSample as the oracle, and Relay text
through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, KernelError, OpTypeError

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere

TYPE_CASES = [
    ("image.grid_sample", [T((1, 3, 4, 4)), T((1, 2, 5, None))], {},
     "Tensor[(1, 3, 5, ?), float32]"),
    ("image.grid_sample", [T((2, 3, 4, 4, 5)), T((2, 3, 6, 1, 2))], {"layout": "NCDHW"},
     "Tensor[(2, 3, 6, 1, 2), float32]"),
]

KERNEL_CASES = [
    # align_corners: (-1, -1) is pixel (0, 0), (1, 1) pixel (1, 1), (0, 0) the mean
    ("image.grid_sample", [A([[[[1, 2], [3, 4]]]]), A([[[[-1, 1, 0]], [[-1, 1, 0]]]])], {},
     A([[[[1, 4, 2.5]]]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_pattern_and_defaults():
    op = OPS["image.grid_sample"]
    assert op.pattern == "injective"
    assert {a.name: a.default for a in op.attrs} == {
        "method": "bilinear", "layout": "NCHW", "padding_mode": "zeros", "align_corners": True}


@pytest.mark.parametrize("method, onnx_mode", [("bilinear", "linear"), ("nearest", "nearest"),
                                               ("bicubic", "cubic")])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [True, False])
def test_agrees_with_onnx(method, onnx_mode, padding, align):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    # bicubic with border or reflection padding: topi pads each neighbour's index, ONNX the
    # coordinate; they agree while the points stay inside the image
    reach = 1.0 if method == "bicubic" and padding != "zeros" else 1.3
    grid = rng.uniform(-reach, reach, (2, 3, 6, 2)).astype("float32")
    (want,) = onnx_node("GridSample", [x, grid], opset=20, mode=onnx_mode,
                        padding_mode=padding, align_corners=int(align))
    got = run("image.grid_sample", x, np.ascontiguousarray(grid.transpose(0, 3, 1, 2)),
              method=method, padding_mode=padding, align_corners=align)
    if method == "nearest":  # ties round half to even in both; allow a rare float32 tie
        assert np.mean(np.isclose(got, want, atol=1e-5)) > 0.95
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("method, onnx_mode", [("bilinear", "linear"), ("nearest", "nearest")])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [True, False])
def test_volumetric_agrees_with_onnx(method, onnx_mode, padding, align):
    """5-d data (NCDHW) and a grid of (x, y, z): trilinear or nearest, as topi's 3-d form."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 2, 3, 4, 5)).astype("float32")
    grid = rng.uniform(-1.3, 1.3, (2, 2, 3, 4, 3)).astype("float32")
    (want,) = onnx_node("GridSample", [x, grid], opset=20, mode=onnx_mode,
                        padding_mode=padding, align_corners=int(align))
    got = run("image.grid_sample", x, np.ascontiguousarray(grid.transpose(0, 4, 1, 2, 3)),
              method=method, layout="NCDHW", padding_mode=padding, align_corners=align)
    if method == "nearest":
        assert np.mean(np.isclose(got, want, atol=1e-5)) > 0.95
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_errors():
    with pytest.raises(OpTypeError, match="4-d NCHW or 5-d NCDHW"):
        rel("image.grid_sample", T((1, 3, 4, 4, 4)), T((1, 3, 2, 2, 2)))
    with pytest.raises(OpTypeError, match="depth"):
        rel("image.grid_sample", T((1, 3, 4, 4, 4)), T((1, 2, 2, 2, 2)), layout="NCDHW")
    with pytest.raises(OpTypeError, match="2-d only"):
        rel("image.grid_sample", T((1, 3, 4, 4, 4)), T((1, 3, 2, 2, 2)), layout="NCDHW",
            method="bicubic")
    with pytest.raises(OpTypeError, match="grid"):
        rel("image.grid_sample", T((1, 3, 4, 4)), T((1, 3, 2, 2)))
    with pytest.raises(KernelError, match="floats"):
        run("image.grid_sample", A(np.zeros((1, 1, 2, 2)), "int32"), A(np.zeros((1, 2, 1, 1))))


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(1, 1, 2, 2), float32], %g: Tensor[(1, 2, 1, 3), float32]) {\n"
            '  image.grid_sample(%x, %g, padding_mode="border", align_corners=False)\n}\n')
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    g = np.array([[[[-1, 1, 0]], [[-1, 1, 0.5]]]], np.float32)
    want = run("image.grid_sample", x, g, padding_mode="border", align_corners=False)
    results = run_text_everywhere(text, [x, g])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, want)
