"""Converters of NonZero (Relay's argwhere, cast to int64 and transposed), Unique (Relay's
padded unique, trimmed to num_unique with dyn.strided_slice) and ReverseSequence
(reverse_sequence), as TVM's relay.frontend.onnx emitted them."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.registry import converter


@converter("NonZero", since=9)
def non_zero(g, node, inputs, attrs):
    out = c.cast(g, g.call("argwhere", [inputs[0]]), "int64")
    return c.transpose(g, out, [1, 0])


@converter("Unique", since=11)
def unique(g, node, inputs, attrs):
    data = inputs[0]
    if attrs.get("axis") is None:
        data = c.reshape(g, data, [-1])
    elif g.rank_of(data) != 1:
        raise g.error("Unique along an axis of a tensor of rank > 1 is not supported "
                      "(TVM's unique takes a 1-d tensor)")
    out = g.call("unique", [data], sorted=bool(attrs.get("sorted", 1) == 1),
                 return_counts=True)
    num_unique = g.get(out, 3)

    def trim(x):
        return g.call("dyn.strided_slice", [x, g.const(np.array([0], "int32")), num_unique,
                                            g.const(np.array([1], "int32"))],
                      slice_mode="end")
    return [trim(g.get(out, 0)), c.cast(g, trim(g.get(out, 1)), "int64"),
            c.cast(g, g.get(out, 2), "int64"), c.cast(g, trim(g.get(out, 4)), "int64")]


@converter("ReverseSequence", since=10)
def reverse_sequence(g, node, inputs, attrs):
    return g.call("reverse_sequence", [inputs[0], inputs[1]],
                  seq_axis=int(attrs.get("time_axis", 0)),
                  batch_axis=int(attrs.get("batch_axis", 1)))
