"""How deeply a JSON text nests, found before it is parsed.

Python's JSON decoder recurses once per level of arrays and objects; on the deep stack rvmdbg
runs on, a text nested a hundred thousand deep is parsed slowly and then crashes later code.
Readers of JSON from someone else (a DAP message, a `#[metadata]` section) measure the depth
first, in a few vectorised passes over the bytes (brackets inside strings not counted), and
refuse a text deeper than they read.
"""
from __future__ import annotations

import numpy as np


def nesting(text: bytes | str) -> tuple[int, int]:
    """(the deepest nesting of arrays and objects, the offset of the bracket that first
    reaches it; -1 when there is none). A str is measured by character offsets."""
    if isinstance(text, str):
        b = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    else:
        b = np.frombuffer(text, dtype=np.uint8)
    if not b.size:
        return 0, -1
    idx = np.arange(b.size)
    backslash = b == 0x5C
    # a quote is escaped when an odd run of backslashes ends just before it
    last_other = np.maximum.accumulate(np.where(backslash, -1, idx))
    run_before = np.concatenate(([0], idx[:-1] - last_other[:-1]))
    quote = (b == 0x22) & (run_before % 2 == 0)
    outside = np.cumsum(quote) % 2 == 0
    steps = ((np.isin(b, (0x5B, 0x7B)) & outside).astype(np.int64)
             - (np.isin(b, (0x5D, 0x7D)) & outside).astype(np.int64))
    depth = np.cumsum(steps)
    at = int(np.argmax(depth))
    deepest = int(depth[at])
    return (deepest, at) if deepest > 0 else (0, -1)


__all__ = ["nesting"]
