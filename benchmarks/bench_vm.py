"""VM throughput: instructions per second of `run()` and `step()`, against the reference
interpreter and against a toy VM's if/elif and table dispatch, all in one run.

Workloads (both scalar int32 code):
- fib: `programs/fib.relay` with n = 20 (double recursion: calls, returns, branches);
- loop: `programs/loop.relay` with n = 100,000 (a tail-recursive counting loop).

Each is compiled once with `rvmdbg.vm.compiler.compile_module` and run by:
- `VirtualMachine.run()`: the fast path (instructions per second, and wall time);
- `VirtualMachine.step()`: one `StepInfo` per instruction, as the debugger drives it;
- `rvmdbg.relay.interpreter.Interpreter(mod).run`: the reference interpreter, for the ratio.
- the same computation written directly in Python over the operators' 0-d functions: the
  floor that any executor calling those kernels pays;
- `treewalk_baseline.TreeWalker`: a plain tree-walking evaluator of the typed AST (the
  reference interpreter compiles expressions to closures instead), for the ratio too.
The toy VM of `benchmarks/minivm_seed.py` runs the same sum as `loop` with an if/elif chain
over opcode names (the seed style), the same chain over numbers, and table dispatch.

Machine load varies, so every figure is the best (shortest) of several repeats; the table
says how many. Each time is taken twice: on the wall clock and as this process's CPU time
(`time.process_time`), which on a shared, loaded machine leaves out the time other processes
had the CPU; the targets are judged on CPU time. Targets (issue 15): run() >= 8,000,000
instructions/s and step() >= 1,000,000 instructions/s on fib and loop; VM run() at least 2x
faster than the interpreter on the same program; table dispatch no slower per instruction than
the if/elif chain.

Each figure is printed beside the one before cheap scalars (issue 15): recorded figures (date
and load given), or, with `--before REV`, measured in the same run from git revision REV of this
checkout (extracted with `git archive` to a temporary directory, run by this same script).

What stands in the way of run(): the script counts the handler calls ("dispatches") run()
makes (fused blocks count once) and times a do-nothing dispatch loop of the same shape: the
floor of any table-dispatch VM in CPython, before any instruction does its work.

Profiling off costs nothing (issue 30): the same program's run() on a VM that was never
profiled, on one whose tables `VirtualMachine.instrument` swapped for the profiler's and back
(`instrument(None)`), and, for the profiler's own price, on one still instrumented, each the
best of the rounds, interleaved, printed as times and ratios (with `--before REV` the column
before is measured in the same run too).

Run: `python3 benchmarks/bench_vm.py [--repeats R] [--profile] [--quick] [--before REV]`.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Runnable as a plain script from a checkout, and able to import its sibling minivm_seed;
# `--package-root DIR` measures the rvmdbg package of another checkout (`--before`).
_PKG = ROOT
if "--package-root" in sys.argv:
    _PKG = Path(sys.argv[sys.argv.index("--package-root") + 1])
sys.path.insert(0, str(_PKG))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rvmdbg  # noqa: E402,F401  (first: treewalk_baseline puts this checkout first on the path)
import minivm_seed as toy  # noqa: E402
from treewalk_baseline import TreeWalker  # noqa: E402
from rvmdbg.relay.interpreter import call_with_deep_stack  # noqa: E402
from rvmdbg.relay.interpreter import Interpreter  # noqa: E402
from rvmdbg.relay.loader import load_file  # noqa: E402
from rvmdbg.relay.ops import SCALAR_FAST  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.values import format_value, values_equal  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

try:
    from rvmdbg.vm.compiler import compile_module
except ImportError:  # the compiler is written by another helper; the rest still runs
    compile_module = None

try:  # 0-d values as NumPy scalars, with each operator's scalar path (issue 15)
    from rvmdbg.scalars import quiet, scalar_op
    _I32 = ("int32", "int32")
    LESS, GREATER = scalar_op("less", _I32), scalar_op("greater", _I32)
    ADD, SUB = scalar_op("add", _I32), scalar_op("subtract", _I32)
    ONE, TWO = np.int32(1), np.int32(2)
    SCALARS = True
except ImportError:  # before: 0-d arrays and the operators' 0-d functions
    from contextlib import nullcontext as quiet
    LESS, GREATER = SCALAR_FAST["less"], SCALAR_FAST["greater"]
    ADD, SUB = SCALAR_FAST["add"], SCALAR_FAST["subtract"]
    ONE, TWO = np.array(1, dtype=np.int32), np.array(2, dtype=np.int32)
    SCALARS = False


def direct_fib(n):
    if LESS(n, TWO):
        return n
    return ADD(direct_fib(SUB(n, ONE)), direct_fib(SUB(n, TWO)))


def direct_loop(n):
    i, acc = ONE, ONE - ONE
    while not GREATER(i, n):
        i, acc = ADD(i, ONE), ADD(acc, i)
    return acc


DIRECT = {"fib": direct_fib, "loop": direct_loop}

RUN_TARGET = 8_000_000     # instructions/s of run() on scalar code (CPU time)
STEP_TARGET = 1_000_000    # instructions/s of step() (CPU time)
INTERP_RATIO_TARGET = 2.0  # interpreter time / VM run() time

# Before cheap scalars (0-d arrays everywhere): this script on git revision d94e33a's package
# (`--before d94e33a`), best of 5 rounds (2 for step()), 2026-12-01 03:28 UTC, load average
# 11-14 on 2 CPUs (eight people's jobs), so CPU times are the figures to compare.
BEFORE_RECORDED = {
    "when": "recorded 2026-12-01 03:28 UTC, load 11-14, revision d94e33a (CPU time)",
    "fib": {"steps": 481_594, "run_cpu": 0.0985, "step_cpu": 1.235, "interp_cpu": 0.044},
    "loop": {"steps": 2_400_016, "run_cpu": 0.600, "step_cpu": 7.06, "interp_cpu": 0.447},
}

CPU: dict = {}  # job name -> shortest CPU seconds (time.process_time) over the rounds


def _timed(fn):
    """(seconds, result) of one call, after collecting garbage so that no run pays for the
    previous one's leftovers."""
    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    result = fn()
    t1 = time.perf_counter()
    return t1 - t0, time.process_time() - c0, result


