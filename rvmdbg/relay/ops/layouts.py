"""Layouts and window attributes shared by the convolution, pooling and resizing operators.

A layout string (TVM's `data_layout="NHWC"`, `kernel_layout="HWIO"`) names each axis with one
letter; relations and kernels work in a canonical order (NCHW, OIHW) and map shapes to and from
the written layout. Padding is expanded as TVM expands it: for 2 spatial axes one value pads
all sides, two values are (height, width) on both sides, four are (top, left, bottom, right);
for 1 spatial axis one value pads both sides, two are (left, right).
`parse_layout` reads packed layouts too (NCHW4c: a lower-case letter is the inner part, of
the given factor, of its upper-case axis), for layout_transform.
"""
from __future__ import annotations

import functools

import numpy as np

from rvmdbg.i18n import _, ngettext
from rvmdbg.relay.ops.core import OpTypeError

CANONICAL_DATA = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
CANONICAL_KERNEL = {1: "OIW", 2: "OIHW", 3: "OIDHW"}


@functools.lru_cache(maxsize=1024)
def layout_perm(name: str, attr: str, layout: str, canonical: str) -> tuple:
    """For each letter of `canonical`, its axis in `layout` (which must permute it). Kept per
    arguments: kernels ask for it at every call (157 times in a ShuffleNet run), where it
    took 3 us of a 1x1 convolution's 13 us outside its product."""
    if sorted(layout) != sorted(canonical):
        raise OpTypeError(_("{op}: attribute '{attr}' must order the axes {canonical} (e.g. "
                            "\"{canonical}\"), got \"{layout}\"").format(
                op=name, attr=attr, canonical=canonical, layout=layout))
    return tuple(layout.index(c) for c in canonical)


def to_canonical(shape: tuple, perm: tuple) -> tuple:
    return tuple(shape[i] for i in perm)


def from_canonical(shape: tuple, perm: tuple) -> tuple:
    out = [None] * len(perm)
    for c, i in enumerate(perm):
        out[i] = shape[c]
    return tuple(out)


def inverse_perm(perm: tuple) -> tuple:
    """The transpose taking a canonical-order array back to the written layout."""
    return tuple(perm.index(i) for i in range(len(perm)))


def spatial_values(name: str, attr: str, values, n: int, minimum: int = 1) -> tuple:
    """A per-spatial-axis attribute (strides, dilation, pool_size): n values, or 1 for all."""
    if values is None:
        raise OpTypeError(_("{op}: attribute '{attr}' is required").format(op=name, attr=attr))
    vals = [values] if isinstance(values, int) else list(values)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise OpTypeError(ngettext("{op}: attribute '{attr}' must have {n} value, got {vals}",
                                   "{op}: attribute '{attr}' must have {n} values, got {vals}",
                                   n).format(op=name, attr=attr, n=n, vals=list(vals)))
    for v in vals:
        if v < minimum:
            raise OpTypeError(_("{op}: attribute '{attr}' must be >= {minimum}, got "
                                "{value}").format(
                    op=name, attr=attr, minimum=minimum, value=list(vals)))
    return tuple(vals)


def expand_padding(name: str, padding, n: int, attr: str = "padding") -> tuple:
    """(before, after) per spatial axis from a padding attribute, as TVM expands it."""
    vals = [padding] if isinstance(padding, int) else list(padding)
    if len(vals) == 1:
        vals = vals * (2 * n)
    elif len(vals) == n and n in (2, 3):  # one value per axis, both sides (Pool3DRel too)
        vals = vals * 2
    elif len(vals) != 2 * n:
        if n == 2:
            text = _("{op}: attribute '{attr}' must have 1, 2 or 4 values, got {vals}")
        elif n == 3:
            text = _("{op}: attribute '{attr}' must have 1, 3 or 6 values, got {vals}")
        else:
            text = _("{op}: attribute '{attr}' must have 1 or {count} values, got {vals}")
        raise OpTypeError(text.format(op=name, attr=attr, count=2 * n, vals=vals))
    if any(v < 0 for v in vals):
        raise OpTypeError(_("{op}: attribute '{attr}' must not be negative, got {vals}").format(
                op=name, attr=attr, vals=vals))
    return tuple(vals[:n]), tuple(vals[n:])


def window_out(size, before: int, after: int, window: int, stride: int, ceil_mode: bool = False):
    """The number of window positions along one axis (None when `size` is `?`)."""
    if size is None:
        return None
    span = size + before + after - window
    if ceil_mode:
        span += stride - 1
    return span // stride + 1


def parse_layout(name: str, attr: str, layout: str) -> list:
    """A layout such as "NCHW4c" as [(letter, factor or None)]: an upper-case letter is a whole
    (primal) axis, a lower-case one with its factor the inner part of the same axis split."""
    items, i = [], 0
    while i < len(layout):
        j = i
        while j < len(layout) and layout[j].isdigit():
            j += 1
        if j == len(layout) or not ("A" <= layout[j] <= "Z" or "a" <= layout[j] <= "z"):
            raise OpTypeError(_("{op}: attribute '{attr}' {layout} is not a layout: "
                                "expected axis letters, each lower-case one after its "
                                "factor (NCHW4c)").format(
                    op=name, attr=attr, layout=repr(layout)))
        letter = layout[j]
        factor = int(layout[i:j]) if j > i else None
        if letter.isupper() and factor is not None:
            raise OpTypeError(_("{op}: attribute '{attr}' {layout}: the whole axis {letter} "
                                "takes no factor").format(
                    op=name, attr=attr, layout=repr(layout), letter=letter))
        if letter.islower() and not factor:
            raise OpTypeError(_("{op}: attribute '{attr}' {layout}: the sub-axis {letter} needs "
                                "a positive factor before it").format(
                    op=name, attr=attr, layout=repr(layout), letter=letter))
        if any(c == letter for c, _factor in items):
            raise OpTypeError(_("{op}: attribute '{attr}' {layout} repeats axis {letter}").format(
                    op=name, attr=attr, layout=repr(layout), letter=letter))
        items.append((letter, factor))
        i = j + 1
    letters = {c for c, _factor in items}
    for c, _factor in items:
        if c.islower() and c.upper() not in letters:
            raise OpTypeError(_("{op}: attribute '{attr}' {layout}: sub-axis {letter} without "
                                "its axis {axis}").format(
                    op=name, attr=attr, layout=repr(layout), letter=c, axis=c.upper()))
    return items


