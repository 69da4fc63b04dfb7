"""Where each node of a printed module sits in its text.

The printer returns plain text. Its output parses back to a structurally equal AST, and the
parser gives every node its span *in that text*; walking the printed module and the re-parsed
one side by side (same shape, same child order) pairs each node with its region in the text.
Tensor constants print as `meta[relay.Constant][k] /* ty=... */`, which do not parse without
their #[metadata] section (a stage's text leaves it out):
they are blanked to a literal `0` padded with spaces first, so every column stays where it was.
The memory dialect of ManifestAlloc (`memory.alloc_storage`, ...) is not made of user
operators either: it is re-parsed with `parse(..., extra_ops=DIALECT_OPS)`.
"""
from __future__ import annotations

import re

from rvmdbg.relay import ast as A
from rvmdbg.relay.diagnostics import Span

_META = re.compile(r"meta\[relay\.Constant\]\[\d+\](?: /\*.*?\*/)?")


def blank_metadata(text: str) -> str:
    """`text` with each metadata reference replaced by `0` and spaces (same length)."""
    return _META.sub(lambda m: "0" + " " * (len(m.group(0)) - 1), text)


def _pattern_pairs(a, b, out: list) -> bool:
    if type(a) is not type(b):
        return False
    out.append((a, b))
    if isinstance(a, A.PatternVar):
        out.append((a.var, b.var))
    if isinstance(a, (A.PatternConstructor, A.PatternTuple)):
        if len(a.patterns) != len(b.patterns):
            return False
        return all(_pattern_pairs(x, y, out) for x, y in zip(a.patterns, b.patterns))
    return True


def pair_nodes(a, b) -> list | None:
    """[(node of a, the node of b in the same place)] over two structurally equal expressions
    (clauses, patterns and binders included), or None where their shapes differ."""
    out: list = []
    seen: set = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if type(x) is not type(y):
            return None
        out.append((x, y))
        if isinstance(x, A.Function):
            if len(x.params) != len(y.params):
                return None
            out.extend(zip(x.params, y.params))
        elif isinstance(x, A.Let):
            out.append((x.var, y.var))
        elif isinstance(x, A.Match):
            if len(x.clauses) != len(y.clauses):
                return None
            for cx, cy in zip(x.clauses, y.clauses):
                out.append((cx, cy))
                if not _pattern_pairs(cx.lhs, cy.lhs, out):
                    return None
        cx, cy = A.children(x), A.children(y)
        if len(cx) != len(cy):
            return None
        stack.extend(zip(reversed(cx), reversed(cy)))
    return out


def text_regions(module, text: str, filename: str = "<printed>") -> dict:
    """id(node of `module`) -> Span of it in `text` (the module's printed form), per global;
    a global whose re-parsed shape differs from the module's is left out. Empty when the text
    does not parse at all."""
    from rvmdbg.passes.manifest_alloc import DIALECT_OPS
    from rvmdbg.relay.parser import parse
    try:
        reparsed = parse(blank_metadata(text), filename, extra_ops=DIALECT_OPS)
    except Exception:
        return {}
    regions: dict = {}
    for name, fn in module.functions.items():
        other = reparsed.functions.get(name)
        if other is None:
            continue
        pairs = pair_nodes(fn, other)
        if pairs is None:
            continue
        for x, y in pairs:
            span = getattr(y, "span", None)
            if isinstance(span, Span):
                regions[id(x)] = span
    return regions


__all__ = ["blank_metadata", "pair_nodes", "text_regions"]
