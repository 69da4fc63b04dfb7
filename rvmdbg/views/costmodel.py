"""The cost model of view 2: a one-off compile cost against a per-dispatch cost.

An executor that runs a program of n dispatches (VM instructions, or graph kernel calls)
costs, outside its kernels, about `compile + n * dispatch` seconds: each compiles once (the VM
compiler; lowering, memory planning and the pool for the graph executor) and then pays its
dispatch loop on every dispatch. Which one is dearer where is measured, not assumed.
`fit_cost_model` fits those two numbers to measurements by least squares.

The workload is the program on screen (`program_workload`, `measure_program`): scaled where
its arguments carry a size (a prelude `List`, a tensor with a `?` dimension), else measured at
its own size over 1, 2, 4, 8 runs (n is then the dispatches of all the runs), which the view
says. `measure_family` and `WORKLOADS` (a list folded by recursion, an element-wise chain)
remain for benchmarks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rvmdbg.i18n import N_, _


@dataclass
class CostSample:
    """One measured run: `size` of the input, `dispatches` executed, seconds spent."""

    executor: str
    size: int
    dispatches: int
    compile_seconds: float
    run_seconds: float
    kernel_seconds: float = 0.0

    @property
    def overhead_total(self) -> float:
        """What the model explains: compile plus the run's time outside kernels."""
        return self.compile_seconds + max(0.0, self.run_seconds - self.kernel_seconds)

    @property
    def total(self) -> float:
        return self.compile_seconds + self.run_seconds


R2_MIN = 0.9   # a fit explaining less of the data's spread than this gives no prediction

_EXECUTOR_LABELS = {"graph": N_("graph")}   # short: chart legends


def executor_label(name: str) -> str:
    """An executor's name as the screen writes it (translated)."""
    return _(_EXECUTOR_LABELS[name]) if name in _EXECUTOR_LABELS else name


@dataclass
class CostModel:
    executor: str
    compile_seconds: float      # the one-off cost (the fit's intercept)
    dispatch_seconds: float     # per dispatch (the fit's slope)
    r2: float                   # how well the line fits (1 = exactly; 1 also when n is fixed)
    samples: int

    @property
    def explains(self) -> bool:
        """Whether the line explains the measurements well enough to predict from."""
        return self.r2 >= R2_MIN

    def predict(self, dispatches: int, runs: int = 1) -> float:
        """Seconds outside kernels for `runs` runs of `dispatches` each, compile included."""
        return self.compile_seconds + runs * dispatches * self.dispatch_seconds

    def describe(self) -> str:
        from rvmdbg.views.plot import format_number
        return f"{executor_label(self.executor)}: " + _("{compile} compile + n x {dispatch} per dispatch "
                                        "(fit of {runs} runs, r2 {r2})").format(
            compile=format_number(self.compile_seconds, 's'),
            dispatch=format_number(self.dispatch_seconds, 's'), runs=self.samples,
            r2=f"{self.r2:.2f}")


def fit_cost_model(samples: list, executor: str | None = None,
                   compile_known: bool = False) -> CostModel:
    """Least squares of `compile + n * dispatch` to the samples' (dispatches, overhead
    total). When every sample has the same n the slope is not identifiable from n alone: the
    compile cost is then the measured one and the dispatch cost the mean overhead per
    dispatch of the runs. `compile_known` (runs of one program, whose compile was measured
    once): the intercept is the measured compile and only the slope is fitted."""
    if not samples:
        raise ValueError("no measurements to fit")
    executor = executor or samples[0].executor
    n = np.array([s.dispatches for s in samples], dtype=float)
    y = np.array([s.overhead_total for s in samples], dtype=float)
    if compile_known and np.dot(n, n) > 0:
        compile_s = float(np.mean([s.compile_seconds for s in samples]))
        rest = y - compile_s
        slope = max(0.0, float(np.dot(n, rest) / np.dot(n, n)))
        ss_tot = float(np.sum((rest - rest.mean()) ** 2))
        r2 = 1.0 - float(np.sum((rest - slope * n) ** 2)) / ss_tot if ss_tot > 0 else 1.0
        return CostModel(executor, compile_s, slope, max(0.0, r2), len(samples))
    if len(samples) >= 2 and np.ptp(n) > 0:
        slope, intercept = np.polyfit(n, y, 1)
        pred = intercept + slope * n
        ss_res = float(np.sum((y - pred) ** 2))
        ss_tot = float(np.sum((y - y.mean()) ** 2))
        r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
        if intercept < 0:   # a negative compile cost is noise: refit through the origin
            slope, intercept = float(np.dot(n, y) / np.dot(n, n)), 0.0
            pred = slope * n
            r2 = 1.0 - float(np.sum((y - pred) ** 2)) / ss_tot if ss_tot > 0 else 1.0
        return CostModel(executor, float(intercept), float(max(slope, 0.0)), r2, len(samples))
    compile_s = float(np.mean([s.compile_seconds for s in samples]))
    per = [max(0.0, s.run_seconds - s.kernel_seconds) / s.dispatches
           for s in samples if s.dispatches]
    return CostModel(executor, compile_s, float(np.mean(per)) if per else 0.0, 1.0, len(samples))


