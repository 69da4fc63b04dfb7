"""Sub-pixel rearrangements: nn.depth_to_space and nn.space_to_depth (TVM's SubPixelAttrs:
block_size, layout, mode; pattern injective).

topi's semantics (topi/nn/depth_to_space.py, space_to_depth.py): depth_to_space moves blocks
of block_size x block_size channels into space, reading the channel
`((y % b) * b + x % b) * C_out + c` in "DCR" mode and `c * b * b + (y % b) * b + x % b` in
"CRD" mode; space_to_depth is the inverse of DCR. As TVM's relation, the channel count is
divided down (`C / b^2`, channels past the last whole block are not read).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import AttrSpec, OpTypeError, register
from rvmdbg.relay.ops.layouts import from_canonical, layout_perm, to_canonical
from rvmdbg.relay.types import TensorType


def _times(d, k):
    return None if d is None else d * k


def _over(d, k):
    return None if d is None else d // k


def _check(name, x, attrs):
    if len(x.shape) != 4:
        raise OpTypeError(_("{op}: needs a {rank}-d tensor ({layout}), got {x}").format(
                op=name, rank=4, layout=attrs["layout"], x=x))
    if attrs["block_size"] < 1:
        raise OpTypeError(_("{op}: attribute 'block_size' must be positive, got {value}").format(
                op=name, value=attrs["block_size"]))
    return layout_perm(name, "layout", attrs["layout"], "NCHW")


def _depth_to_space_rel(name, args, attrs):
    (x,) = args
    perm = _check(name, x, attrs)
    b = attrs["block_size"]
    n, c, h, w = to_canonical(x.shape, perm)
    out = (n, _over(c, b * b), _times(h, b), _times(w, b))
    return TensorType(from_canonical(out, perm), x.dtype)


def _space_to_depth_rel(name, args, attrs):
    (x,) = args
    perm = _check(name, x, attrs)
    b = attrs["block_size"]
    n, c, h, w = to_canonical(x.shape, perm)
    out = (n, _times(c, b * b), _over(h, b), _over(w, b))
    return TensorType(from_canonical(out, perm), x.dtype)


def _nchw(x, attrs, name):
    perm = layout_perm(name, "layout", attrs["layout"], "NCHW")
    return x.transpose(perm), perm


def _back(y, perm):
    return y.transpose(np.argsort(perm))


def _depth_to_space_kernel(args, attrs):
    x, perm = _nchw(args[0], attrs, "nn.depth_to_space")
    b = attrs["block_size"]
    n, c, h, w = x.shape
    co = c // (b * b)
    x = x[:, :co * b * b]
    if attrs["mode"] == "DCR":
        y = x.reshape(n, b, b, co, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, co, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return _back(y.reshape(n, co, h * b, w * b), perm).copy()  # fresh, never a view


def _space_to_depth_kernel(args, attrs):
    x, perm = _nchw(args[0], attrs, "nn.space_to_depth")
    b = attrs["block_size"]
    n, c, h, w = x.shape
    ho, wo = h // b, w // b
    x = x[:, :, :ho * b, :wo * b]
    y = x.reshape(n, c, ho, b, wo, b).transpose(0, 3, 5, 1, 2, 4)
    return _back(y.reshape(n, c * b * b, ho, wo), perm).copy()  # fresh, never a view


_ATTRS = [AttrSpec("block_size", "int"), AttrSpec("layout", "str", "NCHW"),
          AttrSpec("mode", "str", "DCR", choices=("DCR", "CRD"))]

register("nn.depth_to_space", 1, _depth_to_space_rel, _depth_to_space_kernel, "injective",
         attrs=_ATTRS, doc="nn.depth_to_space(data, block_size=, mode=\"DCR\"): channels into "
                           "blocks of space")
register("nn.space_to_depth", 1, _space_to_depth_rel, _space_to_depth_kernel, "injective",
         attrs=_ATTRS, doc="nn.space_to_depth(data, block_size=): blocks of space into "
                           "channels")