def best_of_rounds(jobs: dict, rounds: int) -> dict:
    """{name: (shortest seconds, result)} over `rounds` rounds, each running every job once.

    Interleaving the jobs (rather than repeating one, then the next) exposes every figure to
    the same spells of machine load, which keeps the ratios between them honest."""
    best: dict = {}
    for _ in range(rounds):
        for name, fn in jobs.items():
            seconds, cpu, result = _timed(fn)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, result)
            CPU[name] = min(cpu, CPU.get(name, cpu))
    return best


class Workload:
    """One program, its argument and everything measured about it."""

    def __init__(self, label: str, file: str, n: int):
        self.label, self.file, self.n = label, file, n
        self.mod = check_module(load_file(ROOT / "programs" / file))
        self.args = [np.array(n, dtype=np.int32)]
        self.exe = None
        self.vm = None
        self.figures: dict = {}

    def title(self) -> str:
        return f"{self.label}({self.n})"

    def compile(self) -> None:
        t0 = time.perf_counter()
        self.exe = compile_module(self.mod)
        self.figures["compile_s"] = time.perf_counter() - t0
        self.vm = VirtualMachine(self.exe)

    def run_vm(self):
        """(result, instructions executed) of one run() from the start."""
        self.vm.start("main", self.args)
        return self.vm.run(), self.vm.steps

    def step_vm(self):
        vm = self.vm
        vm.start("main", self.args)
        step = vm.step
        while not vm.halted:
            step()
        return vm.result

    def run_interpreter(self):
        return Interpreter(self.mod).run("main", self.args)

    def run_treewalk(self):
        """The plain tree-walking evaluator of `treewalk_baseline.py` (deep recursion runs on
        the reference interpreter's big-stack thread)."""
        return call_with_deep_stack(lambda: TreeWalker(self.mod).run("main", self.args))

    def run_direct(self):
        """The same computation written directly in Python over the operators' scalar paths
        (`rvmdbg.scalars.scalar_op`, the ones the VM's and the interpreter's kernels call on
        scalars): no dispatch, no frames, no storage. A floor for any executor of this
        program that computes with those kernels."""
        n = self.args[0]
        with quiet():
            return DIRECT[self.label](n[()] if SCALARS else n)


def toy_jobs(n: int) -> dict:
    """The three toy dispatchers on the counting loop to n, as benchmark jobs."""
    program, init = toy.counting_loop(n)
    numbered = toy.numbered(program)
    return {"toy if_names": lambda: toy.run_if_chain_names(program, init),
            "toy if_numbers": lambda: toy.run_if_chain_numbers(numbered, init),
            "toy table": lambda: toy.run_table(program, init)}