def break_even_runs(a: CostModel, na: int, b: CostModel, nb: int) -> float | None:
    """After how many runs `b` (higher compile cost) costs less than `a` in total, for runs
    of na and nb dispatches; None when it never does."""
    per_a, per_b = na * a.dispatch_seconds, nb * b.dispatch_seconds
    if per_b >= per_a:
        return None
    return max(0.0, (b.compile_seconds - a.compile_seconds) / (per_a - per_b))


def compare_models(a: CostModel, na: int, b: CostModel, nb: int) -> str:
    """One sentence: which of two executors costs less (outside kernels) for how many runs
    of na and nb dispatches."""
    per_a, per_b = na * a.dispatch_seconds, nb * b.dispatch_seconds
    ca, cb = a.compile_seconds, b.compile_seconds
    if per_b < per_a:
        if cb <= ca:
            return _("{b} costs less from the first run").format(b=b.executor)
        runs = (cb - ca) / (per_a - per_b)
        return _("{b}'s extra compile cost pays off after {runs} runs").format(
            b=b.executor, runs=f"{runs:.0f}")
    if per_b == per_a:
        return _("both cost the same per run; {faster} compiles faster").format(
            faster=a.executor if ca < cb else b.executor)
    if cb >= ca:
        return _("{a} costs less at any number of runs").format(a=a.executor)
    runs = (ca - cb) / (per_b - per_a)
    return _("{b} costs less for up to {runs} runs, {a} after that").format(
        a=a.executor, b=b.executor, runs=f"{runs:.0f}")


# ---------------------------------------------------------------- workloads

def _list_text(size: int) -> str:
    return """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @sum(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, %rest) => %x + @sum(%rest),
    Nil => 0,
  }
}

def @main(%xs: List[int32]) -> int32 {
  @sum(%xs)
}
"""


def _list_args(size: int) -> list:
    from rvmdbg.values import ADTValue
    v = ADTValue(1, "Nil", ())
    for i in range(size):
        v = ADTValue(0, "Cons", (np.array(i % 7, dtype=np.int32), v))
    return [v]


def _chain_text(size: int) -> str:
    return f"""#[version = "0.0.5"]
def @main(%x: Tensor[({size},), float32], %y: Tensor[({size},), float32]) -> Tensor[({size},), float32] {{
  %0 = add(%x, %y);
  %1 = tanh(%0);
  %2 = multiply(%1, %x);
  %3 = exp(%2);
  %4 = nn.relu(%3);
  %5 = subtract(%4, %y);
  %6 = sigmoid(%5);
  add(%6, %0)
}}
"""


def _chain_args(size: int) -> list:
    rng = np.random.default_rng(size)
    return [rng.standard_normal(size).astype(np.float32),
            rng.standard_normal(size).astype(np.float32)]


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    size_label: str
    text: object            # size -> program text
    args: object            # size -> argument values
    sizes: tuple
    static: bool


WORKLOADS = {
    "list": Workload("list", N_("sum of a list by recursion (dynamic: the VM only)"),
                     N_("list length"), _list_text, _list_args, (10, 40, 160, 640, 2560), False),
    "chain": Workload("chain", N_("8 element-wise operators over two vectors (static)"),
                      N_("vector elements"), _chain_text, _chain_args,
                      (10, 100, 1_000, 10_000, 100_000), True),
}


