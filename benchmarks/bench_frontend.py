"""Front-end throughput: parse and type-check a generated 10,000-line Relay program.

The program is made by a deterministic generator (no randomness: every choice is a function
of the unit number) out of repeated "units" that look like real Relay code: an ADT with a
`match` over it, a long `let` chain of scalar arithmetic ending in an `if`, recursion over
prelude lists, a closure passed to `@map`, a dense layer written with graph bindings, tuples
and `Option`. Units call their predecessor so the call graph is connected.

Timed phases, each the best of `--repeats` runs (machine load varies, so the minimum is the
figure least disturbed by other processes):
- parse: `rvmdbg.relay.loader.load_module` (lex + parse + merging the prelude definitions the
  program reaches; the units use prelude types, so bare `parser.parse` would not resolve them);
- check: `rvmdbg.relay.typecheck.check_module` on the module just parsed;
- both: parse + check back to back, the figure the 1 s target is about.

Run: `python3 benchmarks/bench_frontend.py [--lines N] [--repeats R] [--profile] [--quick]`.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from pathlib import Path

# Runnable as a plain script from a checkout, without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rvmdbg.relay.loader import load_module  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402

TARGET_SECONDS = 1.0       # parse + check of the 10,000-line program
DEFAULT_LINES = 10_000
CHAIN_LENGTH = 24          # lets per scalar chain: long chains stress scoping and unification

_OPS = ("+", "-", "*")


def _chain(k: int) -> list[str]:
    """A scalar function: a long let chain mixing two earlier values, a call to the previous
    unit's chain, and an `if` at the end."""
    out = [f"def @chain{k}(%x: int32, %y: int32) -> int32 {{",
           f"  let %a0 = %x + {k % 7 + 1};",
           "  let %a1: int32 = %a0 * %y;"]
    for i in range(2, CHAIN_LENGTH):
        if i == CHAIN_LENGTH // 2 and k > 0:
            out.append(f"  let %a{i} = @chain{k - 1}(%a{i - 1}, %y);")
            continue
        op = _OPS[(i + k) % 3]
        rhs = f"%a{i - 2}" if i % 2 else str((i * 5 + k) % 11 + 1)
        out.append(f"  let %a{i} = %a{i - 1} {op} {rhs};")
    last = f"%a{CHAIN_LENGTH - 1}"
    out += [f"  if ({last} > {k % 13}) {{",
            f"    {last} - %x",
            "  } else {",
            f"    {last} + %y",
            "  }",
            "}",
            ""]
    return out


def _unit(k: int) -> list[str]:
    """One unit of the program (about 80 lines), self-consistent and well typed."""
    c = k % 9 + 2
    lines = [
        f"// ---- unit {k}: shapes, a let chain, list recursion, a closure, a dense layer ----",
        f"type Shape{k} {{",
        f"  Circle{k}(float32),",
        f"  Rect{k}(float32, float32),",
        f"  Blank{k},",
        "}",
        "",
        f"def @area{k}(%s: Shape{k}) -> float32 {{",
        "  match (%s) {",
        f"    Circle{k}(%r) => 3.14159f * %r * %r,",
        f"    Rect{k}(%w, %h) => %w * %h,",
        f"    Blank{k} => 0f,",
        "  }",
        "}",
        "",
    ]
    lines += _chain(k)
    lines += [
        f"def @count{k}(%xs: List[int32], %acc: int32) -> int32 {{",
        "  match (%xs) {",
        f"    Cons(%h, %t) => @count{k}(%t, %acc + %h * {c}),",
        "    Nil => %acc,",
        "  }",
        "}",
        "",
        f"def @scale{k}(%xs: List[int32]) -> List[int32] {{",
        f"  let %f = fn (%v: int32) -> int32 {{ %v * {c} + 1 }};",
        "  @map(%f, %xs)",
        "}",
        "",
        f"def @layer{k}(%x: Tensor[(1, 8), float32], %w: Tensor[(4, 8), float32],",
        "              %b: Tensor[(4,), float32]) -> Tensor[(1, 4), float32] {",
        "  %0 = nn.dense(%x, %w, units=4);",
        "  %1 = nn.bias_add(%0, %b);",
        "  %2 = nn.relu(%1);",
        f"  %3 = multiply(%2, {c}f);",
        "  tanh(%3)",
        "}",
        "",
        f"def @pick{k}(%o: Option[int32], %t: (int32, float32)) -> float32 {{",
        "  let %base = %t.1;",
        "  match (%o) {",
        "    Some(%v) => {",
        "      if (%v > %t.0) {",
        "        %base * 2f",
        "      } else {",
        "        %base",
        "      }",
        "    },",
        f"    None => @area{k}(Rect{k}(%base, 1f)),",
        "  }",
        "}",
        "",
        f"def @run{k}(%n: int32) -> (int32, float32) {{",
        f"  let %xs = Cons(%n, Cons({c}, Cons({k}, Nil)));",
        f"  let %total = @count{k}(@scale{k}(%xs), 0);",
        f"  let %mixed = @chain{k}(%total, %n);",
        f"  let %shape = if (%mixed > 0) {{ Circle{k}(1.5f) }} else {{ Blank{k} }};",
        f"  (%mixed, @area{k}(%shape) + @pick{k}(Some(%n), (%total, 0.5f)))",
        "}",
        "",
    ]
    return lines


