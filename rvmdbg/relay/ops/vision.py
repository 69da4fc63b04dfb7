"""Vision operators: vision.roi_align (TVM's ROIAlignAttrs: pooled_size, spatial_scale,
sample_ratio, layout, mode; pattern out_elemwise_fusable) and
vision.all_class_non_max_suppression (below).

The kernel is TVM's CPU one (topi/x86/roi_align.py, what `llvm` ran): each roi
`[batch_index, w_start, h_start, w_end, h_end]` is scaled by spatial_scale, its size lifted to at
least 1, split into pooled_size bins, each sampled on a grid of sample_ratio points a side
(or, with sample_ratio <= 0, ceil(bin size) points); a point more than one pixel outside the
image counts 0, else it is clamped and sampled bilinearly (at the last row or column the
neighbours collapse onto it). avg adds each sample divided by the count; max keeps the largest
sample (from -inf).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import AttrSpec, KernelError, OpTypeError, as_result, is_float, register
from rvmdbg.relay.ops.index import stable_argsort
from rvmdbg.relay.types import TensorType, TupleType

_F32 = np.float32


def _roi_align_rel(name, args, attrs):
    data, rois = args
    if len(data.shape) != 4:
        raise OpTypeError(_("{op}: input data should be 4-d, got {t}").format(op=name, t=data))
    if len(rois.shape) != 2:
        raise OpTypeError(_("{op}: input rois should be 2-d, got {t}").format(op=name, t=rois))
    size = attrs["pooled_size"]
    if len(size) != 2 or min(size) < 1:
        raise OpTypeError(_("{op}: attribute 'pooled_size' must be 2 positive integers, got "
                            "{size}").format(op=name, size=size))
    if attrs["layout"] == "NCHW":
        shape = (rois.shape[0], data.shape[1], size[0], size[1])
    else:
        shape = (rois.shape[0], size[0], size[1], data.shape[3])
    return TensorType(shape, data.dtype)


def _axis_samples(start, bin_size, grid, pooled, limit):
    """Per bin and grid point: (low index, high index, weight of high, inside) on one axis."""
    p = np.arange(pooled, dtype=_F32)[:, None]
    i = np.arange(grid, dtype=_F32)[None, :]
    c = (_F32(start) + p * _F32(bin_size) + (i + _F32(0.5)) * _F32(bin_size) / _F32(grid))
    c = c.reshape(-1).astype(_F32)
    inside = (c >= -1.0) & (c <= limit)
    c = np.maximum(c, _F32(0))
    low = c.astype(np.int64)
    high = low + 1
    edge = low >= limit - 1
    low = np.where(edge, limit - 1, low)
    high = np.where(edge, limit - 1, high)
    c = np.where(edge, low.astype(_F32), c)
    frac = (c - low).astype(_F32)
    return low, high, frac, inside


def _roi_align_nchw(data, rois, pooled, scale, ratio, mode, aligned=False):
    n_roi = rois.shape[0]
    channels, height, width = data.shape[1:]
    ph, pw = pooled
    out = np.zeros((n_roi, channels, ph, pw), data.dtype)
    for n in range(n_roi):
        r = rois[n].astype(_F32)
        b = int(r[0])
        if not 0 <= b < data.shape[0]:
            raise KernelError(_("vision.roi_align: roi {n} names batch {b}, the data has "
                                "{count}").format(n=n, b=b, count=data.shape[0]))
        sw, sh, ew, eh = (r[1:5] * _F32(scale)).astype(_F32)
        if aligned:
            # rvmdbg's aligned (ONNX's half_pixel): pixel centres at +0.5, sizes not lifted
            sw, sh, ew, eh = (np.array([sw, sh, ew, eh], _F32) - _F32(0.5)).astype(_F32)
            roi_h, roi_w = _F32(eh - sh), _F32(ew - sw)
        else:
            roi_h, roi_w = max(eh - sh, _F32(1)), max(ew - sw, _F32(1))
        bin_h, bin_w = _F32(roi_h / ph), _F32(roi_w / pw)
        if ratio > 0:
            gh = gw = ratio
        else:
            gh = int(bin_h) + (int(bin_h) < bin_h)
            gw = int(bin_w) + (int(bin_w) < bin_w)
        if gh <= 0 or gw <= 0:
            continue
        yl, yh, ly, yin = _axis_samples(sh, bin_h, gh, ph, height)
        xl, xh, lx, xin = _axis_samples(sw, bin_w, gw, pw, width)
        img = data[b].astype(_F32)  # (C, H, W)
        hy, hx = _F32(1) - ly, _F32(1) - lx
        corners = [img[:, yl][:, :, xl] * (hy[:, None] * hx[None, :]),
                   img[:, yl][:, :, xh] * (hy[:, None] * lx[None, :]),
                   img[:, yh][:, :, xl] * (ly[:, None] * hx[None, :]),
                   img[:, yh][:, :, xh] * (ly[:, None] * lx[None, :])]
        if mode == "weighted_max":  # ONNX's max: per sample the largest weighted corner
            val = np.maximum(np.maximum(corners[0], corners[1]),
                             np.maximum(corners[2], corners[3]))
        else:
            val = corners[0] + corners[1] + corners[2] + corners[3]
        val = np.where(yin[:, None] & xin[None, :], val, _F32(0))
        val = val.reshape(channels, ph, gh, pw, gw)
        if mode == "avg":
            count = _F32(gh * gw)
            out[n] = (val / count).sum(axis=(2, 4), dtype=_F32)
        else:  # max and weighted_max: the largest sample of each bin
            out[n] = np.maximum(val.max(axis=(2, 4)), -np.inf)
    return out


def _roi_align_kernel(args, attrs):
    data, rois = args
    if not is_float(str(data.dtype)):
        raise KernelError(_("vision.roi_align: TVM's kernel samples floats, got {dtype}").format(
                dtype=data.dtype))
    nhwc = attrs["layout"] == "NHWC"
    x = data.transpose(0, 3, 1, 2) if nhwc else data
    with np.errstate(all="ignore"):
        out = _roi_align_nchw(x, rois, attrs["pooled_size"], attrs["spatial_scale"],
                              attrs["sample_ratio"], attrs["mode"], attrs["aligned"])
    return as_result(out.transpose(0, 2, 3, 1) if nhwc else out, data.dtype)


register("vision.roi_align", 2, _roi_align_rel, _roi_align_kernel, "out_elemwise_fusable",
         attrs=[AttrSpec("pooled_size", "int_list"), AttrSpec("spatial_scale", "float"),
                AttrSpec("sample_ratio", "int", -1),
                AttrSpec("layout", "str", "NCHW", choices=("NCHW", "NHWC")),
                # rvmdbg extensions for ONNX RoiAlign (TVM had neither): aligned (half_pixel
                # coordinates) and mode "weighted_max" (the largest weighted corner)
                AttrSpec("mode", "str", "avg", choices=("avg", "max", "weighted_max")),
                AttrSpec("aligned", "bool", False)],
         doc="vision.roi_align(data, rois, pooled_size=[h, w], spatial_scale=): bilinear "
             "average (or max) pooling of each region of interest")


# ---------------------------------------------------------------------------------------------
# vision.all_class_non_max_suppression (AllClassNonMaximumSuppressionAttrs: output_format;
# opaque), the "onnx" output format: topi/vision/nms.py. Per batch and class, the boxes are
# sorted by score (descending, stable), those with score > score_threshold are candidates, and
# greedily each box still valid is kept and suppresses the later candidates whose score is > 0
# and whose IoU with it is >= iou_threshold, until max_output_boxes_per_class are kept (0 or
# less: no limit). An iou_threshold <= 0 keeps nothing. The result is (batch * classes * boxes,
# 3) rows [batch, class, box] in batch-then-class order, padded with zeros, and the row count.


def _nms_rel(name, args, attrs):
    boxes, scores, max_out, iou, score = args
    if len(boxes.shape) != 3 or len(scores.shape) != 3:
        raise OpTypeError(_("{op}: boxes and scores should be 3-d, got {b} and {s}").format(
                op=name, b=boxes, s=scores))
    if attrs["output_format"] != "onnx":
        raise OpTypeError(_("{op}: rvmdbg has the \"onnx\" output format only, got "
                            "{value}").format(op=name, value=attrs["output_format"]))
    batch, n_boxes, n_classes = boxes.shape[0], boxes.shape[1], scores.shape[1]
    total = None if None in (batch, n_boxes, n_classes) else batch * n_classes * n_boxes
    return TupleType((TensorType((total, 3), "int64"), TensorType((1,), "int64")))


def _iou(a, b):
    al, at, ar, ab = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bl, bt, br, bb = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    w = max(_F32(0), min(ar, br) - max(al, bl))
    h = max(_F32(0), min(ab, bb) - max(at, bt))
    area = h * w
    u = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area
    return _F32(0) if u <= 0 else area / u


def _nms_kernel(args, attrs):
    boxes, scores, max_out, iou_thr, score_thr = args
    batch, n_classes, n_boxes = scores.shape
    limit = int(np.asarray(max_out).reshape(-1)[0])
    iou_thr = _F32(np.asarray(iou_thr).reshape(-1)[0])
    score_thr = _F32(np.asarray(score_thr).reshape(-1)[0])
    rows = []
    for b in range(batch):
        for c in range(n_classes):
            s = scores[b, c].astype(_F32)
            order = stable_argsort(s, 0, False)
            left = s[order].copy()
            valid = int(np.count_nonzero(left > score_thr))
            if not (iou_thr > 0 and valid > 0):
                continue
            keep_max = limit if limit > 0 else valid
            kept, j = 0, 0
            cand = boxes[b, order].astype(_F32)
            while j < valid and kept < keep_max:
                if left[j] > -1:
                    rows.append((b, c, int(order[j])))
                    kept += 1
                    for k in range(j + 1, valid):
                        if left[k] > 0 and _iou(cand[j], cand[k]) >= iou_thr:
                            left[k] = -1
                j += 1
    out = np.zeros((batch * n_classes * n_boxes, 3), np.int64)
    if rows:
        out[:len(rows)] = rows
    return out, np.array([len(rows)], np.int64)


register("vision.all_class_non_max_suppression", 5, _nms_rel, _nms_kernel, "opaque",
         attrs=[AttrSpec("output_format", "str", "onnx")],
         doc="vision.all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class, "
             "iou_threshold, score_threshold): ([batch, class, box] rows, [count])")
