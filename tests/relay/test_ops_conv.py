"""Tests of the convolutions (nn.conv1d, nn.conv2d, nn.conv2d_transpose): kernels against a
direct-loop definition written here, over layouts, padding forms, strides, dilation and groups;
type relations on static and `?` shapes; attribute errors that name the attribute."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, KernelError, OpAttrError, OpTypeError, infer_shape
from rvmdbg.relay.ops.conv import conv2d_nchw
from rvmdbg.relay.types import TensorType

from op_cases import T, rel, run


def pads4(padding):
    """TVM's expansion of a conv2d padding attribute to (top, left, bottom, right)."""
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return padding * 2
    return list(padding)


def ref_conv2d(x, w, strides, padding, dilation, groups):
    """out[n, o, y, x] = sum over the group's channels and the kernel window, padded by zeros."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    dh, dw = dilation
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    for b, f, y, xx in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = f // og
        acc = 0.0
        for ci, i, j in itertools.product(range(cg), range(kh), range(kw)):
            yy = y * sh + i * dh - pt
            xi = xx * sw + j * dw - pl
            if 0 <= yy < h and 0 <= xi < wd:
                acc += float(x[b, g * cg + ci, yy, xi]) * float(w[f, ci, i, j])
        out[b, f, y, xx] = acc
    return out


def ref_conv2d_transpose(x, w, strides, padding, output_padding, groups):
    """Each input pixel adds its value times the kernel into the output at stride steps."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    oh = sh * (h - 1) + kh - pt - pb + output_padding[0]
    ow = sw * (wd - 1) + kw - pl - pr + output_padding[1]
    out = np.zeros((n, og * groups, oh, ow))
    cg = c // groups
    for b, ci, y, xx, i, j in itertools.product(range(n), range(c), range(h), range(wd),
                                                range(kh), range(kw)):
        g = ci // cg
        oy, ox = y * sh + i - pt, xx * sw + j - pl
        if 0 <= oy < oh and 0 <= ox < ow:
            for f in range(og):
                out[b, g * og + f, oy, ox] += x[b, ci, y, xx] * w[ci, f, i, j]
    return out


RNG = np.random.default_rng(7)


def rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# conv2d kernel


@pytest.mark.parametrize("c, o, groups, k, strides, padding, dilation", [
    (3, 4, 1, 3, [1, 1], [1], [1, 1]),
    (3, 4, 1, 3, [2, 2], [1, 2], [1, 1]),
    (4, 6, 2, 3, [1, 2], [0, 1, 2, 1], [1, 1]),
    (4, 4, 4, 3, [2, 2], [1, 1, 1, 1], [1, 1]),       # depthwise
    (4, 8, 4, 3, [1, 1], [1], [1, 1]),                # depthwise, multiplier 2
    (2, 3, 1, 1, [2, 1], [0, 0, 0, 0], [1, 1]),       # pointwise, strided
    (2, 2, 1, 2, [1, 1], [1, 1, 1, 1], [2, 3]),       # dilated
])
def test_conv2d_matches_direct_loops(c, o, groups, k, strides, padding, dilation):
    x, w = rand(2, c, 7, 6), rand(o, c // groups, k, k)
    got = run("nn.conv2d", x, w, strides=strides, padding=padding, dilation=dilation,
              groups=groups)
    want = ref_conv2d(x, w, strides, pads4(padding), dilation, groups)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    t = rel("nn.conv2d", T(x.shape), T(w.shape), strides=strides, padding=padding,
            dilation=dilation, groups=groups)
    assert t == T(want.shape)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), cg=st.integers(1, 3), og=st.integers(1, 3), groups=st.integers(1, 3),
       h=st.integers(3, 7), w=st.integers(3, 7), kh=st.integers(1, 3), kw=st.integers(1, 3),
       sh=st.integers(1, 3), sw=st.integers(1, 3), dh=st.integers(1, 2), dw=st.integers(1, 2),
       padding=st.lists(st.integers(0, 2), min_size=1, max_size=4).filter(lambda p: len(p) != 3),
       nhwc=st.booleans())
