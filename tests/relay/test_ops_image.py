"""Tests of image.resize2d and nn.upsampling against per-pixel definitions written here (each
coordinate_transformation_mode and rounding_method, nearest, linear and cubic), with `?` dims
and errors naming the attribute."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, OpAttrError, OpTypeError
from rvmdbg.relay.types import TensorType

from op_cases import T, rel, run


RNG = np.random.default_rng(9)


def source(o, size, out, mode):
    scale = size / out
    if mode == "half_pixel":
        return (o + 0.5) * scale - 0.5
    if mode == "align_corners":
        return 0.0 if out == 1 else (size - 1) / (out - 1) * o
    if mode == "asymmetric":
        return o * scale
    if mode == "pytorch_half_pixel":
        return (o + 0.5) * scale - 0.5 if out > 1 else 0.0
    return (o + 0.5) * scale  # tf_half_pixel_for_nn


def pick(c, rounding):
    if rounding == "round":  # halves away from zero, as TVM's round on LLVM
        return int(math.copysign(math.floor(abs(c) + 0.5), c))
    if rounding == "round_prefer_floor":
        return math.ceil(c - 0.5)
    if rounding == "round_prefer_ceil":
        return math.floor(c + 0.5)
    if rounding == "floor":
        return math.floor(c + 1e-5)
    return math.ceil(c - 1e-5)


def ref_resize(x, out_hw, method, mode, rounding):
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))
    clamp_h = lambda v: min(max(v, 0), h - 1)  # noqa: E731
    clamp_w = lambda v: min(max(v, 0), w - 1)  # noqa: E731
    for i in range(oh):
        for j in range(ow):
            cy, cx = source(i, h, oh, mode), source(j, w, ow, mode)
            if method == "nearest_neighbor":
                r = rounding or ("round" if mode == "align_corners" else "floor")
                yi, xi = pick(cy, r), pick(cx, r)
                # topi divides integers when an asymmetric resize enlarges by a whole factor;
                # rvmdbg keeps that for TVM's own roundings and honours ONNX's
                # round_prefer_* and ceil (docs/differences.md)
                whole = mode == "asymmetric" and rounding in ("", "floor", "round")
                if whole and oh % h == 0:
                    yi = i // (oh // h)
                if whole and ow % w == 0:
                    xi = j // (ow // w)
                out[:, :, i, j] = x[:, :, clamp_h(yi), clamp_w(xi)]
            else:
                y0, x0 = math.floor(cy), math.floor(cx)
                ty, tx = cy - y0, cx - x0
                p = lambda a, b: x[:, :, clamp_h(a), clamp_w(b)].astype(np.float64)  # noqa
                top = p(y0, x0) * (1 - tx) + p(y0, x0 + 1) * tx
                bottom = p(y0 + 1, x0) * (1 - tx) + p(y0 + 1, x0 + 1) * tx
                out[:, :, i, j] = top * (1 - ty) + bottom * ty
    return out


MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
         "tf_half_pixel_for_nn"]


@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 5), w=st.integers(1, 5), oh=st.integers(1, 7), ow=st.integers(1, 7),
       method=st.sampled_from(["nearest_neighbor", "linear"]), mode=st.sampled_from(MODES),
       rounding=st.sampled_from(["", "round", "round_prefer_floor", "round_prefer_ceil",
                                 "floor", "ceil"]))
def test_resize2d_matches_per_pixel_definition(h, w, oh, ow, method, mode, rounding):
    x = RNG.standard_normal((1, 2, h, w)).astype("float32")
    got = run("image.resize2d", x, size=[oh, ow], method=method,
              coordinate_transformation_mode=mode, rounding_method=rounding)
    want = ref_resize(x, (oh, ow), method, mode, rounding)
    # coordinates are float32 in topi: allow the nearest pick of a tie to differ by rounding
    if method == "linear":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    else:
        assert np.mean(np.isclose(got, want)) > 0.8
    assert got.shape == (1, 2, oh, ow) and got.dtype == np.float32


def test_resize2d_nearest_exact_cases_and_nhwc():
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    half = run("image.resize2d", x, size=[2, 2], method="nearest_neighbor",
               coordinate_transformation_mode="asymmetric", rounding_method="floor")
    np.testing.assert_array_equal(half[0, 0], [[0, 2], [8, 10]])
    double = run("image.resize2d", x, size=[8, 8], method="nearest_neighbor",
                 coordinate_transformation_mode="asymmetric")
    np.testing.assert_array_equal(double[0, 0], np.repeat(np.repeat(x[0, 0], 2, 0), 2, 1))
    lin = run("image.resize2d", x, size=[7, 7], coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(lin[0, 0, 0], np.linspace(0, 3, 7), rtol=1e-6)
    nhwc = run("image.resize2d", x.transpose(0, 2, 3, 1), size=[7, 7], layout="NHWC",
               coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), lin, rtol=1e-6)


def test_resize2d_relation_and_errors():
    assert rel("image.resize2d", T((None, 3, 4, 4)), size=[8, 6]) == T((None, 3, 8, 6))
    assert rel("image.resize2d", T((1, 4, 4, 3)), size=[2, 2], layout="NHWC",
               out_dtype="float64") == T((1, 2, 2, 3), "float64")
    with pytest.raises(OpTypeError, match="'size'"):
        rel("image.resize2d", T((1, 3, 4, 4)), size=[8])
    with pytest.raises(OpAttrError) as e:
        rel("image.resize2d", T((1, 3, 4, 4)), size=[8, 8], coordinate_transformation_mode="x")
    assert e.value.attr_name == "coordinate_transformation_mode"
    assert OPS["image.resize2d"].pattern == "injective"
    defaults = {a.name: a.default for a in OPS["image.resize2d"].attrs}
    assert defaults["method"] == "linear"
    assert defaults["coordinate_transformation_mode"] == "half_pixel"
    assert defaults["rounding_method"] == "round"


def cubic_weights(t, alpha):
    return [alpha * (t ** 3 - 2 * t ** 2 + t), (alpha + 2) * t ** 3 - (3 + alpha) * t ** 2 + 1,
            -(alpha + 2) * t ** 3 + (3 + 2 * alpha) * t ** 2 - alpha * t,
            -alpha * t ** 3 + alpha * t ** 2]


def ref_cubic(x, out_hw, mode, alpha, exclude):
    """Each output pixel: the 4x4 neighbours around its source weighted by the cubic spline;
    with exclude, neighbours outside the image weigh 0 and the rest are renormalised."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            cy, cx = source(i, h, oh, mode), source(j, w, ow, mode)
            y0, x0 = math.floor(cy), math.floor(cx)
            wy, wx = cubic_weights(cy - y0, alpha), cubic_weights(cx - x0, alpha)
            if exclude:
                wy = [0.0 if not 0 <= y0 - 1 + a < h else v for a, v in enumerate(wy)]
                wx = [0.0 if not 0 <= x0 - 1 + b < w else v for b, v in enumerate(wx)]
                wy = [v / sum(wy) for v in wy]
                wx = [v / sum(wx) for v in wx]
            for a in range(4):
                for b in range(4):
                    yy = min(max(y0 - 1 + a, 0), h - 1)
                    xx = min(max(x0 - 1 + b, 0), w - 1)
                    out[:, :, i, j] += x[:, :, yy, xx] * wy[a] * wx[b]
    return out


