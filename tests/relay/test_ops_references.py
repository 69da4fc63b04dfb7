"""Property tests of issue 11's kernels that had only examples: hypothesis draws shapes and
attributes, and each kernel meets an independent reference written here (direct loops on small
shapes for conv1d and the 1-d and adaptive pools; formulas from topi's definitions for the
normalisations, prelu, matmul, upsampling, topk, layout_transform, the *_like and dyn.*
operators, and qnn's requantize / add / mul / concatenate in exact rational arithmetic)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, normalize_attrs

SETTINGS = settings(max_examples=25, deadline=None)


def K(name, *args, **attrs):
    return OPS[name].kernel(list(args), normalize_attrs(name, attrs))


def rand(data, shape, dtype="float32"):
    seed = data.draw(st.integers(0, 2**31 - 1))
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# conv1d and the 1-d pools: direct loops


@SETTINGS
@given(n=st.integers(1, 2), cg=st.integers(1, 2), og=st.integers(1, 2), groups=st.integers(1, 2),
       w=st.integers(1, 8), k=st.integers(1, 3), s=st.integers(1, 3), d=st.integers(1, 2),
       pad=st.lists(st.integers(0, 2), min_size=1, max_size=2), nwc=st.booleans(),
       data=st.data())
def test_conv1d_matches_loops(n, cg, og, groups, w, k, s, d, pad, nwc, data):
    before, after = (pad * 2)[:2] if len(pad) == 1 else pad
    if w + before + after < (k - 1) * d + 1:
        return
    c, o = cg * groups, og * groups
    x, wt = rand(data, (n, c, w)), rand(data, (o, cg, k))
    ow = (w + before + after - (k - 1) * d - 1) // s + 1
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (before, after)))
    want = np.zeros((n, o, ow))
    for b in range(n):
        for oc in range(o):
            g = oc // og
            for j in range(ow):
                for ic in range(cg):
                    for t in range(k):
                        want[b, oc, j] += xp[b, g * cg + ic, j * s + t * d] * wt[oc, ic, t]
    attrs = dict(strides=[s], dilation=[d], padding=pad, groups=groups)
    if nwc:
        got = K("nn.conv1d", x.transpose(0, 2, 1), wt.transpose(2, 1, 0), data_layout="NWC",
                kernel_layout="WIO", **attrs).transpose(0, 2, 1)
    else:
        got = K("nn.conv1d", x, wt, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _pool1d_loops(x, kind, k, s, d, before, after, ceil_mode, count_include_pad,
                  lowest=np.finfo(np.float32).min):
    """topi's pool over the last axis: ceil_mode pads stride-1 more at the end (not counted);
    count_include_pad counts the written padding, else the real elements (at least 1); a max
    over padding alone is the dtype's lowest value (topi pads with it)."""
    w = x.shape[-1]
    extra = s - 1 if ceil_mode else 0
    ow = (w + before + after + extra - (k - 1) * d - 1) // s + 1
    out = np.zeros(x.shape[:-1] + (ow,))
    for j in range(ow):
        pos = [j * s + t * d - before for t in range(k)]
        real = [p for p in pos if 0 <= p < w]
        if kind == "max":
            out[..., j] = x[..., real].max(axis=-1) if real else lowest
        else:
            total = x[..., real].sum(axis=-1) if real else 0.0
            count = (len([p for p in pos if -before <= p < w + after]) if count_include_pad
                     else max(len(real), 1))
            out[..., j] = total / count if count else np.nan
    return out


@SETTINGS
@given(kind=st.sampled_from(["max", "avg"]), w=st.integers(2, 9), k=st.integers(1, 3),
       s=st.integers(1, 3), d=st.integers(1, 2), pad=st.lists(st.integers(0, 1), min_size=1,
                                                              max_size=2),
       ceil_mode=st.booleans(), cip=st.booleans(), data=st.data())
