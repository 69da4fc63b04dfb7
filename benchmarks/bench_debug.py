"""What asking the debugger a question costs: motions through the debugger protocol
(`DebugSession`) on fib(22), each beside plain `continue`. Prints figures; asserts nothing.

    python3 benchmarks/bench_debug.py [--quick] [--repeats N] [--before-tree DIR]

`--before-tree DIR` measures the same cases, in the same rounds, with the rvmdbg of another
checkout (e.g. `git archive d94e33a | tar -x -C DIR`, the commit before traps) for the
"before" column; without it that column shows the figures recorded in BEFORE. Times are CPU
seconds of this process (the machine is shared: wall time follows the other jobs' load).

Every case starts a fresh session (so each pays for recording history the same way), moves
to where the case begins, and times one motion (or, for watchpoints, `continue` repeated
until the program finishes, counting the stops):

- plain continue: no breakpoints, step 0 to the end;
- condition never true: `break @fib if $0 == -1`, continue to the end;
- 1 / 5 watchpoints: registers of the outermost @fib activation ($11; $4 $6 $11 $16 $20),
  continue until the end (every write to them stops);
- n over a big call: in the outermost @fib at `invoke $11 VMFunc[0]($10)` (fib(21)), `next`:
  the return lands on a pc every nested activation also returns to;
- finish: from pc 0 of that fib(21) activation;
- rcontinue (condition): from the end, with the never-true condition: replays all history;
- rcontinue (watch): from the end, back to the first write of a watched register;
- rfinish: from the middle of the run, back to the call of the innermost frame.

Targets (issue 15): continue with any number of register watchpoints, and with a never-true
condition, within 1.2x of plain continue; `n`, `finish` and reverse motions at run() speed.
The "before" column holds the figures measured at the start of that work (see BEFORE).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

import numpy as np

if "--tree" in sys.argv:   # a child measuring another checkout
    sys.path.insert(0, sys.argv[sys.argv.index("--tree") + 1])
else:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from rvmdbg.debug import DebugSession  # noqa: E402
from rvmdbg.limits import Limits  # noqa: E402
from rvmdbg.relay.loader import load_file  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "programs")
LIMITS = Limits(max_steps=10 ** 9)

# Seconds measured on fib(22) with this script before watchpoints and conditions became
# traps (wall time, best of 3).
BEFORE_WHEN = "2026-12-01 02:21 UTC, commit d94e33a, load average 3.8-5.1 on 2 cores"
BEFORE = {
    "plain continue": 0.414,
    "continue, condition never true": 0.663,
    "continue, 1 watchpoint": 4.075,
    "continue, 5 watchpoints": 7.588,
    "n over a big call": 0.218,
    "finish": 0.216,
    "rcontinue, condition never true": 0.653,
    "rcontinue, 1 watchpoint": 5.414,
    "rfinish from the middle": 0.010,
}


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def fresh(exe, n):
    return DebugSession(exe, [np.array(n, dtype=np.int32)], limits=LIMITS)


def to_outer_fib(s, pc):
    """Step into the outermost @fib and run to `pc` there."""
    s.step()
    fib = s.exe.func_index("fib")
    if s.location() != (fib, pc):
        s.run_to(fib, pc)
    assert s.depth() == 1 and s.location() == (fib, pc), s.last_event


def continue_to_end(s) -> int:
    stops = 0
    while True:
        ev = s.cont()
        if ev.reason == "finished":
            return stops
        assert ev.reason in ("watchpoint", "breakpoint"), ev.line()
        stops += 1


def case_plain(exe, n):
    s = fresh(exe, n)
    return lambda: (s.cont(), "")[1]


def case_condition(exe, n):
    s = fresh(exe, n)
    s.breakpoints.add("@fib", "$0 == -1")
    return lambda: (s.cont(), "")[1]


def case_watches(registers):
    def make(exe, n):
        s = fresh(exe, n)
        to_outer_fib(s, 0)
        for r in registers:
            s.watch(r)
        return lambda: f"{continue_to_end(s)} stops"
    return make


def case_next(exe, n):
    s = fresh(exe, n)
    to_outer_fib(s, 14)

    def motion():
        ev = s.next()
        assert ev.reason == "step" and s.depth() == 1, ev.line()
        return f"{ev.step} steps"
    return motion


def case_finish(exe, n):
    s = fresh(exe, n)
    to_outer_fib(s, 14)
    s.step()

    def motion():
        ev = s.finish()
        assert ev.reason == "step" and s.depth() == 1, ev.line()
        return ""
    return motion


def case_rcontinue_condition(exe, n):
    s = fresh(exe, n)
    s.cont()
    s.breakpoints.add("@fib", "$0 == -1")

    def motion():
        ev = s.rcontinue()
        assert ev.reason == "start of history", ev.line()
        return ""
    return motion


def case_rcontinue_watch(exe, n):
    s = fresh(exe, n)
    to_outer_fib(s, 0)
    s.watch(1)   # written once, by the first instruction
    s.disable(s.watches[0].id)
    s.cont()
    s.enable(s.watches[0].id)

    def motion():
        ev = s.rcontinue()
        assert ev.reason == "watchpoint", ev.line()
        return f"to step {ev.step}"
    return motion


def case_rfinish(exe, n):
    s = fresh(exe, n)
    s.cont()
    s.goto(s.last_step // 2)

    def motion():
        ev = s.rfinish()
        return f"to step {ev.step}"
    return motion


CASES = [
    ("plain continue", case_plain),
    ("continue, condition never true", case_condition),
    ("continue, 1 watchpoint", case_watches([11])),
    ("continue, 5 watchpoints", case_watches([4, 6, 11, 16, 20])),
    ("n over a big call", case_next),
    ("finish", case_finish),
    ("rcontinue, condition never true", case_rcontinue_condition),
    ("rcontinue, 1 watchpoint", case_rcontinue_watch),
    ("rfinish from the middle", case_rfinish),
]


def one_round(exe, n) -> dict:
    """label -> (CPU seconds, detail) of every case, once."""
    out = {}
    for label, make in CASES:
        motion = make(exe, n)
        gc.collect()
        t = time.process_time()
        detail = motion()
        out[label] = (time.process_time() - t, detail)
        del motion
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fib(12), one round (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=22)
    ap.add_argument("--before-tree", metavar="DIR", help="measure DIR's rvmdbg as 'before'")
    ap.add_argument("--tree", help=argparse.SUPPRESS)   # child: one round as JSON
    ns = ap.parse_args()
    n = 12 if ns.quick else ns.n
    exe = compile_module(check_module(load_file(os.path.join(ROOT, "fib.relay"))))
    if ns.tree:
        print(json.dumps(one_round(exe, n)))
        return
    repeats = 1 if ns.quick else ns.repeats
    print(f"fib({n}) through DebugSession, CPU s, best of {repeats}; load average {load_avg()}")
    best: dict = {}
    best_before: dict = {}
    for _ in range(repeats):
        if ns.before_tree:
            child = subprocess.run(
                [sys.executable, __file__, "--tree", os.path.abspath(ns.before_tree),
                 "--n", str(n)], capture_output=True, text=True, check=True)
            for label, (t, _) in json.loads(child.stdout.splitlines()[-1]).items():
                best_before[label] = min(t, best_before.get(label, t))
        for label, (t, detail) in one_round(exe, n).items():
            if label not in best or t < best[label][0]:
                best[label] = (t, detail)
    if not ns.before_tree:
        best_before = dict(BEFORE) if n == 22 else {}
        print(f"before: figures recorded in BEFORE (wall s, {BEFORE_WHEN})")
    print(f"{'motion':<34}{'s':>9}{'x plain':>9}{'before s':>10}{'x plain':>9}  detail")
    base = best["plain continue"][0]
    base_before = best_before.get("plain continue")
    for label, _ in CASES:
        t, detail = best[label]
        before = best_before.get(label)
        b_text = f"{before:>10.3f}" if before is not None else f"{'-':>10}"
        br_text = (f"{before / base_before:>9.2f}" if before is not None and base_before
                   else f"{'-':>9}")
        print(f"{label:<34}{t:>9.3f}{t / base:>9.2f}{b_text}{br_text}  {detail}")
    print(f"target: continue with watchpoints or a never-true condition <= 1.2x plain; "
          f"load average after {load_avg()}")


if __name__ == "__main__":
    main()
