"""The machine protocol: what `DebugSession` (and through it batch mode, the DAP adapter and
the screen) needs of a machine, so that any machine that implements it is debugged with the
same tools. The Relay VM (`rvmdbg.vm.machine.VirtualMachine`) and the toy MiniVM
(`rvmdbg.minivm.MiniMachine`) both do.

A machine runs a *program*, an `rvmdbg.vm.executable.Executable` or a subclass: functions
(name, params, register file size, instructions), a source map, and the source text. Its
instructions answer `text()`, `reads()`, `writes()`, `jump_targets(pc)`, `successors(pc)`,
`is_call`, `is_jump`, `is_return`, `falls_through` (`rvmdbg.vm.bytecode.Instruction`): that
is all the listing, the jump arrows and the dependency analysis read.

Snapshot and restore: the session's history saves `frames` (each frame's `pc`, `registers`,
`serial`, `owned_bytes`) and the counters below, and restores them by assignment, then
replays with `run(until_step=...)`. A machine must therefore be deterministic, keep all of
its state in those fields (plus reference cells, which the history journals), and never
mutate a value once it is in a register.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Machine(Protocol):
    """A debuggable machine.

    - `exe`: the program it runs; `frames`: activations, outermost first, each with
      `func_index`, `pc`, `registers` (a list), `serial` (0 for the outermost; the n-th push
      has serial n on every replay) and `owned_bytes`;
    - `steps`: instructions executed; `halted`, `result`: whether and with what it ended;
      `error`: the last failure; `pushes`: frames pushed so far; `live_bytes` and
      `orphan_bytes` (storage the frames own; tensors that outlived it, an upper bound);
    - `location`: (function index, pc) of the next instruction, None once halted.
    """

    exe: object
    frames: list
    steps: int
    halted: bool
    result: object
    pushes: int
    live_bytes: int
    orphan_bytes: int

    @property
    def location(self) -> tuple[int, int] | None: ...

    def start(self, name: str, args=()) -> None:
        """Set up the entry function's frame on `args` (VMError when they do not fit)."""

    def step(self):
        """Execute one instruction; a `StepInfo` says what it read, wrote, pushed, popped."""

    def run(self, until_step: int | None = None, breakpoints=None):
        """Execute until the end (returns the result), `steps == until_step` or before a
        location in `breakpoints` other than the current one (returns None). A failure
        raises `VMError` at the failing instruction with the state before it. A machine
        whose run() also takes the Relay VM's `checks` and `scoped` (traps that decide in
        its loop) says so with `traps_with_checks = True`; for any other the session asks
        those checks itself at each stop (`debug.traps.run_checked`)."""

    def current_instruction(self):
        """The instruction at `location` (None once halted)."""

    def blocks(self) -> list:
        """Prepare the fast path now (the session calls it while the screen is idle)."""


def machine_for(exe, limits=None) -> Machine:
    """The machine that runs `exe`: the program's own (`exe.machine(limits)`, the MiniVM's)
    or the Relay VM."""
    make = getattr(exe, "machine", None)
    if callable(make):
        return make(limits)
    from rvmdbg.vm.machine import VirtualMachine
    return VirtualMachine(exe, limits)


def halt_text(machine) -> str | None:
    """What a machine says about itself once halted (None: the session says what it returned)."""
    say = getattr(machine, "halt_text", None)
    return say() if callable(say) else None


__all__ = ["Machine", "machine_for", "halt_text"]


def register_name(exe, register: int) -> str:
    """How the program names a register: `$3` on the Relay VM, `r3` on a machine whose
    program says otherwise (`register_prefix`, the MiniVM's `r`), in every message."""
    return f"{getattr(exe, 'register_prefix', '$')}{register}"
