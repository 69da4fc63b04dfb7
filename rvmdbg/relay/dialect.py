"""The VM's memory and device dialect: the operators TVM's late passes write, and their types.

ManifestAlloc writes `memory.alloc_storage`, `memory.alloc_tensor`, `vm.invoke_tvm_op`,
`vm.shape_of`, `vm.shape_func`, `vm.reshape_tensor`; ManifestLifetimes `memory.kill`; device
planning `on_device` and `device_copy`. They are not user operators (no kernel, no fusion):
the parser accepts their names so a printed pass stage (rvmdbg's or TVM's) reads back, the
type checker types them here, and the code generator maps each call to one instruction.

Every argument layout of `memory.alloc_storage` is read: rvmdbg's `(size, alignment=,
dtype_hint=)`, TVM 0.8 to 0.13's `(size, alignment, virtual_device=, dtype=)` and TVM 0.14+'s
`(size, shape, alignment, virtual_device=, dtype=)`.
"""
from __future__ import annotations

from rvmdbg.i18n import _
from rvmdbg.relay.types import UNIT, StorageType, TensorType, TupleType

ALLOC_STORAGE = "memory.alloc_storage"
ALLOC_TENSOR = "memory.alloc_tensor"
KILL = "memory.kill"
INVOKE_TVM_OP = "vm.invoke_tvm_op"
SHAPE_OF = "vm.shape_of"
SHAPE_FUNC = "vm.shape_func"
RESHAPE_TENSOR = "vm.reshape_tensor"
ON_DEVICE = "on_device"
DEVICE_COPY = "device_copy"
# TVM's LowerTE writes a kernel call as `call_lowered(@f, (args...), metadata={...})`
CALL_LOWERED = "call_lowered"

MEMORY_OPS = frozenset({ALLOC_STORAGE, ALLOC_TENSOR, KILL, INVOKE_TVM_OP, SHAPE_OF, SHAPE_FUNC,
                        RESHAPE_TENSOR})
# one device here: both are the identity on their argument's value
DEVICE_OPS = frozenset({ON_DEVICE, DEVICE_COPY})
DIALECT_OPS = MEMORY_OPS | DEVICE_OPS | {CALL_LOWERED}
class InterpretedStorage:
    """What the reference interpreter makes of `memory.alloc_storage`: a buffer of `size`
    bytes that only `memory.kill` may take (no tensor is laid out in it there)."""

    __slots__ = ("size",)

    def __init__(self, size: int):
        self.size = size

    def __repr__(self) -> str:
        return _("<storage {n} bytes>").format(n=self.size)


# TVM registers these TOpIsStateful: DeadCodeElimination keeps their calls, used or not
STATEFUL_OPS = frozenset({KILL, INVOKE_TVM_OP})

_ARITY = {ALLOC_STORAGE: (1, 2, 3), ALLOC_TENSOR: (3,), KILL: (1,), INVOKE_TVM_OP: (3,),
          SHAPE_OF: (1,), SHAPE_FUNC: (3,), RESHAPE_TENSOR: (2,), ON_DEVICE: (1,),
          DEVICE_COPY: (1,), CALL_LOWERED: (2,)}


class DialectTypeError(Exception):
    """A dialect call whose arguments do not fit; `arg` is the index of the culprit or None."""

    def __init__(self, message: str, arg: int | None = None):
        super().__init__(message)
        self.message = message
        self.arg = arg


def arity_error(name: str, given: int) -> str | None:
    """The message for a wrong number of arguments, or None when the count is right."""
    counts = _ARITY[name]
    if given in counts:
        return None
    want = str(counts[-1])
    if len(counts) > 1:
        want = _("{left} or {right}").format(left=", ".join(str(n) for n in counts[:-1]),
                                             right=want)
    return _("{op} takes {counts} arguments, {given} given").format(op=name, counts=want,
                                                                    given=given)


def _dims(value) -> tuple:
    """A shape attribute (`[2, 3]`, with -1 or None for `?`; TVM's const_shape is a constant
    tensor) as TensorType dims."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise DialectTypeError(_("a shape attribute must be a list of dimensions, found "
                                 "{value}").format(value=repr(value)))
    return tuple(None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in value)


def _int64_scalar(t, name: str, i: int, what: str) -> None:
    if not (isinstance(t, TensorType) and t.shape == () and t.dtype == "int64"):
        raise DialectTypeError(_("{op}: the {what} must be an int64 scalar, found {t}").format(
                op=name, what=what, t=t), i)


def static_shape(value) -> list | None:
    """A const_shape attribute as a list of ints (None when absent)."""
    return None if value is None else [int(d) for d in _dims(value)]


def result_type(name: str, arg_types: list, attrs: dict):
    """The type of a dialect call, given its (resolved) argument types; DialectTypeError when
    they do not fit. Arguments that are functions or tuples of outputs are not inspected."""
    attrs = attrs or {}
    if name == ALLOC_STORAGE:
        _int64_scalar(arg_types[0], name, 0, "size")
        if len(arg_types) > 1:  # the alignment comes last: (size, [shape,] alignment)
            _int64_scalar(arg_types[-1], name, len(arg_types) - 1, "alignment")
        return StorageType()
    if name == ALLOC_TENSOR:
        if not isinstance(arg_types[0], StorageType):
            raise DialectTypeError(_("{op}: the first argument must be a storage, found "
                                     "{t}").format(op=name, t=arg_types[0]), 0)
        shape_t = arg_types[2]
        if not (isinstance(shape_t, TensorType) and len(shape_t.shape) == 1
                and shape_t.shape[0] is not None):
            raise DialectTypeError(_("{op}: the shape must be a 1-d tensor of known length, "
                                     "found {shape_t}").format(op=name, shape_t=shape_t), 2)
        dtype = attrs.get("dtype", "float32")
        for key in ("const_shape", "assert_shape"):
            if attrs.get(key) is not None:
                dims = _dims(attrs[key])
                if len(dims) != shape_t.shape[0]:
                    raise DialectTypeError(_("{op}: {key} has {len_dims} dimensions, the shape "
                                             "argument {length}").format(
                            op=name, key=key, len_dims=len(dims), length=shape_t.shape[0]), 2)
                return TensorType(dims, dtype)
        return TensorType((None,) * shape_t.shape[0], dtype)
    if name == SHAPE_OF:
        t = arg_types[0]
        if not isinstance(t, TensorType):
            raise DialectTypeError(_("{op}: the argument must be a tensor, found {t}").format(
                    op=name, t=t), 0)
        return TensorType((len(t.shape),), "int64")
    if name == RESHAPE_TENSOR:
        t = arg_types[0]
        if not isinstance(t, TensorType):
            raise DialectTypeError(_("{op}: the argument must be a tensor, found {t}").format(
                    op=name, t=t), 0)
        return TensorType(_dims(attrs.get("newshape", [])), t.dtype)
    if name in (INVOKE_TVM_OP, SHAPE_FUNC):
        for i in (1, 2):
            if not isinstance(arg_types[i], TupleType):
                raise DialectTypeError(_("{op}: argument {index} must be a tuple of tensors, "
                                         "found {t}").format(op=name, index=i + 1, t=arg_types[i]),
                                       i)
        return UNIT
    if name == KILL:
        return UNIT
    return arg_types[0]  # on_device, device_copy