def measure(workloads: list, toy_n: int, repeats: int, step_repeats: int) -> dict:
    """Fill each workload's figures and return the toy VM's (seconds per instruction)."""
    jobs: dict = {}
    for w in workloads:
        if compile_module is not None:
            w.compile()
            jobs[f"{w.label} run"] = w.run_vm
        jobs[f"{w.label} interp"] = w.run_interpreter
        jobs[f"{w.label} direct"] = w.run_direct
        jobs[f"{w.label} treewalk"] = w.run_treewalk
    jobs.update(toy_jobs(toy_n))
    jobs["floor"] = lambda: do_nothing_loop(FLOOR_DISPATCHES)
    best = best_of_rounds(jobs, repeats)
    if compile_module is not None:
        best.update(best_of_rounds({f"{w.label} step": w.step_vm for w in workloads},
                                   step_repeats))
    for w in workloads:
        f = w.figures
        f["interp_s"], f["interp_result"] = best[f"{w.label} interp"]
        f["direct_s"], f["direct_result"] = best[f"{w.label} direct"]
        f["treewalk_s"], f["treewalk_result"] = best[f"{w.label} treewalk"]
        for key in ("direct", "treewalk"):
            if not values_equal(f[f"{key}_result"], f["interp_result"]):
                raise SystemExit(f"{w.title()}: the {key} version disagrees")
        if compile_module is not None:
            f["run_s"], (f["vm_result"], f["steps"]) = best[f"{w.label} run"]
            f["step_s"], step_result = best[f"{w.label} step"]
            if w.vm.steps != f["steps"] or not values_equal(step_result, f["vm_result"]):
                raise SystemExit(f"{w.title()}: step() and run() disagree")

        if compile_module is not None:
            f["dispatches"] = count_dispatches(w)
    count = toy.instructions_executed(toy_n)
    expected = toy_n * (toy_n + 1) // 2
    toy_figs = {"n": toy_n, "instructions": count,
                "floor": CPU["floor"] / FLOOR_DISPATCHES}
    for key in ("if_names", "if_numbers", "table"):
        seconds, result = best["toy " + key]
        if result != expected:
            raise SystemExit(f"toy VM {key} computed {result}, expected {expected}")
        toy_figs[key] = seconds / count
    return toy_figs


def profiling_off(workloads: list, repeats: int) -> list[str]:
    """run() never profiled, profiled and switched off again, and still profiled: the lines
    that show switching the profiler off leaves run() as it was (issue 30)."""
    if compile_module is None or not hasattr(VirtualMachine, "instrument"):
        return ["profiling: this revision has no VirtualMachine.instrument"]
    from rvmdbg.vm.profile import Profiler
    lines = ["Profiling off (issue 30): run() of the same executable, best of "
             f"{repeats} interleaved rounds (CPU s)"]
    for w in workloads:
        plain = VirtualMachine(w.exe)
        was = VirtualMachine(w.exe)
        prof = Profiler(w.exe)
        was.instrument(prof.wrap)
        was.instrument(None)
        on = VirtualMachine(prof.timed_executable(w.exe))
        prof.vm = on
        on.instrument(prof.wrap)

        def job(vm):
            return lambda: (vm.start("main", w.args), vm.run())[1]
        best_of_rounds({f"{w.label} never": job(plain), f"{w.label} off": job(was),
                        f"{w.label} on": job(on)}, repeats)
        never, off, on_s = (CPU[f"{w.label} {k}"] for k in ("never", "off", "on"))
        lines.append(f"  {w.title():>12}: never profiled {never:.4f}  profiled then off "
                     f"{off:.4f} ({off / never:.2f}x)  profiling on {on_s:.4f} "
                     f"({on_s / never:.2f}x)")
    return lines


FLOOR_DISPATCHES = 1_000_000


def do_nothing_loop(n: int) -> int:
    """run()'s dispatch loop (`nxt = code[pc](regs)`, steps counted by block width) over
    handlers that do nothing but return the next pc: what a dispatch costs before any
    instruction does its work."""
    size = 16
    code = [(lambda nxt: (lambda regs: nxt))((i + 1) % size) for i in range(size)]
    widths = [1] * size
    regs = [None] * 8
    pc = steps = 0
    while steps < n:
        nxt = code[pc](regs)
        if nxt >= 0:
            steps += widths[pc]
            pc = nxt
    return steps


