"""Objects that live only in VM registers: closures, storage buffers and uninitialized tensors.

Tensors, ADT values and reference cells are the shared runtime values of `rvmdbg.values`;
the objects here are what the VM's memory opcodes and `alloc_closure` create on top of them.
None of them has a `name` attribute except `VMClosure`, so `format_value` prints the others
through their `repr`.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _


class VMClosure:
    """A function index plus the values it captured (`alloc_closure`)."""

    __slots__ = ("func_index", "name", "captured")

    def __init__(self, func_index: int, name: str, captured: tuple):
        self.func_index = func_index
        self.name = name  # the global's name: `format_value` and `to_json` print it
        self.captured = captured

    def __repr__(self) -> str:
        return f"<closure @{self.name}>"


class ByteAccount:
    """The live storage bytes one frame allocated (`owned_bytes`; None once it returned).

    Storages point at their frame's account, not at the frame: a frame's registers hold its
    storages, so a back-reference to the frame would make every returned frame cyclic
    garbage that only the cyclic collector could free.
    """

    __slots__ = ("owned_bytes", "pooled")

    def __init__(self, owned_bytes: int | None = 0):
        self.owned_bytes = owned_bytes
        self.pooled = 0  # the same storages' bytes as the pool rounded them (rvmdbg.vm.pool)

    def __repr__(self) -> str:
        return f"<account {self.owned_bytes} bytes>"


class StorageObject:
    """A raw buffer from `alloc_storage`: only its size is real, kernels write fresh arrays.

    `owner` is the `ByteAccount` of the frame that allocated it: its bytes count against
    `--max-bytes` until a `kill_register` drops it or that frame returns. `tensor` is the
    output a kernel wrote into it (None until then): a tensor that outlives its storage's
    accounting is counted through it (`rvmdbg.vm.escaped`). `buffer` numbers the pool's
    buffer it was given: a storage that reuses a freed buffer has that buffer's number.
    """

    __slots__ = ("size", "alignment", "dtype_hint", "owner", "released", "tensor", "buffer")

    def __init__(self, size: int, alignment: int, dtype_hint: str, owner, tensor=None,
                 buffer=None):
        self.size = size
        self.buffer = buffer  # the pool's buffer number (`s3` on the panes); None: no pool
        self.alignment = alignment
        self.dtype_hint = dtype_hint
        self.owner = owner
        self.released = False
        self.tensor = tensor

    def __repr__(self) -> str:
        return _("<storage {n} bytes>").format(n=self.size)


class TensorPlaceholder:
    """A tensor that `alloc_tensor` laid out in a storage and no kernel has written yet.

    It has `shape` and `dtype` like an ndarray, so `shape_of` and the output check of
    `invoke_packed` treat both alike; reading it as a kernel input is an error.
    """

    __slots__ = ("storage", "offset", "shape", "dtype")

    def __init__(self, storage: StorageObject, offset: int, shape: tuple, dtype: np.dtype):
        self.storage = storage
        self.offset = offset
        self.shape = shape
        self.dtype = dtype

    @property
    def nbytes(self) -> int:
        return dtype_nbytes(self.shape, self.dtype)

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return _("<uninitialized tensor [{dims}] {dtype}>").format(dims=dims, dtype=self.dtype)


def dtype_nbytes(shape: tuple, dtype: np.dtype) -> int:
    """Bytes a dense tensor of this shape and dtype occupies."""
    n = dtype.itemsize
    for d in shape:
        n *= d
    return n