@pytest.mark.parametrize("mode, alpha, exclude", [
    ("half_pixel", -0.5, 0), ("align_corners", -0.75, 0), ("half_pixel", -0.5, 1),
    ("asymmetric", -0.75, 1)])
def test_resize2d_cubic(mode, alpha, exclude):
    x = RNG.standard_normal((1, 2, 4, 5)).astype("float32")
    got = run("image.resize2d", x, size=[7, 3], method="cubic",
              coordinate_transformation_mode=mode, cubic_alpha=alpha, cubic_exclude=exclude)
    np.testing.assert_allclose(got, ref_cubic(x, (7, 3), mode, alpha, exclude), rtol=1e-4,
                               atol=1e-4)
    up = run("nn.upsampling", x, scale_h=2.0, scale_w=2.0, method="bicubic")
    np.testing.assert_allclose(up, ref_cubic(x, (8, 10), "asymmetric", -0.5, 0), rtol=1e-4,
                               atol=1e-4)


def test_upsampling():
    x = RNG.standard_normal((1, 2, 3, 4)).astype("float32")
    got = run("nn.upsampling", x, scale_h=2.0, scale_w=2.0)
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x, 2, 2), 2, 3))
    bil = run("nn.upsampling", x, scale_h=2.0, scale_w=1.5, method="bilinear",
              align_corners=True)
    np.testing.assert_allclose(bil, ref_resize(x, (6, 6), "linear", "align_corners", ""),
                               rtol=1e-5, atol=1e-5)
    assert rel("nn.upsampling", T((None, 2, 3, 4)), scale_h=2.0, scale_w=1.5) == \
        T((None, 2, 6, 6))
    with pytest.raises(OpTypeError, match="'scale_h'"):
        rel("nn.upsampling", T((1, 2, 3, 4)), scale_h=0.0, scale_w=1.0)
    assert OPS["nn.upsampling"].pattern == "injective"


# ---------------------------------------------------------------------------- ONNX's extensions
# (scales, antialias, half_pixel_symmetric: rvmdbg's, for ONNX Resize; TVM had none of them)

