"""The debugger's stops found one instruction at a time: the reference the trap-based session
(rvmdbg/debug/traps.py) must agree with.

`Reference` drives its own VirtualMachine with `step()` and looks at every state: the
breakpoints there (conditions evaluated by walking the parsed tree, not the compiled
closures), every register write a step reports (for write and change watchpoints), every
register a step reads (for read watchpoints). It is how the session worked before
watchpoints and conditions became traps.
"""
from __future__ import annotations

from rvmdbg.debug.breakpoints import ConditionError, log_text
from rvmdbg.debug.heap import value_text
from rvmdbg.limits import Limits
from rvmdbg.values import copy_values
from rvmdbg.debug.machine import machine_for
from rvmdbg.vm.machine import VMError

LIMITS = Limits(max_steps=10 ** 7)


class Reference:
    """Stops of forward motions and reverse continue, found by single steps.

    `breakpoints` and `watches` are the session's own objects (read only: the reference
    keeps its own hit counts)."""

    def __init__(self, exe, args, breakpoints, watches):
        self.exe = exe
        self.args = copy_values(args)
        self.vm = machine_for(exe, LIMITS)
        self.vm.start("main", args)
        self.breakpoints = sorted((b for b in breakpoints if b.enabled), key=lambda b: b.id)
        self.watches = [w for w in watches if w.enabled]
        self.hits = {b.id: 0 for b in self.breakpoints}
        self.logs: list[str] = []

    # ------------------------------------------------------------ what one state shows

    def _breakpoint_at(self, counting: bool):
        """(id, message) of the breakpoint that stops here, or None."""
        vm = self.vm
        loc = vm.location
        regs = vm.frames[-1].registers
        hit, message = None, None
        for bp in self.breakpoints:
            if loc not in bp.locations:
                continue
            msg = None
            if bp._cond is not None:
                try:
                    if not bp._cond.walk(regs):
                        continue
                except ConditionError as exc:
                    msg = f"condition `{bp.condition}` could not be evaluated: {exc}"
            if counting:
                self.hits[bp.id] += 1
                if bp._hit is not None and not bp._hit.holds(self.hits[bp.id]):
                    continue
                if bp.log_message is not None:
                    params = self.exe.functions[loc[0]].params
                    self.logs.append(log_text(bp.log_message, regs, params))
                    continue
            elif not bp.searched_backward:
                continue
            if hit is None:
                hit = bp.id
            message = message or msg
        return None if hit is None else (hit, message)

    def _read_at(self):
        vm = self.vm
        top = vm.frames[-1]
        ins = self.exe.functions[top.func_index].instructions[top.pc]
        for wp in self.watches:
            if wp.on == "read" and top.serial == wp.serial and wp.register in ins.reads():
                return wp.id, (f"{wp.name} of @{wp.func_name} is read here: "
                               f"{value_text(top.registers[wp.register], 50)}")
        return None

    def _written(self, info):
        frames = self.vm.frames
        for w in info.writes:
            for wp in self.watches:
                if (wp.on != "read" and w.register == wp.register and w.depth == wp.depth
                        and w.depth < len(frames) and frames[w.depth].serial == wp.serial
                        and wp.triggered(w.old, w.new)):
                    return wp.id, (f"{wp.name} of @{wp.func_name}: "
                                   f"{value_text(w.old, 50)} -> {value_text(w.new, 50)}")
        return None

    # ------------------------------------------------------------ motions

    def forward(self, until=None, stop=None):
        """(reason, number, step, message) of the next stop, as `DebugSession._forward`."""
        vm = self.vm
        start = vm.steps
        locs, pred = stop if stop is not None else (frozenset(), None)
        while True:
            if vm.halted:
                return ("finished", None, vm.steps, None)
            s = vm.steps
            if s > start:
                found = self._breakpoint_at(True)
                if found is not None:
                    return ("breakpoint", found[0], s, found[1])
                found = self._read_at()
                if found is not None:
                    return ("watchpoint", found[0], s, found[1])
                if vm.location in locs and (pred is None or pred()):
                    return ("step", None, s, None)
                if until is not None and s >= until:
                    return ("step", None, s, None)
            try:
                info = vm.step()
            except VMError as err:
                return ("error", None, vm.steps, err.format())
            found = self._written(info)
            if found is not None:
                return ("watchpoint", found[0], s + 1, found[1])

    def cont(self):
        return self.forward()

    def step(self, n=1):
        return self.forward(until=self.vm.steps + n)

    def next(self):
        vm = self.vm
        ins = vm.current_instruction()
        if ins is None or not ins.is_call:
            return self.forward(until=vm.steps + 1)
        top = vm.frames[-1]
        depth = len(vm.frames)
        return self.forward(stop=(frozenset([(top.func_index, top.pc + 1)]),
                                  lambda: len(vm.frames) == depth))

    def finish(self):
        vm = self.vm
        d = len(vm.frames) - 1
        if d == 0:
            return self.forward()
        caller = vm.frames[d - 1]
        return self.forward(stop=(frozenset([(caller.func_index, caller.pc + 1)]),
                                  lambda: len(vm.frames) == d))

    def every_hit(self) -> list[tuple[int, str, int]]:
        """(step, kind, id) of every hit reverse continue may stop at, in order, from a
        fresh run to the end."""
        vm = machine_for(self.exe, LIMITS)
        saved, self.vm = self.vm, vm
        vm.start("main", copy_values(self.args))
        hits = []
        try:
            while not vm.halted:
                s = vm.steps
                found = self._breakpoint_at(False)
                if found is not None:
                    hits.append((s, "breakpoint", found[0]))
                found = self._read_at()
                if found is not None:
                    hits.append((s, "watchpoint", found[0]))
                found = self._written(vm.step())
                if found is not None:
                    hits.append((s + 1, "watchpoint", found[0]))
        finally:
            self.vm = saved
        return hits


def reverse_stops(hits, now: int) -> list[tuple[str, int | None, int]]:
    """The stops repeated reverse continue makes from step `now`: the last hit before each
    position (the first of several at one step), then the start of history."""
    out = []
    pos = now
    while True:
        before = [h for h in hits if h[0] < pos]
        if not before:
            out.append(("start of history", None, 0))
            return out
        last = max(h[0] for h in before)
        step, kind, number = next(h for h in before if h[0] == last)
        out.append((kind, number, step))
        pos = step
