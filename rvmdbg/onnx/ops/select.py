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
    along = None
    if attrs.get("axis") is None:
        data = c.reshape(g, data, [-1])
    elif g.rank_of(data) != 1:
        # TVM refused (its unique takes a 1-d tensor): unique of each slice's rank among the
        # slices in lexicographic order, the slices then taken by the first indices
        along, data = int(attrs["axis"]) % g.rank_of(data), _slice_keys(g, data, int(attrs["axis"]))
    out = g.call("unique", [data], sorted=bool(attrs.get("sorted", 1) == 1),
                 return_counts=True)
    num_unique = g.get(out, 3)

    def trim(x):
        return g.call("dyn.strided_slice", [x, g.const(np.array([0], "int32")), num_unique,
                                            g.const(np.array([1], "int32"))],
                      slice_mode="end")
    first = c.cast(g, trim(g.get(out, 1)), "int64")
    values = trim(g.get(out, 0)) if along is None else \
        g.call("take", [inputs[0], first], axis=along, batch_dims=0, mode="clip")
    return [values, first, c.cast(g, g.get(out, 2), "int64"),
            c.cast(g, trim(g.get(out, 4)), "int64")]


def _slice_keys(g, x, axis):
    """Per slice of x along axis, its rank among the distinct slices in lexicographic order
    (int64, equal slices equal keys): a radix sort by stable argsorts from the last element
    to the first, then a cumulative count of the changes between neighbours."""
    shape = g.shape_of(x)
    rank = len(shape)
    axis %= rank
    if None in shape:
        raise g.error("Unique along an axis needs static dims")
    n = shape[axis]
    m = int(np.prod([d for i, d in enumerate(shape) if i != axis]))
    perm = [axis] + [i for i in range(rank) if i != axis]
    rows = c.reshape(g, c.transpose(g, x, perm), [n, m])
    order = g.const(np.arange(n, dtype="int64"))
    for j in reversed(range(m)):
        col = g.call("take", [c.strided_slice(g, rows, [0, j], [n, j + 1]), order], axis=0,
                     batch_dims=0, mode="clip")
        step = g.call("argsort", [c.reshape(g, col, [n])], axis=0, is_ascend=True,
                      dtype="int64")
        order = g.call("take", [order, step], axis=0, batch_dims=0, mode="clip")
    srt = g.call("take", [rows, order], axis=0, batch_dims=0, mode="clip")
    if n < 2:
        return g.const(np.zeros(n, "int64"))
    changed = g.call("any", [g.call("not_equal", [c.strided_slice(g, srt, [1, 0], [n, m]),
                                                  c.strided_slice(g, srt, [0, 0], [n - 1, m])])],
                     axis=[1], keepdims=False, exclude=False)
    steps = c.concat(g, [g.const(np.zeros(1, "int64")), c.cast(g, changed, "int64")], 0)
    ranks = g.call("cumsum", [steps], axis=0, dtype="int64", exclusive=False)
    return g.call("scatter_elements", [g.const(np.zeros(n, "int64")), order, ranks], axis=0,
                  reduction="update")


@converter("ReverseSequence", since=10)
def reverse_sequence(g, node, inputs, attrs):
    return g.call("reverse_sequence", [inputs[0], inputs[1]],
                  seq_axis=int(attrs.get("time_axis", 0)),
                  batch_axis=int(attrs.get("batch_axis", 1)))
