"""Kernel times while debugging (issue 30): `info profile`, the kernel's time on its stop,
the time `next` and `finish` covered.

Off until asked for (`set profile on`, `info profile`, the screen's key): then
`SessionProfile.on()` swaps the session's Relay VM onto timed handlers
(`VirtualMachine.instrument`, rvmdbg/vm/profile.py's way, so run() pays nothing while it is
off) and records each kernel call's time under the step that made it. A step made again (a
replay, a reverse motion and forward again, a restart) records over its earlier time, so
`table()` is always the run so far: the calls before the current step.
"""
from __future__ import annotations

import time

from rvmdbg.debug.events import DebugError
from rvmdbg.i18n import _, ngettext
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.profile import DEVICE, Metric, Report, count, shape_text, text, us

_clock = time.perf_counter_ns
# the debugger's table: TVM's columns but the device (always the host), the shapes last
COLUMNS = ("Name", "Duration (us)", "Percent", "Count", "Line", "Argument Shapes")


class SessionProfile:
    """The kernel-call timers of one `DebugSession` (`session.profile`, None while off).
    `calls[step] = (func index, pc, ns, shapes)`; `since`: the step profiling began at."""

    def __init__(self, session):
        vm = session.vm
        if not hasattr(vm, "instrument"):
            raise DebugError(_("profiling times the Relay VM's kernels; this program runs on "
                               "another machine"))
        self.session = session
        self.vm = vm
        self.calls: dict[int, tuple] = {}
        self.since = vm.steps
        self.base = vm.steps        # the step the current run() or step() began at
        self.done = 0               # instructions executed since then
        self.run, self.step = vm.run, vm.step
        vm.instrument(self._wrap)
        # the step of each kernel call: where the run or step began, plus the instructions
        # executed since (instrumented, every handler is one instruction)
        vm.run = self._counted_run
        vm.step = self._counted_step

    def off(self) -> None:
        vm = self.vm
        vm.instrument(None)
        del vm.run, vm.step        # the class's methods again

    def _counted_run(self, *args, **kwargs):
        self.base, self.done = self.vm.steps, 0
        return self.run(*args, **kwargs)

    def _counted_step(self):
        self.base, self.done = self.vm.steps, 0
        return self.step()

    def _wrap(self, fi, pc, ins, handler):
        clock, calls, prof = _clock, self.calls, self
        if type(ins) is not bc.InvokePacked:
            def counted(regs):
                prof.done += 1
                return handler(regs)
            return counted
        args = tuple(ins.args)

        def timed(regs):
            t0 = clock()
            nxt = handler(regs)
            ns = clock() - t0
            step = prof.base + prof.done
            prof.done += 1
            calls[step] = (fi, pc, ns, tuple((getattr(regs[a], "dtype", None),
                                              getattr(regs[a], "shape", None)) for a in args))
            return nxt
        return timed

    # -------------------------------------------------------------- what it shows

    def between(self, lo: int, hi: int) -> tuple[int, int]:
        """(kernel calls, their ns) at steps lo <= step < hi."""
        n = ns = 0
        for step, call in self.calls.items():
            if lo <= step < hi:
                n += 1
                ns += call[2]
        return n, ns

    def last_kernel(self) -> str | None:
        """`kernel NAME took 12.34 us`, when the step just executed called a kernel."""
        call = self.calls.get(self.vm.steps - 1)
        if call is None:
            return None
        fi, pc, ns, _shapes = call
        ins = self.session.exe.functions[fi].instructions[pc]
        name = self.session.exe.kernels[ins.packed_index].name
        return _("kernel {kernel} took {us:,.2f} us").format(kernel=name, us=ns / 1000.0)

    def report(self) -> Report:
        """The kernel calls of the run so far (steps before the current one) as a Report."""
        exe, now = self.session.exe, self.vm.steps
        calls = [(s, c) for s, c in sorted(self.calls.items()) if s < now]
        total = sum(c[2] for _s, c in calls) or 1
        report = Report()
        for step, (fi, pc, ns, shapes) in calls:
            ins = exe.functions[fi].instructions[pc]
            span = exe.span_at(fi, pc)
            place = self.session.place_at(fi, pc)
            report.calls.append({
                "Name": text(exe.kernels[ins.packed_index].name), "Duration (us)": us(ns),
                "Percent": Metric("percent", 100.0 * ns / total), "Device": text(DEVICE),
                "Count": count(1), "Argument Shapes": text(shape_text(shapes)),
                "Line": text(place or (str(span.line) if span is not None else ""))})
        report.device_metrics[DEVICE] = {"Name": text("Total"), "Duration (us)": us(total),
                                         "Percent": Metric("percent", 100.0),
                                         "Device": text(DEVICE), "Count": count(1)}
        return report

    def table(self, width: int | None = None) -> str:
        """`info profile`: the kernel table of the run so far, its sums, and what it covers."""
        now = self.vm.steps
        n, ns = self.between(0, now)
        head = _("Kernel calls of the run so far (steps {since} to {now}): {n}, {ms:,.3f} ms "
                 "in kernels").format(since=self.since, now=now, n=n, ms=ns / 1e6)
        if not n:
            return head
        body = self.report().table(width=width, columns=COLUMNS)
        body = body.split("\nConfiguration\n")[0].rstrip()
        return head + "\n" + body


def profile_of(session, start: bool = False) -> SessionProfile | None:
    """The session's profile; with `start`, made (profiling on) when there is none."""
    prof = getattr(session, "profile", None)
    if prof is None and start:
        prof = session.profile = SessionProfile(session)
    return prof


def motion_timer(session):
    """Call before a motion; `covered()` after it says the time it covered (`took 1.234 ms:
    40 steps, 3 kernel calls 0.900 ms`) while profiling is on, else None (then a transcript
    reads the same from run to run)."""
    prof = profile_of(session)
    if prof is None:
        return lambda: None
    vm, t0 = session.vm, time.perf_counter()
    s0 = vm.steps

    def covered():
        seconds = time.perf_counter() - t0
        n, ns = prof.between(s0, vm.steps)
        steps = vm.steps - s0
        return _("took {ms:,.3f} ms: {steps}, {n} kernel calls {kms:,.3f} ms").format(
            ms=seconds * 1000.0, n=n, kms=ns / 1e6,
            steps=ngettext("{n} step", "{n} steps", steps).format(n=steps))
    return covered


def stop_notes(session, covered: str | None = None) -> list[str]:
    """The lines under a stop while profiling is on: the kernel the last step called and
    its time, then what the motion covered."""
    prof = profile_of(session)
    if prof is None:
        return []
    kernel = prof.last_kernel()
    return [line for line in (kernel, covered) if line]


def stop_profile(session) -> None:
    prof = getattr(session, "profile", None)
    if prof is not None:
        prof.off()
        session.profile = None
