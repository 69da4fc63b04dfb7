"""Inspection of what the program has done: each instruction's data dependencies (its
reads with the step and instruction that last wrote each, its writes), the static def-use
table and swap verdicts of a function, and the last write of a register in a frame (found
by replaying history backwards one checkpoint segment at a time), including travelling back
to it (`last_write`). `Inspection` is a mixin of `DebugSession`; it uses the session's
machine, history and the motions' public helpers (`frame_depth`, `goto_exact`, `push_step`,
`segment_visits`, `stop_event`, ...).
"""

from __future__ import annotations

from rvmdbg.debug import deps as deps_mod
from rvmdbg.debug.deps import DepRead, Deps
from rvmdbg.debug.events import DebugError, StopEvent
from rvmdbg.debug.gcpause import quiet_gc
from rvmdbg.debug.machine import register_name
from rvmdbg.debug.traps import run_checked
from rvmdbg.i18n import _


def _passed_from(call, param: int, nparams: int) -> str:
    """`: its $10 becomes $0` for the register a call passes as parameter `param` (a
    closure's captured values come before the call's own arguments)."""
    args = list(getattr(call, "args", ()) or ())
    k = param - (nparams - len(args))
    if 0 <= k < len(args):
        return ": " + _("its ${arg} becomes ${param}").format(arg=args[k], param=param)
    return ": " + _("${param} is a value the closure captured").format(param=param)