def _taps_reference(row, coords, scale, kernel):
    """One axis by the definition: out[i] = sum_j k((j - c_i) * s) * row[clamp(j)] / sum_j k,
    over every j within the kernel's reach."""
    out = []
    for c in coords:
        reach = 1 if kernel == "linear" else 2
        js = range(math.floor(c) - math.ceil(reach / scale) - 1,
                   math.floor(c) + math.ceil(reach / scale) + 2)
        def k(d):
            d = abs(d)
            if kernel == "linear":
                return max(0.0, 1 - d)
            a = -0.75
            if d <= 1:
                return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
            return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0
        ws = [k((j - c) * scale) for j in js]
        vals = [row[min(max(j, 0), len(row) - 1)] for j in js]
        out.append(sum(w * v for w, v in zip(ws, vals)) / sum(ws))
    return out


@pytest.mark.parametrize("kernel", ["linear", "cubic"])
def test_resize2d_antialias_widens_the_filter_when_downsampling(kernel):
    x = RNG.standard_normal((1, 1, 1, 9)).astype("float32")
    method = "linear" if kernel == "linear" else "cubic"
    got = run("image.resize2d", x, size=[1, 4], method=method, antialias=1, cubic_alpha=-0.75)
    coords = [(o + 0.5) * 9 / 4 - 0.5 for o in range(4)]
    want = _taps_reference(list(x[0, 0, 0].astype(float)), coords, 4 / 9, kernel)
    np.testing.assert_allclose(got[0, 0, 0], want, rtol=1e-5, atol=1e-5)
    # upsampling: antialias changes nothing
    up = run("image.resize2d", x, size=[1, 13], method=method, antialias=1, cubic_alpha=-0.75)
    np.testing.assert_allclose(up, run("image.resize2d", x, size=[1, 13], method=method,
                                       cubic_alpha=-0.75), rtol=1e-6)


def test_resize2d_scales_map_coordinates_by_the_scale():
    x = np.arange(8, dtype="float32").reshape(1, 1, 2, 4)
    # ONNX's test_resize_downsample_scales_linear: scale 0.6 (out 1 x 2, unrounded 1.2 x 2.4)
    got = run("image.resize2d", x, size=[1, 2], scales=[0.6, 0.6])
    cy, cx = 0.5 / 0.6 - 0.5, [(o + 0.5) / 0.6 - 0.5 for o in range(2)]
    want = [(1 - cy) * (c) + cy * (c + 4) for c in cx]  # row 0 holds x, row 1 holds x + 4
    np.testing.assert_allclose(got[0, 0, 0], want, rtol=1e-6)
    corners = run("image.resize2d", x, size=[1, 2], scales=[0.6, 0.6],
                  coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(corners[0, 0, 0], [0, 3 / 1.4], rtol=1e-6)
    # half_pixel_symmetric keeps the unrounded output's centre on the input's centre
    sym = run("image.resize2d", x, size=[1, 2], scales=[0.6, 0.6],
              coordinate_transformation_mode="half_pixel_symmetric")
    off = [d / 2 * (1 - o / (d * 0.6)) for d, o in ((2, 1), (4, 2))]
    cy, cx = off[0] + 0.5 / 0.6 - 0.5, [off[1] + (o + 0.5) / 0.6 - 0.5 for o in range(2)]
    np.testing.assert_allclose(sym[0, 0, 0], [c + 4 * cy for c in cx], rtol=1e-5)
    # without scales it is half_pixel
    np.testing.assert_array_equal(
        run("image.resize2d", x, size=[3, 5], coordinate_transformation_mode="half_pixel_symmetric"),
        run("image.resize2d", x, size=[3, 5]))
    with pytest.raises(OpTypeError, match="'scales' must be 2 positive numbers"):
        rel("image.resize2d", T((1, 1, 2, 4)), size=[1, 2], scales=[0.6])


def test_resize2d_nearest_asymmetric_doubling_honours_round_prefer_ceil():
    x = np.arange(4, dtype="float32").reshape(1, 1, 1, 4)
    got = run("image.resize2d", x, size=[1, 8], method="nearest_neighbor",
              coordinate_transformation_mode="asymmetric", rounding_method="round_prefer_ceil")
    # source x / 2: the halves go up (topi's integer division gave x // 2)
    np.testing.assert_array_equal(got[0, 0, 0], [0, 1, 1, 2, 2, 3, 3, 3])


def test_resize2d_extension_attributes_in_relay_text():
    from rvmdbg.relay.loader import load_module
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 1, 4, 4), float32]) {
  image.resize2d(%x, size=[2, 2], coordinate_transformation_mode="half_pixel_symmetric", method="cubic", cubic_alpha=-0.75f, scales=[0.6f, 0.6f], antialias=1)
}
"""
    mod = load_module(text, "<resize>")
    x = RNG.standard_normal((1, 1, 4, 4)).astype("float32")
    got = VirtualMachine(compile_module(mod)).invoke("main", [x])
    want = run("image.resize2d", x, size=[2, 2], method="cubic", cubic_alpha=-0.75,
               coordinate_transformation_mode="half_pixel_symmetric", scales=[0.6, 0.6],
               antialias=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
