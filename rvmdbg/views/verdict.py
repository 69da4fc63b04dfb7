"""View 2's verdict: which executor costs less, computed from the figures the view shows and
nothing else, so the sentence can never say the opposite of the table above it.

Three comparisons, each of measured figures of one program at one size:

- per dispatch: time outside kernels divided by dispatches (VM instructions, graph kernel
  calls);
- per run: time outside kernels of one run (what a user pays each time the model runs): the
  executor with the dearer dispatch can still win here when it makes fewer dispatches, and
  the verdict then says so and why;
- over many runs: compile once plus that per-run cost, with the number of runs at which the
  order changes when it does.

Two figures within `TIE` of each other are "about the same": what the screen rounds to the
same digits is never called a win.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from rvmdbg.i18n import N_, _

TIE = 0.05   # relative difference below which two figures are "about the same"

PYTHON_NOTE = N_(
    "Why TVM's own figures differ: here both executors are Python loops calling the same "
    "NumPy kernels. A dispatch costs a Python call (about a microsecond) where TVM's C++ "
    "executors pay nanoseconds; the kernels here return fresh arrays, which the graph "
    "executor then copies into its planned buffers (TVM's kernels write into them, no copy), "
    "so its time outside kernels grows with tensor size; and TVM's VM pays for its "
    "allocation and move instructions in C++. Compare the dispatch counts and the memory "
    "plan, which carry over to TVM; the times are this Python implementation's.")

_NAMES = {"VM": N_("the VM"), "graph": N_("the graph executor")}


def _name(executor: str) -> str:
    return _(_NAMES[executor]) if executor in _NAMES else executor


def _fmt(seconds: float) -> str:
    from rvmdbg.views.plot import format_number
    return format_number(seconds, "s")


def cheaper(a: float, b: float, names=("VM", "graph")) -> str | None:
    """The name of the smaller of two costs, or None when they are within TIE of each other."""
    hi = max(abs(a), abs(b))
    if hi == 0 or abs(a - b) <= TIE * hi:
        return None
    return names[0] if a < b else names[1]


@dataclass
class Verdict:
    per_dispatch: str | None      # "VM", "graph" or None (about the same)
    per_run: str | None
    compile: str | None
    break_even_runs: float | None  # runs after which the order of totals changes
    lines: list = field(default_factory=list)


def _compare_line(what: str, winner: str | None, a: float, b: float, names) -> str:
    if winner is None:
        return _("{what}: about the same ({a} and {b})").format(what=_(what), a=_fmt(a), b=_fmt(b))
    win, lose = (a, b) if winner == names[0] else (b, a)
    return _("{what}: {winner} costs less, {win} against {lose}").format(
        what=_(what), winner=_name(winner), win=_fmt(win), lose=_fmt(lose))


def executor_verdict(vm, graph) -> Verdict:
    """The verdict on two `ExecutorMeasurement`s (or anything with `executor`, `dispatches`,
    `overhead_seconds`, `per_dispatch_seconds`, `compile_seconds`) of one program."""
    names = (vm.executor, graph.executor)
    pd = cheaper(vm.per_dispatch_seconds, graph.per_dispatch_seconds, names)
    pr = cheaper(vm.overhead_seconds, graph.overhead_seconds, names)
    cc = cheaper(vm.compile_seconds, graph.compile_seconds, names)
    lines = [_compare_line(N_("per dispatch (time outside kernels / dispatches)"), pd,
                           vm.per_dispatch_seconds, graph.per_dispatch_seconds, names)]
    run_line = _compare_line(N_("per run (time outside kernels)"), pr, vm.overhead_seconds,
                             graph.overhead_seconds, names)
    if pr is not None and pd is not None and pr != pd:
        # the dearer dispatch wins the run: it makes fewer of them
        few, many = (vm, graph) if pr == vm.executor else (graph, vm)
        run_line += _(", because it makes {few} dispatches to {other}'s {many}").format(
            few=few.dispatches, other=_name(many.executor), many=many.dispatches)
    elif pr is not None and pd is None:
        few, many = (vm, graph) if pr == vm.executor else (graph, vm)
        run_line += _(": {few} dispatches against {many}").format(few=few.dispatches, many=many.dispatches)
    lines.append(run_line)
    lines.append(_compare_line(N_("compile (once)"), cc, vm.compile_seconds, graph.compile_seconds,
                               names))
    runs = None
    # totals outside kernels after k runs: compile + k * per run
    if pr is None:
        lines.append(_("over many runs: about the same") if cc is None else
                     _("over many runs: {name} costs less, by its compile time").format(name=_name(cc)))
    elif cc is None or cc == pr:
        lines.append(_("over any number of runs: {name} costs less outside kernels").format(name=_name(pr)))
    else:
        slow, fast = (vm, graph) if pr == graph.executor else (graph, vm)
        runs = (fast.compile_seconds - slow.compile_seconds) / (
            slow.overhead_seconds - fast.overhead_seconds)
        lines.append(_("over many runs: {first} costs less up to {runs} runs "
                       "(its faster compile), {then} after that").format(
            first=_name(cc), runs=f"{runs:.0f}", then=_name(pr)))
    return Verdict(pd, pr, cc, runs, lines)


@dataclass
class RunFigures:
    """One executor's figures for one run, as the verdict reads them (a cost model's, or
    anything else that is not an `ExecutorMeasurement`)."""

    executor: str
    dispatches: int
    per_dispatch_seconds: float
    compile_seconds: float

    @property
    def overhead_seconds(self) -> float:
        return self.dispatches * self.per_dispatch_seconds


def model_verdict(vm_model, vm_dispatches: int, graph_model, graph_dispatches: int) -> Verdict:
    """The verdict on two fitted `CostModel`s for runs of the given dispatch counts: per run
    is n x per dispatch, compile the fit's intercept, exactly the figures the model shows."""
    return executor_verdict(
        RunFigures(vm_model.executor, vm_dispatches, vm_model.dispatch_seconds,
                   vm_model.compile_seconds),
        RunFigures(graph_model.executor, graph_dispatches, graph_model.dispatch_seconds,
                   graph_model.compile_seconds))


__all__ = ["Verdict", "executor_verdict", "model_verdict", "RunFigures", "cheaper", "TIE",
           "PYTHON_NOTE"]
