"""Converters of Scatter, ScatterElements and ScatterND to Relay's scatter_elements and
scatter_nd, as TVM's relay.frontend.onnx emitted them (ScatterND's indices transposed to put
the index tuple's axis first; the reductions each opset allows)."""
from __future__ import annotations

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
