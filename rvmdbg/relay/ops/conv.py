"""Convolutions: nn.conv1d, nn.conv2d, nn.conv2d_transpose.

Kernels run through a matrix product (BLAS for floats): a 1x1 convolution is one product over
the channels; a larger one gathers its windows into columns first (im2col, one strided copy per
kernel position) or, at stride 1 with at least twice the channels in as out, sums one product
per kernel position over shifted slices of the flattened image (no copy); a grouped one is one
batched product over the groups; a depthwise one of outputs up to 32 wide is kh batched
products with banded weight matrices, a wider one (or one meeting an infinity or a NaN)
accumulates one multiply per kernel position over whole flattened images.
`conv2d_nchw(data, weight, strides, padding, dilation, groups)` is the canonical-layout entry
other operator families (qnn.conv2d) reuse. A bool convolution is
TVM's sum in 1-bit integers: the parity of the ands.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, bool_parity, fmt_shape, register,
    tvm_cast, unify_dim,
)
from rvmdbg.relay.ops.layouts import (
    CANONICAL_DATA, CANONICAL_KERNEL, StridePhases, expand_padding, from_canonical, inverse_perm,
    layout_perm, spatial_values, to_canonical, window_out,
)
from rvmdbg.relay.types import TensorType

# ---------------------------------------------------------------------------------------------
# The NumPy kernels in canonical layout (NCHW data, OIHW / IOHW weights)


def conv2d_nchw(data: np.ndarray, weight: np.ndarray, strides=(1, 1), padding=(0, 0, 0, 0),
                dilation=(1, 1), groups: int = 1) -> np.ndarray:
    """topi's conv2d in NCHW/OIHW: `padding` is (top, left, bottom, right), zeros.

    The result has the inputs' dtype (cast them to out_dtype first); the caller has checked
    that data's channels equal weight's input channels times `groups`."""
    n, c, h, w = data.shape
    o, i, kh, kw = weight.shape
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = padding
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pl + pr - (kw - 1) * dw - 1) // sw + 1
    with np.errstate(all="ignore"):
        if i == 1 and groups == c and groups > 1:
            if ow <= 32:
                out = _conv_depthwise_products(data, weight, oh, ow, strides, padding, dilation)
                if out is not None:
                    return out
            return _conv_depthwise(data, weight, oh, ow, strides, padding, dilation)
        if (groups == 1 and (kh > 1 or kw > 1) and sh == 1 and sw == 1 and c >= 2 * o
                and data.dtype.kind == "f"):
            return _conv_shifted(data, weight, oh, ow, padding, dilation)
        if pt or pl or pb or pr:
            data = np.pad(data, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
        if groups == 1:
            return _conv_dense(data, weight, oh, ow, strides, dilation)
        return _conv_dense(data, weight, oh, ow, strides, dilation, groups)


def _window(x, i: int, j: int, oh: int, ow: int, strides, dilation):
    """The input pixels kernel position (i, j) meets, for every output pixel: (N, C, oh, ow)."""
    sh, sw = strides
    y0, x0 = i * dilation[0], j * dilation[1]
    return x[:, :, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw]


def _conv_dense(x, weight, oh, ow, strides, dilation, groups: int = 1):
    # groups are one batched product: (G, O/G, C/G*KH*KW) @ (N, G, C/G*KH*KW, OH*OW)
    n, c = x.shape[:2]
    o, _, kh, kw = weight.shape
    if kh == 1 and kw == 1:
        cols = _window(x, 0, 0, oh, ow, strides, dilation).reshape(n, groups, c // groups,
                                                                   oh * ow)
    else:
        # im2col: one strided copy per kernel position, then one product over C*KH*KW
        cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = _window(x, i, j, oh, ow, strides, dilation)
        cols = cols.reshape(n, groups, c // groups * kh * kw, oh * ow)
    if groups == 1:
        out = np.matmul(weight.reshape(o, -1), cols[:, 0])
    else:
        out = np.matmul(weight.reshape(groups, o // groups, -1), cols)
    return out.reshape(n, o, oh, ow)


def _conv_shifted(x, weight, oh, ow, padding, dilation):
    """A stride-1 convolution as one product per kernel position, without im2col: in the
    zero-padded image flattened row by row (width W), kernel position (i, j) meets, for every
    output pixel, the contiguous slice starting at i*dh*W + j*dw of oh*W values (the W - ow
    values past each output row are junk, cut off at the end). Each product is (O, C) @ (C,
    oh*W) straight on that slice, summed over the positions. It skips im2col's copy of
    C*KH*KW*oh*ow values at the price of KH*KW products over C instead of one over C*KH*KW:
    worth it when the channels in outnumber those out (DenseNet's 128 -> 32 growth layers,
    measured 1.3-2x), which is when conv2d_nchw takes it."""
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    pt, pl, pb, pr = padding
    dh, dw = dilation
    hp, wp = h + pt + pb, w + pl + pr
    # one row more than the padded image: the last slice runs (kw-1)*dw values past it
    grid = np.zeros((n, c, hp + 1, wp), dtype=x.dtype)
    grid[:, :, pt:pt + h, pl:pl + w] = x
    flat = grid.reshape(n, c, (hp + 1) * wp)
    size = oh * wp
    taps = np.ascontiguousarray(weight.transpose(2, 3, 0, 1))   # (KH, KW, O, C)
    out = np.empty((n, o, size), dtype=x.dtype)
    tmp = np.empty((o, size), dtype=x.dtype)
    for b in range(n):
        for i in range(kh):
            for j in range(kw):
                at = i * dh * wp + j * dw
                if i == 0 and j == 0:
                    np.matmul(taps[0, 0], flat[b, :, at:at + size], out=out[b])
                else:
                    np.matmul(taps[i, j], flat[b, :, at:at + size], out=tmp)
                    out[b] += tmp
    return out.reshape(n, o, oh, wp)[..., :ow]


# weight -> its banded matrices, for depthwise convolutions run as products (below): a
# model's weights are constants, met again at every run; bounded, oldest dropped first
_BANDED: dict = {}
_BANDED_ENTRIES = 256
_BANDED_BYTES = 16 << 20        # a weight's matrices above this run the passes instead
_BANDED_TOTAL = 128 << 20       # what the cache may hold in all


def _banded(weight, w: int, pl: int, ow: int, sw: int, dw: int):
    """Per kernel row i, per channel, the (w, ow) matrix that maps an input row to that
    kernel row's contribution to an output row: column x holds the row's weights at rows
    x*sw + j*dw - pl, those inside the row (a tap on the left or right padding meets a zero,
    and is left out). None when the weights are not all finite (a product would add inf * 0
    = NaN from the zeros of the band) or the matrices would pass 16 MiB; the cache holds at
    most 256 weights' and 128 MiB, the oldest dropped first."""
    key = (weight.tobytes(), weight.shape, weight.dtype.str, w, pl, ow, sw, dw)
    if key in _BANDED:
        return _BANDED[key]
    o, _, kh, kw = weight.shape
    band = None
    if kh * o * w * ow * weight.itemsize <= _BANDED_BYTES and np.isfinite(weight).all():
        band = np.zeros((kh, o, w, ow), dtype=weight.dtype)
        taps = weight.reshape(o, kh, kw)
        cols = np.arange(ow)
        for j in range(kw):   # column x meets input column x*sw + j*dw - pl
            rows = cols * sw + j * dw - pl
            inside = (rows >= 0) & (rows < w)
            band[:, :, rows[inside], cols[inside]] = taps[:, :, j].T[:, :, None]
    held = band.nbytes if band is not None else 0
    while _BANDED and (len(_BANDED) >= _BANDED_ENTRIES
                       or _banded_bytes() + held > _BANDED_TOTAL):
        del _BANDED[next(iter(_BANDED))]
    _BANDED[key] = band
    return band


