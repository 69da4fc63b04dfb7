"""What the type checker's parts share: its warnings (`TypeWarning`, `TypeNote`), the operator
registry loaded on first use, where an error about a node is reported, and TVM's spelling of
non-finite floats.
"""
from __future__ import annotations

from rvmdbg.relay.ast import Var
from rvmdbg.relay.diagnostics import RelayError, RelayWarning

_OPS = None  # the operator registry module, imported on first use


def ops_module():
    """The operator registry module (`rvmdbg.relay.ops`), imported on first use."""
    global _OPS
    if _OPS is None:
        from rvmdbg.relay import ops  # imported late: the registry is large and loads kernels
        _OPS = ops
    return _OPS


class TypeWarning(RelayWarning):
    """A located warning (unreachable match clause); collected on `mod.warnings`, never raised."""


class TypeNote(TypeWarning):
    """A located note: something rvmdbg accepts and TVM refuses (a generalised signature)."""

    kind = "note"

    def format(self, source=None) -> str:
        return RelayError.format(self, source).replace(": error: ", ": note: ", 1)


def at_node(node, parent):
    """Where to report a problem with node used inside parent: a Var's span is its binder's
    (binder and uses are one object), so a use is reported at the enclosing expression."""
    return parent if type(node) is Var else node


def float_word(v: float) -> str:
    """TVM's spelling of a non-finite float: `inff`, `-inff`, `nanf`."""
    return "nanf" if v != v else ("-inff" if v < 0 else "inff")
