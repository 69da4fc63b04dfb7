"""Tensors that outlive their storage's accounting, counted for `--max-bytes`.

The VM counts storage per frame (`Frame.account`): `alloc_storage` adds its bytes, a
`kill_register` of the storage or the frame's return takes them away. That is exact for what
stays in a frame, but a tensor can outlive both: returned to the caller, kept in an ADT or a
reference cell, while the storage it was written into is killed or its frame is gone. In TVM
the tensor keeps its storage alive by reference count, so its bytes are still live.

The VM keeps an estimate of those bytes cheaply (`vm.orphan_bytes`: at a return, all the
bytes the frame still owned; at a kill, the storage's bytes when its tensor is still
referenced elsewhere), never below what escaped. Only when an allocation would pass the
limit with the estimate is it made exact by `escaped_bytes`, which walks what the program
can still reach: every register of every live frame, through ADT fields, closures and
reference cells. Walking on demand keeps returns O(1) (walking each returned value would be
quadratic on a list built by recursion), and it never counts what the debugger's history
keeps alive, which is not the program's memory.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.values import ADTValue, RefCell
from rvmdbg.vm.objects import StorageObject, VMClosure


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns `a`'s memory (a view's base, its base's base, ...)."""
    base = a.base
    while type(base) is np.ndarray:
        a, base = base, base.base
    return a


def _arrays(roots) -> list[np.ndarray]:
    """The distinct memory-owning arrays reachable from `roots`, each once."""
    found, seen = [], set()
    stack = list(roots)
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is np.ndarray:
            r = _root(v)
            if id(r) not in seen:
                seen.add(id(r))
                found.append(r)
            continue
        if v is None or kind is StorageObject or id(v) in seen:
            continue  # storages are counted by their frames
        if kind is ADTValue:
            seen.add(id(v))
            stack.extend(v.fields)
        elif kind is RefCell:
            seen.add(id(v))
            stack.append(v.value)
        elif kind is VMClosure:
            seen.add(id(v))
            stack.extend(v.captured)
        elif kind is tuple or kind is list:
            seen.add(id(v))
            stack.extend(v)
    return found


def escaped_bytes(vm) -> int:
    """Bytes of the tensors the program can still reach that no live storage accounts for:
    not written into an unkilled storage of a live frame, not a constant, not an input."""
    covered: set = set()
    for frame in vm.frames:
        for v in frame.registers:
            if (type(v) is StorageObject and not v.released and v.owner.owned_bytes is not None
                    and type(v.tensor) is np.ndarray):
                covered.add(id(_root(v.tensor)))
    # the constant pool and the arguments were never allocated by the program
    for a in _arrays(list(vm.constants) + list(vm.inputs)):
        covered.add(id(a))
    total = 0
    for a in _arrays([v for frame in vm.frames for v in frame.registers]):
        if id(a) not in covered:
            total += a.nbytes
    return total
