"""Relay types: tensors (static or `?` dimensions), tuples, functions, type parameters, ADTs, refs.

Scalars are 0-d tensors (`TensorType((), "int32")`). `IncompleteType` is a unification variable:
the parser makes one for `_`, the type checker for every unknown, and resolves them all.
`str(t)` is the Relay text form, which the parser reads back.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
DTYPE_ALIASES = {"int": "int32", "float": "float32", "uint": "uint32"}
# TVM's vector dtypes, `<scalar>x<lanes>` (`int8x4`, `uint1x4`, `float16x4`): types may name
# them; no operator kernel here takes one, so the checker refuses them at operator calls
_VECTOR_DTYPE = re.compile(r"(?:u?int|float|bfloat)\d+x\d+")


def is_vector_dtype(dtype: str) -> bool:
    """Is dtype a vector of lanes (`int8x4`), a dtype types may name and kernels cannot take?"""
    if _VECTOR_DTYPE.fullmatch(dtype) is None:
        return False
    lanes = int(dtype.rsplit("x", 1)[1])
    return lanes >= 2


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of dtype, a vector's lanes included (TVM: bits * lanes / 8,
    rounded up; bool is a byte)."""
    if is_vector_dtype(dtype):
        base, lanes = dtype.rsplit("x", 1)
        bits = int(re.search(r"\d+$", base).group())
        return (bits * int(lanes) + 7) // 8
    import numpy as np  # the types module stays light for the parser; sizes are rare
    return np.dtype(dtype).itemsize


class Type:
    """Base of all types."""

    __slots__ = ()


# The frozen types below write their fields once, straight into the instance's dict: the
# dataclass's own __init__ calls object.__setattr__ per field, twice as slow, and the checker
# and the passes make types by the thousand.


@dataclass(frozen=True, init=False)
class TensorType(Type):
    shape: tuple  # of int, or None for a dimension known only at run time (`?`)
    dtype: str

    def __init__(self, shape: tuple, dtype: str) -> None:
        d = self.__dict__
        d["shape"] = shape
        d["dtype"] = dtype

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    def __str__(self) -> str:
        if self.shape == ():
            return self.dtype
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        if len(self.shape) == 1:
            dims += ","
        return f"Tensor[({dims}), {self.dtype}]"


def scalar(dtype: str) -> TensorType:
    return TensorType((), dtype)


@dataclass(frozen=True, init=False)
class TupleType(Type):
    fields: tuple

    def __init__(self, fields: tuple) -> None:
        d = self.__dict__
        d["fields"] = fields

    def __str__(self) -> str:
        if len(self.fields) == 1:
            return f"({self.fields[0]},)"
        return "(" + ", ".join(str(f) for f in self.fields) + ")"


UNIT = TupleType(())


@dataclass(frozen=True, init=False)
class TypeVar(Type):
    """A type parameter (`A` in `def @id[A](%x: A) -> A`, or in `type List[A]`)."""

    name: str

    def __init__(self, name: str) -> None:
        d = self.__dict__
        d["name"] = name

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, init=False)
class FuncType(Type):
    params: tuple
    ret: Type
    type_params: tuple = ()  # of TypeVar: the function is polymorphic over these

    def __init__(self, params: tuple, ret: Type, type_params: tuple = ()) -> None:
        d = self.__dict__
        d["params"] = params
        d["ret"] = ret
        d["type_params"] = type_params

    def __str__(self) -> str:
        tp = ("[" + ", ".join(str(t) for t in self.type_params) + "]") if self.type_params else ""
        return f"fn {tp}(" + ", ".join(str(p) for p in self.params) + f") -> {self.ret}"


@dataclass(frozen=True, init=False)
class TypeCall(Type):
    """An algebraic data type applied to its arguments: `List[int32]`, `nat` (no arguments)."""

    name: str
    args: tuple = ()

    def __init__(self, name: str, args: tuple = ()) -> None:
        d = self.__dict__
        d["name"] = name
        d["args"] = args

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}[" + ", ".join(str(a) for a in self.args) + "]"


@dataclass(frozen=True, init=False)
class RefType(Type):
    value: Type

    def __init__(self, value: Type) -> None:
        d = self.__dict__
        d["value"] = value

    def __str__(self) -> str:
        return f"ref({self.value})"


class StorageType(Type):
    """The type of a raw buffer made by `memory.alloc_storage` (only after ManifestAlloc)."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return isinstance(other, StorageType)

    def __hash__(self) -> int:
        return hash("Storage")

    def __str__(self) -> str:
        return "Storage[]"


_incomplete_ids = itertools.count()


class IncompleteType(Type):
    """A type to be inferred (`_` in source, or a fresh unknown). Compared by identity."""

    __slots__ = ("id",)

    def __init__(self) -> None:
        self.id = next(_incomplete_ids)

    def __str__(self) -> str:
        return "_"

    def __repr__(self) -> str:
        return f"?t{self.id}"


def free_type_vars(t: Type) -> list:
    """The TypeVars occurring in t, in order of first occurrence."""
    seen: list = []

    def walk(u: Type) -> None:
        if isinstance(u, TypeVar):
            if u not in seen:
                seen.append(u)
        elif isinstance(u, TupleType):
            for f in u.fields:
                walk(f)
        elif isinstance(u, FuncType):
            for p in u.params:
                walk(p)
            walk(u.ret)
        elif isinstance(u, TypeCall):
            for a in u.args:
                walk(a)
        elif isinstance(u, RefType):
            walk(u.value)

    walk(t)
    return seen


def substitute(t: Type, mapping: dict) -> Type:
    """Replace TypeVars (keys of mapping) in t."""
    if not mapping:
        return t
    if isinstance(t, TypeVar):
        return mapping.get(t, t)
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute(f, mapping) for f in t.fields))
    if isinstance(t, FuncType):
        inner = {k: v for k, v in mapping.items() if k not in t.type_params}
        return FuncType(tuple(substitute(p, inner) for p in t.params), substitute(t.ret, inner),
                        t.type_params)
    if isinstance(t, TypeCall):
        return TypeCall(t.name, tuple(substitute(a, mapping) for a in t.args))
    if isinstance(t, RefType):
        return RefType(substitute(t.value, mapping))
    return t
