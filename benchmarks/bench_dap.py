"""Latency of the DAP adapter: from a step request written to the pipe to its `stopped` event
read back, as an editor sees it. Prints figures; asserts nothing.

    python3 benchmarks/bench_dap.py [--quick]

Starts `python -m rvmdbg dap` on fib.relay (argument 20), stops at the breakpoint on @fib's
body, then times, over a pipe, N rounds each of: stepIn by instruction, next by statement,
stepBack by instruction, continue to the next breakpoint hit, and reverseContinue to the
previous one, each from the request's write to the `stopped` event's arrival; then the
follow-up an editor sends at each stop (stackTrace + scopes + variables of the registers).
Target: step request to `stopped` under 20 ms (median).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from rvmdbg.dap.client import PROGRAMS, DapClient  # noqa: E402

FIB = str(PROGRAMS / "fib.relay")
TARGET_MS = 20.0


def timed_motion(client: DapClient, command: str, args: dict) -> float:
    mark = client.mark()
    t = time.perf_counter()
    client.send(command, {"threadId": 1, **args})
    client.wait_for(lambda m: m.get("type") == "event" and m.get("event") == "stopped",
                    start=mark)
    return (time.perf_counter() - t) * 1000


def editor_refresh(client: DapClient) -> float:
    t = time.perf_counter()
    frame = client.request("stackTrace", {"threadId": 1, "levels": 20})["body"]["stackFrames"][0]
    scopes = client.request("scopes", {"frameId": frame["id"]})["body"]["scopes"]
    client.request("variables", {"variablesReference": scopes[0]["variablesReference"]})
    return (time.perf_counter() - t) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few rounds (smoke test)")
    ap.add_argument("--rounds", type=int, default=50)
    ns = ap.parse_args()
    rounds = 3 if ns.quick else ns.rounds
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    client = DapClient.start()
    try:
        ev = client.launch(FIB, stop_on_entry=False, breakpoints=[6], args=["20"])
        assert ev["body"]["reason"] == "breakpoint", ev
        rows = []
        for label, command, args in [
                ("stepIn (instruction)", "stepIn", {"granularity": "instruction"}),
                ("next (statement)", "next", {"granularity": "statement"}),
                ("stepBack (instruction)", "stepBack", {"granularity": "instruction"}),
                ("continue to the next hit", "continue", {}),
                ("reverseContinue to the last hit", "reverseContinue", {})]:
            times = []
            for _ in range(rounds):
                times.append(timed_motion(client, command, args))
                if command == "reverseContinue":
                    timed_motion(client, "continue", {})  # forward again: a hit to go back to
            rows.append((label, times))
        rows.append(("stackTrace + scopes + variables", [editor_refresh(client)
                                                         for _ in range(rounds)]))
    finally:
        client.close()
    print(f"\nDAP over a pipe, fib.relay 20, {rounds} rounds each (milliseconds)")
    print(f"{'request -> stopped event':<34}{'median':>9}{'best':>9}{'worst':>9}")
    for label, times in rows:
        print(f"{label:<34}{statistics.median(times):>9.2f}{min(times):>9.2f}"
              f"{max(times):>9.2f}")
    step_median = statistics.median(rows[0][1])
    verdict = "met" if step_median < TARGET_MS else "NOT met"
    print(f"\ntarget: a step request to its stopped event < {TARGET_MS:.0f} ms "
          f"(median stepIn {step_median:.2f} ms): {verdict}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
