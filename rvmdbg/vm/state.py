"""What the Relay VM's state is made of, shared by its handlers, fast paths and loop.

`VMError` (a located run-time failure), `Frame` (one activation), `RegisterWrite` and
`StepInfo` (what one step did), the codes a handler returns instead of a pc (`CALL`, `HALT`,
`TRAP`, `AFTER`), and the few value helpers every part of the machine reads values with
(`number_of`, `is_tensor`, `summary`, `BOOL_OF`, `limit_error`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rvmdbg.limits import Limits
from rvmdbg.scalars import SCALAR_TYPES
from rvmdbg.values import format_value, tensor_line
from rvmdbg.vm.objects import ByteAccount
from rvmdbg.i18n import _

# What a handler returns instead of a pc (pcs are never negative).
CALL = -1   # the frame stack changed: reload frame, registers and code
HALT = -2   # the outermost frame returned; the result is in `vm.result`
TRAP = -3   # a breakpoint: stop before executing the instruction
AFTER = -4  # a trap that ran its instruction and stops after it (a watched write)

# The bool scalar an `if` on a bool test compares by identity, by the constant it compares with.
BOOL_OF = {1: np.True_, 0: np.False_}


def number_of(v):
    """The Python number a 0-d (or 1-element) tensor holds (NumPy scalars: without `.item()`,
    which costs ten times `int()`)."""
    t = type(v)
    if t in SCALAR_TYPES:
        kind = v.dtype.kind
        return float(v) if kind == "f" else bool(v) if kind == "b" else int(v)
    return v.item()


# ---------------------------------------------------------------- errors and frames

class VMError(Exception):
    """A run-time failure, located at the instruction that failed.

    `limit` names the limit (`"max_steps"`, `"max_depth"`, `"max_bytes"`) when one was hit.
    Location fields stay None for errors raised before any instruction (bad entry or args).
    """

    def __init__(self, message: str, limit: str | None = None):
        super().__init__(message)
        self.message = message
        self.limit = limit
        self.func_index: int | None = None
        self.func_name: str | None = None
        self.pc: int | None = None
        self.instruction: str | None = None
        self.span = None
        self.source_line: str | None = None
        self.backtrace: list[tuple[str, int]] = []  # (function, pc), innermost first

    def format(self) -> str:
        out = [_("error: {message}").format(message=self.message)]
        if self.func_name is not None:
            at = "  " + _("at @{func} pc={pc}").format(func=self.func_name, pc=self.pc)
            out.append(at + (f": {self.instruction}" if self.instruction else ""))
        if self.span is not None:
            out.append("  " + _("from {place}").format(place=self.span))
            if self.source_line is not None:
                sp = self.span
                gutter = f"{sp.line:>6} | "
                text = self.source_line.expandtabs(1)
                out.append(gutter + text)
                width = (sp.end_col - sp.col) if sp.end_line == sp.line else len(text) - sp.col + 1
                out.append(" " * (len(gutter) + sp.col - 1) + "^" + "~" * (max(1, width) - 1))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.format()


def limit_error(name: str, value: int, what: str) -> VMError:
    return VMError(_("{what} (limit {name}={value}; raise it with {flag})").format(
        what=what, name=name, value=value, flag=Limits.flag_for(name)), limit=name)


class Frame:
    """One activation: the function, its pc, its register file and where its result goes.

    While a callee runs, the caller's `pc` is the pc of its invoke instruction; `Ret` moves
    it on by one. `owned_bytes` counts the live storage this frame allocated (None once the
    frame has returned and released it); it lives in `account`, a `ByteAccount` made by the
    frame's first `alloc_storage` (None until then) that its storages point at. `serial`
    numbers activations in the order they were pushed (0 = the outermost): the same
    activation gets the same serial on every replay, which the debugger's history relies on.
    """

    __slots__ = ("func_index", "pc", "registers", "caller_return_register", "account",
                 "serial")

    def __init__(self, func_index: int, pc: int, registers: list, caller_return_register=None,
                 serial: int = 0):
        self.func_index = func_index
        self.pc = pc
        self.registers = registers
        self.caller_return_register = caller_return_register
        self.account = None
        self.serial = serial

    @property
    def owned_bytes(self) -> int | None:
        account = self.account
        return 0 if account is None else account.owned_bytes

    @owned_bytes.setter
    def owned_bytes(self, value: int | None) -> None:
        account = self.account
        if account is None:
            if not value:
                return  # no account yet means 0 bytes; a returned frame had none to release
            self.account = account = ByteAccount()
        account.owned_bytes = value

    def __repr__(self) -> str:
        return (f"Frame(func_index={self.func_index}, pc={self.pc}, "
                f"registers=<{len(self.registers)}>, ret=${self.caller_return_register})")


class RegisterWrite(NamedTuple):
    """One register write of a step: `depth` indexes `vm.frames` (0 = outermost)."""

    depth: int
    register: int
    old: object
    new: object


class StepInfo:
    """What one executed instruction did, enough for a debugger to show and undo it.

    Made once per `step()`: only the first seven fields are set for every step, the rest keep
    their class defaults unless the step did that (no `__slots__`, so they need not be)."""

    writes: tuple = ()              # RegisterWrite records
    pushed: Frame | None = None
    popped: Frame | None = None
    jump_target: int | None = None
    next_func_index: int | None = None  # the top frame after the step (None: halted)
    next_pc: int | None = None
    allocated_bytes = 0
    freed_bytes = 0
    halted = False
    result = None
    _undo = None

    def __init__(self, step, frame, depth, func_index, pc, instruction, reads):
        self.step = step                # instructions executed before this one
        self.frame = frame              # the Frame that executed it
        self.depth = depth              # its index in vm.frames
        self.func_index = func_index
        self.pc = pc
        self.instruction = instruction
        self.reads = reads              # register numbers read, in `frame`

    def __repr__(self) -> str:
        return f"<StepInfo step={self.step} fi={self.func_index} pc={self.pc} {self.instruction.text()}>"


# ---------------------------------------------------------------- reading values

def summary(v, width: int = 60) -> str:
    """A one-line, truncated human form of a register value."""
    if v is None:
        return "nothing"
    if type(v) is np.ndarray:
        return tensor_line(v, width)
    try:
        text = format_value(v)
    except Exception:  # a value a kernel made up: describe it rather than fail on it
        text = f"<{type(v).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def is_tensor(v) -> bool:
    """An array, or a NumPy scalar (a 0-d tensor, `rvmdbg.scalars`)."""
    return type(v) is np.ndarray or isinstance(v, np.generic)