def _fill_border(grid, fill, rows: slice, cols: slice, axis: int) -> None:
    """Write `fill` into the cells of `grid` outside the block rows x cols of its axes
    (axis, axis + 1): a phase's padding, written once, where filling the whole grid first
    wrote every data cell twice (SqueezeNet's first max pool, 96 x 111 x 111: 1,360 -> 1,309
    us a call)."""
    lead = (slice(None),) * (axis % grid.ndim)
    grid[lead + (slice(0, rows.start),)] = fill
    grid[lead + (slice(rows.stop, None),)] = fill
    grid[lead + (rows, slice(0, cols.start))] = fill
    grid[lead + (rows, slice(cols.stop, None))] = fill


class StridePhases:
    """A padded image (..., H, W) split into its stride phases, for a window operator to run
    tap by tap over whole flattened images instead of short strided rows.

    `pads` is ((top, bottom), (left, right)) of `fill` cells. Each phase (x[..., a::sh,
    b::sw] of the padded image) lies on a common height x width grid, flattened row by row
    and built on first use: kernel position (i, j) reads phase ((i*dh) % sh, (j*dw) % sw)
    shifted by ((i*dh) // sh, (j*dw) // sw), one contiguous run of oh*width values (`run`),
    of which the width - ow past each output row are junk, for the caller to cut off
    (`crop`). Channels-last (`last`, NCHW data only) stores each grid cell's C channels
    innermost, so a run is oh rows of width*C values: the layout for small images of many
    channels, where one channel's image is a short loop."""

    def __init__(self, x, pads, outs, kernel, strides, dilation, fill=0, last=False):
        (self.pt, pb), (self.pl, pr) = pads
        hp, wp = x.shape[-2] + self.pt + pb, x.shape[-1] + self.pl + pr
        (self.oh, self.ow), (kh, kw) = outs, kernel
        (self.sh, self.sw), (self.dh, self.dw) = strides, dilation
        # every shifted run stays inside the grid: rows up to oh-1 + the largest row shift,
        # plus one row for the last run's overrun into the junk columns
        self.width = max(-(-wp // self.sw), self.ow + ((kw - 1) * self.dw) // self.sw)
        self.height = max(-(-hp // self.sh), self.oh + ((kh - 1) * self.dh) // self.sh) + 1
        self.x, self.fill, self.last = x, fill, last
        self.unit = x.shape[1] if last else 1
        self.size = self.oh * self.width * self.unit
        self._phases: dict = {}

    def run(self, i: int, j: int):
        """The values kernel position (i, j) meets, flattened: (..., oh*width*unit)."""
        a, b = (i * self.dh) % self.sh, (j * self.dw) % self.sw
        flat = self._phases.get((a, b))
        if flat is None:
            flat = self._phases[(a, b)] = self._phase(a, b)
        at = ((i * self.dh) // self.sh * self.width + (j * self.dw) // self.sw) * self.unit
        return flat[..., at:at + self.size]

    def _phase(self, a: int, b: int):
        # the phase of the padded image, written straight from the data
        x, height, width = self.x, self.height, self.width
        r0, c0 = -(-max(self.pt - a, 0) // self.sh), -(-max(self.pl - b, 0) // self.sw)
        src = x[..., a + r0 * self.sh - self.pt::self.sh, b + c0 * self.sw - self.pl::self.sw]
        src = src[..., :height - r0, :width - c0]
        rows, cols = src.shape[-2:]
        if self.last:
            n = x.shape[0]
            grid = np.empty((n, height, width, self.unit), dtype=x.dtype)
            grid[:, r0:r0 + rows, c0:c0 + cols] = src.transpose(0, 2, 3, 1)
            _fill_border(grid, self.fill, slice(r0, r0 + rows), slice(c0, c0 + cols), 1)
            return grid.reshape(n, height * width * self.unit)
        grid = np.empty((*x.shape[:-2], height, width), dtype=x.dtype)
        grid[..., r0:r0 + rows, c0:c0 + cols] = src
        _fill_border(grid, self.fill, slice(r0, r0 + rows), slice(c0, c0 + cols), -2)
        return grid.reshape(*x.shape[:-2], height * width)

    def crop(self, acc):
        """A sum over runs as the operator's output: (..., oh, ow), or NCHW over the
        channels-last array."""
        if self.last:
            n = self.x.shape[0]
            return acc.reshape(n, self.oh, self.width, -1)[:, :, :self.ow].transpose(0, 3, 1, 2)
        return acc.reshape(*acc.shape[:-1], self.oh, self.width)[..., :self.ow]
