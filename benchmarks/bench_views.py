"""What the teaching views cost on a big program: building their models, and the views' answers.

The program is `bench_frontend.generate_program(lines)` (ADTs, matches, let chains, closures,
dense layers: every construct the views draw), type-checked and compiled once outside the
timings, then:

- view 1: the pass pipeline's stages (`compile_stages`, paid once when the view first opens),
  each stage's model (`FlowModel.stage`: outline, or printed text with every node's position),
  and one selection followed through every stage (`FlowModel.follow`);
- view 3: basic blocks of every function (`build_cfg`), decision trees of every match
  (`find_decision_trees`), and a drawn CFG of the largest function;
- view 2: `compare_executors` on a static program (the MLP of `bench_graph`), its dispatch
  stream recorded step by step.

Figures only, no targets; best of `--rounds`. Run: `python3 benchmarks/bench_views.py
[--lines N] [--rounds R] [--quick]`.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_frontend import generate_program  # noqa: E402

from rvmdbg.relay.loader import load_module  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.views.cfg import build_cfg, draw_cfg  # noqa: E402
from rvmdbg.views.context import ViewContext  # noqa: E402
from rvmdbg.views.decision import find_decision_trees  # noqa: E402
from rvmdbg.views.flow import FlowModel  # noqa: E402
from rvmdbg.vm.compiler import compile_module, compile_stages  # noqa: E402


def best(job, rounds: int) -> tuple[float, object]:
    out, t = None, float("inf")
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        out = job()
        t = min(t, time.perf_counter() - t0)
    return t, out


def line(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<44} {seconds * 1e3:>10.1f} ms  {note}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=5000, help="size of the generated program")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a small program, one round")
    ns = ap.parse_args(argv)
    lines, rounds = (400, 1) if ns.quick else (ns.lines, max(1, ns.rounds))
    text = generate_program(lines)
    module = check_module(load_module(text, "<bench>"))
    exe = compile_module(module)
    print(f"program: {len(text.splitlines())} lines, {len(module.functions)} globals, "
          f"{sum(len(f.instructions) for f in exe.functions)} instructions")

    print("view 1: compile and execute flow")
    t, (stages, _) = best(lambda: compile_stages(module), rounds)
    line("pass stages (compile_stages, once per program)", t, f"{len(stages)} stages")
    ctx = ViewContext(module=module, exe=exe, source_text=text, source_file="<bench>")
    ctx._stages = stages
    total = 0.0
    model = None
    for i in range(len(FlowModel(ctx)) - 1):
        def build(i=i):
            m = FlowModel(ctx)
            return m, m.stage(i)
        t, (model, st) = best(build, rounds)
        total += t
        line(f"stage {st.name}", t, f"{len(st.lines)} lines, {len(st.items)} items")
    line("all stages", total)
    src = model.stage(0)
    origin = src.items[len(src.items) // 2].origin
    t, follow = best(lambda: model.follow(origin), rounds)
    line("one selection followed through every stage", t,
         f"{sum(len(sm.matches.all()) for sm in follow)} matches")

    print("view 3: control flow and matches")
    t, cfgs = best(lambda: [build_cfg(f, i) for i, f in enumerate(exe.functions)], rounds)
    line("basic blocks of every function", t, f"{sum(len(c.blocks) for c in cfgs)} blocks")
    final = stages[-1].module
    t, trees = best(lambda: [find_decision_trees(exe, i, final)
                             for i in range(len(exe.functions))], rounds)
    line("decision trees of every match", t, f"{sum(len(x) for x in trees)} matches")
    big = max(cfgs, key=lambda c: len(c.instructions))
    t, (rows, _) = best(lambda: draw_cfg(big, exe.function_names(), exe.kernel_names()), rounds)
    line(f"drawing @{big.name}'s CFG", t, f"{len(rows)} rows")

    print("view 2: VM against graph executor")
    from bench_graph import mlp_inputs, mlp_text

    from rvmdbg.views.executors import compare_executors
    mlp = check_module(load_module(mlp_text(64, 32), "<mlp>"))
    mexe = compile_module(mlp)
    t, cmp = best(lambda: compare_executors(mlp, mexe, mlp_inputs(64, 32)), rounds)
    line("compare_executors on a 3-layer MLP", t,
         f"{cmp.stream_total} dispatches, results equal: {cmp.results_equal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
