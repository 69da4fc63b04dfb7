"""The program kinds, and which kind a file is.

Adding a kind is one module beside this one (its `KIND`) and one line in `KINDS`. A file is
the kind whose `sniff` accepts its first bytes (a saved executable named `.relay` is still an
executable); else the kind that claims its suffix; else Relay text, the first kind (so a
missing or misnamed file gets Relay's located "file not found" as before).
"""
from __future__ import annotations

import os

from rvmdbg.program import minivm, onnx, relax, relay_text, rvmx, vmexec
from rvmdbg.program.base import ProgramKind

KINDS: list[ProgramKind] = [
    relay_text.KIND,
    rvmx.KIND,
    minivm.KIND,
    onnx.KIND,
    relax.KIND,
    vmexec.KIND,
]

SNIFF_BYTES = 64  # enough for every kind's magic; a sniff sees at most this much


def _head(path: str) -> bytes | None:
    """The first bytes of a regular file (never a FIFO's: reading would block), or None."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read(SNIFF_BYTES)
    except OSError:
        return None


def kind_for(path: str) -> ProgramKind:
    """The kind of the program at `path`: by content where a kind can tell, else by suffix."""
    sniffers = [k for k in KINDS if k.sniff is not None]
    if sniffers:
        head = _head(path)
        if head:
            for kind in sniffers:
                if kind.sniff(head):
                    return kind
    for kind in KINDS:
        if any(str(path).endswith(s) for s in kind.suffixes):
            return kind
    return KINDS[0]


def kind_named(name: str) -> ProgramKind:
    """The kind called `name` (KeyError if none is)."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise KeyError(name)


__all__ = ["KINDS", "kind_for", "kind_named"]
