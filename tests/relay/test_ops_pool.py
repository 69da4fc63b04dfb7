"""Tests of the pooling operators against direct-loop definitions written here: max and average
pooling (1-d and 2-d, ceil_mode, count_include_pad, dilation, NHWC), global and adaptive
pooling; type relations with `?` dims and errors naming the attribute."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, KernelError, OpTypeError
from rvmdbg.relay.types import TensorType

from op_cases import T, rel, run, topi_padded_count


RNG = np.random.default_rng(3)


def ref_pool2d(x, kind, pool, strides, dilation, padding, ceil_mode, count_include_pad):
    """Each output cell looks at the window's in-image cells; the average divides by the cells
    inside the image (at least 1) or, with count_include_pad, by the product of each axis's
    topi count (`topi_padded_count`: 0 or less for a window in ceil_mode's extra cells)."""
    n, c, h, w = x.shape
    pt, pl, pb, pr = padding
    outs = []
    for size, b, a, k, s, d in ((h, pt, pb, pool[0], strides[0], dilation[0]),
                                (w, pl, pr, pool[1], strides[1], dilation[1])):
        span = size + b + a - (k - 1) * d - 1
        outs.append((math.ceil(span / s) if ceil_mode else span // s) + 1)
    out = np.zeros((n, c, *outs))
    for b_, ch, y, xx in itertools.product(range(n), range(c), range(outs[0]), range(outs[1])):
        vals = []
        for i, j in itertools.product(range(pool[0]), range(pool[1])):
            r = y * strides[0] + i * dilation[0] - pt
            q = xx * strides[1] + j * dilation[1] - pl
            if 0 <= r < h and 0 <= q < w:
                vals.append(float(x[b_, ch, r, q]))
        if kind == "max":
            out[b_, ch, y, xx] = max(vals) if vals else np.finfo(np.float32).min
            continue
        if count_include_pad:
            counted = (topi_padded_count(y * strides[0] - pt, pool[0], dilation[0], h, pb)
                       * topi_padded_count(xx * strides[1] - pl, pool[1], dilation[1], w, pr))
        else:
            counted = max(len(vals), 1)
        with np.errstate(all="ignore"):   # 0 / 0 is NaN, 0 / -1 is -0.0, as in topi
            out[b_, ch, y, xx] = np.float64(sum(vals)) / np.float64(counted)
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pool, strides, dilation, padding, ceil_mode, cip", [
    ([2, 2], [2, 2], [1, 1], [0, 0, 0, 0], False, False),
    ([3, 3], [2, 2], [1, 1], [1, 1, 1, 1], False, False),
    ([3, 3], [2, 2], [1, 1], [1, 1, 1, 1], False, True),
    ([3, 2], [2, 3], [1, 1], [0, 1, 1, 0], True, False),
    ([3, 3], [2, 2], [1, 1], [1, 1, 1, 1], True, True),
    ([2, 2], [1, 1], [2, 2], [1, 0, 1, 0], False, False),
])
def test_pool2d_matches_direct_loops(kind, pool, strides, dilation, padding, ceil_mode, cip):
    x = RNG.standard_normal((2, 3, 7, 8)).astype("float32")
    attrs = dict(pool_size=pool, strides=strides, dilation=dilation, padding=padding,
                 ceil_mode=ceil_mode)
    if kind == "avg":
        attrs["count_include_pad"] = cip
    got = run(f"nn.{kind}_pool2d", x, **attrs)
    want = ref_pool2d(x, kind, pool, strides, dilation, padding, ceil_mode, cip)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert rel(f"nn.{kind}_pool2d", T(x.shape), **attrs) == T(want.shape)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["max", "avg"]), h=st.integers(2, 7), w=st.integers(2, 7),
       kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 3), sw=st.integers(1, 3),
       pad=st.lists(st.integers(0, 1), min_size=4, max_size=4), ceil_mode=st.booleans(),
       cip=st.booleans(), nhwc=st.booleans())
