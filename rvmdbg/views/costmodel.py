"""The cost model of view 2: a one-off compile cost against a per-dispatch cost.

An executor that runs a program of n dispatches (VM instructions, or graph kernel calls)
costs, outside its kernels, about `compile + n * dispatch` seconds: the VM compiles once and
then pays its dispatch loop on every instruction; the graph executor pays more up front
(lowering, memory planning, the pool) and then only a kernel call per node.
`fit_cost_model` fits those two numbers to measurements by least squares; `measure_family`
makes the measurements on a family of programs whose input grows (`WORKLOADS`): a list
folded by recursion (dynamic: the VM only, and its instruction count grows with the input)
and an element-wise chain over a vector (static: both executors, with a fixed dispatch count
and kernels that grow with the input).
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


@dataclass
class CostModel:
    executor: str
    compile_seconds: float      # the one-off cost (the fit's intercept)
    dispatch_seconds: float     # per dispatch (the fit's slope)
    r2: float                   # how well the line fits (1 = exactly; 1 also when n is fixed)
    samples: int

    def predict(self, dispatches: int, runs: int = 1) -> float:
        """Seconds outside kernels for `runs` runs of `dispatches` each, compile included."""
        return self.compile_seconds + runs * dispatches * self.dispatch_seconds

    def describe(self) -> str:
        from rvmdbg.views.plot import format_number
        return f"{self.executor}: " + _("{compile} compile + n x {dispatch} per dispatch "
                                        "(fit of {runs} runs, r2 {r2})").format(
            compile=format_number(self.compile_seconds, 's'),
            dispatch=format_number(self.dispatch_seconds, 's'), runs=self.samples,
            r2=f"{self.r2:.2f}")


def fit_cost_model(samples: list, executor: str | None = None) -> CostModel:
    """Least squares of `compile + n * dispatch` to the samples' (dispatches, overhead
    total). When every sample has the same n the slope is not identifiable from n alone: the
    compile cost is then the measured one and the dispatch cost the mean overhead per
    dispatch of the runs."""
    if not samples:
        raise ValueError("no measurements to fit")
    executor = executor or samples[0].executor
    n = np.array([s.dispatches for s in samples], dtype=float)
    y = np.array([s.overhead_total for s in samples], dtype=float)
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
        series.append(Series(_("{executor} measured").format(executor=name), pts, role=f"series{k}"))
        model = models.get(name)
        if model is not None:
            pred = sorted((s.size, model.predict(s.dispatches) + s.kernel_seconds)
                          for s in samples if s.executor == name)
            series.append(Series(_("{executor} model").format(executor=name), pred, role=f"series{k}", lines=False,
                                 mark=model_marks[k % 2]))
    sizes = [s.size for s in samples]
    times = [s.total for s in samples]
    logx = bool(sizes) and min(sizes) > 0 and max(sizes) / min(sizes) >= 10
    logy = bool(times) and min(times) > 0 and max(times) / min(times) >= 10
    label = _(workload.size_label) if workload is not None else _("input size")
    log = " " + _("(log)")
    return draw_plot(series, width, height, mode, logx=logx, logy=logy, y_unit="s",
                     y_label=_("seconds{log_y}: compile + one run, by {size}{log_x}").format(
                         log_y=log if logy else "", size=label, log_x=log if logx else ""))


__all__ = ["CostSample", "CostModel", "fit_cost_model", "break_even_runs", "compare_models", "Workload",
           "WORKLOADS", "measure_family", "cost_chart"]