def test_pool1d_matches_loops(kind, w, k, s, d, pad, ceil_mode, cip, data):
    before, after = (pad * 2)[:2] if len(pad) == 1 else pad
    if w + before + after < (k - 1) * d + 1:
        return
    x = rand(data, (1, 2, w))
    want = _pool1d_loops(x.astype(np.float64), kind, k, s, d, before, after, ceil_mode, cip)
    attrs = dict(pool_size=[k], strides=[s], dilation=[d], padding=pad, ceil_mode=ceil_mode)
    if kind == "avg":
        got = K("nn.avg_pool1d", x, count_include_pad=cip, **attrs)
        if cip:  # a window wholly in ceil_mode's extra padding divides by zero in topi
            keep = np.isfinite(want)
            got, want = got[keep], want[keep]
    else:
        got = K("nn.max_pool1d", x, **attrs)
        want = want.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(h=st.integers(1, 7), w=st.integers(1, 7), oh=st.integers(1, 4), ow=st.integers(1, 4),
       nhwc=st.booleans(), data=st.data())
def test_adaptive_and_global_pools_match_loops(h, w, oh, ow, nhwc, data):
    x = rand(data, (1, 2, h, w))
    want = np.zeros((1, 2, oh, ow))
    for i in range(oh):  # topi: start = floor(i * in / out), end = ceil((i + 1) * in / out)
        for j in range(ow):
            hs, he = (i * h) // oh, -(-((i + 1) * h) // oh)
            ws, we = (j * w) // ow, -(-((j + 1) * w) // ow)
            want[:, :, i, j] = x[:, :, hs:he, ws:we].astype(np.float64).mean(axis=(2, 3))
    layout = "NHWC" if nhwc else "NCHW"

    def pool(name, **attrs):
        arg = x.transpose(0, 2, 3, 1) if nhwc else x
        out = K(name, arg, layout=layout, **attrs)
        return out.transpose(0, 3, 1, 2) if nhwc else out
    np.testing.assert_allclose(pool("nn.adaptive_avg_pool2d", output_size=[oh, ow]), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pool("nn.global_avg_pool2d"),
                               x.astype(np.float64).mean(axis=(2, 3), keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pool("nn.global_max_pool2d"), x.max(axis=(2, 3), keepdims=True))


# ---------------------------------------------------------------------------------------------
# normalisations, prelu, dropout: formulas


def _normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _along(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), center=st.booleans(),
       scale=st.booleans(), data=st.data())