def test_conv2d_property(n, cg, og, groups, h, w, kh, kw, sh, sw, dh, dw, padding, nhwc):
    pt, pl, pb, pr = pads4(padding)
    if h + pt + pb < (kh - 1) * dh + 1 or w + pl + pr < (kw - 1) * dw + 1:
        return
    x, wt = rand(n, cg * groups, h, w), rand(og * groups, cg, kh, kw)
    want = ref_conv2d(x, wt, (sh, sw), (pt, pl, pb, pr), (dh, dw), groups)
    attrs = dict(strides=[sh, sw], padding=padding, dilation=[dh, dw], groups=groups)
    if nhwc:  # the same convolution written in NHWC / HWIO
        got = run("nn.conv2d", x.transpose(0, 2, 3, 1), wt.transpose(2, 3, 1, 0),
                  data_layout="NHWC", kernel_layout="HWIO", **attrs).transpose(0, 3, 1, 2)
    else:
        got = run("nn.conv2d", x, wt, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 2), o=st.integers(1, 3), extra=st.integers(0, 4),
       h=st.integers(1, 9), w=st.integers(1, 9), kh=st.integers(1, 4), kw=st.integers(1, 4),
       dh=st.integers(1, 3), dw=st.integers(1, 3), padding=st.tuples(*[st.integers(0, 3)] * 4))
