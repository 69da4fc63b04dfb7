"""Converters of shape manipulation, gathering, slicing, casting and constants."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c


@converter("Reshape", since=1)
def reshape_v1(g, node, inputs, attrs):
    return c.reshape(g, inputs[0], attrs["shape"])


@converter("Reshape", since=5)
def reshape_v5(g, node, inputs, attrs):
    allowzero = bool(attrs.get("allowzero", 0))
    return c.reshape(g, inputs[0], inputs[1], allowzero)


@converter("Identity", since=1)
def identity(g, node, inputs, attrs):
    return inputs[0]


@converter("Constant", since=1)
def constant(g, node, inputs, attrs):
    if "value" in attrs:
        return g.const(np.asarray(attrs["value"]))
    for key, dtype in (("value_float", "float32"), ("value_floats", "float32"),
                       ("value_int", "int64"), ("value_ints", "int64")):
        if key in attrs:
            return g.const(np.asarray(attrs[key], dtype=dtype))
    raise g.error("Constant has no value attribute Relay can hold (value_string(s) or a "
                  "sparse value)")
