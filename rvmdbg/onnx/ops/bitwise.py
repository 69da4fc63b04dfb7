"""Converters of the bitwise operators (BitShift, BitwiseAnd/Or/Xor/Not) to Relay's
left_shift, right_shift and bitwise_*, as TVM's relay.frontend.onnx emitted them."""
from __future__ import annotations

from rvmdbg.onnx.registry import converter


@converter("BitShift", since=11)
def bit_shift(g, node, inputs, attrs):
    direction = attrs.get("direction", "LEFT")
    if direction not in ("LEFT", "RIGHT"):
        raise g.error(f"value {direction} of attribute direction of BitShift is not valid",
                      hint="LEFT or RIGHT")
    return g.call("left_shift" if direction == "LEFT" else "right_shift", inputs[:2])


def _bitwise(op_type: str, relay_op: str, arity: int):
    def convert(g, node, inputs, attrs):
        return g.call(relay_op, inputs[:arity])
    converter(op_type, since=18)(convert)


_bitwise("BitwiseAnd", "bitwise_and", 2)
_bitwise("BitwiseOr", "bitwise_or", 2)
_bitwise("BitwiseXor", "bitwise_xor", 2)
_bitwise("BitwiseNot", "bitwise_not", 1)
