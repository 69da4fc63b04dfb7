"""Run ONNX's backend node tests on rvmdbg and write docs/onnx-support.md.

    python3 scripts/onnx_support.py [--only SUBSTRING] [--out PATH]

Prints the pass counts (in scope, out of scope) and the time taken.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rvmdbg.onnx import conformance  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                  "onnx-support.md"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failing case")
    ns = ap.parse_args(argv)
    import onnx
    t0 = time.perf_counter()
    all_cases = conformance.cases()
    if ns.only:
        all_cases = [c for c in all_cases if ns.only in c.name]
    outcomes = []
    for case in all_cases:
        o = conformance.run_case(case)
        outcomes.append(o)
        if ns.verbose and not o.passed:
            print(f"{o.name}: {o.reason}")
    inside = [o for o in outcomes if o.in_scope]
    ip = sum(o.passed for o in inside)
    op = sum(o.passed for o in outcomes if not o.in_scope)
    print(f"in scope: {ip} of {len(inside)} pass; out of scope: {op} of "
          f"{len(outcomes) - len(inside)} pass; {time.perf_counter() - t0:.1f} s")
    slow = sorted(outcomes, key=lambda o: -o.seconds)[:5]
    print("slowest: " + ", ".join(f"{o.name} {o.seconds:.2f} s" for o in slow))
    if not ns.only:
        with open(ns.out, "w") as f:
            f.write(conformance.report_text(outcomes, onnx.__version__))
        print(f"wrote {os.path.normpath(ns.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
