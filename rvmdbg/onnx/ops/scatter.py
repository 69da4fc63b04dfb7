"""Converters of Scatter, ScatterElements and ScatterND to Relay's scatter_elements and
scatter_nd, as TVM's relay.frontend.onnx emitted them (ScatterND's indices transposed to put
the index tuple's axis first; the reductions each opset allows), and TensorScatter (opset 24)
to scatter_elements."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.registry import converter


def _reduction(g, op_type: str, attrs, allowed: tuple) -> str:
    reduction = attrs.get("reduction", "none")
    reduction = "update" if reduction == "none" else reduction
    if reduction not in allowed:
        raise g.error(f"reduction {reduction} of {op_type} is not supported at opset {g.opset}",
                      hint="supported: " + ", ".join(allowed))
    return reduction


def _axis(g, op_type: str, data, attrs) -> int:
    rank = g.rank_of(data)
    axis = int(attrs.get("axis", 0))
    if rank == 0 or not -rank <= axis < rank:
        raise g.error(f"axis {axis} of {op_type} is out of range for rank {rank}")
    return axis


@converter("Scatter", since=9)
def scatter(g, node, inputs, attrs):
    data, indices, updates = inputs
    return g.call("scatter_elements", [data, indices, updates],
                  axis=_axis(g, "Scatter", data, attrs), reduction="update")


def _scatter_elements(allowed: tuple):
    def convert(g, node, inputs, attrs):
        data, indices, updates = inputs
        return g.call("scatter_elements", [data, indices, updates],
                      axis=_axis(g, "ScatterElements", data, attrs),
                      reduction=_reduction(g, "ScatterElements", attrs, allowed))
    return convert


converter("ScatterElements", since=11)(_scatter_elements(("update",)))
converter("ScatterElements", since=16)(_scatter_elements(("update", "add", "mul")))
converter("ScatterElements", since=18)(_scatter_elements(("update", "add", "mul", "min",
                                                          "max")))


def _scatter_nd(allowed: tuple):
    def convert(g, node, inputs, attrs):
        data, indices, updates = inputs
        axes = list(range(g.rank_of(indices)))
        mode = _reduction(g, "ScatterND", attrs, allowed)
        return g.call("scatter_nd", [data, c.transpose(g, indices, axes[-1:] + axes[:-1]),
                                     updates], mode=mode)
    return convert


converter("ScatterND", since=11)(_scatter_nd(("update",)))
converter("ScatterND", since=16)(_scatter_nd(("update", "add", "mul")))
converter("ScatterND", since=18)(_scatter_nd(("update", "add", "mul", "min", "max")))


# TensorScatter (opset 24, after TVM): the update written into the cache at write_indices[b]
# onwards along `axis` (wrapping in circular mode), as one scatter_elements
@converter("TensorScatter", since=24)
def tensor_scatter(g, node, inputs, attrs):
    past, update = inputs[0], inputs[1]
    where = inputs[2] if len(inputs) > 2 else None
    mode = attrs.get("mode", "linear")
    if mode not in ("linear", "circular"):
        raise g.error(f"value {mode} of attribute mode of TensorScatter is not valid",
                      hint="linear or circular")
    shape, ushape = g.shape_of(past), g.shape_of(update)
    rank = len(shape)
    axis = int(attrs.get("axis", -2))
    if not -rank <= axis < rank or axis % rank == 0:
        raise g.error(f"axis {axis} of TensorScatter must name a dim after the batch")
    axis %= rank
    if None in ushape or shape[axis] is None:
        raise g.error("TensorScatter needs static update and sequence dims")
    one = [1] * rank
    seq = one.copy()
    seq[axis] = ushape[axis]
    pos = g.const(np.arange(ushape[axis], dtype="int64").reshape(seq))
    if where is not None:
        start = c.reshape(g, c.cast(g, where, "int64"), [ushape[0]] + one[1:])
        pos = g.call("add", [start, pos])
    if mode == "circular":
        pos = g.call("floor_mod", [pos, g.const(np.array(shape[axis], "int64"))])
    idx = c.broadcast_to(g, pos, list(ushape))
    return g.call("scatter_elements", [past, idx, update], axis=axis, reduction="update")