def measure_family(workload: Workload, sizes=None, rounds: int = 3) -> list:
    """CostSamples of the VM (and, for a static workload, the graph executor) at each size;
    each run's time is the best of `rounds`."""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.views.executors import measure_executors
    from rvmdbg.vm.compiler import compile_module
    out = []
    for size in (sizes or workload.sizes):
        mod = check_module(load_module(workload.text(size), f"<{workload.name} {size}>"))
        exe = compile_module(mod)
        args = workload.args(size)
        ms = measure_executors(mod, exe, args, rounds=rounds)
        for name, m in ms.items():
            out.append(CostSample(name, size, m.dispatches, m.compile_seconds, m.total_seconds,
                                  m.kernel_seconds))
    return out


# ---------------------------------------------------------------- the program on screen

SCALES = (0.25, 0.5, 1, 2, 4)   # factors applied to a size the arguments carry
RUNS = (1, 2, 4, 8)             # runs of a program measured at its own size


@dataclass
class ProgramWorkload:
    """What the cost model measures of the program on screen: `points` are (x, args, runs),
    `x` on the chart's axis (`size_label`); `fixed` when the program is measured at its own
    size (x counts runs); `description` says which, for the screen."""

    description: str
    size_label: str
    fixed: bool
    points: list


def _list_items(v) -> list | None:
    """The elements of a prelude List value, or None when `v` is not one."""
    from rvmdbg.values import ADTValue
    out = []
    while isinstance(v, ADTValue) and v.con == "Cons" and len(v.fields) == 2:
        out.append(v.fields[0])
        v = v.fields[1]
    if isinstance(v, ADTValue) and v.con == "Nil":
        return out
    return None


def _make_list(items: list, like):
    from rvmdbg.values import ADTValue
    nil = like
    while nil.con == "Cons":
        nil = nil.fields[1]
    cons_tag = like.tag if like.con == "Cons" else 0
    v = nil
    for x in reversed(items):
        v = ADTValue(cons_tag, "Cons", (x, v))
    return v


def _scalable(module, entry: str, args) -> tuple | None:
    """(parameter index, kind, current size, axis) of the first argument that carries a size:
    a prelude List (its length) or a tensor with a `?` dimension; None when there is none."""
    from rvmdbg.relay.types import TensorType
    fn = module.functions.get(entry) if module is not None else None
    if fn is None:
        return None
    from rvmdbg.args import param_types
    for i, (t, v) in enumerate(zip(param_types(fn), args)):
        items = _list_items(v)
        if items is not None and len(items) >= 2:
            return (i, "list", len(items), None)
        if isinstance(t, TensorType) and isinstance(v, np.ndarray):
            for axis, d in enumerate(t.shape):
                if d is None and v.ndim > axis and v.shape[axis] >= 2:
                    return (i, "dim", v.shape[axis], axis)
    return None


def program_workload(module, entry: str, args, static: bool) -> ProgramWorkload:
    """The cost model's workload on the program on screen (see the module docstring)."""
    found = _scalable(module, entry, args)
    if found is None:
        why = (_("its inputs have fixed shapes") if static else
               _("no argument carries a size to scale (a List, or a tensor with a ? dimension)"))
        return ProgramWorkload(
            _("this program at its own size, 1 to {runs} runs ({why})").format(runs=RUNS[-1], why=why),
            N_("runs of the program at its own size"), True,
            [(k, list(args), k) for k in RUNS])
    i, kind, size, axis = found
    name = "%" + module.functions[entry].params[i].name
    points = []
    for f in SCALES:
        n = max(1, int(round(size * f)))
        a = list(args)
        if kind == "list":
            items = _list_items(args[i])
            a[i] = _make_list([items[k % len(items)] for k in range(n)], args[i])
        else:
            a[i] = np.take(args[i], np.arange(n) % size, axis=axis)
        points.append((n, a, 1))
    what = (_("length of {name}").format(name=name) if kind == "list"
            else _("dimension {axis} of {name}").format(axis=axis, name=name))
    lo, hi = points[0][0], points[-1][0]
    return ProgramWorkload(_("this program with the {what} scaled from {lo} to {hi} "
                             "(it is {size} on screen)").format(what=what, lo=lo, hi=hi, size=size),
                           what, False, points)