def test_stride_1_with_more_channels_in_than_out_sums_shifted_products(n, o, extra, h, w, kh, kw,
                                                                      dh, dw, padding):
    # the shape conv2d_nchw computes without im2col: one product per kernel position over a
    # shifted slice of the flattened image
    pt, pl, pb, pr = padding
    if h + pt + pb < (kh - 1) * dh + 1 or w + pl + pr < (kw - 1) * dw + 1 or kh * kw == 1:
        return
    c = 2 * o + extra
    x, wt = rand(n, c, h, w), rand(o, c, kh, kw)
    got = conv2d_nchw(x, wt, (1, 1), padding, (dh, dw))
    want = ref_conv2d(x, wt, (1, 1), padding, (dh, dw), 1)
    assert got.shape == want.shape and got.dtype == x.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def shifted_sum_depthwise(x, w, strides, padding, dilation):
    """Depthwise convolution as the plain sum over kernel positions of the padded input's
    strided window times that position's weight, in position order (kh-major)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    dh, dw = dilation
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    wm = w.reshape(c, o // c, kh, kw)
    out = np.zeros((n, c, o // c, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            win = xp[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                     j * dw:j * dw + (ow - 1) * sw + 1:sw]
            out += win[:, :, None] * wm[None, :, :, i, j, None, None]
    return out.reshape(n, o, oh, ow)


DEPTHWISE_CASES = dict(
    n=st.integers(1, 2), c=st.integers(2, 6), mult=st.integers(1, 3), h=st.integers(1, 12),
    w=st.integers(1, 12), kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 4),
    sw=st.integers(1, 4), dh=st.integers(1, 3), dw=st.integers(1, 3),
    padding=st.tuples(*[st.integers(0, 3)] * 4))


def _depthwise_case(n, c, mult, h, w, kh, kw, sh, sw, dh, dw, padding):
    """(data, weight, the shifted sum) of a drawn case whose window fits."""
    pt, pl, pb, pr = padding
    assume(h + pt + pb >= (kh - 1) * dh + 1 and w + pl + pr >= (kw - 1) * dw + 1)
    x, wt = rand(n, c, h, w), rand(c * mult, 1, kh, kw)
    return x, wt, shifted_sum_depthwise(x, wt, (sh, sw), padding, (dh, dw))


@settings(max_examples=60, deadline=None)
@given(**DEPTHWISE_CASES)
def test_depthwise_passes_equal_the_shifted_sum_bit_for_bit(n, c, mult, h, w, kh, kw, sh, sw,
                                                            dh, dw, padding):
    # the flattened-phase depthwise kernel adds the same products in the same order as a loop
    # over kernel positions
    from rvmdbg.relay.ops.conv import _conv_depthwise
    x, wt, want = _depthwise_case(n, c, mult, h, w, kh, kw, sh, sw, dh, dw, padding)
    with np.errstate(all="ignore"):
        got = _conv_depthwise(x, wt, *want.shape[2:], (sh, sw), padding, (dh, dw))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(**DEPTHWISE_CASES)
def test_depthwise_as_banded_products_equals_the_shifted_sum(n, c, mult, h, w, kh, kw, sh, sw,
                                                             dh, dw, padding):
    # narrow outputs go through BLAS products with banded weight matrices: the same values
    # up to the order of the sums
    x, wt, want = _depthwise_case(n, c, mult, h, w, kh, kw, sh, sw, dh, dw, padding)
    got = conv2d_nchw(x, wt, (sh, sw), padding, (dh, dw), groups=c)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, ref_conv2d(x, wt, (sh, sw), padding, (dh, dw), c),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("where", ["data", "weight"])
def test_depthwise_with_an_infinity_or_nan_takes_the_passes(bad, where):
    # a zero of a band times an infinity would be NaN where the passes give inf (or a NaN
    # where none belongs): such inputs run the passes, bit for bit
    x, wt = rand(1, 4, 6, 6), rand(4, 1, 3, 3)
    (x if where == "data" else wt)[0, 0, 1, 1] = bad
    with np.errstate(all="ignore"):
        got = conv2d_nchw(x, wt, (1, 1), (1, 1, 1, 1), (1, 1), groups=4)
        want = shifted_sum_depthwise(x, wt, (1, 1), (1, 1, 1, 1), (1, 1))
    assert np.array_equal(got, want, equal_nan=True)


def test_the_banded_matrices_follow_the_weights_values():
    # built once per weight's values: the same array written over gives the new result
    x, wt = rand(1, 3, 5, 5), rand(3, 1, 3, 3)
    first = conv2d_nchw(x, wt, (1, 1), (1, 1, 1, 1), (1, 1), groups=3)
    wt *= 2
    again = conv2d_nchw(x, wt, (1, 1), (1, 1, 1, 1), (1, 1), groups=3)
    np.testing.assert_allclose(again, 2 * first, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(groups=st.integers(2, 5), cg=st.integers(2, 4), og=st.integers(1, 3),
       h=st.integers(1, 9), w=st.integers(1, 9), k=st.integers(1, 3), s=st.integers(1, 3),
       d=st.integers(1, 2), pad=st.integers(0, 2))
def test_grouped_conv_is_each_group_convolved_alone(groups, cg, og, h, w, k, s, d, pad):
    # one batched product over the groups gives each group's own im2col product, bit for bit
    # (conv2d_nchw may take another path for a group alone: the shifted products at stride
    # 1 when the channels in are twice those out, whose sums run in another order)
    from rvmdbg.relay.ops.conv import _conv_dense
    if h + 2 * pad < (k - 1) * d + 1 or w + 2 * pad < (k - 1) * d + 1:
        return
    x, wt = rand(2, groups * cg, h, w), rand(groups * og, cg, k, k)
    got = conv2d_nchw(x, wt, (s, s), (pad,) * 4, (d, d), groups)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = got.shape[2:]
    parts = [_conv_dense(xp[:, g * cg:(g + 1) * cg], wt[g * og:(g + 1) * og], oh, ow, (s, s),
                         (d, d)) for g in range(groups)]
    np.testing.assert_allclose(got, np.concatenate(parts, axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, ref_conv2d(x, wt, (s, s), (pad,) * 4, (d, d), groups),
                               rtol=1e-4, atol=1e-4)


def test_conv2d_layouts_and_out_layout():
    x, w = rand(1, 3, 5, 5), rand(4, 3, 3, 3)
    want = run("nn.conv2d", x, w, padding=[1, 1])
    hwoi = w.transpose(2, 3, 0, 1)
    got = run("nn.conv2d", x, hwoi, padding=[1, 1], kernel_layout="HWOI", out_layout="NHWC")
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    assert rel("nn.conv2d", T((1, 5, 5, 3)), T((3, 3, 3, 4)), data_layout="NHWC",
               kernel_layout="HWIO", padding=[1, 1]) == T((1, 5, 5, 4))


def test_conv2d_out_dtype_widens_int8():
    x = RNG.integers(-128, 128, (1, 2, 4, 4)).astype("int8")
    w = RNG.integers(-128, 128, (3, 2, 3, 3)).astype("int8")
    got = run("nn.conv2d", x, w, out_dtype="int32")
    assert got.dtype == np.int32
    want = ref_conv2d(x.astype(np.int64), w.astype(np.int64), (1, 1), (0, 0, 0, 0), (1, 1), 1)
    np.testing.assert_array_equal(got, want.astype(np.int64))
    assert rel("nn.conv2d", T((1, 2, 4, 4), "int8"), T((3, 2, 3, 3), "int8"),
               out_dtype="int32") == T((1, 3, 2, 2), "int32")


def test_conv2d_nchw_is_the_reusable_entry():
    x, w = rand(1, 4, 6, 6), rand(4, 2, 3, 3)
    got = conv2d_nchw(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 2)
    np.testing.assert_allclose(got, ref_conv2d(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 2),
                               rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# conv1d and conv2d_transpose


@pytest.mark.parametrize("padding, strides, dilation, groups", [
    ([0], [1], [1], 1), ([1], [2], [1], 1), ([2, 0], [1], [2], 2), ([1, 1], [1], [1], 4)])
def test_conv1d_is_conv2d_of_height_one(padding, strides, dilation, groups):
    x, w = rand(2, 4, 9), rand(4, 4 // groups, 3)
    got = run("nn.conv1d", x, w, padding=padding, strides=strides, dilation=dilation,
              groups=groups)
    left, right = (padding * 2) if len(padding) == 1 else padding
    want = ref_conv2d(x[:, :, None], w[:, :, None], (1, strides[0]), (0, left, 0, right),
                      (1, dilation[0]), groups)[:, :, 0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert rel("nn.conv1d", T(x.shape), T(w.shape), padding=padding, strides=strides,
               dilation=dilation, groups=groups) == T(want.shape)
    nwc = run("nn.conv1d", x.transpose(0, 2, 1), w.transpose(2, 1, 0), padding=padding,
              strides=strides, dilation=dilation, groups=groups, data_layout="NWC",
              kernel_layout="WIO")
    np.testing.assert_allclose(nwc.transpose(0, 2, 1), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("strides, padding, output_padding, groups", [
    ([1, 1], [0, 0], [0, 0], 1), ([2, 2], [1, 1], [1, 1], 1), ([2, 3], [0, 1, 1, 0], [1, 2], 1),
    ([2, 2], [1, 1], [0, 0], 2)])
def test_conv2d_transpose_matches_scatter_loops(strides, padding, output_padding, groups):
    x, w = rand(1, 4, 3, 4), rand(4, 3, 3, 3)
    got = run("nn.conv2d_transpose", x, w, strides=strides, padding=padding,
              output_padding=output_padding, groups=groups)
    want = ref_conv2d_transpose(x, w, strides, pads4(padding), output_padding, groups)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert rel("nn.conv2d_transpose", T(x.shape), T(w.shape), strides=strides, padding=padding,
               output_padding=output_padding, groups=groups) == T(want.shape)


@settings(max_examples=15, deadline=None)
@given(cg=st.integers(1, 2), og=st.integers(1, 2), groups=st.integers(1, 2),
       h=st.integers(1, 4), w=st.integers(1, 4), k=st.integers(1, 3), sh=st.integers(1, 3),
       sw=st.integers(1, 3), pad=st.lists(st.integers(0, 1), min_size=4, max_size=4),
       op=st.lists(st.integers(0, 1), min_size=2, max_size=2))
def test_conv2d_transpose_property(cg, og, groups, h, w, k, sh, sw, pad, op):
    oh = sh * (h - 1) + k - pad[0] - pad[2] + op[0]
    ow = sw * (w - 1) + k - pad[1] - pad[3] + op[1]
    if oh < 1 or ow < 1:
        return
    x, wt = rand(1, cg * groups, h, w), rand(cg * groups, og, k, k)
    attrs = dict(strides=[sh, sw], padding=pad, output_padding=op, groups=groups)
    got = run("nn.conv2d_transpose", x, wt, **attrs)
    want = ref_conv2d_transpose(x, wt, (sh, sw), pad, op, groups)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert rel("nn.conv2d_transpose", T(x.shape), T(wt.shape), **attrs) == T(want.shape)


# ---------------------------------------------------------------------------------------------
# Type relations: `?` dims, the shape function, errors naming the attribute


def test_unknown_dims_stay_unknown_and_the_shape_function_fills_them():
    assert rel("nn.conv2d", T((None, 3, 224, 224)), T((32, 3, 3, 3)), strides=[2, 2],
               padding=[1, 1, 1, 1]) == T((None, 32, 112, 112))
    assert rel("nn.conv2d", T((1, 3, None, 10)), T((8, 3, 3, 3))) == T((1, 8, None, 8))
    assert infer_shape("nn.conv2d", [(4, 3, 224, 224), (32, 3, 3, 3)], ["float32"] * 2,
                       {"strides": [2, 2], "padding": [1, 1, 1, 1]}) == [(4, 32, 112, 112)]


@pytest.mark.parametrize("types, attrs, words", [
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"padding": [1, 2, 3]}, ["'padding'", "1, 2 or 4"]),
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"strides": [1, 1, 1]}, ["'strides'", "2 values"]),
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"strides": [0, 1]}, ["'strides'", ">= 1"]),
    (((1, 4, 8, 8), (4, 3, 3, 3)), {}, ["'groups'", "4 channels"]),
    (((1, 4, 8, 8), (4, 1, 3, 3)), {"groups": 2}, ["'groups'"]),
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"channels": 5}, ["'channels'"]),
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"kernel_size": [5, 5]}, ["'kernel_size'"]),
    (((1, 3, 8, 8), (4, 3, 3, 3)), {"data_layout": "NCHWc"}, ["'data_layout'"]),
    (((1, 3, 2, 2), (4, 3, 3, 3)), {}, ["does not fit"]),
    (((1, 3, 8), (4, 3, 3, 3)), {}, ["data must be 4-d"]),
])
def test_conv2d_type_errors_name_the_attribute(types, attrs, words):
    with pytest.raises(OpTypeError) as e:
        rel("nn.conv2d", *(T(s) for s in types), **attrs)
    assert e.value.message.startswith("nn.conv2d")
    for w in words:
        assert w in e.value.message


def test_attribute_kinds_are_checked():
    with pytest.raises(OpAttrError) as e:
        rel("nn.conv2d", T((1, 3, 8, 8)), T((4, 3, 3, 3)), strides="2")
    assert e.value.attr_name == "strides"
    with pytest.raises(OpAttrError) as e:
        rel("nn.conv2d", T((1, 3, 8, 8)), T((4, 3, 3, 3)), stride=[1, 1])
    assert "did you mean 'strides'" in e.value.message


def test_run_time_channel_mismatch_is_a_kernel_error():
    with pytest.raises(KernelError):
        run("nn.conv2d", rand(1, 4, 5, 5), rand(2, 3, 3, 3))


def test_defaults_are_tvms():
    op = OPS["nn.conv2d"]
    defaults = {a.name: a.default for a in op.attrs}
    assert defaults["strides"] == [1, 1] and defaults["padding"] == [0, 0]
    assert defaults["data_layout"] == "NCHW" and defaults["kernel_layout"] == "OIHW"
    assert defaults["groups"] == 1 and defaults["out_dtype"] is None
    assert OPS["nn.conv2d_transpose"].attr_specs["kernel_layout"].default == "IOHW"
    assert OPS["nn.conv1d"].attr_specs["data_layout"].default == "NCW"
    for name in ("nn.conv1d", "nn.conv2d", "nn.conv2d_transpose"):
        assert OPS[name].pattern == "out_elemwise_fusable"


def test_the_banded_cache_stays_bounded(monkeypatch):
    # no weight's matrices above the per-weight bound (the passes run), and never more than
    # the entries and bytes allowed in all, the oldest dropped first
    from rvmdbg.relay.ops import conv
    monkeypatch.setattr(conv, "_BANDED", {})
    monkeypatch.setattr(conv, "_BANDED_ENTRIES", 3)
    x = rand(1, 4, 6, 6)
    for k in range(5):
        conv2d_nchw(x, rand(4, 1, 3, 3) + k, (1, 1), (1, 1, 1, 1), (1, 1), groups=4)
    assert len(conv._BANDED) == 3
    monkeypatch.setattr(conv, "_BANDED_BYTES", 64)
    wt = rand(4, 1, 3, 3)
    got = conv2d_nchw(x, wt, (1, 1), (1, 1, 1, 1), (1, 1), groups=4)
    assert np.array_equal(got, shifted_sum_depthwise(x, wt, (1, 1), (1, 1, 1, 1), (1, 1)))


@pytest.mark.parametrize("name, shapes, attrs", [
    ("nn.conv2d", ((1, 3, 6, 5), (4, 3, 3, 3)), {"padding": [1, 2], "strides": [2, 1]}),
    ("nn.conv2d", ((1, 4, 5, 5), (4, 1, 3, 3)), {"groups": 4, "padding": [1, 1, 1, 1]}),
    ("nn.conv2d", ((2, 5, 6, 4), (3, 3, 2, 4)),
     {"data_layout": "NHWC", "kernel_layout": "HWIO", "out_layout": "NCHW", "groups": 2,
      "dilation": [2, 1]}),
    ("nn.conv2d", ((1, 3, 4, 4), (2, 3, 1, 1)), {"out_dtype": "float64"}),
    ("nn.conv1d", ((1, 3, 9), (2, 3, 3)), {"strides": [2], "padding": [1]}),
])
def test_the_bound_kernel_computes_what_the_kernel_does(name, shapes, attrs):
    # a fused kernel's step binds the attributes once (OpDef.bind): the same values, bit for
    # bit, as the kernel given them at every call
    from rvmdbg.relay.ops import normalize_attrs
    op = OPS[name]
    norm = normalize_attrs(op, attrs)
    args = [rand(*s) for s in shapes]
    bound = op.bind(norm)
    want = op.kernel(args, norm)
    got = bound(args, norm)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    bools = [a > 0.5 for a in args]   # a 1-bit sum of ands, in either form
    assert np.array_equal(bound(bools, norm), op.kernel(bools, norm))


def test_a_binder_that_refuses_the_attributes_leaves_the_kernel_to_report_it():
    from rvmdbg.relay.ops import normalize_attrs
    from rvmdbg.vm.kernels import _bound
    op = OPS["nn.conv2d"]
    good = normalize_attrs(op, {})
    assert _bound(op, good) is not op.kernel
    bad = normalize_attrs(op, {"data_layout": "NCXY"})
    assert _bound(op, bad) is op.kernel
    with pytest.raises(OpTypeError, match="data_layout"):
        op.kernel([rand(1, 1, 3, 3), rand(1, 1, 1, 1)], bad)
