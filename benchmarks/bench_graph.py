"""The Relay VM against the static graph executor on the same MLP, at several sizes, in one run.

The workload is a generated three-layer perceptron (`mlp_text(batch, hidden)`):
`dense -> bias_add -> relu -> dense -> bias_add -> relu -> dense -> bias_add -> softmax`, with
`batch` rows of `hidden` features and 10 classes. FuseOps makes it four kernels, and both
executors run the very same kernel callables (`rvmdbg.vm.kernels.compile_kernel`), so what
differs is everything around them:

- the VM (`rvmdbg.vm.compiler.compile_module`, `VirtualMachine.invoke`) executes bytecode:
  `load_const`, `alloc_storage`, `alloc_tensor`, `invoke_packed`, `kill_register`, `ret`;
- the graph executor (`rvmdbg.graph`) calls the kernels in node order and copies each output
  into its planned block of a pool allocated once; it reads the inputs in place (TVM's
  `set_input_zero_copy`) and copies the result out (TVM's `get_output`).

Columns: time per run of each (best of several rounds, each timing enough runs to last
~50 ms); their ratio; the graph's kernel dispatches; the VM's instructions executed (and how
many were `invoke_packed`); the time inside kernels in a VM run (kernels wrapped with a timer
in a separate, profiled VM); and the VM's dispatch overhead per instruction: (VM time - time
in kernels) / instructions, both measured in the same profiled runs. The graph's overhead
per kernel dispatch is computed the same way (it includes the output copies). The last
column is the memory plan for kernel outputs: the pool's bytes against one buffer each.
Figures only, no targets: the machine's load decides them. BLAS runs on one thread (set
before NumPy loads, unless the environment says otherwise).

Run: `python3 benchmarks/bench_graph.py [--rounds R] [--quick]`.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

# One BLAS thread: on a shared machine, idle BLAS threads spinning against other processes
# turn a 50 us matrix product into milliseconds, and both executors use the same kernels.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable as a plain script from a checkout

from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory  # noqa: E402
from rvmdbg.relay.loader import load_module  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

CLASSES = 10
SIZES = [(16, 1), (16, 32), (64, 1), (64, 32), (256, 1), (256, 32), (1024, 1), (1024, 32)]
QUICK_SIZES = [(16, 1), (64, 32)]
MIN_JOB_SECONDS = 0.05


def _tensor(*dims) -> str:
    comma = "," if len(dims) == 1 else ""
    return f"Tensor[({', '.join(map(str, dims))}{comma}), float32]"


def mlp_text(batch: int, hidden: int) -> str:
    """A three-layer perceptron over Tensor[(batch, hidden)] with CLASSES outputs."""
    t = _tensor
    params = (f"%x: {t(batch, hidden)}, %w1: {t(hidden, hidden)}, %b1: {t(hidden)}, "
              f"%w2: {t(hidden, hidden)}, %b2: {t(hidden)}, %w3: {t(CLASSES, hidden)}, "
              f"%b3: {t(CLASSES)}")
    return f"""#[version = "0.0.5"]
