"""The MiniVM's speed: the counting sum of `minivm_seed.py` (acc = n + (n-1) + ... + 1) as a
`.mvm` program, on `MiniMachine.run` (the fast path, with the repeated-state check), stepped
one instruction at a time (`step()`, what a trace does), and under the debugger
(`DebugSession.cont()`, with its checkpoints), against the seed's table-dispatch loop.

`python3 benchmarks/bench_minivm.py [--quick] [--n N]` prints instructions per second. Figures
depend on the machine's load: compare rows of one run.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import minivm_seed as toy  # noqa: E402

from rvmdbg.debug import DebugSession  # noqa: E402
from rvmdbg.minivm import MiniMachine, parse_mvm  # noqa: E402


def counting_program(n: int) -> str:
    """5 instructions an iteration, 4 before the loop, the final test and HL."""
    return f"""
        LD r0 {n}          # k
        LD r1 0            # acc
        LD r2 -1
        LD r3 0
top:    SUB r3 r0 r4       # r4 = -k: >= 0 once k is 0
        CH r4 done
        ADD r1 r0 r1
        ADD r0 r2 r0
        JM top
done:   HL
"""


def instructions(n: int) -> int:
    return 4 + 5 * n + 3


def best(fn, rounds: int) -> float:
    t = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--quick", action="store_true", help="a tiny size (smoke test)")
    ns = ap.parse_args(argv)
    n = 500 if ns.quick else ns.n
    rounds = 1 if ns.quick else 3
    prog = parse_mvm(counting_program(n), "<counting>")
    steps = instructions(n)
    expected = n * (n + 1) // 2

    def fast():
        m = MiniMachine(prog)
        assert m.invoke()[1] == expected and m.steps == steps

    def stepped():
        m = MiniMachine(prog)
        m.start()
        while not m.halted:
            m.step()
        assert m.result[1] == expected

    def debugger():
        s = DebugSession(prog, [])
        ev = s.cont()
        assert ev.reason == "finished" and s.result[1] == expected

    seed_prog, seed_vars = toy.counting_loop(n)
    seed_steps = toy.instructions_executed(n)

    def seed():
        assert toy.run_table(seed_prog, seed_vars) == expected

    print(f"counting sum, n = {n} ({steps} MiniVM instructions; the seed: {seed_steps})")
    print(f"{'':<40}{'seconds':>10}{'instr/s':>14}")
    for label, fn, count in (("MiniMachine.run (fast path)", fast, steps),
                             ("MiniMachine.step, one at a time", stepped, steps),
                             ("DebugSession.cont (checkpoints)", debugger, steps),
                             ("seed: table dispatch (stack machine)", seed, seed_steps)):
        t = best(fn, rounds)
        print(f"{label:<40}{t:>10.4f}{count / t:>14,.0f}")


if __name__ == "__main__":
    main()