def count_dispatches(w: Workload) -> int:
    """Handler calls one run() of `w` makes: a fused block (several instructions) is one."""
    vm = VirtualMachine(w.exe)
    vm.blocks()  # the fused tables, made now so that they can be wrapped
    calls = [0]

    def counted(handler):
        def count(regs):
            calls[0] += 1
            return handler(regs)
        return count
    vm._fused = [([counted(h) for h in hs], ws) for hs, ws in vm._fused]
    vm._code = [[counted(h) for h in code] for code in vm._code]
    vm.start("main", w.args)
    vm.run()
    return calls[0]


def profile_vm(w: Workload, top: int = 20) -> str:
    """cProfile of one run() of `w`, by own time: which handlers the time goes to."""
    vm = VirtualMachine(w.exe)
    vm.start("main", w.args)
    prof = cProfile.Profile()
    prof.enable()
    vm.run()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def instruction_mix(w: Workload, n: int) -> str:
    """Share of each opcode among the instructions `w` executes with argument `n` (stepped),
    and the share spent on memory planning (sizes, storage, tensors, kills)."""
    vm = VirtualMachine(w.exe)
    vm.start("main", [np.array(n, dtype=np.int32)])
    counts: dict = {}
    while not vm.halted:
        name = vm.step().instruction.name
        counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values())
    planning = sum(counts.get(k, 0) for k in ("LoadConst", "AllocStorage", "AllocTensor",
                                               "KillRegister"))
    mix = ", ".join(f"{k} {v / total:.0%}" for k, v in
                    sorted(counts.items(), key=lambda kv: -kv[1]))
    return (f"instruction mix of {w.label}({n}): {mix}\n"
            f"  memory planning (LoadConst + AllocStorage + AllocTensor + KillRegister): "
            f"{planning / total:.0%}; kernel calls (InvokePacked): "
            f"{counts.get('InvokePacked', 0) / total:.0%}")


def gc_share(w: Workload) -> tuple:
    """(run() seconds, seconds inside the cyclic garbage collector, collections per
    generation) of one run(), timed with `gc.callbacks`: how much of run() the collector
    takes while the VM's frames and register files pile up."""
    spent = {"total": 0.0, "start": 0.0, "counts": [0, 0, 0]}

    def on_gc(phase, info):
        if phase == "start":
            spent["start"] = time.perf_counter()
        else:
            spent["total"] += time.perf_counter() - spent["start"]
            spent["counts"][info["generation"]] += 1

    gc.collect()  # before the callback is installed: this collection is not the run's
    gc.callbacks.append(on_gc)
    try:
        t0 = time.perf_counter()
        w.run_vm()
        seconds = time.perf_counter() - t0
    finally:
        gc.callbacks.remove(on_gc)
    return seconds, spent["total"], spent["counts"]


def _row(rows: list, what: str, value: str, target: str = "", met: bool | None = None,
         before: str = ""):
    rows.append((what, value, target, "" if met is None else ("yes" if met else "NO"), before))


def _ips(steps, seconds) -> str:
    return f"{steps / seconds / 1e6:.2f} M instr/s"


def headline(workloads: list) -> dict:
    """The figures compared with `--before`: per workload, instructions and CPU seconds."""
    out = {}
    for w in workloads:
        f = w.figures
        out[w.label] = {"steps": f.get("steps"), "run_cpu": CPU.get(f"{w.label} run"),
                        "step_cpu": CPU.get(f"{w.label} step"),
                        "interp_cpu": CPU.get(f"{w.label} interp"),
                        "run_s": f.get("run_s"), "step_s": f.get("step_s"),
                        "interp_s": f.get("interp_s"), "dispatches": f.get("dispatches")}
    return out