def one_run_measurements(samples: list, workload: ProgramWorkload, comparison) -> dict:
    """{"VM": ..., "graph": ...} ExecutorMeasurements of one run at the size on screen, taken
    from the cost model's own samples (its first point at its own size; the point of factor 1
    when scaled), so the table and the model come from the same runs."""
    from rvmdbg.views.executors import ExecutorMeasurement
    c = comparison
    if workload.fixed:
        x = min(s.size for s in samples)
    else:
        x = workload.points[SCALES.index(1)][0]
    out = {}
    for s in samples:
        if s.size != x:
            continue
        if s.executor == "VM":
            out["VM"] = ExecutorMeasurement("VM", s.dispatches, s.run_seconds, s.kernel_seconds,
                                            c.vm_allocations, c.vm_memory.total,
                                            s.compile_seconds)
        else:
            out[s.executor] = ExecutorMeasurement(s.executor, s.dispatches, s.run_seconds,
                                                  s.kernel_seconds, c.plan.num_blocks,
                                                  c.graph_memory.total, s.compile_seconds)
    return out


def measure_program(module, exe, args, entry: str = "main", rounds: int = 2,
                    comparison=None, budget_seconds: float = 3.0) -> tuple[list, ProgramWorkload]:
    """CostSamples of the program on screen on the VM (and the graph executor when static),
    at each point of its workload; points past `budget_seconds` of measuring are left out
    (never the first two)."""
    import time as _time

    from rvmdbg.views.executors import (GraphRunner, VMRunner, _best, compare_executors,
                                        vm_compile_seconds)
    cmp = comparison or compare_executors(module, exe, args, entry)
    static = bool(cmp.static and cmp.graph is not None and cmp.graph_error is None)
    workload = program_workload(module, entry, args, static)
    vm = VMRunner(exe, entry)
    vm_compile = vm_compile_seconds(module, rounds)
    graph = GraphRunner(module, entry, rounds) if static else None
    out = []
    began = _time.perf_counter()
    for k, (x, a, runs) in enumerate(workload.points):
        if k >= 2 and _time.perf_counter() - began > budget_seconds:
            break
        total, kernel, steps = _best(vm, a, rounds, runs)
        out.append(CostSample("VM", x, steps, vm_compile, total, kernel))
        if graph is not None:
            total, kernel, dispatches = _best(graph, a, rounds, runs)
            out.append(CostSample("graph", x, dispatches, graph.compile_seconds, total, kernel))
    return out, workload


SIZE_LABELS = (N_("list length"), N_("vector elements"), N_("runs of the program at its own size"))


def _size_label(workload) -> str:
    """The chart's x axis: a workload's size label (marked or already translated)."""
    if workload is None:
        return _("input size")
    label = workload.size_label
    return _(label) if label in SIZE_LABELS else label


def cost_chart(samples: list, models: dict, workload: Workload | None = None,
               width: int = 56, height: int = 10, mode: str = "braille") -> list:
    """Measured total time (compile + one run) per input size for each executor, with the
    model's prediction (compile + n x dispatch, plus the run's measured kernel time) as
    marks; rows of (text, role) pieces."""
    from rvmdbg.views.plot import Series, draw_plot
    series = []
    model_marks = ("o", "x") if mode == "ascii" else ("◆", "■")
    for k, name in enumerate(sorted({s.executor for s in samples})):
        pts = sorted((s.size, s.total) for s in samples if s.executor == name)
        series.append(Series(_("{executor} measured").format(executor=executor_label(name)), pts, role=f"series{k}"))
        model = models.get(name)
        if model is not None:
            pred = sorted((s.size, model.predict(s.dispatches) + s.kernel_seconds)
                          for s in samples if s.executor == name)
            series.append(Series(_("{executor} model").format(executor=executor_label(name)), pred, role=f"series{k}", lines=False,
                                 mark=model_marks[k % 2]))
    sizes = [s.size for s in samples]
    times = [s.total for s in samples]
    logx = bool(sizes) and min(sizes) > 0 and max(sizes) / min(sizes) >= 10
    logy = bool(times) and min(times) > 0 and max(times) / min(times) >= 10
    label = _size_label(workload)
    fixed = getattr(workload, "fixed", False)
    log = " " + _("(log)")
    return draw_plot(series, width, height, mode, logx=logx, logy=logy, y_unit="s",
                     y_label=(_("seconds{log_y}: compile + that many runs, by {size}{log_x}") if fixed
                              else _("seconds{log_y}: compile + one run, by {size}{log_x}")).format(
                         log_y=log if logy else "", size=label, log_x=log if logx else ""))


__all__ = ["CostSample", "CostModel", "fit_cost_model", "break_even_runs", "compare_models", "Workload",
           "WORKLOADS", "measure_family", "cost_chart", "ProgramWorkload", "program_workload",
           "measure_program", "one_run_measurements", "SCALES", "RUNS", "R2_MIN", "executor_label"]
