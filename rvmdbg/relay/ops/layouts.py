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

from rvmdbg.i18n import _, ngettext
from rvmdbg.relay.ops.core import OpTypeError

CANONICAL_DATA = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
CANONICAL_KERNEL = {1: "OIW", 2: "OIHW", 3: "OIDHW"}


def layout_perm(name: str, attr: str, layout: str, canonical: str) -> tuple:
    """For each letter of `canonical`, its axis in `layout` (which must permute it)."""
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