# windows wholly in ceil_mode's extra padding: counts -1 (rows) and 0 (columns)
@example(kind="avg", h=5, w=6, kh=1, kw=1, sh=3, sw=3, pad=[0, 0, 0, 0], ceil_mode=True,
         cip=True, nhwc=False)
def test_pool2d_property(kind, h, w, kh, kw, sh, sw, pad, ceil_mode, cip, nhwc):
    if h + pad[0] + pad[2] < kh or w + pad[1] + pad[3] < kw:
        return
    x = RNG.standard_normal((1, 2, h, w)).astype("float32")
    attrs = dict(pool_size=[kh, kw], strides=[sh, sw], padding=pad, ceil_mode=ceil_mode)
    if kind == "avg":
        attrs["count_include_pad"] = cip
    want = ref_pool2d(x, kind, (kh, kw), (sh, sw), (1, 1), pad, ceil_mode,
                      cip and kind == "avg")
    if nhwc:
        got = run(f"nn.{kind}_pool2d", x.transpose(0, 2, 3, 1), layout="NHWC", **attrs)
        got = got.transpose(0, 3, 1, 2)
    else:
        got = run(f"nn.{kind}_pool2d", x, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool1d_is_pool2d_of_height_one(kind):
    x = RNG.standard_normal((2, 3, 9)).astype("float32")
    attrs = dict(pool_size=[3], strides=[2], padding=[1, 0], ceil_mode=True)
    got = run(f"nn.{kind}_pool1d", x, **attrs)
    want = ref_pool2d(x[:, :, None], kind, (1, 3), (1, 2), (1, 1), (0, 1, 0, 0), True,
                      False)[:, :, 0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert rel(f"nn.{kind}_pool1d", T(x.shape), **attrs) == T(want.shape)


def test_integer_avg_pool_truncates_like_topi():
    x = np.array([[[[-3, -4], [1, 1]]]], dtype="int32")
    got = run("nn.avg_pool2d", x, pool_size=[2, 2])
    assert got.dtype == np.int32 and got.item() == -1  # -5 / 4 truncates toward zero


def test_global_pools():
    x = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    np.testing.assert_allclose(run("nn.global_avg_pool2d", x), x.mean(axis=(2, 3),
                               keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(run("nn.global_max_pool2d", x), x.max(axis=(2, 3),
                                  keepdims=True))
    nhwc = run("nn.global_avg_pool2d", x.transpose(0, 2, 3, 1), layout="NHWC")
    assert nhwc.shape == (2, 1, 1, 3)
    assert rel("nn.global_max_pool2d", T((None, 3, None, 5))) == T((None, 3, 1, 1))


@pytest.mark.parametrize("size, out", [([2, 3], (2, 3)), ([1], (1, 1)), ([], (5, 7)),
                                       ([3, 7], (3, 7)), ([4, 4], (4, 4))])
def test_adaptive_avg_pool2d_windows(size, out):
    x = RNG.standard_normal((1, 2, 5, 7)).astype("float32")
    got = run("nn.adaptive_avg_pool2d", x, output_size=size)
    want = np.zeros((1, 2) + out)
    for i, j in itertools.product(range(out[0]), range(out[1])):
        y0, y1 = (i * 5) // out[0], -(-((i + 1) * 5) // out[0])
        x0, x1 = (j * 7) // out[1], -(-((j + 1) * 7) // out[1])
        want[:, :, i, j] = x[:, :, y0:y1, x0:x1].mean(axis=(2, 3))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert rel("nn.adaptive_avg_pool2d", T(x.shape), output_size=size) == T((1, 2) + out)


@pytest.mark.parametrize("name, attrs, words", [
    ("nn.max_pool2d", {"pool_size": [2, 2, 2]}, ["'pool_size'"]),
    ("nn.max_pool2d", {"pool_size": [9, 9]}, ["'pool_size'", "does not fit"]),
    ("nn.avg_pool2d", {"pool_size": [2, 2], "padding": [1, 1, 1]}, ["'padding'"]),
    ("nn.avg_pool2d", {"pool_size": [2, 2], "layout": "NCWH2"}, ["'layout'"]),
    ("nn.adaptive_avg_pool2d", {"output_size": [1, 2, 3]}, ["'output_size'"]),
])
def test_pool_errors_name_the_attribute(name, attrs, words):
    with pytest.raises(OpTypeError) as e:
        rel(name, T((1, 3, 6, 6)), **attrs)
    assert e.value.message.startswith(name)
    for w in words:
        assert w in e.value.message


def test_unknown_dims_and_patterns():
    assert rel("nn.max_pool2d", T((None, 8, 112, 112)), pool_size=[3, 3], strides=[2, 2],
               padding=[1, 1]) == T((None, 8, 56, 56))
    for name in ("nn.max_pool1d", "nn.max_pool2d", "nn.avg_pool1d", "nn.avg_pool2d",
                 "nn.global_avg_pool2d", "nn.global_max_pool2d", "nn.adaptive_avg_pool2d"):
        assert OPS[name].pattern == "out_elemwise_fusable"
    assert OPS["nn.avg_pool2d"].attr_specs["count_include_pad"].default is False
    assert OPS["nn.max_pool2d"].attr_specs["pool_size"].required


def test_avg_pool_window_wholly_in_ceil_mode_padding_divides_as_topi():
    """topi's count_include_pad count for a window past the written padding (only ceil_mode
    makes one) is 1 + (end - first) / d, truncated: 0 gives 0/0 = NaN, -2 gives -0.0; the
    count is not lifted to 1 as without count_include_pad, which gives 0.0."""
    x = np.arange(1, 7, dtype="float32").reshape(1, 1, 6)
    attrs = dict(pool_size=[1], ceil_mode=True, count_include_pad=True)
    got = run("nn.avg_pool1d", x, strides=[3], **attrs)   # windows at 0, 3, 6 (past 5)
    assert got[0, 0, :2].tolist() == [1.0, 4.0] and np.isnan(got[0, 0, 2])
    got = run("nn.avg_pool1d", x, strides=[4], **attrs)   # at 8: 1 + (5 - 8) = -2
    assert got[0, 0].tolist() == [1.0, 5.0, 0.0] and np.signbit(got[0, 0, 2])
    without = run("nn.avg_pool1d", x, pool_size=[1], strides=[3], ceil_mode=True)
    assert without[0, 0].tolist() == [1.0, 4.0, 0.0] and not np.signbit(without[0, 0, 2])
    # 2-d: the axes' counts multiply, -2 * -2 = 4 and -2 * 1 = -2
    x2 = np.ones((1, 1, 6, 6), "float32")
    got = run("nn.avg_pool2d", x2, pool_size=[1, 1], strides=[4, 4], ceil_mode=True,
              count_include_pad=True)
    assert got[0, 0, 2, 2] == 0 and not np.signbit(got[0, 0, 2, 2])
    assert got[0, 0, 2, 0] == 0 and np.signbit(got[0, 0, 2, 0])
    np.testing.assert_array_equal(
        got, ref_pool2d(x2, "avg", (1, 1), (4, 4), (1, 1), (0, 0, 0, 0), True, True))


def test_integer_avg_pool_window_in_ceil_mode_padding_stops():
    x = np.arange(6, dtype="int32").reshape(1, 1, 6)
    with pytest.raises(KernelError, match="integer division by zero"):
        run("nn.avg_pool1d", x, pool_size=[1], strides=[3], ceil_mode=True,
            count_include_pad=True)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from(["float16", "float32", "float64"]),
       values=st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan]),
                       min_size=0, max_size=12),
       step=st.integers(1, 3))