def measure_before(rev: str, args) -> dict:
    """`headline` figures of git revision `rev`'s package, measured by this script in a child
    process (the revision extracted with `git archive` to a temporary directory)."""
    with tempfile.TemporaryDirectory(prefix="rvmdbg-before-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "rvmdbg"],
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--package-root", tmp,
               "--emit-json", "--repeats", str(args.repeats),
               "--step-repeats", str(args.step_repeats)] + (["--quick"] if args.quick else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    if figures.pop("package", None) != str(Path(tmp).resolve() / "rvmdbg"):
        raise SystemExit(f"--before {rev}: the child measured another checkout's package")
    figures["when"] = f"measured now from revision {rev}"
    return figures


def report(workloads: list, toy_figs: dict, repeats: int, step_repeats: int,
           before: dict) -> bool:
    """Print every figure in one table; True when every target is met."""
    rows: list = []
    all_met = True
    loop_ns = None
    bounds = []  # (workload, ns per VM instruction the interpreter-ratio target leaves)
    for w in workloads:
        f = w.figures
        t = w.title()
        was = before.get(w.label) or {}
        if "run_s" in f:
            run_cpu, step_cpu = CPU[f"{w.label} run"], CPU[f"{w.label} step"]
            met = f["steps"] / run_cpu >= RUN_TARGET
            step_met = f["steps"] / step_cpu >= STEP_TARGET
            all_met &= met and step_met
            _row(rows, f"{t}: compile_module", f"{f['compile_s'] * 1000:.1f} ms")
            _row(rows, f"{t}: instructions executed", f"{f['steps']:,}")
            _row(rows, f"{t}: VM run()",
                 f"CPU {run_cpu:.3f} s {_ips(f['steps'], run_cpu)} (wall {f['run_s']:.3f} s "
                 f"{_ips(f['steps'], f['run_s'])})", f">= {RUN_TARGET / 1e6:.0f} M/s", met,
                 f"CPU {_ips(was['steps'], was['run_cpu'])}" if was else "")
            _row(rows, f"{t}: VM step()",
                 f"CPU {step_cpu:.3f} s {_ips(f['steps'], step_cpu)} (wall {f['step_s']:.3f} s "
                 f"{_ips(f['steps'], f['step_s'])})", f">= {STEP_TARGET / 1e6:.0f} M/s",
                 step_met, f"CPU {_ips(was['steps'], was['step_cpu'])}" if was else "")
            _row(rows, f"{t}: step() / run() time", f"{step_cpu / run_cpu:.1f}x")
            floor = toy_figs["floor"]
            d = f["dispatches"]
            per = run_cpu / d * 1e9
            _row(rows, f"{t}: run() dispatches (a fused block is one)",
                 f"{d:,} ({f['steps'] / d:.2f} instr each), {per:.0f} ns CPU each")
            _row(rows, f"{t}: do-nothing dispatch floor for as many",
                 f"{floor * d:.3f} s CPU = {_ips(f['steps'], floor * d)} at most "
                 f"({floor * 1e9:.0f} ns each)")
        if "interp_s" in f:
            interp_cpu = CPU[f"{w.label} interp"]
            _row(rows, f"{t}: interpreter run",
                 f"CPU {interp_cpu:.3f} s (wall {f['interp_s']:.3f} s)", "", None,
                 f"CPU {was['interp_cpu']:.3f} s" if was else "")
            _row(rows, f"{t}: direct Python, same 0-d kernels",
                 f"{f['direct_s']:.3f} s  (interpreter {f['interp_s'] / f['direct_s']:.1f}x this)")
        if "interp_s" in f and "run_s" in f:
            ratio = f["interp_s"] / f["run_s"]
            ratio_met = ratio >= INTERP_RATIO_TARGET
            all_met &= ratio_met
            _row(rows, f"{t}: interpreter time / VM run() time", f"{ratio:.2f}x",
                 f">= {INTERP_RATIO_TARGET:.0f}x", ratio_met)
            _row(rows, f"{t}: plain tree walker (treewalk_baseline.py)",
                 f"{f['treewalk_s']:.3f} s  (tree walker time / VM run() time "
                 f"{f['treewalk_s'] / f['run_s']:.2f}x)")
            if not values_equal(f["interp_result"], f["vm_result"]):
                raise SystemExit(f"{t}: VM gave {format_value(f['vm_result'])}, interpreter "
                                 f"{format_value(f['interp_result'])}")
        if "interp_s" in f and "run_s" in f:
            left = f["interp_s"] / INTERP_RATIO_TARGET - f["direct_s"]
            bounds.append((t, left / f["steps"] * 1e9))
        if w.label == "loop" and "run_s" in f:
            loop_ns = (f["run_s"] / f["steps"] * 1e9, f["steps"] / w.n, f["run_s"] / w.n * 1e9)

    n = toy_figs["n"]
    per_iter = 11
    for key, label in (("if_names", "if/elif on names (seed)"),
                       ("if_numbers", "if/elif on numbers"), ("table", "table dispatch")):
        ns = toy_figs[key] * 1e9
        _row(rows, f"toy loop({n}): {label}",
             f"{ns:.1f} ns/instr  {ns * per_iter:.0f} ns/iteration")
    fastest_chain = min(toy_figs["if_names"], toy_figs["if_numbers"])
    table_met = toy_figs["table"] <= fastest_chain
    all_met &= table_met
    _row(rows, "toy: table / fastest if/elif, per instr",
         f"{toy_figs['table'] / fastest_chain:.2f}x", "<= 1.00x", table_met)
    if loop_ns is not None:
        ns, instr_per_iter, iter_ns = loop_ns
        _row(rows, f"rvmdbg VM loop({n}) run()",
             f"{ns:.1f} ns/instr  {iter_ns:.0f} ns/iteration ({instr_per_iter:.0f} instr/iter)")
        _row(rows, "rvmdbg VM / toy table, per instr", f"{ns / (toy_figs['table'] * 1e9):.2f}x")
    # What the interpreter-ratio target leaves each VM instruction once the kernels' own work
    # (the direct version's time) is paid, next to what the toy's table dispatch costs per
    # instruction doing nothing else.
    toy_ns = toy_figs["table"] * 1e9
    for t, left in bounds:
        _row(rows, f"{t}: 2x the interpreter leaves, beyond kernels",
             f"{left:.1f} ns per VM instruction (toy table dispatch, no work: {toy_ns:.1f} ns)")

    print(f"rvmdbg VM benchmark: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
          f"best of {repeats} interleaved rounds ({step_repeats} for step())")
    if before:
        print(f"before cheap scalars: {before.get('when')}")
    header = ("figure", "value", "target", "met", "before")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(5)]
    for r in [header] + rows:
        print("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    return all_met


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per figure; the best is kept")
    ap.add_argument("--step-repeats", type=int, default=2,
                    help="runs of the (slow) step() loop; the best is kept")
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile of run() (always on a missed VM target)")
    ap.add_argument("--quick", action="store_true",
                    help="fib(10), loop(1000), one run each: proves the benchmark still runs")
    ap.add_argument("--before", metavar="REV",
                    help="measure git revision REV's package too, for the before column "
                         "(default: the recorded figures)")
    ap.add_argument("--package-root", help=argparse.SUPPRESS)  # the child of --before
    ap.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    fib_n, loop_n = 20, 100_000
    if args.quick:
        fib_n, loop_n, args.repeats, args.step_repeats = 10, 1000, 1, 1

    workloads = [Workload("fib", "fib.relay", fib_n), Workload("loop", "loop.relay", loop_n)]
    if compile_module is None:
        print("rvmdbg.vm.compiler.compile_module is not available yet: VM figures skipped")
    if args.emit_json:
        measure(workloads, loop_n, args.repeats, args.step_repeats)
        print(json.dumps({**headline(workloads),
                          "package": str(Path(rvmdbg.__file__).resolve().parent)}))
        return 0
    load_before = os.getloadavg()[0]
    if args.before:
        before = measure_before(args.before, args)
    else:
        before = BEFORE_RECORDED if not args.quick else {}
    toy_figs = measure(workloads, loop_n, args.repeats, args.step_repeats)
    all_met = report(workloads, toy_figs, args.repeats, args.step_repeats, before)
    print("\n".join(profiling_off(workloads, args.repeats)))
    print(f"1-minute load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"(on {os.cpu_count()} CPUs; above that, other processes shared the machine)")
    if args.quick:
        print("--quick: tiny sizes, one round; the met column is not a judgement of the targets")
    else:
        print("all targets met" if all_met else "some targets MISSED (see the met column)")

    vm_missed = compile_module is not None and not all(
        w.figures["steps"] / CPU[f"{w.label} run"] >= RUN_TARGET
        and w.figures["interp_s"] / w.figures["run_s"] >= INTERP_RATIO_TARGET
        for w in workloads)
    if compile_module is not None and (args.profile or (vm_missed and not args.quick)):
        print("\nDiagnostics of VM run():")
        for w in workloads:
            print(instruction_mix(w, min(w.n, 1000)))
            seconds, in_gc, counts = gc_share(w)
            print(f"  {w.title()}: one run() {seconds:.3f} s, of which {in_gc:.3f} s "
                  f"({in_gc / seconds:.0%}) in the cyclic GC; collections per generation "
                  f"{counts}")
        for w in workloads:
            print(f"\ncProfile of VM run() on {w.title()}:")
            print(profile_vm(w))
    return 0


if __name__ == "__main__":
    sys.exit(main())