def test_layer_instance_and_group_norms_match_their_formulas(shape, center, scale, data):
    x = rand(data, shape)
    x64 = x.astype(np.float64)
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1)) % nd
    g, b = rand(data, (shape[axis],)), rand(data, (shape[axis],))
    flags = dict(epsilon=1e-3, center=center, scale=scale)

    def affine(y, ax):
        y = y * _along(g, ax, nd) if scale else y
        return y + _along(b, ax, nd) if center else y
    want = affine(_normalize(x64, (axis,), 1e-3), axis)
    np.testing.assert_allclose(K("nn.layer_norm", x, g, b, axis=axis, **flags), want,
                               rtol=1e-4, atol=1e-4)
    # instance_norm: over every axis but the batch and `axis` (here 1)
    gi, bi = rand(data, (shape[1],)), rand(data, (shape[1],))
    g, b = gi, bi
    spatial = tuple(range(2, nd))
    if spatial:
        want = affine(_normalize(x64, spatial, 1e-3), 1)
        np.testing.assert_allclose(K("nn.instance_norm", x, gi, bi, axis=1, **flags), want,
                                   rtol=1e-4, atol=1e-4)
    # group_norm: channels (axis 1) in num_groups groups, each normalised with its spatial dims
    groups = data.draw(st.sampled_from([d for d in range(1, shape[1] + 1) if shape[1] % d == 0]))
    grouped = x64.reshape((shape[0], groups, shape[1] // groups) + tuple(shape[2:]))
    want = affine(_normalize(grouped, tuple(range(2, nd + 1)), 1e-3).reshape(shape), 1)
    np.testing.assert_allclose(K("nn.group_norm", x, gi, bi, num_groups=groups, axis=1, **flags),
                               want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_l2_normalize_prelu_and_dropout_match_their_formulas(shape, data):
    x = rand(data, shape)
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    eps = data.draw(st.sampled_from([1e-12, 0.5, 4.0]))
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt(np.maximum((x64 ** 2).sum(axis=tuple(axes), keepdims=True), eps))
    np.testing.assert_allclose(K("nn.l2_normalize", x, eps=eps, axis=axes), want,
                               rtol=1e-5, atol=1e-6)
    axis = data.draw(st.integers(0, len(shape) - 1))
    alpha = rand(data, (shape[axis],))
    np.testing.assert_allclose(K("nn.prelu", x, alpha, axis=axis),
                               np.where(x > 0, x, x * _along(alpha, axis, len(shape))))
    out, mask = K("nn.dropout", x, rate=data.draw(st.floats(0, 0.9)))
    np.testing.assert_array_equal(out, x)
    assert mask.shape == x.shape and np.all(mask == 1) and out is not x


@SETTINGS
@given(c=st.integers(1, 6), size=st.sampled_from([1, 3, 5]), data=st.data())
def test_lrn_matches_topis_formula(c, size, data):
    x = rand(data, (1, c, 2, 2))
    alpha, beta, bias = 1e-1, 0.75, 2.0
    x64 = x.astype(np.float64)
    want = np.empty_like(x64)
    for ch in range(c):  # the window of `size` channels centred on ch, zero outside
        lo, hi = max(0, ch - size // 2), min(c, ch + size // 2 + 1)
        sq = (x64[:, lo:hi] ** 2).sum(axis=1)
        want[:, ch] = x64[:, ch] / (bias + alpha * sq / size) ** beta
    np.testing.assert_allclose(K("nn.lrn", x, size=size, alpha=alpha, beta=beta, bias=bias),
                               want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# matmul, upsampling, topk, layouts, *_like, reverse_reshape


@SETTINGS
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), ta=st.booleans(),
       tb=st.booleans(), data=st.data())
def test_matmul_follows_its_transpose_flags(m, k, n, ta, tb, data):
    a, b = rand(data, (m, k)), rand(data, (k, n))
    got = K("nn.matmul", a.T if ta else a, b.T if tb else b, transpose_a=ta, transpose_b=tb)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    got = K("nn.batch_matmul", a[None], (b.T if tb else b)[None], transpose_b=tb)
    np.testing.assert_allclose(got[0], a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(h=st.integers(1, 4), w=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       nhwc=st.booleans(), data=st.data())
def test_nearest_upsampling_repeats_pixels(h, w, sh, sw, nhwc, data):
    x = rand(data, (1, 2, h, w))
    want = x.repeat(sh, axis=2).repeat(sw, axis=3)
    if nhwc:
        got = K("nn.upsampling", x.transpose(0, 2, 3, 1), scale_h=float(sh), scale_w=float(sw),
                layout="NHWC").transpose(0, 3, 1, 2)
    else:
        got = K("nn.upsampling", x, scale_h=float(sh), scale_w=float(sw))
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), ascend=st.booleans(),
       data=st.data())
def test_topk_is_the_first_k_of_a_stable_sort(shape, ascend, data):
    x = np.asarray(data.draw(st.lists(st.integers(-3, 3), min_size=math.prod(shape),
                                      max_size=math.prod(shape))), "float32").reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    # k < 1 means all, as in topi (a k past the axis is refused when the kernel runs)
    k = data.draw(st.integers(0, shape[axis]))
    values, indices = K("topk", x, k=k, axis=axis, is_ascend=ascend, dtype="int64")
    order = np.argsort(x if ascend else -x, axis=axis, kind="stable")
    kk = shape[axis] if k < 1 else k
    want_idx = np.take(order, np.arange(kk), axis=axis)
    np.testing.assert_array_equal(indices, want_idx)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want_idx, axis=axis))
    assert indices.dtype == np.int64
    only = K("topk", x, k=k, axis=axis, is_ascend=ascend, ret_type="values")
    np.testing.assert_array_equal(only, values)


@SETTINGS
@given(n=st.integers(1, 2), blocks=st.integers(1, 3), factor=st.sampled_from([1, 2, 4]),
       h=st.integers(1, 3), w=st.integers(1, 3), data=st.data())
