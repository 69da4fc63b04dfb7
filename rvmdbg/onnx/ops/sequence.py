"""Optionals holding a tensor: `Optional(x)` is x itself, `OptionalHasElement` a constant
bool (known when the model is imported: an empty input name is an empty optional), and
`OptionalGetElement` the tensor (TVM made a one-field tuple and took its field)."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter


@converter("Optional", since=15)
def optional(g, node, inputs, attrs):
    if not inputs or inputs[0] is None:
        raise g.error("an empty Optional (no input) is not supported")
    return inputs[0]


@converter("OptionalHasElement", since=15)
def optional_has_element(g, node, inputs, attrs):
    present = bool(inputs) and inputs[0] is not None
    return g.const(np.asarray(present))


@converter("OptionalGetElement", since=15)
def optional_get_element(g, node, inputs, attrs):
    return g.call("copy", [inputs[0]])
