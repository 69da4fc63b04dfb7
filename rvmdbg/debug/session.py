"""The debugger protocol: one `DebugSession` per program run, shared by the screen, batch mode
and any future adapter (it never imports Textual).

A session owns a machine started on the entry function (the Relay VM's `VirtualMachine`, or
any other that implements `debug.machine.Machine`, such as the MiniVM), its `History` (checkpoints
plus replay, see history.py), the breakpoints and watchpoints, and answers questions about the
current position: frames with their registers, the current instruction and its Relay span,
the heap, data dependencies. Every motion returns a `StopEvent` saying where execution
stopped and why:

- forward: `step(n)` (into calls), `next()` (over calls), `finish()` (until the frame
  returns), `cont()`, `run_to(fi, pc)`;
- backward: `rstep(n)`, `rnext()`, `rfinish()` (back to the call), `rcontinue()` (to the most
  recent breakpoint or watchpoint hit, or the start of history), `goto(step)`,
  `last_write(register)`.

`step`, `next`, `rstep` and `rnext` take a `unit`: "instruction" (one VM instruction, the
default), "statement" (to where control enters another Relay span) or "line" (another source
line). `visits(locations)` finds the previous and next steps at some instructions (an
editor's "jump to cursor" travels to one); log points report through `on_log`.

Forward motion runs the VM's fast path in chunks that end on checkpoint boundaries, with
breakpoint locations armed as traps; with a watchpoint enabled it steps one instruction at a
time and checks each write. Backward motion restores a checkpoint and replays; searches
backwards (reverse continue, last writes, where a frame was called) replay one segment between
checkpoints at a time, newest first. Because the program is deterministic, going forward
after going back replays exactly the same steps.

"Hit at step s" means: a breakpoint whose location is the instruction about to run at step s
and whose condition holds there, or a watchpoint whose register the instruction at step s-1
wrote. Forward continue from p stops at the first hit after p; reverse continue at the last
hit before p.

Where each part lives: the motions, frames, history plumbing and watchpoints here;
`StopEvent`, `FrameView`, `DebugError` and the stop line in events.py; data dependencies and
last writes (`deps`, `last_writer`, `last_write` and the backward segment scans they use) in
inspection.py, a mixin of `DebugSession`; pausing full GC collections in gcpause.py.
"""
from __future__ import annotations

import threading
import time
from itertools import compress
from operator import is_not

from rvmdbg.debug.breakpoints import (BreakpointError, BreakpointTable, IdCounter, Watchpoint,
                                      entry_table, log_text, position_key)
from rvmdbg.debug.config import restore_breakpoints, save_breakpoints
from rvmdbg.debug.events import (BACK_MOTIONS, STOP_REASONS, DebugError, FrameView, StopEvent,
                                 step_tag)
from rvmdbg.debug.gcpause import quiet_gc
from rvmdbg.debug.heap import HeapNode, heap_of, same_value, value_text
from rvmdbg.debug.history import DEFAULT_INTERVAL, DEFAULT_MIN_SECONDS, History, RefJournal, instrument
from rvmdbg.debug.inspection import Inspection
from rvmdbg.debug.machine import halt_text, machine_for
from rvmdbg.debug.traps import TrapPlan, register_index_of, run_checked
from rvmdbg.limits import DEFAULT_LIMITS
from rvmdbg.values import copy_values
from rvmdbg.vm.machine import VMError
from rvmdbg.i18n import N_, _

PROGRESS_PERIOD = 0.1   # seconds between progress callbacks during long runs


