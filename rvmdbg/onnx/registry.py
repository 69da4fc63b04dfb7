"""The table of ONNX converters: one declaration per ONNX op type and opset range.

`@converter("Conv", since=1)` registers a function for the op type `Conv` of the default
domain from opset 1 on; a second declaration `since=11` takes over from opset 11. For a node
the importer picks the declaration with the highest `since` at or below the model's opset for
the node's domain: TVM's `_impl_vN` rule. A converter is `fn(g, node, inputs, attrs)`
(see `rvmdbg.onnx.context.GraphContext`) returning one expression per node output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# (domain, op_type) -> declarations sorted by `since`
CONVERTERS: dict = {}


@dataclass(frozen=True)
class Converter:
    op_type: str
    domain: str
    since: int
    fn: Callable


def converter(op_type: str, since: int = 1, domain: str = ""):
    """Register the decorated function as the converter of `op_type` from opset `since`."""
    domain = "" if domain == "ai.onnx" else domain

    def register(fn):
        decls = CONVERTERS.setdefault((domain, op_type), [])
        if any(d.since == since for d in decls):
            raise ValueError(f"two converters for {domain or 'ai.onnx'}::{op_type} "
                             f"since opset {since}")
        decls.append(Converter(op_type, domain, since, fn))
        decls.sort(key=lambda d: d.since)
        return fn
    return register


def lookup(op_type: str, domain: str, opset: int) -> Converter | None:
    """The converter for a node of `op_type` at `opset` of its domain, or None (the families
    register when `rvmdbg.onnx.ops` is imported, as `rvmdbg.onnx` does)."""
    domain = "" if domain == "ai.onnx" else domain
    found = None
    for d in CONVERTERS.get((domain, op_type), ()):
        if d.since <= opset:
            found = d
    return found


def supported_ops() -> list:
    """[(domain, op_type, [since, ...])] for every registered op type, sorted."""
    return sorted((dom, op, [d.since for d in decls])
                  for (dom, op), decls in CONVERTERS.items())