class Inspection:
    """Data dependencies and last writes, for `DebugSession`."""

    def static_def_use(self, func_index: int) -> dict:
        """pc -> {register read: [pcs that may produce it]} (-1: the function's parameter)."""
        table = self.def_use_cache.get(func_index)
        if table is None:
            table = deps_mod.static_def_use(self.exe.functions[func_index])
            self.def_use_cache[func_index] = table
        return table

    def may_swap(self, func_index: int, pc_a: int, pc_b: int) -> bool:
        return self.swap_verdict(func_index, pc_a, pc_b).ok

    def swap_verdict(self, func_index: int, pc_a: int, pc_b: int) -> deps_mod.SwapVerdict:
        """Whether two instructions of a function may trade places, and why not."""
        return deps_mod.swap_verdict(self.exe.functions[func_index], pc_a, pc_b, self.exe)

    def read_write_sets(self, func_index: int, pc: int) -> tuple[tuple, tuple]:
        return deps_mod.read_write_sets(self.exe.functions[func_index].instructions[pc])

    def deps(self, depth: int | None = None) -> Deps:
        """The instruction's reads, each with the step and instruction that last wrote it in
        this activation, and its writes (for the innermost frame unless `depth` is given)."""
        vm = self.vm
        if not vm.frames:
            return Deps([], [])
        d = self.frame_depth(depth)
        key = (vm.steps, d)
        cached = self.deps_cache.get(key)
        if cached is not None:
            return cached
        frame = vm.frames[d]
        fn = self.exe.functions[frame.func_index]
        ins = fn.instructions[frame.pc]
        reads, writes = deps_mod.read_write_sets(ins)
        wanted = sorted(set(reads))
        values = {r: frame.registers[r] for r in wanted}
        found = self._last_writes(d, wanted)
        out = []
        for r in reads:
            step, wfi, wpc, text = found.get(r, (None, None, None, "never written"))
            out.append(DepRead(r, values[r], step, wfi, wpc, text))
        result = Deps(out, list(writes))
        if len(self.deps_cache) > 64:
            self.deps_cache.clear()
        self.deps_cache[key] = result
        return result

    def straight_starts(self, func_index: int) -> list[int]:
        """For each pc of a function, the first pc of the straight run that ends there: every
        instruction from it up to (not including) pc falls through to the next, pushes no
        frame and jumps nowhere, and no instruction of the function jumps into the run past
        its first pc. Arriving at pc, the VM ran exactly that run's instructions, one step
        each, just before (cached per function)."""
        cache = self.__dict__.setdefault("_straight_cache", {})
        fn = self.exe.functions[func_index]
        hit = cache.get(func_index)
        if hit is not None and hit[0] is fn:
            return hit[1]
        code = fn.instructions
        targets = deps_mod.jump_targets(fn)
        starts = [0] * len(code)
        for pc in range(1, len(code)):
            prev = code[pc - 1]
            straight = (prev.falls_through and not prev.is_jump and not prev.is_call
                        and pc not in targets)
            starts[pc] = starts[pc - 1] if straight else pc
        cache[func_index] = (fn, starts)
        return starts

    def _straight_writes(self, frame, registers, by_register) -> dict:
        """The last writes of `registers` in the innermost frame found without replaying:
        those whose nearest writer before the pc lies in the straight run that ends at the
        pc ran exactly (pc - writer) steps ago. A model's @main is one long straight run, so
        a stop there needs no replay of the kernels between a value's write and its read."""
        fi, pc = frame.func_index, frame.pc
        starts = self.straight_starts(fi)
        if not 0 <= pc < len(starts):
            return {}
        start, now, oldest = starts[pc], self.vm.steps, self.history.start
        code = self.exe.functions[fi].instructions
        found = {}
        for r in registers:
            before = [w for w in by_register.get(r, ()) if w < pc]
            if not before:
                continue
            w = max(before)
            step = now - (pc - w)
            if w >= start and step >= oldest:
                found[r] = (step, fi, w, code[w].text())
        return found

    @quiet_gc
    def _last_writes(self, depth: int, registers, straight: bool = True) -> dict:
        """register -> (step, func_index, pc, text) of its last write in the activation at
        `depth`; absent when it was never written. Returns to the current step. `straight`:
        take the writes in the innermost frame's current straight run without a replay
        (False: replay for every register, the reference the fast way is tested against)."""
        vm = self.vm
        now = vm.steps
        frame = vm.frames[depth]
        serial, fi = frame.serial, frame.func_index
        fn = self.exe.functions[fi]
        nparams = len(fn.params)
        top = depth == len(vm.frames) - 1
        by_register = self.register_index(fi)[0]
        quick = self._straight_writes(frame, registers, by_register) if straight and top else {}
        if quick:
            registers = [r for r in registers if r not in quick]
            if not registers:
                return quick
        writers: dict[int, list[int]] = {}
        for r in registers:
            for pc in by_register.get(r, ()):
                writers.setdefault(pc, []).append(r)
        remaining = set(registers)
        found: dict = {}
        try:
            traps = frozenset((fi, pc) for pc in writers)
            # A caller waits on the call at its pc: that call's write has not happened yet.
            pending = None if top else frame.pc
            seg_end = now
            cp = self.history.before(now)
            # Newest segment first; events are filtered by activation serial, so the scan
            # ends with the segment in which this activation was pushed.
            while remaining and traps and cp is not None:
                events = self._segment_writes(cp, seg_end, traps, serial)
                for s, pc in reversed(events):
                    if pending is not None:
                        if pc == pending:
                            pending = None
                            continue
                        pending = None
                    for r in writers[pc]:
                        if r in remaining:
                            found[r] = (s, fi, pc, fn.instructions[pc].text())
                            remaining.discard(r)
                if cp.pushes < serial:
                    break
                seg_end = cp.step
                cp = self.history.before(seg_end)
            # Did this activation begin before the oldest checkpoint (its early writes lost)?
            if serial == 0:
                older = self.history.start > 0
            else:
                older = bool(remaining) and self.history.checkpoint_for_push(serial) is None
            push = self.push_step(serial) if remaining and serial > 0 and not older else None
            for r in list(remaining):
                if older:
                    found[r] = (None, None, None, "before the start of history")
                elif r < nparams:
                    if depth == 0 and serial == 0:
                        found[r] = (None, None, None, f"argument of @{fn.name}")
                    elif push is None or push < self.history.start:
                        found[r] = (None, None, None, "before the start of history")
                    else:
                        found[r] = self._instruction_at_step(push)
        finally:
            self.goto_exact(now)
        found.update(quick)
        return found

    def _segment_writes(self, cp, seg_end: int, traps, serial: int) -> list:
        """(step, pc) of each trap location reached in activation `serial`, from the
        checkpoint `cp` up to (not including) step `seg_end`."""
        frames = self.vm.frames
        return self.segment_visits(cp, seg_end, traps, lambda: frames[-1].serial == serial)

    def segment_visits(self, cp, seg_end: int, traps, pred=None) -> list:
        """(step, pc) of each trap location reached where `pred()` holds (None: always), from
        the checkpoint `cp` up to (not including) step `seg_end`."""
        vm = self.vm
        self.history.restore(cp)
        frames = vm.frames
        events = []
        if not vm.halted and vm.location in traps and (pred is None or pred()):
            events.append((vm.steps, frames[-1].pc))
        checks = None
        if pred is not None:
            # The predicate is asked inside the run loop: the run stops only where it holds.
            cached = self.visit_checks
            if cached is not None and cached[0] is traps and cached[1] is pred:
                checks = cached[2]
            else:
                def check(regs):
                    return True if pred() else False
                checks = dict.fromkeys(traps, check)
                self.visit_checks = (traps, pred, checks)
        while vm.steps < seg_end and not vm.halted:
            run_checked(vm, until_step=seg_end, breakpoints=traps, checks=checks)
            if vm.steps < seg_end and not vm.halted and vm.location in traps:
                events.append((vm.steps, frames[-1].pc))
        return events

    def _instruction_at_step(self, step: int) -> tuple:
        self.goto_exact(step)
        top = self.vm.frames[-1]
        text = self.exe.functions[top.func_index].instructions[top.pc].text()
        return (step, top.func_index, top.pc, text)

    def frame_of_register(self, register: int, depth: int | None,
                           nothing: str = "no frames") -> int:
        """`frame_depth(depth)`, also checked to hold `register`; DebugError otherwise."""
        d = self.frame_depth(depth, nothing)
        size = len(self.vm.frames[d].registers)
        if not 0 <= register < size:
            raise DebugError(_("{register} is outside the register file (size {size})").format(
                register=register_name(self.exe, register), size=size))
        return d

    def last_writer(self, register: int, depth: int | None = None) -> tuple:
        """(step, func_index, pc, text) of the instruction that last wrote `register` in the
        frame at `depth` (the innermost by default); step None with a reason as text when
        there is none in history. The VM stays where it is."""
        d = self.frame_of_register(register, depth)
        return self._last_writes(d, [register]).get(
            register, (None, None, None, "not written in this frame"))

    def last_write(self, register: int, depth: int | None = None) -> StopEvent:
        """Travel back to the instruction that last wrote `register` in the frame at `depth`
        (the innermost by default): the stop is just before that instruction runs."""
        self.begin_motion()
        vm = self.vm
        now = vm.steps
        d = self.frame_of_register(register, depth)
        step, wfi, wpc, text = self._last_writes(d, [register]).get(
            register, (None, None, None, None))
        if step is None:
            if text is not None and text.startswith("argument"):
                self.goto_exact(self.history.start)
                note = _("{register} is an {what}: set before step 0").format(
                    register=register_name(self.exe, register), what=text)
                if self.history.start:
                    return self.history_start_event(note)
                return self.stop_event("step", message=note)
            name = register_name(self.exe, register)
            raise DebugError(_("{register} has not been written in this frame").format(register=name)
                             if text is None else
                             _("{register} was written {when}").format(register=name, when=text))
        frame = vm.frames[d]
        callee = self.exe.functions[frame.func_index]
        owner = _("{register} of @{func} (frame #{n} at step {step})").format(
            register=register_name(self.exe, register), func=callee.name, n=len(vm.frames) - 1 - d, step=now)
        serial = frame.serial
        self.goto_exact(step)
        # The write happened while that activation was the innermost frame, except for a
        # parameter, which the caller's invoke sets before the callee exists.
        top = self.vm.frames[-1]
        if top.serial == serial:
            note = _("{register} is written by this instruction").format(register=owner)
        else:
            call = self.exe.functions[top.func_index].instructions[top.pc]
            note = (_("{register} is a parameter, set by this call in @{func}").format(
                register=owner, func=self.func_name(top.func_index))
                    + _passed_from(call, register, len(callee.params)))
        return self.back_event("last-write", message=note)
