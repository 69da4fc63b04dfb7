"""Helpers for the engine-side tests of the teaching views: programs loaded once per session.

`context(path, args)` loads, checks and compiles a repository program (its pass stages kept)
and, with `args` (argument texts, or "default" for its `// args:` line), starts a DebugSession
on it. Nothing here imports Textual.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

_cache: dict = {}


def load(path: str):
    """(ViewContext without a session, program text), cached."""
    from rvmdbg.views.context import ViewContext
    if path not in _cache:
        text = (ROOT / path).read_text()
        _cache[path] = (ViewContext.from_text(text, path), text)
    return _cache[path]


def context(path: str, args="default"):
    """A fresh ViewContext sharing the cached compile; a new session when args is given."""
    from rvmdbg.args import parse_program_args
    from rvmdbg.debug import DebugSession
    from rvmdbg.relay.loader import program_default_args
    from rvmdbg.views.context import ViewContext
    base, text = load(path)
    ctx = ViewContext(module=base.module, exe=base.exe, source_text=base.source_text,
                      source_file=base.source_file, entry=base.entry, name=path)
    ctx._stages = base._stages
    if args is not None:
        texts = program_default_args(text) if args == "default" else args
        values = parse_program_args(base.module, "main", texts)
        ctx.session = DebugSession(base.exe, values)
    return ctx


def int_list(*items):
    from rvmdbg.values import ADTValue
    v = ADTValue(1, "Nil", ())
    for x in reversed(items):
        v = ADTValue(0, "Cons", (np.array(x, dtype=np.int32), v))
    return v