class DebugSession(Inspection):
    """A program under the debugger. See the module docstring for the protocol."""

    def __init__(self, exe, args, entry: str = "main", limits=None,
                 history_bytes: int = 256 * 2 ** 20, config_dir=None, program_path=None,
                 interval: int = DEFAULT_INTERVAL,
                 checkpoint_seconds: float | None = DEFAULT_MIN_SECONDS, names=None):
        self.original_exe = exe
        self.journal = RefJournal()
        self.exe = instrument(exe, self.journal)
        self.entry = entry.lstrip("@")
        self.limits = limits or DEFAULT_LIMITS
        self._pristine_args = copy_values(args)
        self.vm = machine_for(self.exe, self.limits)   # any `debug.machine.Machine`
        self.vm.start(self.entry, copy_values(self._pristine_args))  # VMError: bad entry/args
        self.history = History(self.vm, self.journal, interval, history_bytes,
                               checkpoint_seconds)
        self.history.take()
        self.last_step = 0
        self._end: tuple | None = None   # ("finished", step, result) | ("error", step, VMError)
        self._ids = IdCounter()
        self.breakpoints = BreakpointTable(self.exe, self._ids)
        # the program kind's names for its source lines and values (debug.names.NameTable)
        self.names = names
        self.breakpoints.names = names
        self._line_names: dict | None = None
        self.watches: list[Watchpoint] = []
        self._interrupt = threading.Event()
        self.on_progress = None          # callable(steps, steps_per_s), set by the screen
        self.on_log = None               # callable(breakpoint, text): a log point was reached
        self._entries: dict[str, frozenset] = {}
        self._push_steps: dict[int, int] = {}
        self.def_use_cache: dict[int, dict] = {}
        self.deps_cache: dict = {}
        self._calls: frozenset | None = None
        self._registers_by_function: dict = {}
        self.visit_checks: tuple | None = None   # (traps, pred, checks) of the last search
        # the registers at the last stop (changed_registers compares with them); at step 0
        # the arguments are where the run starts, not a change
        self._baseline: dict[int, tuple] = {}
        self._mark_stop()
        self.last_event: StopEvent | None = None
        self.heap_truncated = False
        self.program_path = program_path
        self.config_dir = config_dir
        self.notes: list[str] = []
        self.profile = None   # debug/profiling.SessionProfile while kernel calls are timed
        self._synced_breakpoints: dict = {}   # what the saved file held at the last sync
        if program_path is not None:
            self.notes = restore_breakpoints(self.breakpoints, self.exe, program_path, config_dir,
                                             self._synced_breakpoints)
            self.breakpoints.on_change = self._save_breakpoints

    # ------------------------------------------------------------ state

    @property
    def step_count(self) -> int:
        return self.vm.steps

    @property
    def history_start(self) -> int:
        return self.history.start

    @property
    def finished(self) -> bool:
        return self.vm.halted

    @property
    def result(self):
        return self.vm.result if self.vm.halted else None

    @property
    def error(self) -> VMError | None:
        """The failure, when the current position is the failing instruction."""
        if self._at_error():
            return self._end[2]
        return None

    @property
    def failed(self) -> bool:
        """Whether the program has been seen to fail (at its failing instruction), wherever
        the session stands now."""
        return self._end is not None and self._end[0] == "error"

    @property
    def end_step(self) -> int | None:
        """The step at which the program finished or failed, once known."""
        return self._end[1] if self._end is not None else None

    def _at_error(self) -> bool:
        end = self._end
        return (end is not None and end[0] == "error" and self.vm.steps == end[1]
                and not self.vm.halted)

    def func_name(self, func_index: int) -> str:
        return self.exe.functions[func_index].name

    def location(self) -> tuple[int, int] | None:
        return self.vm.location

    def current_instruction(self):
        return self.vm.current_instruction()

    def current_span(self):
        loc = self.vm.location
        return self.exe.span_at(*loc) if loc is not None else None

    def frames(self, innermost: int | None = None) -> list[FrameView]:
        """Every frame, outermost first (`innermost=N`: only the N innermost)."""
        fs = self.vm.frames
        lo = 0 if innermost is None else max(0, len(fs) - innermost)
        return [self._view(d, fs[d]) for d in range(lo, len(fs))]

    def frame(self, depth: int | None = None) -> FrameView:
        d = self.frame_depth(depth)
        return self._view(d, self.vm.frames[d])

    def frame_depth(self, depth: int | None, nothing: str = N_("no frames")) -> int:
        """The frame index `depth` names (the innermost for None), checked to exist;
        DebugError otherwise (`nothing` says what is missing when no frame is running)."""
        fs = self.vm.frames
        if not fs:
            raise DebugError(_("the program is not running: {what}").format(what=_(nothing)))
        d = len(fs) - 1 if depth is None else depth
        if not 0 <= d < len(fs):
            raise DebugError(_("no frame #{n} (frames 0..{last}, 0 = outermost)").format(n=d, last=len(fs) - 1))
        return d

    def _view(self, depth: int, f) -> FrameView:
        fn = self.exe.functions[f.func_index]
        ins = fn.instructions[f.pc] if 0 <= f.pc < len(fn.instructions) else None
        return FrameView(depth, f.func_index, fn.name, f.pc, list(f.registers), ins, f.serial,
                         self.exe.span_at(f.func_index, f.pc), list(fn.params))

    def depth(self) -> int:
        """The depth of the innermost frame (-1 once finished)."""
        return len(self.vm.frames) - 1

    # ------------------------------------------------------------ stop events

    def place_at(self, func_index: int, pc: int) -> str | None:
        """The program kind's name for the source line of an instruction (an ONNX node), or
        None."""
        if self.names is None:
            return None
        from rvmdbg.debug.breakpoints import instruction_line
        return self._names_by_line().get(instruction_line(self.exe, func_index, pc))

    def places_at(self, func_index: int, pc: int) -> str | None:
        """As `place_at`, naming every node fused into a kernel call (`Conv_12, Relu_13`):
        what a stop line shows."""
        if self.names is None:
            return None
        from rvmdbg.debug.names import place_names
        return place_names(self.exe, self._names_by_line(), func_index, pc)

    def _names_by_line(self) -> dict:
        if self._line_names is None:
            self._line_names = self.names.line_names()
        return self._line_names

    def back_event(self, motion: str, message=None) -> StopEvent:
        """The "step" stop of a backward motion (its line names the motion)."""
        ev = self.stop_event("step", message=message)
        ev.motion = motion
        return ev

    def stop_event(self, reason: str, number=None, message=None) -> StopEvent:
        vm = self.vm
        if vm.halted:
            ev = StopEvent(reason, number, vm.steps, self.entry, None,
                           halt_text(vm) or _("returned {value}").format(value=value_text(vm.result, 60)),
                           message)
        else:
            top = vm.frames[-1]
            fn = self.exe.functions[top.func_index]
            ins = fn.instructions[top.pc] if 0 <= top.pc < len(fn.instructions) else None
            ev = StopEvent(reason, number, vm.steps, fn.name, top.pc,
                           ins.text() if ins is not None else "?", message,
                           self.exe.span_at(top.func_index, top.pc))
            if self.names is not None:
                ev.place = self.places_at(top.func_index, top.pc)
        self.last_event = ev
        return ev

    def history_start_event(self, message: str | None = None) -> StopEvent:
        """A stop at the start of history; when older history was dropped to stay within the
        budget, the message says so and how to keep more."""
        h = self.history
        if h.start > 0:
            why = _("history before step {step} was dropped to stay within {budget} MB; "
                    "give more with --history-mb to keep it").format(step=h.start,
                                                                      budget=f"{h.budget / 2 ** 20:g}")
            message = f"{message}\n{why}" if message else why
        return self.stop_event("start of history", message=message)

    def _end_event(self) -> StopEvent:
        """The event for a position at the program's end (finished, or the failing step)."""
        if self.vm.halted:
            return self.stop_event("finished")
        err = self._end[2]
        reason = getattr(err, "stop_reason", None) or ("limit" if err.limit else "error")
        return self.stop_event(reason, message=err.format())

    def _no_further(self) -> StopEvent:
        """A forward motion at the end: the end's stop, saying that nothing moved (instead
        of repeating the stop as if it had)."""
        ev = self._end_event()
        note = _("nothing more runs forward: go back with rstep, rcontinue, goto or restart")
        ev.message = (f"{ev.message}\n{note}" if ev.message
                      else _("the program has finished; {note}").format(note=note))
        return ev

    def _failed(self, err: VMError) -> StopEvent:
        self._end = ("error", self.vm.steps, err)
        self.last_step = max(self.last_step, self.vm.steps)
        return self._end_event()

    def _finished(self) -> StopEvent:
        self._end = ("finished", self.vm.steps, self.vm.result)
        self.last_step = max(self.last_step, self.vm.steps)
        return self.stop_event("finished")

    # ------------------------------------------------------------ changed registers

    def _mark_stop(self) -> None:
        """Remember the innermost frames' registers: the baseline of `changed_registers`."""
        fs = self.vm.frames
        self._baseline = {f.serial: tuple(f.registers) for f in fs[-4:]}

    def changed_registers(self) -> set[int]:
        """Registers of the current frame whose value differs from the last stop (all written
        registers, for a frame that was not among the innermost then)."""
        fs = self.vm.frames
        if not fs:
            return set()
        top = fs[-1]
        before = self._baseline.get(top.serial)
        regs = top.registers
        if before is None:
            return {r for r, v in enumerate(regs) if v is not None}
        # Values are compared, not objects: a replay recomputes equal values as new objects.
        # Most registers hold the very same object as at the last stop: those are skipped
        # at C speed (a big function's register file has tens of thousands).
        if len(before) < len(regs):
            before = before + (None,) * (len(regs) - len(before))
        return {r for r in compress(range(len(regs)), map(is_not, regs, before))
                if not same_value(regs[r], before[r])}

    # ------------------------------------------------------------ progress and interrupts

    def warm_up(self) -> None:
        """Make now what the first continue or next would otherwise make on the spot (the
        VM's fused tables: tens of milliseconds on a 20,000-instruction function). A screen
        calls this while idle after its first stop."""
        self.vm.blocks()

    def interrupt(self) -> None:
        """Ask a running motion to stop at the next instruction boundary it checks (within a
        few milliseconds). Safe to call from any thread."""
        self._interrupt.set()

    def _progress(self, state: list) -> None:
        cb = self.on_progress
        if cb is None:
            return
        now = time.monotonic()
        if now - state[0] >= PROGRESS_PERIOD:
            rate = (self.vm.steps - state[1]) / max(1e-9, now - state[0])
            state[0], state[1] = now, self.vm.steps
            try:
                cb(self.vm.steps, rate)
            except Exception:
                pass  # a broken progress display must not break the run

    # ------------------------------------------------------------ the forward engine

    def _note_position(self) -> None:
        vm = self.vm
        s = vm.steps
        if s > self.last_step:
            self.last_step = s
        if self.history.due(s):
            self.history.take()

    @quiet_gc
    def _forward(self, until: int | None = None, stop=None, use_breaks: bool = True,
                 count_hits: bool = True) -> StopEvent:
        """Run forward until a breakpoint or watchpoint hit, `stop` (a pair: locations, and a
        predicate that must also hold there), step `until`, the end, or an interrupt."""
        vm = self.vm
        self._interrupt.clear()
        if vm.halted or self._at_error():
            return self._no_further()
        start = vm.steps
        if until is not None and until <= start:
            return self.stop_event("step")
        plan = TrapPlan(vm, self.exe, "forward", count_hits, self._log, self.register_index)
        if use_breaks:
            plan.add_breakpoints(self.breakpoints.locations())
            plan.add_watches(self._live_watches())
        if stop is not None:
            plan.add_stop(*stop)
        plan.finish()
        plan.start()
        traps = plan.traps
        armed = bool(plan.checks)
        history = self.history
        progress = [time.monotonic(), start]
        first = True
        while True:
            end = history.chunk_end(vm.steps)
            if until is not None and until < end:
                end = until
            try:
                # A run never checks where it starts: a chunk that begins at a trap does
                # that trap's work first (the first chunk: only the watched writes).
                if armed and plan.settle(not first, not first, end):
                    self._note_position()
                    return self.stop_event(*plan.take())
                if not first:
                    if self._interrupt.is_set():
                        self._note_position()
                        return self.stop_event("interrupted")
                    self._progress(progress)
                first = False
                if vm.steps < end and not vm.halted:
                    began, at = time.perf_counter(), vm.steps
                    try:
                        run_checked(vm, until_step=end, breakpoints=traps, checks=plan.checks,
                                    scoped=plan.scoped)
                    finally:
                        history.ran(at, vm.steps, time.perf_counter() - began)
            except VMError as err:
                self._note_position()
                return self._failed(err)
            self._note_position()
            if plan.decision is not None:
                return self.stop_event(*plan.take())
            if vm.halted:
                return self._finished()
            if until is not None and vm.steps >= until:
                if armed and plan.settle(True, True, vm.steps):
                    return self.stop_event(*plan.take())
                return self.stop_event("step")

    def _live_watches(self) -> list[Watchpoint]:
        """Enabled watchpoints whose activation is on the stack or not pushed yet: a frame
        that has returned is never written again going forward."""
        frames, pushes = self.vm.frames, self.vm.pushes
        return [w for w in self.watches if w.enabled and (
            w.serial > pushes
            or (w.depth < len(frames) and frames[w.depth].serial == w.serial))]

    def _log(self, bp, registers) -> None:
        cb = self.on_log
        if cb is None:
            return
        params = self.exe.functions[self.vm.frames[-1].func_index].params
        try:
            cb(bp, log_text(bp.log_message, registers, params))
        except Exception:
            pass  # a broken log display must not break the run

    # ------------------------------------------------------------ forward commands

    def begin_motion(self, back: bool = False):
        vm = self.vm
        if back and vm.halted and not vm.frames and vm.steps > self.history.start:
            # At the end the frames are gone; their last state is the one before the final
            # instruction (a return or halt writes no register): the baseline of the marks.
            end = vm.steps
            self.goto_exact(end - 1)
            self._mark_stop()
            self.goto_exact(end)
        else:
            self._mark_stop()
        if not self.vm.halted and not self.vm.frames:
            raise DebugError(_("the program is not running"))

    def source_entries(self, unit: str) -> frozenset:
        """The locations where control enters a source position of `unit` ("statement":
        a Relay span, "line": a source line): where source-level stepping stops."""
        locs = self._entries.get(unit)
        if locs is None:
            try:
                table = entry_table(self.exe, position_key(self.exe, unit))
            except BreakpointError as exc:
                raise DebugError(str(exc)) from None
            locs = self._entries[unit] = frozenset().union(*table.values())
        return locs

    def step(self, n: int = 1, unit: str = "instruction") -> StopEvent:
        """Execute `n` instructions (or go to the `n`th next source position of `unit`), into
        calls (stops early at a breakpoint or watchpoint)."""
        if n < 1:
            raise DebugError(_("step count must be at least 1"))
        if unit != "instruction":
            locs = self.source_entries(unit)
            ev = None
            self.begin_motion()
            for _round in range(n):
                ev = self._forward(stop=(locs, None))
                if ev.reason != "step":
                    break
            return ev
        self.begin_motion()
        return self._forward(until=self.vm.steps + n)

    def next(self, unit: str = "instruction") -> StopEvent:
        """One instruction (or source position of `unit`) of this frame: a call runs until
        it returns (stopping at breakpoints inside it)."""
        if unit != "instruction":
            locs = self.source_entries(unit)
            self.begin_motion()
            vm = self.vm
            depth = len(vm.frames)
            return self._forward(stop=(locs, lambda: len(vm.frames) <= depth))
        self.begin_motion()
        vm = self.vm
        if vm.halted or self._at_error():
            return self._no_further()
        ins = vm.current_instruction()
        if ins is None or not ins.is_call:
            return self._forward(until=vm.steps + 1)
        top = vm.frames[-1]
        depth = len(vm.frames)
        back = (top.func_index, top.pc + 1)
        return self._forward(stop=(frozenset([back]), lambda: len(vm.frames) == depth))

    def finish(self) -> StopEvent:
        """Run until the current frame returns (in the outermost frame: to the end)."""
        self.begin_motion()
        vm = self.vm
        if vm.halted or self._at_error():
            return self._no_further()
        d = len(vm.frames) - 1
        if d == 0:
            return self._forward()
        caller = vm.frames[d - 1]
        back = (caller.func_index, caller.pc + 1)
        return self._forward(stop=(frozenset([back]), lambda: len(vm.frames) == d))

    def cont(self) -> StopEvent:
        """Continue to the next breakpoint or watchpoint hit, or the end."""
        self.begin_motion()
        return self._forward()

    def run_to(self, func_index: int, pc: int) -> StopEvent:
        """Continue until the instruction (func_index, pc) is about to run (breakpoints on the
        way stop it first)."""
        return self.run_to_locations(frozenset([(func_index, pc)]))

    def run_to_locations(self, locations) -> StopEvent:
        self.begin_motion()
        return self._forward(stop=(frozenset(locations), None))

    # ------------------------------------------------------------ moving in history

    @quiet_gc
    def goto_exact(self, target: int) -> None:
        """Put the VM in the state of step `target` (history_start <= target <= last_step)."""
        vm = self.vm
        if vm.steps == target:
            return
        cp = self.history.at_or_before(target)
        if cp is None:
            raise DebugError(_("step {step} is before the start of history (step {start})").format(
                step=target, start=self.history.start))
        # Replay from where the VM is when that is on the way (a VM stopped by an error is
        # still exactly at the failing step), else from the checkpoint.
        if not cp.step <= vm.steps <= target:
            self.history.restore(cp)
        self._replay(target)

    @quiet_gc
    def _replay(self, target: int) -> None:
        """Run forward without breakpoints to step `target` (which the program reaches)."""
        vm = self.vm
        history = self.history
        while vm.steps < target and not vm.halted:
            end = min(target, history.chunk_end(vm.steps))
            began, at = time.perf_counter(), vm.steps
            try:
                vm.run(until_step=end)
            except VMError as err:
                history.ran(at, vm.steps, time.perf_counter() - began)
                self._failed(err)
                return
            history.ran(at, vm.steps, time.perf_counter() - began)
            self._note_position()
        if vm.halted and self._end is None:
            self._finished()

    def goto(self, step: int) -> StopEvent:
        """Go to the state before instruction number `step` runs (forward or back)."""
        back = step < self.vm.steps
        self.begin_motion(back=back)
        start = self.history.start
        if step < start:
            self.goto_exact(start)
            return self.history_start_event()
        if self._end is not None and step >= self._end[1]:
            self.goto_exact(self._end[1])
            return self._end_event()
        if step <= self.last_step:
            self.goto_exact(step)
            return self.back_event("back") if back else self.stop_event("step")
        if self.vm.steps < self.last_step:
            self.goto_exact(self.last_step)
        return self._forward(until=step, use_breaks=False)

    def rstep(self, n: int = 1, unit: str = "instruction") -> StopEvent:
        """Go back `n` instructions or source positions of `unit` (stopping at a breakpoint
        or watchpoint hit on the way)."""
        if n < 1:
            raise DebugError(_("step count must be at least 1"))
        if unit != "instruction":
            locs = self.source_entries(unit)
            ev = None
            for _round in range(n):
                ev = self._back_to(locs, None)
                if ev.reason != "step":
                    break
            return ev
        self.begin_motion(back=True)
        now = self.vm.steps
        target = now - n
        if target < self.history.start:
            self.goto_exact(self.history.start)
            return self.history_start_event()
        if n > 1:
            hit = self._last_hit(target + 1, now)
            if hit is not None:
                return self._land(hit, now)
        self.goto_exact(target)
        return self.back_event("rstep")

    def rcontinue(self) -> StopEvent:
        """Go back to the most recent breakpoint or watchpoint hit, or the start of history."""
        self.begin_motion(back=True)
        now = self.vm.steps
        hit = self._last_hit(self.history.start, now)
        if hit is not None:
            return self._land(hit, now)
        self.goto_exact(self.history.start)
        return self.history_start_event()

    def rfinish(self) -> StopEvent:
        """Go back to the call that created the current frame (the invoke, about to run)."""
        self.begin_motion(back=True)
        vm = self.vm
        if vm.halted or not vm.frames:
            return self.rstep(1)
        now = vm.steps
        serial = vm.frames[-1].serial
        p = self.push_step(serial)
        if p is None or p < self.history.start:
            hit = self._last_hit(self.history.start, now)
            if hit is not None:
                return self._land(hit, now)
            self.goto_exact(self.history.start)
            return self.history_start_event()
        hit = self._last_hit(p + 1, now)
        if hit is not None:
            return self._land(hit, now)
        self.goto_exact(p)
        return self.back_event("rfinish")

    def _back_to(self, locs, pred, motion: str = "rstep") -> StopEvent:
        """Back to the last step at one of `locs` where `pred` holds (a breakpoint or
        watchpoint hit on the way stops first), or the start of history."""
        self.begin_motion(back=True)
        now = self.vm.steps
        found = self._last_at(self.history.start, now, locs, pred)
        if found is None:
            hit = self._last_hit(self.history.start, now)
            if hit is not None:
                return self._land(hit, now)
            self.goto_exact(self.history.start)
            return self.stop_event("start of history")
        hit = self._last_hit(found + 1, now)
        if hit is not None:
            return self._land(hit, now)
        self.goto_exact(found)
        return self.back_event(motion)

    def rnext(self, unit: str = "instruction") -> StopEvent:
        """Go back one instruction (or source position of `unit`) of this frame: a call that
        returned just now is undone as a whole, back to its invoke (stopping at breakpoints
        inside it)."""
        if unit != "instruction":
            locs = self.source_entries(unit)
            vm = self.vm
            depth = len(vm.frames) if vm.frames else 1
            return self._back_to(locs, lambda: len(vm.frames) <= depth, "rnext")
        self.begin_motion(back=True)
        vm = self.vm
        now = vm.steps
        if now <= self.history.start:
            self.goto_exact(self.history.start)
            return self.history_start_event()
        if vm.halted:
            self.goto_exact(now - 1)
            return self.back_event("rnext")
        depth = len(vm.frames)
        self.goto_exact(now - 1)
        if len(vm.frames) == depth + 1:
            # The previous step was a callee's return into this frame.
            p = self.push_step(vm.frames[-1].serial)
            if p is None or p < self.history.start:
                self.goto_exact(self.history.start)
                return self.history_start_event()
            hit = self._last_hit(p + 1, now)
            if hit is not None:
                return self._land(hit, now)
            self.goto_exact(p)
        return self.back_event("rnext")

    def _land(self, hit, origin: int) -> StopEvent:
        step, kind, number = hit
        if kind == "interrupted":
            self.goto_exact(step)
            return self.stop_event("interrupted")
        self.goto_exact(step)
        return self.stop_event(kind, number)

    def arguments(self) -> list:
        """Fresh copies of the entry's arguments as the session started with them."""
        return copy_values(self._pristine_args)

    def restart(self) -> StopEvent:
        """Back to step 0, keeping breakpoints and watchpoints."""
        self.begin_motion()
        if self.history.start == 0:
            self.goto_exact(0)
        else:
            # Step 0 fell out of the history budget: start over from fresh arguments.
            self.history.reset()
            self.journal.reset()
            self.vm.start(self.entry, copy_values(self._pristine_args))
            self.history.take()
        self._mark_stop()
        return self.stop_event("restarted")

    # ------------------------------------------------------------ searching backwards

    @quiet_gc
    def _last_hit(self, lo: int, hi: int):
        """(step, "breakpoint"|"watchpoint", id) of the last hit with lo <= step < hi, or
        (step, "interrupted", None) when interrupted (no hit at or after that step), or None.
        Of several hits at one step it is the first, the one a forward continue stops at
        (a watched write landing there, then breakpoints, then read watchpoints): one rule
        for both directions. Leaves the VM anywhere: callers go to the step they want."""
        if lo >= hi:
            return None
        plan = TrapPlan(self.vm, self.exe, "search", register_index=self.register_index)
        plan.add_breakpoints(self.breakpoints.locations())
        plan.add_watches([w for w in self.watches if w.enabled])
        if not plan.finish().checks:
            return None
        self._interrupt.clear()
        progress = [time.monotonic(), self.vm.steps]
        seg_end = hi
        # The first hit at a checkpoint's own step, found in the segment it begins: a write
        # landing at that step is made by the previous segment's last instruction, and
        # comes first.
        pending = None
        cp = self.history.before(hi)
        while cp is not None:
            hits = [h for h in self._segment_hits(cp, seg_end, plan) if lo <= h[0] < hi]
            if pending is not None:
                return next((h for h in hits if h[0] == seg_end), pending)
            if hits:
                last = max(hits, key=lambda h: h[0])   # the first of those at the last step
                if last[0] > cp.step:
                    return last
                pending = last
            if cp.step < lo:
                break
            seg_end = cp.step
            if pending is None and self._interrupt.is_set():
                return (seg_end, "interrupted", None)
            self._progress(progress)
            cp = self.history.before(seg_end)
        return pending

    @quiet_gc
    def _last_at(self, lo: int, hi: int, locs, pred=None) -> int | None:
        """The last step s, lo <= s < hi, at one of `locs` where `pred()` holds (None: none
        in history). Leaves the VM anywhere: callers go to the step they want."""
        if lo >= hi or not locs:
            return None
        traps = frozenset(locs)
        seg_end = hi
        cp = self.history.before(hi)
        while cp is not None and seg_end > lo:
            steps = [st for st, _ in self.segment_visits(cp, seg_end, traps, pred)
                     if lo <= st < hi]
            if steps:
                return max(steps)
            if cp.step <= lo:
                break
            seg_end = cp.step
            cp = self.history.before(seg_end)
        return None

    def visits(self, locations) -> tuple[int | None, int | None]:
        """(the last step before now, the first step after now) at one of `locations`; the
        later one runs the program forward to find it (without breakpoints) when it lies past
        the recorded history. The VM returns to the current step."""
        vm = self.vm
        now = vm.steps
        locs = frozenset(locations)
        last_event = self.last_event
        try:
            before = self._last_at(self.history.start, now, locs)
            self.goto_exact(now)
            ev = self._forward(stop=(locs, None), use_breaks=False)
            after = vm.steps if ev.reason == "step" and vm.location in locs else None
        finally:
            self.goto_exact(now)
            self.last_event = last_event
        return before, after

    def _segment_hits(self, cp, seg_end: int, plan: TrapPlan) -> list:
        """Hits from the checkpoint `cp` to `seg_end`: breakpoints at states cp.step..seg_end-1
        and watchpoints written by the instructions run there (states up to seg_end), in
        order, replayed at run() speed with the plan's traps (the run leaves its loop only at
        a hit)."""
        vm = self.vm
        self.history.restore(cp)
        plan.start()
        hits = []
        # At the checkpoint: its breakpoints count, a write before it does not.
        before, landing = True, False
        while not vm.halted:
            if plan.settle(before, landing, seg_end):
                before = landing = plan.after   # after a write: a new state, else this one's rest
                hits.append((vm.steps, *plan.take()[:2]))
                continue
            if vm.steps >= seg_end:
                break
            run_checked(vm, until_step=seg_end, breakpoints=plan.traps, checks=plan.checks,
                        scoped=plan.scoped)
            if plan.decision is not None:
                before = landing = plan.after
                hits.append((vm.steps, *plan.take()[:2]))
                continue
            if vm.steps < seg_end:   # a stop after a write with no hit: a state to check
                before = landing = True
                continue
            # At seg_end: only a write the last instruction made belongs to this segment.
            if not vm.halted and plan.settle(False, True, vm.steps):
                hits.append((vm.steps, *plan.take()[:2]))
            break
        return hits

    @quiet_gc
    def push_step(self, serial: int) -> int | None:
        """The step of the invoke that pushed activation `serial` (None for the outermost
        frame, or when that call is older than the history). Moves the VM: callers go back."""
        if serial <= 0:
            return None
        cached = self._push_steps.get(serial)
        if cached is not None:
            return cached
        cp = self.history.checkpoint_for_push(serial)
        if cp is None:
            return None
        vm = self.vm
        self.history.restore(cp)
        # A trap at every call, checked in the run loop: the call that pushes `serial` is the
        # one about to run while `pushes == serial - 1`. The push lies before the current
        # position, so never past the program's end.
        target = serial - 1
        calls = self._call_locations()
        if vm.location not in calls or vm.pushes != target:
            limit = self._end[1] if self._end is not None else None
            run_checked(vm, until_step=limit, breakpoints=calls,
                        checks=dict.fromkeys(calls, lambda regs: vm.pushes == target))
        if vm.halted or vm.pushes != target or vm.location not in calls:
            return None  # unreachable for a serial that exists
        self._push_steps[serial] = vm.steps
        return vm.steps

    def register_index(self, fi: int) -> tuple[dict, dict]:
        """The writers and readers of each register of a function (cached)."""
        index = self._registers_by_function.get(fi)
        if index is None:
            index = self._registers_by_function[fi] = register_index_of(self.exe, fi)
        return index

    def _call_locations(self) -> frozenset:
        """Every (function, pc) of an instruction that pushes a frame."""
        calls = self._calls
        if calls is None:
            calls = self._calls = frozenset(
                (fi, pc) for fi, fn in enumerate(self.exe.functions)
                for pc, ins in enumerate(fn.instructions) if ins.is_call)
        return calls

    # ------------------------------------------------------------ watchpoints

    def watch(self, register: int, depth: int | None = None, on: str = "write") -> Watchpoint:
        """Watch `register` of the frame at `depth` (the innermost by default): `on` "write"
        stops after every write to it, "change" after a write that changes its value, "read"
        before every instruction that reads it."""
        if on not in ("write", "change", "read"):
            raise DebugError(_("watch on {on}: use 'write', 'change' or 'read'").format(on=repr(on)))
        d = self.frame_of_register(register, depth, N_("nothing to watch"))
        f = self.vm.frames[d]
        wp = Watchpoint(self._ids.next(), register, d, f.serial, f.func_index,
                        self.exe.functions[f.func_index].name, on,
                        prefix=getattr(self.exe, "register_prefix", "$"))
        self.watches.append(wp)
        return wp

    def watch_by_id(self, wp_id: int) -> Watchpoint:
        for w in self.watches:
            if w.id == wp_id:
                return w
        raise DebugError(_("no breakpoint or watchpoint number {n}").format(n=wp_id))

    def delete(self, number: int) -> None:
        """Delete breakpoint or watchpoint `number`."""
        if number in self.breakpoints:
            self.breakpoints.delete(number)
        else:
            self.watches.remove(self.watch_by_id(number))

    def enable(self, number: int, enabled: bool = True) -> None:
        if number in self.breakpoints:
            (self.breakpoints.enable if enabled else self.breakpoints.disable)(number)
        else:
            self.watch_by_id(number).enabled = enabled

    def disable(self, number: int) -> None:
        self.enable(number, False)

    def _save_breakpoints(self) -> None:
        if self.program_path is not None:
            save_breakpoints(self.breakpoints, self.exe, self.program_path, self.config_dir,
                             self._synced_breakpoints)

    # ------------------------------------------------------------ the heap

    def heap(self, depth: int | None = None) -> list[HeapNode]:
        """ADT values, tuples, closures and cells reachable from the frame's registers."""
        f = self.frame(depth)
        nodes, self.heap_truncated = heap_of(f.registers)
        return nodes

    # ------------------------------------------------------------ history figures

    def history_info(self) -> dict:
        h = self.history
        return {"start": h.start, "last_step": self.last_step, "checkpoints": len(h),
                "interval": h.interval, "bytes_estimate": h.bytes_used, "budget": h.budget,
                "dropped": h.dropped, "journal_entries": len(self.journal.entries)}


__all__ = ["DebugSession", "StopEvent", "FrameView", "DebugError", "BreakpointError", "step_tag",
           "STOP_REASONS", "BACK_MOTIONS"]
