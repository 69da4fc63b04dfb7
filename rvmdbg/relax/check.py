"""The check mode: TVM's own `VirtualMachine` runs the program with `set_instrument`, which
reports every `Call` before and after it runs with its arguments (and after, its result);
`RelaxMachine` runs it beside, reporting the same through its `on_call` hook; the two
sequences of calls, their arguments' values and the results must be identical.

Values are compared by content: a tensor by dtype, shape and bytes (bit-identical), a shape
tuple by its dims, a storage or the VM handle by kind only (their addresses differ)."""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relax import require_tvm
from rvmdbg.relax.machine import VM, Closure, RelaxMachine, Storage, to_host


class CheckFailed(AssertionError):
    """The stepper and TVM's VM disagree; the message says at which call and how."""


ALLOCATORS = ("vm.builtin.alloc_tensor", "vm.builtin.alloc_storage", "vm.builtin.alloc_shape_heap")


def norm(v, fresh=frozenset()):
    """A comparable form of a value either VM holds; a tensor whose data pointer is in
    `fresh` (allocated, not yet written by a call) by dtype and shape only: its contents are
    whatever the memory held."""
    if v is None:
        return None
    if v is VM or type(v).__name__ == "c_void_p":
        return ("vm",)
    if isinstance(v, Storage) or type(v).__name__ == "Storage":
        return ("storage",)
    if isinstance(v, Closure) or "Closure" in type(v).__name__:
        return ("closure",)
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("tensor", str(a.dtype), a.shape, a.tobytes())
    if hasattr(v, "numpy") and callable(v.numpy):
        a = v.numpy()
        if _ptr(v) in fresh:
            return ("tensor", str(a.dtype), a.shape, None)
        return ("tensor", str(a.dtype), a.shape, a.tobytes())
    name = type(v).__name__
    if name == "Shape":
        return ("shape", tuple(int(d) for d in v))
    if name in ("Array", "list", "tuple") or isinstance(v, (tuple, list)):
        return ("tuple", tuple(norm(x, fresh) for x in v))
    if isinstance(v, (bool, int, np.integer)):
        return ("int", int(v))
    if isinstance(v, (float, np.floating)):
        return ("float", float(v))
    if name == "Function":
        return ("func",)
    return ("other", str(v))


def _record(trace):
    """The hook that appends one report per call to `trace`, tracking which tensors hold
    uninitialised memory (a fresh allocation, until a call it is passed to returns)."""
    fresh: set = set()
    heaps: set = set()   # shape heaps: filled a slot at a time, the other slots never defined

    def cb(name, args, before, ret):
        name = str(name)
        if not (before or name in ALLOCATORS):
            for a in args or ():
                fresh.discard(_ptr(a))
        seen = frozenset(fresh) | heaps
        trace.append((name, bool(before),
                      None if args is None else tuple(norm(a, seen) for a in args),
                      None if before else norm(ret, seen | _ptrs(name, ret))))
        if not before and name in ALLOCATORS and _ptr(ret) is not None:
            fresh.add(_ptr(ret))
            if name == "vm.builtin.alloc_shape_heap":
                heaps.add(_ptr(ret))
    return cb


def _ptrs(name, ret) -> frozenset:
    if name in ALLOCATORS and _ptr(ret) is not None:
        return frozenset((_ptr(ret),))
    return frozenset()


def _ptr(v):
    """A tensor's data address (None for anything else)."""
    f = getattr(v, "data_ptr", None)
    return f() if callable(f) else None


def tvm_trace(tvm_exe, entry: str, inputs) -> tuple[list, object]:
    """(calls, result) of TVM's own VirtualMachine on `inputs` (host values)."""
    tvm = require_tvm()
    from tvm import relax
    vm = relax.VirtualMachine(tvm_exe, tvm.cpu())
    trace: list = []
    record = _record(trace)

    def cb(func, symbol, before_run, ret_value, *args):
        record(symbol, list(args), before_run, ret_value)
        return 0

    vm.set_instrument(cb)
    probe = RelaxMachine.__new__(RelaxMachine)
    probe.tvm = tvm
    result = vm[entry](*[probe.to_device(a) for a in inputs])
    return trace, to_host(result)


def stepper_trace(exe, entry: str, inputs, limits=None) -> tuple[list, object, int]:
    """(calls, result, steps) of `RelaxMachine` stepping the same executable."""
    m = RelaxMachine(exe, limits)
    trace: list = []
    m.on_call = _record(trace)
    m.start(entry, inputs)
    while not m.halted:
        m.step()
    return trace, to_host(m.result), m.steps


def check(exe, entry: str, inputs, limits=None):
    """Run both and compare: the stepper's (result, steps) or CheckFailed."""
    theirs, their_result = tvm_trace(exe.tvm_exe, entry, inputs)
    ours, our_result, steps = stepper_trace(exe, entry, inputs, limits)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            raise CheckFailed(_("call {i} differs: the stepper {ours}, TVM's VM {theirs}").format(
                i=i, ours=_describe(a), theirs=_describe(b)))
    if len(ours) != len(theirs):
        raise CheckFailed(_("the stepper made {n} call reports, TVM's VM {m}").format(
            n=len(ours), m=len(theirs)))
    if norm(our_result) != norm(their_result):
        raise CheckFailed(_("the results differ"))
    return our_result, steps


def _describe(entry) -> str:
    name, before, args, ret = entry
    when = "before" if before else "after"
    return f"{when} {name}({', '.join(str(a)[:60] for a in args or ())})" + \
        ("" if before else f" -> {str(ret)[:60]}")


__all__ = ["check", "tvm_trace", "stepper_trace", "CheckFailed", "norm"]