def test_layout_transform_splits_and_joins_channels(n, blocks, factor, h, w, data):
    c = blocks * factor
    x = rand(data, (n, c, h, w))
    want = x.reshape(n, blocks, factor, h, w).transpose(0, 1, 3, 4, 2)
    got = K("layout_transform", x, src_layout="NCHW", dst_layout=f"NCHW{factor}c")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        K("layout_transform", got, src_layout=f"NCHW{factor}c", dst_layout="NCHW"), x)
    np.testing.assert_array_equal(K("layout_transform", x, src_layout="NCHW", dst_layout="NHWC"),
                                  x.transpose(0, 2, 3, 1))


def _reshape_rule(shape, newshape):
    """Relay's reshape with its special values 0 (copy), -1 (infer), -2 (copy the rest), -3
    (merge two), -4 (split one in two), written from the operator's documentation."""
    out, i, j, infer = [], 0, 0, None
    while j < len(newshape):
        v = newshape[j]
        if v == 0:
            out.append(shape[i])
            i += 1
        elif v == -1:
            infer = len(out)
            out.append(1)
            i += 1
        elif v == -2:
            out.extend(shape[i:])
            i = len(shape)
        elif v == -3:
            out.append(shape[i] * shape[i + 1])
            i += 2
        elif v == -4:
            a, b = newshape[j + 1], newshape[j + 2]
            a = shape[i] // b if a == -1 else a
            b = shape[i] // a if b == -1 else b
            out += [a, b]
            i += 1
            j += 2
        else:
            out.append(v)
            i += 1
        j += 1
    if infer is not None:
        out[infer] = math.prod(shape) // math.prod(out)
    return out


@SETTINGS
@given(dims=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data())
def test_reverse_reshape_reads_its_special_values_from_the_right(dims, data):
    x = np.arange(math.prod(dims), dtype="float32").reshape(dims)
    # newshapes valid for the reversed shape: keep (0) some trailing dims, infer the rest
    keep = data.draw(st.integers(0, len(dims) - 1))
    merge = data.draw(st.booleans()) and len(dims) - keep >= 2
    rev = [0] * keep + ([-3] if merge else []) + [-1]
    newshape = rev[::-1]
    want = _reshape_rule(list(dims[::-1]), rev)[::-1]
    got = K("contrib_reverse_reshape", x, newshape=newshape)
    assert list(got.shape) == want
    np.testing.assert_array_equal(got.reshape(-1), x.reshape(-1))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_reshape_like_and_broadcast_to_like_follow_the_second_argument(shape, data):
    x = rand(data, shape)
    like = np.zeros(tuple(reversed(shape)) + (1,), "int8")
    np.testing.assert_array_equal(K("reshape_like", x, like), x.reshape(like.shape))
    target = np.zeros((2,) + tuple(shape), "int8")
    small = x[(slice(None),) * (len(shape) - 1) + (slice(0, 1),)]
    np.testing.assert_array_equal(K("broadcast_to_like", small, target),
                                  np.broadcast_to(small, target.shape))


# ---------------------------------------------------------------------------------------------
# dyn.*: the kernels give NumPy's results for run-time shapes


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_dyn_kernels_match_numpy(shape, data):
    x = rand(data, shape)
    i64 = lambda v: np.asarray(v, "int64")  # noqa: E731
    np.testing.assert_array_equal(K("dyn.reshape", x, i64([-1])), x.reshape(-1))
    reps = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    np.testing.assert_array_equal(K("dyn.tile", x, i64(reps)), np.tile(x, reps))
    np.testing.assert_array_equal(K("dyn.broadcast_to", x, i64([2] + shape)),
                                  np.broadcast_to(x, [2] + shape))
    np.testing.assert_array_equal(K("dyn.zeros", i64(shape), dtype="int8"), np.zeros(shape, "int8"))
    np.testing.assert_array_equal(K("dyn.ones", i64(shape), dtype="float32"), np.ones(shape))
    np.testing.assert_array_equal(K("dyn.full", np.float32(2.5), i64(shape), dtype="float32"),
                                  np.full(shape, 2.5, "float32"))
    begin = [data.draw(st.integers(-d, d - 1)) for d in shape]
    end = [data.draw(st.integers(-d, d)) for d in shape]
    strides = [data.draw(st.sampled_from([1, 2, -1])) for _ in shape]
    # NumPy's slices clamp as topi does; an empty range is refused (differences.md)
    want = x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]
    if want.size:
        got = K("dyn.strided_slice", x, i64(begin), i64(end), i64(strides))
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------
# qnn: TVM's canonical forms in exact arithmetic (scales in powers of two, so TVM's 31-bit
# fixed-point multiplier is exact)

