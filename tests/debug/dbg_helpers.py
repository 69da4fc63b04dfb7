"""Shared pieces of the debugger tests: compiled programs, hand-assembled executables, and a
state fingerprint that compares a session's VM with a fresh run of the same program."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from rvmdbg.args import parse_program_args
from rvmdbg.limits import Limits
from rvmdbg.relay.loader import load_file, program_default_args
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import ADTValue, RefCell, values_equal
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.machine import VirtualMachine
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder

from kernel_helpers import i32, i64, k_add, k_less, k_sub  # noqa: F401 (re-exported to tests)

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "programs"
PROGRAM_NAMES = sorted(p.name for p in PROGRAMS.glob("*.relay"))


@lru_cache(maxsize=None)
def _module(name: str):
    return check_module(load_file(str(PROGRAMS / name)))


@lru_cache(maxsize=None)
def executable(name: str):
    return compile_module(_module(name))


def program(name: str, args: list[str] | None = None):
    """(executable, argument values) of programs/NAME with its `// args:` defaults."""
    mod = _module(name)
    exe = executable(name)
    if args is None:
        args = program_default_args((PROGRAMS / name).read_text()) or []
    return exe, parse_program_args(mod, "main", args)


def k_ref_create(values):
    return (RefCell(values[0]),)


def k_ref_read(values):
    return (values[0].value,)


def k_ref_write(values):
    values[0].value = values[1]
    return (ADTValue(0, None, ()),)


ADD, SUB, LESS, REF_CREATE, REF_READ, REF_WRITE = range(6)


def kernels():
    return [Kernel("add", "", 2, 1, impl=k_add), Kernel("sub", "", 2, 1, impl=k_sub),
            Kernel("less", "", 2, 1, impl=k_less),
            Kernel("ref_create", "", 1, 1, builtin=True, impl=k_ref_create),
            Kernel("ref_read", "", 1, 1, builtin=True, impl=k_ref_read),
            Kernel("ref_write", "", 2, 1, builtin=True, impl=k_ref_write)]


def scalar_op(kernel, a, b, out, dtype, size_reg, off_reg, storage_reg):
    """alloc_storage + alloc_tensor + invoke_packed, as the compiler calls a scalar kernel."""
    return [bc.AllocStorage(size_reg, 64, dtype, storage_reg),
            bc.AllocTensor(storage_reg, off_reg, [], dtype, out),
            bc.InvokePacked(kernel, 3, 1, [a, b, out])]


def count_loop_exe():
    """main(n): i = 0; while i < n: i = i + 1; return i (a backward goto, one frame)."""
    main = VMFunction("main", ["n"], 9, [
        bc.LoadConsti(0, 1), bc.LoadConsti(1, 2), bc.LoadConsti(8, 6), bc.LoadConsti(0, 7),
        bc.LoadConsti(1, 5),
        bc.AllocStorage(6, 64, "int64", 4),          # 5: loop head
        bc.AllocTensor(4, 7, [], "bool", 3),
        bc.InvokePacked(LESS, 3, 1, [1, 0, 3]),
        bc.If(3, 5, 1, 6),                           # 8: -> 9 or 14
        bc.AllocTensor(4, 7, [], "int64", 8),
        bc.InvokePacked(ADD, 3, 1, [1, 2, 8]),
        bc.Move(8, 1),
        bc.KillRegister(4),
        bc.Goto(-8),                                 # 13: -> 5
        bc.Ret(1),
    ])
    return Executable([main], [], kernels())


def calls_exe():
    """main(n) = twice(n) + 1 where twice(x) = inc(inc(x)), inc(x) = x + 1: nested calls.

    Register use: inc: $0 = x, $1 one, $2 off, $3 size, $4 storage, $5 result.
    """
    inc = VMFunction("inc", ["x"], 6, [
        bc.LoadConsti(1, 1), bc.LoadConsti(0, 2), bc.LoadConsti(8, 3),
        *scalar_op(ADD, 0, 1, 5, "int64", 3, 2, 4),
        bc.Ret(5),
    ])
    twice = VMFunction("twice", ["x"], 3, [
        bc.Invoke(0, [0], 1),                        # 0: $1 = inc($0)
        bc.Invoke(0, [1], 2),                        # 1: $2 = inc($1)
        bc.Ret(2),
    ])
    main = VMFunction("main", ["n"], 3, [
        bc.Invoke(1, [0], 1),                        # 0: $1 = twice($0)
        bc.Invoke(0, [1], 2),                        # 1: $2 = inc($1)
        bc.Ret(2),
    ])
    return Executable([inc, twice, main], [], kernels())


def refs_exe():
    """main(n): c = ref(0); for i in 1..n: c := !c + i (via a loop); return !c.

    Registers: $0 n, $1 cell, $2 i, $3 one, $4 tmp, $5 cond, $6 size, $7 off, $8 storage,
    $9 sum, $10 unit.
    """
    main = VMFunction("main", ["n"], 11, [
        bc.LoadConsti(0, 4),
        bc.InvokePacked(REF_CREATE, 2, 1, [4, 1]),   # 1: $1 = ref(0)
        bc.LoadConsti(1, 2), bc.LoadConsti(1, 3), bc.LoadConsti(8, 6), bc.LoadConsti(0, 7),
        bc.AllocStorage(6, 64, "int64", 8),          # 6: loop head
        bc.AllocTensor(8, 7, [], "bool", 5),
        bc.InvokePacked(LESS, 3, 1, [0, 2, 5]),      # 8: $5 = n < i
        bc.If(5, 3, 10, 1),                          # 9: done when $5 == 1 ($3 is 1) -> 19
        bc.InvokePacked(REF_READ, 2, 1, [1, 4]),     # 10: $4 = !c
        bc.AllocTensor(8, 7, [], "int64", 9),
        bc.InvokePacked(ADD, 3, 1, [4, 2, 9]),       # 12: $9 = $4 + i
        bc.InvokePacked(REF_WRITE, 3, 1, [1, 9, 10]),  # 13: c := $9
        bc.AllocTensor(8, 7, [], "int64", 4),
        bc.InvokePacked(ADD, 3, 1, [2, 3, 4]),       # 15: $4 = i + 1
        bc.Move(4, 2),
        bc.KillRegister(8),
        bc.Goto(-12),                                # 18: -> 6
        bc.InvokePacked(REF_READ, 2, 1, [1, 4]),     # 19
        bc.Ret(4),
    ])
    return Executable([main], [], kernels())


def fatal_exe():
    """main(n): if n == 0 then fatal else n (Fatal after a few steps)."""
    main = VMFunction("main", ["n"], 3, [
        bc.LoadConsti(0, 1),
        bc.Move(0, 2),
        bc.If(0, 1, 1, 2),                           # 2: n == 0 -> 3 else 4
        bc.Fatal(),
        bc.Ret(2),
    ])
    return Executable([main], [], kernels())


# ------------------------------------------------------------------ comparing states

def _same_value(a, b, seen) -> bool:
    if a is None or b is None:
        return a is None and b is None
    tensors = (np.ndarray, np.generic)
    if type(a) is not type(b) and not (isinstance(a, tensors) and isinstance(b, tensors)):
        return False
    if isinstance(a, StorageObject):
        return a.size == b.size and a.released == b.released
    if isinstance(a, TensorPlaceholder):
        return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
    if isinstance(a, RefCell):
        key = (id(a), id(b))
        if key in seen:
            return True
        seen.add(key)
        return _same_value(a.value, b.value, seen)
    if isinstance(a, ADTValue):
        return (a.tag == b.tag and a.con == b.con and len(a.fields) == len(b.fields)
                and all(_same_value(x, y, seen) for x, y in zip(a.fields, b.fields)))
    captured = getattr(a, "captured", None)
    if captured is not None:
        return (a.name == b.name and len(captured) == len(b.captured)
                and all(_same_value(x, y, seen) for x, y in zip(captured, b.captured)))
    return values_equal(a, b)


def same_state(vm_a, vm_b) -> bool:
    """Same step, halted flag, result, frames (function, pc, activation) and register values."""
    if vm_a.steps != vm_b.steps or vm_a.halted != vm_b.halted:
        return False
    if vm_a.halted:
        return _same_value(vm_a.result, vm_b.result, set())
    if len(vm_a.frames) != len(vm_b.frames):
        return False
    for fa, fb in zip(vm_a.frames, vm_b.frames):
        if (fa.func_index, fa.pc, fa.serial) != (fb.func_index, fb.pc, fb.serial):
            return False
        if len(fa.registers) != len(fb.registers):
            return False
        if not all(_same_value(x, y, set()) for x, y in zip(fa.registers, fb.registers)):
            return False
    return vm_a.live_bytes == vm_b.live_bytes


def fresh_vm_at(exe, args, step: int, limits=None) -> VirtualMachine:
    """A new VM on the original executable, run to `step` (or to its end)."""
    vm = VirtualMachine(exe, limits or Limits())
    vm.start("main", args)
    if step > 0:
        try:
            vm.run(until_step=step)
        except Exception:
            pass
    return vm


def fresh_args(name: str, args=None):
    """Argument values parsed anew (reference cells must not be shared between runs)."""
    return program(name, args)[1]
