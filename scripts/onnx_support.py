"""Run ONNX's backend node tests on rvmdbg and write docs/onnx-support.md.

    python3 scripts/onnx_support.py [--only SUBSTRING] [--out PATH]
    python3 scripts/onnx_support.py --networks [--out PATH]

Prints the pass counts (in scope, out of scope) and the time taken. With --networks, runs the
real networks the `onnx` package ships (rvmdbg/onnx/networks.py) on the VM, the interpreter
and the graph executor instead, and rewrites only the document's networks section; a run of
the node cases keeps that section as it is.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rvmdbg.onnx import conformance, networks  # noqa: E402


def run_networks(out: str, verbose: bool) -> int:
    t0 = time.perf_counter()
    outcomes = []
    for net in networks.networks():
        o = networks.run_network(net)
        outcomes.append(o)
        times = " ".join(f"{k} {v:.2f} s" for k, v in o.seconds.items())
        if verbose or not o.passed or net.light:
            print(f"{o.name}: {'ok' if o.passed else o.reason} {times}", flush=True)
    ok = sum(o.passed for o in outcomes)
    print(f"networks: {ok} of {len(outcomes)} pass; {time.perf_counter() - t0:.1f} s")
    with open(out) as f:
        doc = f.read()
    with open(out, "w") as f:
        f.write(networks.replace_section(doc, networks.report_section(outcomes)))
    print(f"wrote {os.path.normpath(out)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                  "onnx-support.md"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failing case")
    ap.add_argument("--networks", action="store_true",
                    help="run the real networks and rewrite only their section")
    ns = ap.parse_args(argv)
    if ns.networks:
        return run_networks(ns.out, ns.verbose)
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
        kept = ""
        if os.path.exists(ns.out):
            with open(ns.out) as f:
                old = f.read()
            at = old.find("\n" + networks.HEADING + "\n")
            kept = old[at + 1:] if at >= 0 else ""
        with open(ns.out, "w") as f:
            text = conformance.report_text(outcomes, onnx.__version__)
            f.write(networks.replace_section(text, kept) if kept else text)
        print(f"wrote {os.path.normpath(ns.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