def @main({params}) -> {t(batch, CLASSES)} {{
  %0 = nn.relu(nn.bias_add(nn.dense(%x, %w1, units={hidden}), %b1));
  %1 = nn.relu(nn.bias_add(nn.dense(%0, %w2, units={hidden}), %b2));
  %2 = nn.bias_add(nn.dense(%1, %w3, units={CLASSES}), %b3);
  nn.softmax(%2)
}}
"""


def mlp_inputs(batch: int, hidden: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(hidden)

    def arr(*shape, s=1.0):
        return (rng.standard_normal(shape) * s).astype(np.float32)
    return [arr(batch, hidden), arr(hidden, hidden, s=scale), arr(hidden, s=0.1),
            arr(hidden, hidden, s=scale), arr(hidden, s=0.1), arr(CLASSES, hidden, s=scale),
            arr(CLASSES, s=0.1)]


def per_run_seconds(job, rounds: int) -> float:
    """Best time of one run: each round times enough back-to-back runs to last ~50 ms."""
    job()  # warm up (kernel caches, first-run checks)
    t0 = time.perf_counter()
    job()
    once = max(time.perf_counter() - t0, 1e-7)
    n = max(1, int(MIN_JOB_SECONDS / once))
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(n):
            job()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _profiled_rounds(run_once, kernel_time, rounds: int, runs: int) -> tuple[float, float]:
    """(seconds per run, of which in kernels) from the round with the shortest total: the
    kernel timers run inside the same runs whose total is measured, so the difference is the
    time spent outside kernels (timer cost included, ~0.1 us per kernel call)."""
    best = (float("inf"), 0.0)
    for _ in range(rounds):
        gc.collect()
        kernel_time(reset=True)
        t0 = time.perf_counter()
        for _ in range(runs):
            run_once()
        total = (time.perf_counter() - t0) / runs
        if total < best[0]:
            best = (total, kernel_time() / runs)
    return best


def vm_profile(mod, args, rounds: int, runs: int) -> tuple[float, float]:
    """A VM whose kernels carry a timer: (seconds per run, of which in kernels)."""
    exe = compile_module(mod)
    spent = [0.0]
    clock = time.perf_counter
    for kernel in exe.kernels:
        if kernel.impl is None or kernel.builtin:
            continue

        def timed(inputs, _impl=kernel.impl):
            t0 = clock()
            out = _impl(inputs)
            spent[0] += clock() - t0
            return out
        kernel.impl = timed
    vm = VirtualMachine(exe)
    vm.invoke("main", args)

    def kernel_time(reset=False):
        if reset:
            spent[0] = 0.0
        return spent[0]
    return _profiled_rounds(lambda: vm.invoke("main", args), kernel_time, rounds, runs)


def graph_profile(ex: GraphExecutor, args, rounds: int, runs: int) -> tuple[float, float]:
    spent = [0.0]

    def run_once():
        ex.run(args, profile=True)
        spent[0] += ex.stats.kernel_seconds

    def kernel_time(reset=False):
        if reset:
            spent[0] = 0.0
        return spent[0]
    return _profiled_rounds(run_once, kernel_time, rounds, runs)


def measure(hidden: int, batch: int, rounds: int) -> dict:
    mod = check_module(load_module(mlp_text(batch, hidden), f"<mlp {hidden}x{batch}>"))
    args = mlp_inputs(batch, hidden)
    graph = lower_to_graph(mod)
    plan = plan_memory(graph)
    ex = GraphExecutor(graph, plan)
    vm = VirtualMachine(compile_module(mod))

    graph_out = ex.run(args)
    vm_out = vm.invoke("main", args)
    if not np.allclose(graph_out, vm_out, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"hidden {hidden} batch {batch}: the executors disagree")
    instructions = vm.steps
    packed = sum(1 for f in vm.exe.functions for ins in f.instructions
                 if type(ins).__name__ == "InvokePacked")

    # interleave the two so both see the same spells of machine load
    graph_t = vm_t = float("inf")
    for _ in range(rounds):
        graph_t = min(graph_t, per_run_seconds(lambda: ex.run(args), 1))
        vm_t = min(vm_t, per_run_seconds(lambda: vm.invoke("main", args), 1))
    runs = max(3, int(MIN_JOB_SECONDS / max(vm_t, 1e-7)))
    vm_total, vm_k = vm_profile(mod, args, rounds, runs)
    graph_total, graph_k = graph_profile(ex, args, rounds, runs)
    return {
        "hidden": hidden, "batch": batch, "graph": graph_t, "vm": vm_t,
        "dispatches": ex.stats.dispatches, "instructions": instructions, "packed": packed,
        "vm_kernel": vm_k, "graph_kernel": graph_k,
        "vm_overhead": (vm_total - vm_k) / instructions,
        "graph_overhead": (graph_total - graph_k) / max(1, ex.stats.dispatches),
        "pool": plan.intermediate_bytes()[0], "tensors": plan.intermediate_bytes()[1],
    }


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def print_table(rows: list, rounds: int) -> None:
    head = (f"{'hidden':>6} {'batch':>5} | {'graph us/run':>12} {'VM us/run':>10} "
            f"{'VM/graph':>8} | {'graph disp':>10} {'VM instr (packed)':>17} | "
            f"{'VM kernel us':>12} {'VM ovh ns/instr':>15} {'graph ovh ns/disp':>17} | "
            f"{'kernel outputs: pool / tensors':>30}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['hidden']:>6} {r['batch']:>5} | {_us(r['graph']):>12} {_us(r['vm']):>10} "
              f"{r['vm'] / r['graph']:>7.2f}x | {r['dispatches']:>10} "
              f"{r['instructions']:>11} ({r['packed']:>2}) | {_us(r['vm_kernel']):>12} "
              f"{r['vm_overhead'] * 1e9:>15,.0f} {r['graph_overhead'] * 1e9:>17,.0f} | "
              f"{r['pool']:>18,} / {r['tensors']:>9,}")
    print()
    print(f"best of {rounds} rounds per figure; us = microseconds; ovh = time outside kernels "
          f"divided by VM instructions executed (VM) or kernel dispatches (graph; it includes "
          f"the per-run input binding and result copy); the last column is the memory plan's "
          f"bytes for kernel outputs against one buffer per output")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds per figure (best kept)")
    ap.add_argument("--quick", action="store_true",
                    help="two small sizes and one round (a smoke run, not a measurement)")
    ns = ap.parse_args(argv)
    sizes = QUICK_SIZES if ns.quick else SIZES
    rounds = 1 if ns.quick else max(1, ns.rounds)
    print("MLP (3 dense layers + softmax, 10 classes): Relay VM vs static graph executor")
    print()
    rows = [measure(hidden, batch, rounds) for hidden, batch in sizes]
    print_table(rows, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