def test_the_plain_extreme_check_is_its_definition(dtype, values, step):
    # no NaN and no -0.0 (the zero whose sign bit is set), on strided views too
    from rvmdbg.relay.ops.reduce import plain_extreme_is_tvms
    x = np.array(values, dtype)[::step]
    want = not np.isnan(x).any() and not np.signbit(x[x == 0]).any()
    assert plain_extreme_is_tvms(x) == want


@settings(max_examples=80, deadline=None)
@given(kind=st.sampled_from(["max", "avg"]), dtype=st.sampled_from(["float32", "float64"]),
       c=st.sampled_from([1, 2, 4, 9, 16]), h=st.integers(1, 9), w=st.integers(1, 9),
       kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 3), sw=st.integers(1, 3),
       dh=st.integers(1, 2), dw=st.integers(1, 2), pads=st.tuples(*[st.integers(0, 2)] * 4),
       ceil_mode=st.booleans(), include_pad=st.booleans(), seed=st.integers(0, 99))
def test_pools_over_the_last_two_axes_are_the_tap_loop_bit_for_bit(
        kind, dtype, c, h, w, kh, kw, sh, sw, dh, dw, pads, ceil_mode, include_pad, seed):
    # the phased path runs each tap over a flattened stride phase of the image (channels-last
    # from 8 channels of a small image); the general loop (which the same pool over axes 1 and
    # 2 of the transposed data takes) makes the same sums
    from rvmdbg.relay.ops.pool import pool_nd
    before, after = pads[:2], pads[2:]
    if (h + before[0] + after[0] < (kh - 1) * dh + 1
            or w + before[1] + after[1] < (kw - 1) * dw + 1):
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, c, h, w)).astype(dtype)
    if seed % 3 == 0:   # windows of only -inf: topi's max starts from the lowest finite value
        x[rng.random(x.shape) < 0.5] = -np.inf
    args = ((kh, kw), (sh, sw), (dh, dw), before, after, ceil_mode, kind, include_pad)
    try:
        got = pool_nd(x, (2, 3), *args)
    except KernelError:   # a window wholly in ceil_mode's padding: both refuse it alike
        with pytest.raises(KernelError):
            pool_nd(x.transpose(0, 2, 3, 1), (1, 2), *args)
        return
    want = pool_nd(x.transpose(0, 2, 3, 1), (1, 2), *args).transpose(0, 3, 1, 2)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)   # 0 / 0: a window of padding alone
    assert np.array_equal(np.signbit(got), np.signbit(want))


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["max", "avg"]),
       dtype=st.sampled_from(["float32", "float64", "int32"]), n=st.integers(1, 2),
       c=st.sampled_from([1, 3, 8, 17]), h=st.integers(1, 8), w=st.integers(1, 8),
       special=st.sampled_from([None, -np.inf, np.inf, np.nan, -0.0]),
       include_pad=st.booleans(), seed=st.integers(0, 99))
def test_a_window_of_the_whole_image_is_the_tap_loop_bit_for_bit(
        kind, dtype, n, c, h, w, special, include_pad, seed):
    # a global pool written as a pool (ShuffleNet's 7 x 7 average over 7 x 7) reduces the
    # image's values made rows of one matrix: the same sums, in the same order, as the loop
    from rvmdbg.relay.ops.pool import pool_nd
    if dtype == "int32" and (kind == "max" or special is not None):
        return
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c, h, w)) * 100).astype(dtype)
    if special is not None:
        x[rng.random(x.shape) < 0.3] = special
    args = ((h, w), (1, 1), (1, 1), (0, 0), (0, 0), False, kind, include_pad)
    got = pool_nd(x, (2, 3), *args)
    want = pool_nd(x.transpose(0, 2, 3, 1), (1, 2), *args).transpose(0, 3, 1, 2)
    assert got.shape == want.shape == (n, c, 1, 1) and got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
