"""The importer's errors: located at the node (its line in the node listing) when there is one."""
from __future__ import annotations

from rvmdbg.i18n import _
from rvmdbg.relay.diagnostics import RelayError


class OnnxImportError(RelayError):
    """A model the importer cannot turn into Relay: bad bytes, an unsupported operator or
    opset, an unsafe external-data path, a shape it needs and lacks. `node` names the ONNX
    node (the importer adds its line in the node listing as the span)."""

    def __init__(self, message: str, node: str | None = None, hint: str | None = None,
                 span=None, source=None):
        super().__init__(message, span, hint, source)
        self.node = node


class NeedsValue(OnnxImportError):
    """A converter needs, at import time, the value of a tensor only known at run time (a
    reduction's axes, a pad width, a size given as a graph input): Relay's operator takes it
    as an attribute. Binding that input (`bind=`) as a constant resolves it."""


class MissingOnnx(OnnxImportError):
    """The `onnx` package is not installed."""

    def __init__(self):
        super().__init__(_("reading an ONNX model needs the `onnx` package"),
                         hint=_("install it with: pip install 'rvmdbg[onnx]'"))
