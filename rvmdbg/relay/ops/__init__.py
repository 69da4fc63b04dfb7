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
- `infer_shape(op_name, inputs, input_dtypes, attrs)`: the run-time shape function for `?`
  dims (shapes, and values where `shape_data_inputs(op_name)` says the op needs them);
- `SCALAR_FAST[name](*inputs)`: the 0-d fast path of elementwise ops (valid only when every input
  is a 0-d array and the call passed the type relation). Each such op's `kernel` already takes
  this path by itself when its inputs are 0-d, so callers need not special-case it.

Type relations and kernels accept plain attribute dicts (normalised on the fly), but callers on a
hot path should pass the `Attrs` that `normalize_attrs` returns, once per call site.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    ATTR_KINDS, OPS, PATTERNS, REQUIRED, Attrs, AttrSpec, KernelError, OpAttrError, OpDef,
    OpError, OpTypeError, get_op, normalize_attrs,
)
from rvmdbg.relay.ops import elemwise as _elemwise
from rvmdbg.relay.ops import index as _index  # noqa: F401  (gather, sorts, scans)
from rvmdbg.relay.ops import nn as _nn  # noqa: F401  (registers the nn.* operators)
from rvmdbg.relay.ops import conv as _conv  # noqa: F401  (convolutions)
from rvmdbg.relay.ops import image as _image  # noqa: F401  (resizing)
from rvmdbg.relay.ops import norm as _norm  # noqa: F401  (normalisation)
from rvmdbg.relay.ops import pool as _pool  # noqa: F401  (pooling)
from rvmdbg.relay.ops import reduce as _reduce  # noqa: F401
from rvmdbg.relay.ops import transform as _transform
from rvmdbg.relay.ops import dyn as _dyn  # noqa: F401  (registers the dyn.* operators)
from rvmdbg.relay.ops import bitwise as _bitwise  # noqa: F401  (bitwise_*, shifts)
from rvmdbg.relay.ops import scatter as _scatter  # noqa: F401  (scatter_elements, scatter_nd)
from rvmdbg.relay.ops import select as _select  # noqa: F401  (argwhere, unique)
from rvmdbg.relay.ops import einsum as _einsum  # noqa: F401
from rvmdbg.relay.ops import array as _array  # noqa: F401  (ndarray_size, trilu)
from rvmdbg.relay.ops import subpixel as _subpixel  # noqa: F401  (depth_to_space, space_to_depth)
from rvmdbg.relay.ops import vision as _vision  # noqa: F401  (vision.roi_align)
from rvmdbg.relay.ops import qnn as _qnn  # noqa: F401  (registers the qnn.* operators)
from rvmdbg.relay.ops import signal as _signal  # noqa: F401  (dft)
from rvmdbg.relay.types import TensorType, TupleType

SCALAR_FAST = _elemwise.SCALAR_FAST
reshape_dims = _transform.reshape_dims


def infer_type(op_name: str, arg_types: list, attrs: dict | None = None):
    """The output type of `op_name` applied to `arg_types` (raises OpTypeError/OpAttrError)."""
    op = OPS.get(op_name)
    if op is None:
        raise OpTypeError(_("unknown operator {op}").format(op=op_name))
    return op.type_rel(arg_types, attrs or {})


def infer_shape(op_name: str, inputs: list, input_dtypes: list,
                attrs: dict | None = None) -> list:
    """Output shapes of `op_name` for concrete inputs: the run-time shape function.

    `inputs[i]` is the input's shape tuple, or for a tuple argument (concatenate, stack) a list
    of shape tuples; at the positions `shape_data_inputs(op_name)` marks it is the input's value
    (an ndarray), which a data-dependent shape function reads (TVM passes the value there and
    the shape elsewhere). An ndarray where a shape will do stands for its shape.
    `input_dtypes` mirrors `inputs`. Returns a list with one shape per output (split has
    several). Inputs that do not fit raise KernelError, since this runs at run time.
    """
    op = OPS.get(op_name)
    if op is None:
        raise KernelError(_("unknown operator {op}").format(op=op_name))
    if op.shape_func is not None:
        given = []
        for i, (needs_value, x) in enumerate(zip(op.shape_data, inputs)):
            if needs_value and not isinstance(x, np.ndarray):
                raise KernelError(_("{op}: its shape function needs the value of input {i}, got only a "
                                    "shape").format(op=op_name, i=i + 1))
            given.append(x if needs_value else _shape_only(x))
        try:
            shapes = op.shape_func(given, normalize_attrs(op, attrs or {}))
        except OpTypeError as e:
            raise KernelError(e.message) from None
        return [tuple(int(d) for d in s) for s in shapes]
    types = []
    for i, (x, dtype) in enumerate(zip(inputs, input_dtypes)):
        shape = _shape_only(x)
        if i in op.tuple_args:
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


def _shape_only(x):
    if isinstance(x, np.ndarray):
        return x.shape
    if isinstance(x, list):
        return [_shape_only(f) for f in x]
    return x


def shape_data_inputs(op_name: str, num_args: int | None = None) -> tuple:
    """One bool per input of `op_name`: True where its run-time shape function needs the
    input's value (TVM's TShapeDataDependent), False where the shape is enough."""
    op = OPS.get(op_name)
    if op is None or op.shape_data is None:
        return (False,) * (num_args if num_args is not None else getattr(op, "num_inputs", 0))
    return op.shape_data


__all__ = [
    "ATTR_KINDS", "OPS", "PATTERNS", "REQUIRED", "SCALAR_FAST", "AttrSpec", "Attrs", "KernelError",
    "OpAttrError", "OpDef", "OpError", "OpTypeError", "get_op", "infer_shape", "infer_type",
    "normalize_attrs", "reshape_dims", "shape_data_inputs",
]