POW2 = st.sampled_from([0.125, 0.25, 0.5, 1.0, 2.0, 4.0])
RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1)}


def _round(q: Fraction, rounding: str) -> int:
    """UPWARD: halves toward +inf; TONEAREST: halves away from zero."""
    if rounding == "UPWARD":
        return math.floor(q + Fraction(1, 2))
    return int(math.copysign(math.floor(abs(q) + Fraction(1, 2)), q))


def _requantize(v, in_scale, in_zp, out_scale, out_zp, rounding, dtype):
    lo, hi = RANGE[dtype]
    ratio = Fraction(in_scale) / Fraction(out_scale)
    return np.array([min(hi, max(lo, _round((int(q) - in_zp) * ratio, rounding) + out_zp))
                     for q in np.asarray(v).reshape(-1)], dtype).reshape(np.shape(v))


def _qargs(scale, zp):
    return np.float32(scale), np.int32(zp)


@SETTINGS
@given(values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=12), s_in=POW2,
       s_out=POW2, zp_in=st.integers(-5, 5), zp_out=st.integers(-5, 5),
       rounding=st.sampled_from(["UPWARD", "TONEAREST"]),
       out=st.sampled_from(["int8", "uint8", "int32"]))
def test_requantize_is_exact_rounding_then_saturation(values, s_in, s_out, zp_in, zp_out,
                                                       rounding, out):
    x = np.array(values, "int32")
    got = K("qnn.requantize", x, *_qargs(s_in, zp_in), *_qargs(s_out, zp_out),
            rounding=rounding, out_dtype=out)
    np.testing.assert_array_equal(got, _requantize(x, s_in, zp_in, s_out, zp_out, rounding, out))
    assert got.dtype == np.dtype(out)


@SETTINGS
@given(n=st.integers(1, 6), sa=POW2, sb=POW2, sc=POW2, za=st.integers(-3, 3),
       zb=st.integers(-3, 3), zc=st.integers(-3, 3), data=st.data())
def test_qnn_add_mul_and_concatenate_are_tvms_canonical_forms(n, sa, sb, sc, za, zb, zc, data):
    draw = lambda: np.array(data.draw(st.lists(st.integers(-128, 127), min_size=n,  # noqa: E731
                                               max_size=n)), "int8")
    a, b = draw(), draw()
    args = (*_qargs(sa, za), *_qargs(sb, zb), *_qargs(sc, zc))
    # add: each side requantized to the output's scale and zero point (int32, UPWARD), summed,
    # the output zero point taken once away, then saturated
    ra = _requantize(a, sa, za, sc, zc, "UPWARD", "int32").astype(np.int64)
    rb = _requantize(b, sb, zb, sc, zc, "UPWARD", "int32").astype(np.int64)
    np.testing.assert_array_equal(K("qnn.add", a, b, *args), np.clip(ra + rb - zc, -128, 127))
    # mul: (a - za) * (b - zb) at scale sa * sb, requantized to the output
    prod = (a.astype(np.int64) - za) * (b.astype(np.int64) - zb)
    np.testing.assert_array_equal(K("qnn.mul", a, b, *args),
                                  _requantize(prod, sa * sb, 0, sc, zc, "UPWARD", "int8"))
    # concatenate: each input requantized to the output, then joined
    got = K("qnn.concatenate", (a, b), (np.float32(sa), np.float32(sb)),
            (np.int32(za), np.int32(zb)), np.float32(sc), np.int32(zc), axis=0)
    want = np.concatenate([_requantize(a, sa, za, sc, zc, "UPWARD", "int8"),
                           _requantize(b, sb, zb, sc, zc, "UPWARD", "int8")])
    np.testing.assert_array_equal(got, want)
