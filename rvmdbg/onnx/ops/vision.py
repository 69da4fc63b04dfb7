"""Converters of Einsum, LRN, DepthToSpace, SpaceToDepth, RoiAlign, GridSample and
NonMaxSuppression to Relay's einsum, nn.lrn, nn.depth_to_space, nn.space_to_depth,
vision.roi_align, image.grid_sample and vision.all_class_non_max_suppression, as TVM's
relay.frontend.onnx emitted them (RoiAlign: the batch indices prepended to the rois as a
column; opset 16's half_pixel coordinates and ONNX's max, which TVM's converter did not read,
through roi_align's rvmdbg-only aligned and mode="weighted_max"; NonMaxSuppression: center-point boxes turned into corners, the padded result cut to its
count with dyn.strided_slice)."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.registry import converter


@converter("Einsum", since=12)
def einsum(g, node, inputs, attrs):
    return g.call("einsum", [g.tuple(list(inputs))], equation=attrs["equation"])


@converter("LRN", since=1)
def lrn(g, node, inputs, attrs):
    return g.call("nn.lrn", [inputs[0]], size=int(attrs["size"]), axis=1,
                  alpha=float(attrs.get("alpha", 0.0001)), beta=float(attrs.get("beta", 0.75)),
                  bias=float(attrs.get("bias", 1.0)))


@converter("DepthToSpace", since=1)
def depth_to_space(g, node, inputs, attrs):
    return g.call("nn.depth_to_space", [inputs[0]], block_size=int(attrs["blocksize"]),
                  mode=attrs.get("mode", "DCR"))


@converter("SpaceToDepth", since=1)
def space_to_depth(g, node, inputs, attrs):
    b = int(attrs["blocksize"])
    out = g.call("nn.space_to_depth", [inputs[0]], block_size=b)
    if attrs.get("mode", "DCR") == "CRD":
        # ONNX added CRD after TVM (whose converter had DCR only): the channel-major order is
        # DCR's (block, channel) channels transposed to (channel, block)
        n, ch, h, w = g.shape_of(out)
        if None in (ch, h, w):
            raise g.error("SpaceToDepth in CRD mode needs static channel and spatial dims")
        out = c.reshape(g, out, [0, b * b, ch // (b * b), h, w])
        out = c.transpose(g, out, [0, 2, 1, 3, 4])
        out = c.reshape(g, out, [0, ch, h, w])
    return out


@converter("RoiAlign", since=10)
def roi_align(g, node, inputs, attrs):
    x, rois, batch_indices = inputs
    mode = attrs.get("mode", "avg")
    if mode not in ("avg", "max"):
        raise g.error(f"value {mode} of attribute mode of RoiAlign is not valid",
                      hint="avg or max")
    batch = c.cast(g, c.expand_dims(g, batch_indices, 1), g.dtype_of(rois))
    rois = c.concat(g, [batch, rois], 1)
    extra = {}
    # TVM's converter read neither: opset 16's half_pixel default, and ONNX's max (the
    # largest weighted corner), through vision.roi_align's rvmdbg-only aligned and mode value
    if g.opset >= 16 and attrs.get("coordinate_transformation_mode", "half_pixel") == "half_pixel":
        extra["aligned"] = True
    if mode == "max":
        mode = "weighted_max"
    return g.call("vision.roi_align", [x, rois],
                  pooled_size=[int(attrs.get("output_height", 1)),
                               int(attrs.get("output_width", 1))],
                  spatial_scale=float(attrs.get("spatial_scale", 1.0)),
                  sample_ratio=int(attrs.get("sampling_ratio", 0)), layout="NCHW", mode=mode,
                  **extra)


@converter("GridSample", since=16)
def grid_sample(g, node, inputs, attrs):
    x, grid = inputs
    method = attrs.get("mode", "bilinear")
    method = {"linear": "bilinear", "cubic": "bicubic"}.get(method, method)  # opset 20 names
    rank = g.rank_of(x)
    # ONNX's grid is (N, *spatial, rank-2); Relay's puts the coordinates second
    axes = [0, rank - 1] + list(range(1, rank - 1))
    return g.call("image.grid_sample", [x, c.transpose(g, grid, axes)], method=method,
                  layout="NCDHW" if rank == 5 else "NCHW", padding_mode=attrs.get("padding_mode", "zeros"),
                  align_corners=bool(attrs.get("align_corners", 0)))


def _above(g, thr):
    """The least float32 above thr (thr >= 0): the kernel suppresses at IoU >= it, which is
    ONNX's IoU > thr (TVM passed thr, suppressing at equality: docs/differences.md)."""
    if g.dtype_of(thr) != "float32":
        thr = c.cast(g, thr, "float32")
    v = c.const_value(g, thr)
    if v is not None:
        v = np.float32(v)
        return g.const(np.nextafter(v, np.float32(np.inf)) if v >= 0 else v)
    bits = g.call("reinterpret", [thr], dtype="int32")
    up = g.call("reinterpret", [g.call("add", [bits, g.const(np.array(1, "int32"))])],
                dtype="float32")
    return g.call("where", [g.call("greater_equal", [thr, g.const(np.float32(0))]), up, thr])


