"""The operator registry: every primitive Relay operator rvmdbg knows, with its attributes,
type relation, NumPy kernel and TVM fusion pattern.

Public API (docs/architecture.md, section Operators):
- `OPS: dict[str, OpDef]`, `get_op(name) -> OpDef | None`;
- `OpDef(name, num_inputs, attrs, type_rel, kernel, pattern, ...)` with `.type_rel(arg_types,
  attrs) -> Type`, `.kernel(args, attrs) -> ndarray | tuple`, `.pattern` (TVM's names:
  elemwise, broadcast, injective, comm_reduce, out_elemwise_fusable, opaque), `.elementwise`
  (pattern is elemwise or broadcast), `.tuple_input`, `.scalar`, `.min_inputs`;
- `AttrSpec(name, kind, default=REQUIRED)`, `normalize_attrs(op, attrs) -> Attrs`;
- errors `OpTypeError`, `OpAttrError(message, attr_name)`, `KernelError` (all `OpError`);
- `infer_shape(op_name, input_shapes, input_dtypes, attrs)`: the shape function for `?` dims;
- `SCALAR_FAST[name](*inputs)`: the 0-d fast path of elementwise ops (valid only when every input
  is a 0-d array and the call passed the type relation). Each such op's `kernel` already takes
  this path by itself when its inputs are 0-d, so callers need not special-case it.

Type relations and kernels accept plain attribute dicts (normalised on the fly), but callers on a
hot path should pass the `Attrs` that `normalize_attrs` returns, once per call site.
"""
from __future__ import annotations

from rvmdbg.relay.ops.core import (
    ATTR_KINDS, OPS, PATTERNS, REQUIRED, Attrs, AttrSpec, KernelError, OpAttrError, OpDef,
    OpError, OpTypeError, get_op, normalize_attrs,
)
from rvmdbg.relay.ops import elemwise as _elemwise
from rvmdbg.relay.ops import nn as _nn  # noqa: F401  (registers the nn.* operators)
from rvmdbg.relay.ops import conv as _conv  # noqa: F401  (convolutions)
from rvmdbg.relay.ops import image as _image  # noqa: F401  (resizing)
from rvmdbg.relay.ops import norm as _norm  # noqa: F401  (normalisation)
from rvmdbg.relay.ops import pool as _pool  # noqa: F401  (pooling)
from rvmdbg.relay.ops import reduce as _reduce  # noqa: F401
from rvmdbg.relay.ops import transform as _transform
from rvmdbg.relay.types import TensorType, TupleType

SCALAR_FAST = _elemwise.SCALAR_FAST
reshape_dims = _transform.reshape_dims


def infer_type(op_name: str, arg_types: list, attrs: dict | None = None):
    """The output type of `op_name` applied to `arg_types` (raises OpTypeError/OpAttrError)."""
    op = OPS.get(op_name)
    if op is None:
        raise OpTypeError(f"unknown operator {op_name}")
    return op.type_rel(arg_types, attrs or {})


def infer_shape(op_name: str, input_shapes: list, input_dtypes: list,
                attrs: dict | None = None) -> list:
    """Output shapes of `op_name` for concrete input shapes: the run-time shape function.

    `input_shapes[i]` is a shape tuple, or for a tuple argument (concatenate, stack) a list of
    shape tuples; `input_dtypes` mirrors it. Returns a list with one shape per output (split has
    several). Shapes that do not fit raise KernelError, since this runs at run time.
    """
    op = OPS.get(op_name)
    if op is None:
        raise KernelError(f"unknown operator {op_name}")
    types = []
    for i, (shape, dtype) in enumerate(zip(input_shapes, input_dtypes)):
        if op.tuple_input and i == 0:
            types.append(TupleType(tuple(TensorType(tuple(s), d) for s, d in zip(shape, dtype))))
        else:
            types.append(TensorType(tuple(shape), dtype))
    try:
        out = op.type_rel(types, attrs or {})
    except OpTypeError as e:
        raise KernelError(e.message) from None
    if isinstance(out, TupleType):
        return [f.shape for f in out.fields]
    return [out.shape]


__all__ = [
    "ATTR_KINDS", "OPS", "PATTERNS", "REQUIRED", "SCALAR_FAST", "AttrSpec", "Attrs", "KernelError",
    "OpAttrError", "OpDef", "OpError", "OpTypeError", "get_op", "infer_shape", "infer_type",
    "normalize_attrs", "reshape_dims",
]
