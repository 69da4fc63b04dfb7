"""What every part of the Relay text parser shares: the nesting limit, the dtype names, spans
between tokens, and the operator table looked up for "did you mean" hints."""
from __future__ import annotations

from rvmdbg.relay.diagnostics import Span
from rvmdbg.relay.types import DTYPES

MAX_NESTING = 1024
KNOWN_DTYPES = frozenset(DTYPES)

_ops_table = None


def known_ops():
    """The operator table (rvmdbg.relay.ops.OPS) or None while it is not importable."""
    global _ops_table
    if _ops_table is None:
        try:
            from rvmdbg.relay.ops import OPS
        except ImportError:
            return None
        _ops_table = OPS
    return _ops_table


def span_between(a, b, file: str) -> Span:
    """The span from the start of token/node-span a to the end of token/node-span b."""
    return Span(a[2], a[3], b[4], b[5], file)
