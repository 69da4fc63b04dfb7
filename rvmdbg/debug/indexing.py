"""NumPy's basic indexing in the command language: `print $3[0, :, 3]`, `$3[..., ::2]`,
`$3[-1]`, `$3[None, 1:4]`.

A small parser of its own (no eval): integers, slices `start:stop:step` with any part left
out, `...` and `None`/`newaxis`, separated by commas. Applying it is NumPy's indexing, so the
result is exactly what `a[...]` gives in Python; an index out of range or too many indices is
an `IndexSyntaxError` saying which.
"""
from __future__ import annotations

import re

import numpy as np

from rvmdbg.i18n import _

_INT = re.compile(r"[+-]?\d+")


class IndexSyntaxError(ValueError):
    """An index that does not parse or does not fit the tensor."""


def split_indexed(text: str) -> tuple[str, str | None]:
    """`$3[0, :]` -> ("$3", "0, :"); text without a trailing `[...]` -> (text, None)."""
    t = text.strip()
    open_at = t.find("[")
    if open_at < 0:
        return t, None
    if not t.endswith("]"):
        raise IndexSyntaxError(_("expected `]` to close the index in {text}").format(
            text=repr(t)))
    return t[:open_at].strip(), t[open_at + 1:-1]


def parse_index(text: str) -> tuple:
    """The index tuple of `text` (what is between the brackets)."""
    parts = [p.strip() for p in text.split(",")]
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()  # `a[0,]` is a[(0,)]
    out: list = []
    for p in parts:
        if p == "":
            raise IndexSyntaxError(_("empty index: write an integer, a slice like 1:3, `:` or "
                                     "`...`"))
        if p == "...":
            if any(x is Ellipsis for x in out):
                raise IndexSyntaxError(_("an index can have only one `...`"))
            out.append(Ellipsis)
        elif p in ("None", "newaxis", "np.newaxis"):
            out.append(None)
        elif ":" in p:
            bits = [b.strip() for b in p.split(":")]
            if len(bits) > 3:
                raise IndexSyntaxError(_("a slice has at most three parts (start:stop:step): "
                                         "{text}").format(text=repr(p)))
            vals = []
            for b in bits:
                if b == "":
                    vals.append(None)
                elif _INT.fullmatch(b):
                    vals.append(int(b))
                else:
                    raise IndexSyntaxError(_("expected an integer in the slice {text}, got "
                                             "{got}").format(text=repr(p), got=repr(b)))
            if len(vals) == 3 and vals[2] == 0:
                raise IndexSyntaxError(_("slice step cannot be zero: {text}").format(
                    text=repr(p)))
            out.append(slice(*vals))
        elif _INT.fullmatch(p):
            out.append(int(p))
        else:
            raise IndexSyntaxError(_("expected an integer, a slice like 1:3, `:`, `...` or "
                                     "None, got {text}").format(text=repr(p)))
    return tuple(out)


def apply_index(a: np.ndarray, index: tuple) -> np.ndarray:
    """a[index] as a NumPy array (0-d for one element), or IndexSyntaxError."""
    try:
        out = a[index]
    except IndexError as e:
        raise IndexSyntaxError(_("{error} (shape {shape})").format(
            error=_numpy_index_error(str(e)), shape=tuple(a.shape))) from None
    return np.asarray(out)


_OUT_OF_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")
_TOO_MANY = re.compile(r"too many indices for array: array is (\d+)-dimensional, but (\d+) "
                       r"were indexed")


def _numpy_index_error(text: str) -> str:
    """NumPy's IndexError in the language in use (its two common wordings; others as NumPy
    says them)."""
    m = _OUT_OF_BOUNDS.fullmatch(text)
    if m:
        return _("index {index} is out of bounds for axis {axis} with size {size}").format(
            index=m[1], axis=m[2], size=m[3])
    m = _TOO_MANY.fullmatch(text)
    if m:
        return _("too many indices for array: array is {n}-dimensional, but {m} were "
                 "indexed").format(n=m[1], m=m[2])
    return text


def index_text(index: tuple) -> str:
    """The index written back as text: `0, :, 3`."""
    def one(x) -> str:
        if x is Ellipsis:
            return "..."
        if x is None:
            return "None"
        if isinstance(x, slice):
            text = ("" if x.start is None else str(x.start)) + ":" + \
                ("" if x.stop is None else str(x.stop))
            return text + (f":{x.step}" if x.step is not None else "")
        return str(x)
    return ", ".join(one(x) for x in index)


__all__ = ["IndexSyntaxError", "apply_index", "index_text", "parse_index", "split_indexed"]
