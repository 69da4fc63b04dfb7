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

TIE = 0.05   # relative difference below which two figures are "about the same"

PYTHON_NOTE = (
    "Why TVM's own figures differ: here both executors are Python loops calling the same "
    "NumPy kernels. A dispatch costs a Python call (about a microsecond) where TVM's C++ "
    "executors pay nanoseconds; the kernels here return fresh arrays, which the graph "
    "executor then copies into its planned buffers (TVM's kernels write into them, no copy), "
    "so its time outside kernels grows with tensor size; and TVM's VM pays for its "
    "allocation and move instructions in C++. Compare the dispatch counts and the memory "
    "plan, which carry over to TVM; the times are this Python implementation's.")

_NAMES = {"VM": "the VM", "graph": "the graph executor"}


def _name(executor: str) -> str:
    return _NAMES.get(executor, executor)


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
        return f"{what}: about the same ({_fmt(a)} and {_fmt(b)})"
    win, lose = (a, b) if winner == names[0] else (b, a)
    return f"{what}: {_name(winner)} costs less, {_fmt(win)} against {_fmt(lose)}"


def executor_verdict(vm, graph) -> Verdict:
    """The verdict on two `ExecutorMeasurement`s (or anything with `executor`, `dispatches`,
    `overhead_seconds`, `per_dispatch_seconds`, `compile_seconds`) of one program."""
    names = (vm.executor, graph.executor)
    pd = cheaper(vm.per_dispatch_seconds, graph.per_dispatch_seconds, names)
    pr = cheaper(vm.overhead_seconds, graph.overhead_seconds, names)
    cc = cheaper(vm.compile_seconds, graph.compile_seconds, names)
    lines = [_compare_line("per dispatch (time outside kernels / dispatches)", pd,
                           vm.per_dispatch_seconds, graph.per_dispatch_seconds, names)]
    run_line = _compare_line("per run (time outside kernels)", pr, vm.overhead_seconds,
                             graph.overhead_seconds, names)
    if pr is not None and pd is not None and pr != pd:
        # the dearer dispatch wins the run: it makes fewer of them
        few, many = (vm, graph) if pr == vm.executor else (graph, vm)
        run_line += (f", because it makes {few.dispatches} dispatches to "
                     f"{_name(many.executor)}'s {many.dispatches}")
    elif pr is not None and pd is None:
        few, many = (vm, graph) if pr == vm.executor else (graph, vm)
        run_line += f": {few.dispatches} dispatches against {many.dispatches}"
    lines.append(run_line)
    lines.append(_compare_line("compile (once)", cc, vm.compile_seconds, graph.compile_seconds,
                               names))
    runs = None
    # totals outside kernels after k runs: compile + k * per run
    if pr is None:
        lines.append("over many runs: " + ("about the same" if cc is None else
                                           f"{_name(cc)} costs less, by its compile time"))
    elif cc is None or cc == pr:
        lines.append(f"over any number of runs: {_name(pr)} costs less outside kernels")
    else:
        slow, fast = (vm, graph) if pr == graph.executor else (graph, vm)
        runs = (fast.compile_seconds - slow.compile_seconds) / (
            slow.overhead_seconds - fast.overhead_seconds)
        lines.append(f"over many runs: {_name(cc)} costs less up to {runs:.0f} runs "
                     f"(its faster compile), {_name(pr)} after that")
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