@converter("NonMaxSuppression", since=10)
def non_max_suppression(g, node, inputs, attrs):
    boxes, scores = inputs[0], inputs[1]
    rest = list(inputs[2:]) + [None] * (5 - len(inputs))
    max_out, iou, score = rest[:3]
    if attrs.get("center_point_box", 0) != 0:
        dt = g.dtype_of(boxes)
        parts = g.call("split", [boxes], indices_or_sections=4, axis=2)
        xc, yc, w, h = (g.get(parts, i) for i in range(4))
        half_w = g.call("divide", [w, g.const(np.array(2.0, dt))])
        half_h = g.call("divide", [h, g.const(np.array(2.0, dt))])
        boxes = c.concat(g, [g.call("subtract", [yc, half_h]), g.call("subtract", [xc, half_w]),
                             g.call("add", [yc, half_h]), g.call("add", [xc, half_w])], 2)
    if max_out is None:
        max_out = g.const(np.array(0, "int64"))
    if iou is None:
        iou = g.const(np.array(0.0, "float32"))
    if score is None:
        score = g.const(np.array(0.0, "float32"))

    def scalar(x):
        if g.rank_of(x) > 1:
            raise g.error("NonMaxSuppression thresholds must be scalars")
        return c.squeeze(g, x, [0]) if g.rank_of(x) == 1 else x
    out = g.call("vision.all_class_non_max_suppression",
                 [boxes, scores, scalar(max_out), _above(g, scalar(iou)), scalar(score)],
                 output_format="onnx")
    return g.call("dyn.strided_slice", [g.get(out, 0), g.const(np.array([0], "int64")),
                                        g.get(out, 1), g.const(np.array([1], "int64"))],
                  slice_mode="end")


@converter("DeformConv", since=19)
def deform_conv(g, node, inputs, attrs):
    """DeformConv (opset 19, 2-d; after TVM's converters) as ONNX's reference computes it: for
    each offset group and kernel position, the input sampled at the window's place plus the
    learned offset by `image.grid_sample` (bilinear, zeros outside, align_corners: a point
    between the image and the outside takes its inside neighbours' share, where TVM's
    `nn.deformable_conv2d` reads 0 for the whole point), times the mask; the samples stacked
    as columns (N, C*K, OH*OW) and one `einsum` with the weight per group, then the bias."""
    x, weight, offset = inputs[0], inputs[1], inputs[2]
    bias = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    n, ch, h, w = g.shape_of(x)
    oc, cg, kh, kw = g.shape_of(weight)
    _n, _k, oh, ow = g.shape_of(offset)
    if None in (ch, h, w, oc, cg, kh, kw, oh, ow):
        raise g.error("DeformConv needs static shapes (but the batch)")
    if len(attrs.get("kernel_shape", [kh, kw])) != 2:
        raise g.error("DeformConv is supported in 2-d (as ONNX's reference)")
    if h < 2 or w < 2:
        raise g.error("DeformConv samples an image of at least 2 x 2 (the grid divides by "
                      "size - 1)")
    group, og = int(attrs.get("group", 1)), int(attrs.get("offset_group", 1))
    dh, dw = c.ints(attrs.get("dilations", [1, 1]))
    sh, sw = c.ints(attrs.get("strides", [1, 1]))
    pt, pl = c.ints(attrs.get("pads", [0, 0, 0, 0]))[:2]
    if ch % og or ch != cg * group or oc % group:
        raise g.error(f"DeformConv: {ch} input channels, weight {[oc, cg, kh, kw]}, group "
                      f"{group} and offset_group {og} disagree")
    dtype = g.dtype_of(x)
    taps = kh * kw
    rows = np.arange(oh, dtype=dtype)[:, None] * sh - pt          # (OH, 1)
    cols = np.arange(ow, dtype=dtype)[None, :] * sw - pl          # (1, OW)

    def channel(t, index):
        return c.strided_slice(g, t, [index], [index + 1], axes=[1])   # keeps the axis

    def grid_axis(index, place, size):
        """The window's place plus offset channel `index`, as grid_sample's [-1, 1]
        coordinate along an axis of `size` (align_corners)."""
        at = g.call("add", [channel(offset, index), g.const(place[None, None])])
        scaled = g.call("multiply", [at, g.const(np.asarray(2 / (size - 1), dtype))])
        return g.call("subtract", [scaled, g.const(np.asarray(1, dtype))])

    per_group = ch // og
    samples = []
    for gi in range(og):
        xg = c.strided_slice(g, x, [gi * per_group], [(gi + 1) * per_group], axes=[1])
        for t in range(taps):
            a, b = divmod(t, kw)
            k = gi * taps + t
            # (N, 2, OH, OW): x (the offset's second channel) first, as grid_sample reads it
            grid = c.concat(g, [grid_axis(2 * k + 1, cols + b * dw, w),
                                grid_axis(2 * k, rows + a * dh, h)], axis=1)
            s = g.call("image.grid_sample", [xg, grid], method="bilinear", layout="NCHW",
                       padding_mode="zeros", align_corners=True)          # (N, C/og, OH, OW)
            if mask is not None:
                s = g.call("multiply", [s, channel(mask, k)])
            samples.append(c.expand_dims(g, s, 2))                       # (N, C/og, 1, OH, OW)
    # (N, C, K, OH, OW): each offset group's taps side by side, then the groups' channels
    stacked = c.concat(g, [c.concat(g, samples[gi * taps:(gi + 1) * taps], axis=2)
                           for gi in range(og)], axis=1)
    batch = -1 if n is None else n
    columns = c.reshape(g, stacked, [batch, group, cg * taps, oh * ow])
    kernel = c.reshape(g, weight, [group, oc // group, cg * taps])
    out = g.call("einsum", [g.tuple([kernel, columns])], equation="gok,ngkl->ngol")
    out = c.reshape(g, out, [batch, oc, oh, ow])
    if bias is not None:
        out = g.call("nn.bias_add", [out, bias], axis=1)
    return out
