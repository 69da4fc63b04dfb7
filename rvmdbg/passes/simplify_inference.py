"""SimplifyInference: batch_norm and dropout as inference computes them.

TVM's SimplifyInference, which its VM compiler runs before FuseOps (right after
RemoveUnusedFunctions; `GetPassPrefix` in `relay/backend/utils.cc`), on our AST:

- `nn.batch_norm(%data, %gamma, %beta, %mean, %var).0` becomes the operators TVM's
  `BatchNormToInferUnpack` writes: `scale = 1 / sqrt(%var + eps)` (times `%gamma` when
  `scale=True`), `shift = -%mean * scale` (plus `%beta` when `center=True`), both
  `expand_dims`-ed to the data's rank after `axis`, then `%data * scale + shift`. With constant
  statistics (a model's frozen weights) FoldConstant then computes scale and shift once, and
  FuseOps puts the multiply and add in the kernel of the convolution before them
  (`fused_nn_conv2d_multiply_add_nn_relu`), where a batch_norm was a kernel of its own.
- `nn.dropout(%data).0` becomes `%data` (inference keeps every value).

A batch_norm whose other outputs (`.1`, `.2`) are used stays for those uses, as TVM's.
The multiply and add on the data carry the batch_norm's span, so its source line (an ONNX node)
stays named and a breakpoint on it stops at the kernel they are fused into; scale and shift
carry it when computed at run time, and belong to no line when the statistics are constants
(they fold into constants, which a breakpoint on the line would otherwise stop at).
Deliberate difference: TVM's pass also rewrites `nn.layer_norm`, `nn.group_norm`,
`nn.instance_norm` and `nn.l2_normalize` into statistics over the data (mean, variance, ...);
here they stay the kernels they are (each decomposed one would be several NumPy passes and
reductions; the values are the same to the last bits TVM's own formula gives). A batch_norm on
integers stays too: TVM's rewrite would fail on its `sqrt`, the kernel refuses it clearly.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.relay.ast import (Call, Constant, ExprMutator, Function, Module, OpRef,
                              TupleGetItem, map_bodies)
from rvmdbg.relay.types import TensorType


def _call(name: str, args: list, span, attrs: dict | None = None) -> Call:
    return Call(OpRef(name, span), args, attrs or {}, span=span)


def _scalar(value: float, dtype: str, span) -> Constant:
    return Constant(np.array(value, dtype=dtype), span)


def batch_norm_unpacked(call: Call, data_type: TensorType):
    """The inference form of `call` (an `nn.batch_norm` call)'s first output, as TVM's
    BatchNormToInferUnpack builds it; None when TVM's rewrite does not apply (not floats)."""
    from rvmdbg.relay.ops import get_op, normalize_attrs

    if not isinstance(data_type, TensorType) or not np.dtype(data_type.dtype).kind == "f":
        return None
    attrs = normalize_attrs(get_op("nn.batch_norm"), call.attrs)
    data, gamma, beta, mean, var = call.args
    span, dtype = call.span, data_type.dtype
    # the multiply and add on the data are the batch_norm's, and carry its span; so do scale
    # and shift when they are computed at run time (a kernel of their own), but constant
    # statistics (a model's) fold into constants that belong to no line
    at = None if all(isinstance(a, Constant) for a in call.args[1:]) else span
    eps = _scalar(attrs["epsilon"], dtype, at)
    scale = _call("divide", [_scalar(1.0, dtype, at),
                             _call("sqrt", [_call("add", [var, eps], at)], at)], at)
    if attrs["scale"]:
        scale = _call("multiply", [scale, gamma], at)
    shift = _call("multiply", [_call("negative", [mean], at), scale], at)
    if attrs["center"]:
        shift = _call("add", [shift, beta], at)
    ndim = len(data_type.shape)
    axis = attrs["axis"] + ndim if attrs["axis"] < 0 else attrs["axis"]
    pad = ndim - axis - 1
    if pad > 0:   # TVM's ExpandBiasToMatchAxis for one axis
        scale = _call("expand_dims", [scale], at, {"axis": 1, "num_newaxis": pad})
        shift = _call("expand_dims", [shift], at, {"axis": 1, "num_newaxis": pad})
    return _call("add", [_call("multiply", [data, scale], span), shift], span)


class _Simplifier(ExprMutator):
    def visit_Function(self, e: Function):
        if e.is_primitive:   # a kernel already: its body is what it computes
            return e
        return self._default(e)

    def visit_TupleGetItem(self, e: TupleGetItem):
        out = self._default(e)
        call = out.tuple_value
        if (e.index != 0 or not isinstance(call, Call) or not isinstance(call.op, OpRef)
                or call.op.name not in ("nn.batch_norm", "nn.dropout")):
            return out
        if call.op.name == "nn.dropout":
            return call.args[0]
        unpacked = batch_norm_unpacked(call, e.tuple_value.args[0].checked_type)
        return out if unpacked is None else unpacked


def simplify_inference(mod: Module) -> Module:
    """A new module with every `batch_norm(...).0` and `dropout(...).0` rewritten."""
    return map_bodies(mod, lambda body: _Simplifier().visit(body))
