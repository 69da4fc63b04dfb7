"""Reverse-execution history of the debugger: what recording costs, how fast going back is,
how much memory a long history takes. Prints figures side by side; asserts nothing.

    python3 benchmarks/bench_history.py [--quick]

Programs: `fib.relay` (double recursion: shallow stack, a call every ~20 instructions) and
`sum_up.relay` (non-tail recursion: the stack grows to one frame per number), each with an
argument that makes a history of more than a million steps.

1. continue with history vs. the VM's bare `run()` (best of a few runs, same program);
2. reverse step at several points of the history (restore a checkpoint + replay);
3. memory of the session after the run (tracemalloc: everything the session allocated,
   VM state included) and the history's own estimate.
Targets: recording <= 2x the bare run; reverse step < 10 ms; a 1M-step history < 200 MB.

Models (`rvmdbg.workloads`: MobileNet-v1 at 224x224, and a GPT-2-sized transformer encoder,
768 features, 12 heads, FF 3072, 128 tokens): after `continue` to the end, at sampled steps k,
`s` from k and `S` from k+1 (the same instruction, forward and back, interleaved so that a
busy machine slows both alike), with p95 and the history's checkpoints and bytes.
Target: `S` p95 <= 2x `s` p95 (checkpoints are placed by running time, see history.py).
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
import tracemalloc

# One BLAS thread, as in bench_models.py: on a shared 2-core machine extra BLAS threads spin.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from rvmdbg import workloads  # noqa: E402
from rvmdbg.debug import DebugSession  # noqa: E402
from rvmdbg.limits import Limits  # noqa: E402
from rvmdbg.relay.loader import load_file, load_module  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "programs")
LIMITS = Limits(max_steps=10 ** 9)


def compile_program(name: str):
    return compile_module(check_module(load_file(os.path.join(ROOT, name))))


def bare_run(exe, arg, quiet_gc: bool = False) -> tuple[float, int]:
    vm = VirtualMachine(exe, LIMITS)
    vm.start("main", [arg])
    saved = gc.get_threshold()
    if quiet_gc:  # the same GC setting the session runs with (no full collections)
        gc.set_threshold(saved[0], saved[1], 1 << 30)
    try:
        t = time.perf_counter()
        vm.run()
        return time.perf_counter() - t, vm.steps
    finally:
        gc.set_threshold(*saved)


def recorded_run(exe, arg) -> tuple[float, DebugSession]:
    s = DebugSession(exe, [arg], limits=LIMITS)
    t = time.perf_counter()
    ev = s.cont()
    elapsed = time.perf_counter() - t
    assert ev.reason == "finished", ev.line()
    return elapsed, s


def time_rsteps(s: DebugSession, points: list[int], run: int) -> list[tuple[int, float, float]]:
    """At each point: go there, then `run` reverse steps in a row, each timed."""
    out = []
    for p in points:
        s.goto(p)
        times = []
        for _ in range(run):
            t = time.perf_counter()
            s.rstep()
            times.append(time.perf_counter() - t)
        out.append((p, statistics.median(times) * 1e3, max(times) * 1e3))
    return out


MODELS = {
    "mobilenet_v1": dict(size=224, width=1.0, classes=1000),
    "gpt2_like": dict(seq=128, d=768, heads=12, ff=3072),
}
MODELS_QUICK = {"mobilenet_v1": dict(size=32, width=0.25, classes=10),
                "gpt2_like": dict(seq=8, d=32, heads=4, ff=64)}


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[int(0.95 * (len(xs) - 1))]


def model_case(name: str, sizes: dict, samples: int) -> None:
    """`s` against `S` on one model (see the module docstring)."""
    family = "transformer_encoder" if name == "gpt2_like" else name
    w = workloads.build(family, **sizes)
    exe = compile_module(check_module(load_module(w.text, name)))
    s = DebugSession(exe, w.inputs, limits=LIMITS)
    t = time.perf_counter()
    ev = s.cont()
    cont_s = time.perf_counter() - t
    assert ev.reason == "finished", ev.line()
    steps = s.last_step
    rng = random.Random(0)
    points = sorted(rng.randrange(0, steps) for _ in range(samples))
    fwd, back = [], []
    for k in points:
        s.goto(k)
        t = time.perf_counter()
        s.step()
        fwd.append(time.perf_counter() - t)
        t = time.perf_counter()
        s.rstep()
        back.append(time.perf_counter() - t)
    info = s.history_info()
    f95, b95 = p95(fwd) * 1e3, p95(back) * 1e3
    print(f"{name:<14}{steps:>7}{cont_s:>9.3f}{info['checkpoints']:>7}"
          f"{info['bytes_estimate'] / 2 ** 20:>9.1f}{statistics.median(fwd) * 1e3:>9.2f}{f95:>9.2f}"
          f"{statistics.median(back) * 1e3:>9.2f}{b95:>9.2f}{b95 / max(f95, 1e-9):>8.2f}")


def models(quick: bool, samples: int) -> None:
    print(f"{'model':<14}{'steps':>7}{'cont s':>9}{'ckpts':>7}{'hist MB':>9}{'s med':>9}{'s p95':>9}"
          f"{'S med':>9}{'S p95':>9}{'S/s':>8}   (ms; target S/s <= 2)")
    for name, sizes in (MODELS_QUICK if quick else MODELS).items():
        model_case(name, sizes, samples)
        gc.collect()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller programs (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models-only", action="store_true", help="only the model case")
    ap.add_argument("--samples", type=int, default=300, help="steps sampled on each model")
    ns = ap.parse_args()
    models(ns.quick, ns.samples if not ns.quick else 20)
    if ns.models_only:
        return
    cases = [("fib.relay", 22 if not ns.quick else 16), ("sum_up.relay", 45000 if not ns.quick else 3000)]
    print(f"{'program':<18}{'steps':>10}{'bare run s':>12}{'no-GC2 s':>10}{'recorded s':>12}{'ratio':>7}"
          f"{'rstep med ms':>14}{'rstep max ms':>14}{'traced MB':>11}{'estimate MB':>13}"
          f"{'checkpoints':>13}")
    for name, n in cases:
        exe = compile_program(name)
        arg = np.array(n, dtype=np.int32)
        bare = min(bare_run(exe, arg)[0] for _ in range(ns.repeats))
        bare_quiet = min(bare_run(exe, arg, True)[0] for _ in range(ns.repeats))
        rec_times = []
        for _ in range(ns.repeats):
            elapsed, s = recorded_run(exe, arg)
            rec_times.append(elapsed)
            del s
            gc.collect()
        rec = min(rec_times)
        # memory: everything the session holds after recording the whole run
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        _, s = recorded_run(exe, arg)
        gc.collect()
        traced = (tracemalloc.get_traced_memory()[0] - base) / 2 ** 20
        tracemalloc.stop()
        steps = s.last_step
        k = s.history.interval
        # worst replay: just past a checkpoint boundary (the step before needs k-1 steps)
        points = [steps, steps * 3 // 4, (steps // 2) // k * k, steps // 4, 10]
        rs = time_rsteps(s, points, 20)
        med = statistics.median(r[1] for r in rs)
        worst = max(r[2] for r in rs)
        info = s.history_info()
        label = f"{name[:-6]}({n})"
        print(f"{label:<18}{steps:>10}{bare:>12.3f}{bare_quiet:>10.3f}{rec:>12.3f}{rec / bare:>7.2f}"
              f"{med:>14.2f}{worst:>14.2f}{traced:>11.1f}{info['bytes_estimate'] / 2 ** 20:>13.1f}"
              f"{info['checkpoints']:>13}")
        detail = ", ".join(f"@{p}: {m:.2f}/{w:.2f}" for p, m, w in rs)
        print(f"  20 reverse steps in a row from step N, median/max ms: {detail}")
        t = time.perf_counter()
        s.goto(steps // 2)
        goto_ms = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        s.goto(steps)
        s.rnext()
        rnext_ms = (time.perf_counter() - t) * 1e3
        s.goto(steps // 2)
        t = time.perf_counter()
        s.rfinish()
        rfinish_ms = (time.perf_counter() - t) * 1e3
        s.goto(steps // 2)
        t = time.perf_counter()
        s.deps()
        deps_ms = (time.perf_counter() - t) * 1e3
        # reverse continue with a breakpoint on main's ret, from just before it runs: no hit,
        # so every segment of the history is replayed
        s.goto(steps - 2)
        main = s.exe.func_index("main")
        s.breakpoints.add(f"@main:{len(s.exe.functions[main].instructions) - 1}")
        t = time.perf_counter()
        ev = s.rcontinue()
        rcont_s = time.perf_counter() - t
        print(f"  goto middle {goto_ms:.1f} ms; goto end + rnext {rnext_ms:.1f} ms; "
              f"rfinish {rfinish_ms:.1f} ms; deps {deps_ms:.1f} ms; "
              f"rcontinue over the whole history ({ev.reason}) {rcont_s:.2f} s")
        del s
        gc.collect()


if __name__ == "__main__":
    main()