def generate_program(target_lines: int = DEFAULT_LINES) -> str:
    """A well-typed Relay program of at least `target_lines` lines (units until it is long
    enough, then a `@main` calling the last unit), the same text on every call."""
    lines = ['#[version = "0.0.5"]',
             "// Generated by benchmarks/bench_frontend.py for the front-end benchmark.",
             ""]
    k = 0
    main = ["def @main(%n: int32) -> (int32, float32) {", "  @run{k}(%n)", "}"]
    while True:
        lines += _unit(k)
        k += 1
        if len(lines) + len(main) >= target_lines:
            break
    main[1] = f"  @run{k - 1}(%n)"
    lines += main
    return "\n".join(lines) + "\n"


def measure(text: str, repeats: int) -> dict:
    """Seconds of load, check and both for each of `repeats` runs: the best of each phase and
    the first run's total (which also pays for lazy imports and operator tables).

    Each run parses afresh (checking annotates the AST in place). The previous run's module
    is freed and garbage-collected before the clock starts, and the new one stays alive until
    it stops, so no run is charged for tearing down another's AST."""
    best = {"load": float("inf"), "check": float("inf"), "both": float("inf")}
    first = None
    mod = None
    for _ in range(repeats):
        mod = None
        gc.collect()
        t0 = time.perf_counter()
        mod = load_module(text, "<bench>")
        t1 = time.perf_counter()
        check_module(mod)
        t2 = time.perf_counter()
        for phase, s in (("load", t1 - t0), ("check", t2 - t1), ("both", t2 - t0)):
            best[phase] = min(best[phase], s)
        if first is None:
            first = t2 - t0
    best["first"] = first
    return best


def profile(text: str, top: int = 25) -> str:
    """cProfile of one load + check, sorted by own time: where the front end spends it."""
    prof = cProfile.Profile()
    prof.enable()
    check_module(load_module(text, "<bench>"))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=DEFAULT_LINES, help="program size in lines")
    ap.add_argument("--repeats", type=int, default=5, help="runs per phase; the best is kept")
    ap.add_argument("--profile", action="store_true",
                    help="also print a cProfile of one load + check (always on a missed target)")
    ap.add_argument("--quick", action="store_true",
                    help="a 300-line program, one repeat: proves the benchmark still runs")
    args = ap.parse_args(argv)
    if args.quick:
        args.lines, args.repeats = 300, 1

    text = generate_program(args.lines)
    n_lines = text.count("\n")
    load_before = os.getloadavg()[0]
    figures = measure(text, args.repeats)

    print(f"front end: {n_lines} lines, {len(text)} chars, best of {args.repeats} runs, "
          f"{os.cpu_count()} CPUs")
    print(f"{'phase':<24}{'seconds':>10}{'lines/s':>12}")
    for phase, label in (("load", "parse (load_module)"), ("check", "type check"),
                         ("both", "parse + check"), ("first", "parse + check, 1st run")):
        s = figures[phase]
        print(f"{label:<24}{s:>10.3f}{n_lines / s:>12,.0f}")
    scaled = figures["both"] * DEFAULT_LINES / n_lines
    met = scaled < TARGET_SECONDS
    if args.quick:
        print("target: not judged in --quick mode (one cold run of a small program)")
    else:
        print(f"target: parse + check of {DEFAULT_LINES} lines < {TARGET_SECONDS:.1f} s: "
              f"{'MET' if met else 'MISSED'} ({scaled:.3f} s"
              f"{'' if n_lines == DEFAULT_LINES else ', scaled linearly from this size'})")
    print(f"1-minute load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"(on {os.cpu_count()} CPUs; above that, other processes shared the machine)")
    if args.profile or (not met and not args.quick):
        print()
        print(profile(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