def _banded_bytes() -> int:
    return sum(b.nbytes for b in _BANDED.values() if b is not None)


def _conv_depthwise_products(x, weight, oh, ow, strides, padding, dilation):
    """A depthwise convolution of narrow outputs (ow <= 32) as kh batched products through
    BLAS: per kernel row i, each channel's strided input rows (oh, W) times its banded (W,
    ow) matrix (`_banded`, built once per weight; it leaves out the taps on the left and
    right padding, so only the rows above and below are padded: ShuffleNet's 272 x 14 x 14
    kernel 143 -> 120 us a call). The band's zeros make w/kw times the multiplies, which BLAS
    does faster than NumPy's 2*kh*kw passes over the image (ShuffleNet's depthwise kernels
    with their multiply and add: 5.9 -> 4.3 ms a run in `rvmdbg profile`). The sums run in
    BLAS's order, not position by position: the values differ from the passes' in the last
    bits. None (the caller's passes then) for other than float32/float64 data or an output
    not all finite: a zero of the band may have met an infinity."""
    if x.dtype not in (np.float32, np.float64) or weight.dtype != x.dtype:
        return None
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    dh, dw = dilation
    band = _banded(weight, w, pl, ow, sw, dw)
    if band is None:
        return None
    # padded above and below only: the band leaves out the taps on the left and right padding
    rows = (oh - 1) * sh + (kh - 1) * dh + 1     # the padded rows some window reads
    xp = np.zeros((n, c, max(rows, pt + h), w), dtype=x.dtype)
    xp[:, :, pt:pt + h] = x
    if o != c:
        xp = np.repeat(xp, o // c, axis=1)         # each channel meets its `mult` filters
    out = None
    for i in range(kh):
        part = np.matmul(xp[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh], band[i])
        if out is None:
            out = part
        else:
            out += part
    # an infinity or a NaN of the data that a product reads makes a NaN or an infinity of
    # the output (through a zero of the band, if not a weight), so one sum of the output
    # finds it, where a max and a min of the data took twice as long; an output that
    # overflowed to an infinity runs the passes too
    if not np.isfinite(out.sum()):
        return None
    return out


def _conv_depthwise(x, weight, oh, ow, strides, padding, dilation):
    """Each input channel meets its own `mult` filters: one multiply-add per kernel position
    over a whole flattened stride phase of the padded image (`StridePhases`), so that NumPy's
    inner loop runs a whole image, not one short row; the sums run in the same order as a
    per-position loop, so the values are the same."""
    n, c = x.shape[:2]
    o, _, kh, kw = weight.shape
    mult = o // c
    pt, pl, pb, pr = padding
    phases = StridePhases(x, ((pt, pb), (pl, pr)), (oh, ow), (kh, kw), strides, dilation)
    size = phases.size
    wt = weight.reshape(c, mult, kh, kw)
    # out and tmp share one buffer, 37 elements apart: two separate page-aligned arrays put
    # their elements at equal addresses modulo 4 KiB, which stalls the loads (measured 2x)
    count = n * c * mult * size
    buf = np.zeros(2 * count + 37, dtype=x.dtype)
    out = buf[:count].reshape(n, c, mult, size)
    tmp = buf[count + 37:].reshape(n, c, mult, size)
    for i in range(kh):
        for j in range(kw):
            np.multiply(phases.run(i, j)[:, :, None], wt[None, :, :, i, j, None], out=tmp)
            out += tmp
    return phases.crop(out.reshape(n, o, size))


def conv2d_transpose_nchw(data: np.ndarray, weight: np.ndarray, strides=(1, 1),
                          padding=(0, 0, 0, 0), output_padding=(0, 0), dilation=(1, 1),
                          groups: int = 1) -> np.ndarray:
    """topi's conv2d_transpose in NCHW with an IOHW weight (in, out/groups, kh, kw): every input
    pixel scatters its weighted kernel into the output, which is then cropped by `padding`."""
    n, c, h, w = data.shape
    _, og, kh, kw = weight.shape
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = padding
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    oh = sh * (h - 1) + ekh - pt - pb + output_padding[0]
    ow = sw * (w - 1) + ekw - pl - pr + output_padding[1]
    canvas = np.zeros((n, og * groups, sh * (h - 1) + ekh + output_padding[0],
                       sw * (w - 1) + ekw + output_padding[1]), dtype=data.dtype)
    cg = c // groups
    with np.errstate(all="ignore"):
        for g in range(groups):
            wg = weight[g * cg:(g + 1) * cg].reshape(cg, og * kh * kw)
            cols = np.matmul(wg.T, data[:, g * cg:(g + 1) * cg].reshape(n, cg, h * w))
            cols = cols.reshape(n, og, kh, kw, h, w)
            target = canvas[:, g * og:(g + 1) * og]
            for i in range(kh):
                for j in range(kw):
                    target[:, :, i * dh:i * dh + sh * (h - 1) + 1:sh,
                           j * dw:j * dw + sw * (w - 1) + 1:sw] += cols[:, :, i, j]
    return canvas[:, :, pt:pt + oh, pl:pl + ow]


# ---------------------------------------------------------------------------------------------
# Type relations


def _conv_layouts(name, attrs, n, kernel_canonical):
    data_c = CANONICAL_DATA[n]
    dperm = layout_perm(name, "data_layout", attrs["data_layout"], data_c)
    kperm = layout_perm(name, "kernel_layout", attrs["kernel_layout"], kernel_canonical)
    operm = layout_perm(name, "out_layout", attrs["out_layout"] or attrs["data_layout"], data_c)
    return dperm, kperm, operm


def _conv_common(name, args, attrs, n):
    data, weight = args
    for what, t in (("data", data), ("weight", weight)):
        if len(t.shape) != n + 2:
            raise OpTypeError(_("{op}: {what} must be {rank}-d, got {t}").format(
                    op=name, what=what, rank=n + 2, t=t))
    # TVM's Conv*Rel takes any dtype and does not compare them: the result is out_dtype, else
    # data's, and topi casts both inputs to it (bool included: a 1-bit sum of ands)
    if attrs["groups"] < 1:
        raise OpTypeError(_("{op}: attribute '{attr}' must be >= {minimum}, got {value}").format(
                op=name, attr="groups", minimum=1, value=attrs["groups"]))
    strides = spatial_values(name, "strides", attrs["strides"], n)
    dilation = spatial_values(name, "dilation", attrs["dilation"], n)
    before, after = expand_padding(name, attrs["padding"], n)
    return data, weight, strides, dilation, before, after


def _check_kernel_size(name, attrs, ksize, n):
    if attrs["kernel_size"] is not None:
        want = spatial_values(name, "kernel_size", attrs["kernel_size"], n)
        return tuple(unify_dim(name, k, s, _("attribute 'kernel_size' is {want} but the weight's "
                                             "kernel is {ksize_shape}").format(
                want=list(want), ksize_shape=fmt_shape(ksize)))
                     for k, s in zip(ksize, want))
    return ksize


def _conv_rel(name, args, attrs, n):
    data, weight, strides, dilation, before, after = _conv_common(name, args, attrs, n)
    dperm, kperm, operm = _conv_layouts(name, attrs, n, CANONICAL_KERNEL[n])
    batch, chans, *spatial = to_canonical(data.shape, dperm)
    out_c, in_c, *ksize = to_canonical(weight.shape, kperm)
    ksize = _check_kernel_size(name, attrs, tuple(ksize), n)
    groups = attrs["groups"]
    if attrs["channels"] is not None:
        out_c = unify_dim(name, out_c, attrs["channels"],
                          _("attribute 'channels' is {channels} but the weight {weight} "
                            "({kernel_layout}) has {out_c} output channels").format(
                channels=attrs['channels'], weight=weight,
                kernel_layout=attrs['kernel_layout'], out_c=out_c))
    if chans is not None and in_c is not None and chans != in_c * groups:
        raise OpTypeError(_("{op}: data {data} has {chans} channels but the weight {weight} "
                            "({kernel_layout}) takes {in_c} per group and attribute 'groups' is "
                            "{groups} ({in_c} x {groups} = {total})").format(
                op=name, data=data, chans=chans, weight=weight,
                kernel_layout=attrs['kernel_layout'], in_c=in_c, groups=groups,
                total=in_c * groups))
    if out_c is not None and out_c % groups:
        raise OpTypeError(_("{op}: {out_c} output channels do not split into attribute "
                            "'groups'={groups}").format(op=name, out_c=out_c, groups=groups))
    out_sp = []
    for size, b, a, k, s, d in zip(spatial, before, after, ksize, strides, dilation):
        window = None if k is None else (k - 1) * d + 1
        o = None if window is None else window_out(size, b, a, window, s)
        if o is not None and o < 1:
            raise OpTypeError(_("{op}: the {window}-wide kernel (dilation {d}) does not fit an "
                                "input of {size} padded by ({b}, {a}); check attributes "
                                "'padding' and 'kernel_size'").format(
                    op=name, window=window, d=d, size=size, b=b, a=a))
        out_sp.append(o)
    out = from_canonical((batch, out_c, *out_sp), operm)
    return TensorType(out, attrs["out_dtype"] or data.dtype)


def _conv_transpose_rel(name, args, attrs, n):
    data, weight, strides, dilation, before, after = _conv_common(name, args, attrs, n)
    dperm, kperm, operm = _conv_layouts(name, attrs, n, "IO" + CANONICAL_DATA[n][2:])
    batch, chans, *spatial = to_canonical(data.shape, dperm)
    in_c, out_cg, *ksize = to_canonical(weight.shape, kperm)
    ksize = _check_kernel_size(name, attrs, tuple(ksize), n)
    groups = attrs["groups"]
    opad = spatial_values(name, "output_padding", attrs["output_padding"], n, minimum=0)
    unify_dim(name, chans, in_c, _("data {data} has {chans} channels but the weight {weight} "
                                   "({kernel_layout}) takes {in_c}").format(
            data=data, chans=chans, weight=weight, kernel_layout=attrs['kernel_layout'],
            in_c=in_c))
    if chans is not None and chans % groups:
        raise OpTypeError(_("{op}: {chans} input channels do not split into attribute "
                            "'groups'={groups}").format(op=name, chans=chans, groups=groups))
    out_c = None if out_cg is None else out_cg * groups
    if attrs["channels"] is not None:
        out_c = unify_dim(name, out_c, attrs["channels"],
                          _("attribute 'channels' is {channels} but the weight {weight} "
                            "({kernel_layout}) gives {out_c} output channels").format(
                channels=attrs['channels'], weight=weight,
                kernel_layout=attrs['kernel_layout'], out_c=out_c))
    out_sp = []
    for size, b, a, k, s, d, op in zip(spatial, before, after, ksize, strides, dilation, opad):
        if size is None or k is None:
            out_sp.append(None)
            continue
        o = s * (size - 1) + (k - 1) * d + 1 - b - a + op
        if o < 1:
            raise OpTypeError(_("{op}: attribute 'padding' ({b}, {a}) crops the whole "
                                "output").format(op=name, b=b, a=a))
        out_sp.append(o)
    out = from_canonical((batch, out_c, *out_sp), operm)
    return TensorType(out, attrs["out_dtype"] or data.dtype)


# ---------------------------------------------------------------------------------------------
# Kernels in any layout


class _Layout:
    """What a convolution's attributes fix, worked out once per attributes: the layouts'
    permutations, strides, dilation and padding in the canonical 2-d form (a 1-d
    convolution is a 2-d one of height 1), the output dtype when one is set."""

    __slots__ = ("n", "dperm", "kperm", "operm", "plain_in", "plain_out", "strides",
                 "dilation", "padding", "out_dtype", "groups")

    def __init__(self, name, attrs, n, kernel_canonical):
        self.n = n
        data_c = CANONICAL_DATA[n]
        self.dperm = layout_perm(name, "data_layout", attrs["data_layout"], data_c)
        self.kperm = layout_perm(name, "kernel_layout", attrs["kernel_layout"], kernel_canonical)
        self.operm = layout_perm(name, "out_layout", attrs["out_layout"] or attrs["data_layout"],
                                 data_c)
        identity = tuple(range(n + 2))
        self.plain_in = self.dperm == identity and self.kperm == identity
        self.plain_out = self.operm == identity
        self.strides = (1,) * (2 - n) + spatial_values(name, "strides", attrs["strides"], n)
        self.dilation = (1,) * (2 - n) + spatial_values(name, "dilation", attrs["dilation"], n)
        before, after = expand_padding(name, attrs["padding"], n)
        self.padding = (0,) * (2 - n) + before + (0,) * (2 - n) + after
        self.out_dtype = np.dtype(attrs["out_dtype"]) if attrs["out_dtype"] else None
        self.groups = attrs["groups"]

    def inputs(self, args):
        """(data, weight, dtype): cast to the output dtype and put in canonical layout."""
        data, weight = args
        dt = self.out_dtype or data.dtype
        data, weight = tvm_cast(data, dt), tvm_cast(weight, dt)
        if dt == BOOL:
            # topi sums the ands in TVM's 1-bit bool: count them in int64, keep the parity
            data, weight = data.astype(np.int64), weight.astype(np.int64)
        if not self.plain_in:
            data, weight = data.transpose(self.dperm), weight.transpose(self.kperm)
        if self.n == 1:  # a 1-d convolution is a 2-d one of height 1
            data, weight = data[:, :, None, :], weight[:, :, None, :]
        return data, weight, dt

    def result(self, out, dt):
        if dt == BOOL:
            out = bool_parity(out)
        if self.n == 1:
            out = out[:, :, 0, :]
        if not self.plain_out:
            out = out.transpose(inverse_perm(self.operm))
        return as_result(np.ascontiguousarray(out), dt)


def _conv_kernel(name, n):
    """(kernel, bind): the kernel, and its binder for a fused kernel's step (`OpDef.bind`)."""
    kernel_canonical = CANONICAL_KERNEL[n]

    def bind(attrs):
        lay = _Layout(name, attrs, n, kernel_canonical)
        strides, padding, dilation, groups = lay.strides, lay.padding, lay.dilation, lay.groups

        def bound(args, _attrs=None):
            data, weight, dt = lay.inputs(args)
            _n, c, h, w = data.shape
            o, i, kh, kw = weight.shape
            if c != i * groups or o % groups:
                raise KernelError(_("{op}: data with {c} channels does not fit a weight taking "
                                    "{i} per group with groups={groups} (at run time)").format(
                    op=name, c=c, i=i, groups=groups))
            for size, b, a, k, d in ((h, padding[0], padding[2], kh, dilation[0]),
                                     (w, padding[1], padding[3], kw, dilation[1])):
                if size + b + a < (k - 1) * d + 1:
                    raise KernelError(_("{op}: the kernel does not fit an input of {size} at "
                                        "run time").format(op=name, size=size))
            out = conv2d_nchw(data, weight, strides, padding, dilation, groups)
            return lay.result(out, dt)
        return bound

    def kernel(args, attrs):
        return bind(attrs)(args)
    return kernel, bind


def _conv_transpose_kernel(name, n):
    def kernel(args, attrs):
        lay = _Layout(name, attrs, n, "IOHW")
        data, weight, dt = lay.inputs(args)
        strides, padding, dilation, groups = lay.strides, lay.padding, lay.dilation, lay.groups
        if data.shape[1] != weight.shape[0] or data.shape[1] % groups:
            raise KernelError(_("{op}: data with {data_shape_dim} channels does not fit the weight "
                                "{weight_shape} at run time").format(op=name, data_shape_dim=data.shape[1], weight_shape=fmt_shape(weight.shape)))
        opad = (0,) * (2 - n) + spatial_values(name, "output_padding",
                                               attrs["output_padding"], n, minimum=0)
        out = conv2d_transpose_nchw(data, weight, strides, padding, opad, dilation, groups)
        if min(out.shape) < 1:
            raise KernelError(_("{op}: padding crops the whole output at run time").format(op=name))
        return lay.result(out, dt)
    return kernel


def _conv_attrs(n, transpose=False):
    ones = [1] * n
    data_c = CANONICAL_DATA[n]
    kernel_c = ("IO" + data_c[2:]) if transpose else CANONICAL_KERNEL[n]
    attrs = [AttrSpec("strides", "int_list", ones)]
    if transpose:
        attrs.append(AttrSpec("output_padding", "int_list", [0] * n))
    attrs += [
        AttrSpec("padding", "int_list", [0] * max(n, 2)),
        AttrSpec("dilation", "int_list", ones),
        AttrSpec("groups", "int", 1),
        AttrSpec("channels", "int_or_none", None),
        AttrSpec("kernel_size", "int_list_or_none", None),
        AttrSpec("data_layout", "str", data_c),
        AttrSpec("kernel_layout", "str", kernel_c),
        AttrSpec("out_layout", "str", ""),
        AttrSpec("out_dtype", "dtype_or_none", None),
    ]
    return attrs


def _rel(fn, n):
    return lambda name, args, attrs: fn(name, args, attrs, n)


_conv1d, _conv1d_bind = _conv_kernel("nn.conv1d", 1)
_conv2d, _conv2d_bind = _conv_kernel("nn.conv2d", 2)
register("nn.conv1d", 2, _rel(_conv_rel, 1), _conv1d, "out_elemwise_fusable",
         attrs=_conv_attrs(1), bind=_conv1d_bind,
         doc="nn.conv1d(data, weight): 1-d convolution, NCW data and OIW weight by default")
register("nn.conv2d", 2, _rel(_conv_rel, 2), _conv2d, "out_elemwise_fusable",
         attrs=_conv_attrs(2), bind=_conv2d_bind,
         doc="nn.conv2d(data, weight, strides=, padding=, dilation=, groups=): 2-d "
             "convolution, NCHW data and OIHW weight by default")
register("nn.conv2d_transpose", 2, _rel(_conv_transpose_rel, 2),
         _conv_transpose_kernel("nn.conv2d_transpose", 2), "out_elemwise_fusable",
         attrs=_conv_attrs(2, transpose=True),
         doc="nn.conv2d_transpose(data, weight): the gradient of conv2d, IOHW weight")


# ---------------------------------------------------------------------------------------------
# 3-d convolutions (topi's conv3d_ncdhw and conv3d_transpose_ncdhw) and conv1d_transpose: one
# accumulation per kernel offset over the strided, dilated windows, groups one after another


def conv_nd(data, weight, strides, before, after, dilation, groups):
    """N-d convolution of canonical data (N, C, *spatial) with weight (O, C/groups, *k)."""
    ks = weight.shape[2:]
    pad = [(0, 0), (0, 0)] + list(zip(before, after))
    if any(b or a for b, a in zip(before, after)):
        data = np.pad(data, pad)
    spatial = data.shape[2:]
    outs = [(sz - (k - 1) * d - 1) // s + 1 for sz, k, d, s in zip(spatial, ks, dilation, strides)]
    c, o = data.shape[1], weight.shape[0]
    cg, og = c // groups, o // groups
    out = np.zeros((data.shape[0], o, *outs), data.dtype)
    with np.errstate(all="ignore"):
        for g in range(groups):
            x = data[:, g * cg:(g + 1) * cg]
            w = weight[g * og:(g + 1) * og]
            acc = out[:, g * og:(g + 1) * og]
            for offset in np.ndindex(*ks):
                window = x[(slice(None), slice(None)) + tuple(
                    slice(k * d, k * d + s * (n - 1) + 1, s)
                    for k, d, s, n in zip(offset, dilation, strides, outs))]
                acc += np.einsum("nc...,oc->no...", window,
                                 w[(slice(None), slice(None)) + offset]).astype(acc.dtype)
    return out


def conv_transpose_nd(data, weight, strides, before, after, output_padding, dilation, groups):
    """N-d transposed convolution of canonical data with an (I, O/groups, *k) weight: each
    input element scatters its weighted kernel, then `before`/`after` crop the result."""
    ks = weight.shape[2:]
    spatial = data.shape[2:]
    full = [s * (n - 1) + (k - 1) * d + 1 + op
            for s, n, k, d, op in zip(strides, spatial, ks, dilation, output_padding)]
    c, og = data.shape[1], weight.shape[1]
    cg = c // groups
    canvas = np.zeros((data.shape[0], og * groups, *full), data.dtype)
    with np.errstate(all="ignore"):
        for g in range(groups):
            x = data[:, g * cg:(g + 1) * cg]
            w = weight[g * cg:(g + 1) * cg]
            target = canvas[:, g * og:(g + 1) * og]
            for offset in np.ndindex(*ks):
                at = (slice(None), slice(None)) + tuple(
                    slice(k * d, k * d + s * (n - 1) + 1, s)
                    for k, d, s, n in zip(offset, dilation, strides, spatial))
                target[at] += np.einsum("nc...,co->no...", x,
                                        w[(slice(None), slice(None)) + offset]).astype(
                                            target.dtype)
    crop = (slice(None), slice(None)) + tuple(
        slice(b, f - a) for b, a, f in zip(before, after, full))
    return canvas[crop]


def _conv_nd_kernel(name, n, transpose):
    """The kernel of a convolution over `n` spatial axes in any layout (3-d, and 1-d
    transposed), through conv_nd / conv_transpose_nd in canonical layout."""
    data_c = CANONICAL_DATA[n]

    def kernel(args, attrs):
        data, weight = args
        dt = np.dtype(attrs["out_dtype"] or data.dtype)
        data, weight = tvm_cast(data, dt), tvm_cast(weight, dt)
        if dt == BOOL:
            data, weight = data.astype(np.int64), weight.astype(np.int64)
        kernel_c = ("IO" + data_c[2:]) if transpose else CANONICAL_KERNEL[n]
        dperm = layout_perm(name, "data_layout", attrs["data_layout"], data_c)
        kperm = layout_perm(name, "kernel_layout", attrs["kernel_layout"], kernel_c)
        operm = layout_perm(name, "out_layout", attrs["out_layout"] or attrs["data_layout"],
                            data_c)
        data, weight = data.transpose(dperm), weight.transpose(kperm)
        groups = attrs["groups"]
        strides = spatial_values(name, "strides", attrs["strides"], n)
        dilation = spatial_values(name, "dilation", attrs["dilation"], n)
        before, after = expand_padding(name, attrs["padding"], n)
        c = data.shape[1]
        fits = (c == weight.shape[0] and c % groups == 0) if transpose else (
            c == weight.shape[1] * groups and weight.shape[0] % groups == 0)
        if not fits:
            raise KernelError(_("{op}: data with {data_shape_dim} channels does not fit the "
                                "weight {weight_shape} at run time").format(
                    op=name, data_shape_dim=c, weight_shape=fmt_shape(weight.shape)))
        if transpose:
            opad = spatial_values(name, "output_padding", attrs["output_padding"], n,
                                  minimum=0)
            out = conv_transpose_nd(data, weight, strides, before, after, opad, dilation,
                                    groups)
        else:
            for size, b, a, k, d in zip(data.shape[2:], before, after, weight.shape[2:],
                                        dilation):
                if size + b + a < (k - 1) * d + 1:
                    raise KernelError(_("{op}: the kernel does not fit an input of {size} at "
                                        "run time").format(op=name, size=size))
            out = conv_nd(data, weight, strides, before, after, dilation, groups)
        if min(out.shape) < 1:
            raise KernelError(_("{op}: padding crops the whole output at run time").format(
                    op=name))
        if dt == BOOL:
            out = bool_parity(out)
        if operm != tuple(range(len(operm))):
            out = out.transpose(inverse_perm(operm))
        return as_result(np.ascontiguousarray(out), dt)
    return kernel


register("nn.conv3d", 2, _rel(_conv_rel, 3), _conv_nd_kernel("nn.conv3d", 3, False),
         "out_elemwise_fusable", attrs=_conv_attrs(3),
         doc="nn.conv3d(data, weight, strides=, padding=, dilation=, groups=): 3-d "
             "convolution, NCDHW data and OIDHW weight by default")
register("nn.conv3d_transpose", 2, _rel(_conv_transpose_rel, 3),
         _conv_nd_kernel("nn.conv3d_transpose", 3, True), "out_elemwise_fusable",
         attrs=_conv_attrs(3, transpose=True),
         doc="nn.conv3d_transpose(data, weight): the gradient of conv3d, IODHW weight")
# TVM's Conv1DTransposeAttrs default the padding to one value, (0)
_CONV1D_T_ATTRS = [AttrSpec("padding", "int_list", [0]) if a.name == "padding" else a
                   for a in _conv_attrs(1, transpose=True)]
register("nn.conv1d_transpose", 2, _rel(_conv_transpose_rel, 1),
         _conv_nd_kernel("nn.conv1d_transpose", 1, True), "out_elemwise_fusable",
         attrs=_CONV1D_T_ATTRS,
         doc="nn.conv1d_transpose(data, weight): the gradient of conv1d, IOW weight")
