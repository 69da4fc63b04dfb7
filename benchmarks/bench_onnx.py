"""The nine model-zoo networks the `onnx` package ships, on rvmdbg's VM beside onnxruntime
(issue 26, "Speed"), side by side in one run.

For each network (`onnx/backend/test/data/light`, an all-ones input of batch 1) it prints:
- `import+check+compile`: `rvmdbg.onnx.import_model` + `check_module` + `compile_module`,
  the first time in the process (target for ResNet-50: under 1 s), and `again`: the best of
  the later builds (which reuse the kernels built for the same source text);
- `VM run`: `VirtualMachine.invoke` on a VM made once (best of R, after a warm-up run);
- `onnxruntime`: `InferenceSession.run` on the CPU provider with 2 intra-op threads (best of
  R), and `VM/ort` (target: within 3x on every network);
- `kernels direct`: the very kernel callables the VM invoked, in order, with the same inputs,
  from a plain Python loop (as `bench_models.py`), and `VM/direct` (target: within 1.10x).

Both engines get the same threads: onnxruntime `--threads N` intra-op threads (default 2),
NumPy's BLAS `--blas-threads N` (default: what the VM uses when a user runs it, rvmdbg's
`--threads` default, `min(2, cores)` or 1 on a loaded machine). The rounds interleave the
three measurements (VM, kernels direct, onnxruntime), each after a pause that lets the other
engine's idle threads stop spinning (OpenBLAS's and onnxruntime's pools both spin a while
after their last job), so all three run under the same conditions; each figure is the best of
its R rounds. onnxruntime
is a benchmark-only dependency (`pip install rvmdbg[bench]`), imported here only; without it
its columns say so.

Run: `python3 benchmarks/bench_onnx.py [--rounds R] [--quick] [--models a,b] [--threads N]
[--blas-threads N]`.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable as a plain script from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _blas_threads(argv) -> str:
    for i, a in enumerate(argv):
        if a == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--blas-threads="):
            return a.split("=", 1)[1]
    from rvmdbg.threads import default_threads  # no NumPy behind it
    return str(default_threads())


# set before NumPy loads its BLAS: the thread count is read once, at import
BLAS_THREADS = _blas_threads(sys.argv[1:])
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = BLAS_THREADS


import numpy as np  # noqa: E402

from bench_models import direct_loop, kernel_calls  # noqa: E402
from rvmdbg.onnx import networks  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

TARGETS = {"resnet50_load": 1.0, "vs_ort": 3.0, "vm_vs_direct": 1.10}
QUICK = ("squeezenet",)


PAUSE = 0.15  # s before each timed run: the other engine's idle pool stops spinning


def _best(fn, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _interleaved(fns: dict, rounds: int, pause: float = PAUSE) -> dict:
    """The best time of each callable over `rounds` rounds, the callables taken in turn within
    a round, each after `pause` seconds idle (so none runs against another's spinning
    threads, and all see the same machine)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            time.sleep(pause)
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _first_line(e: Exception) -> str:
    text = getattr(e, "message", None) or str(e)
    return (text.strip().splitlines() or [type(e).__name__])[0][:150]


def ort_session(path: str, threads: int):
    """An onnxruntime session on the CPU provider with `threads` intra-op threads, or the
    reason there is none."""
    try:
        import onnxruntime as ort  # benchmark-only dependency
    except ImportError:
        return None, "onnxruntime is not installed (pip install rvmdbg[bench])"
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3  # not its warnings about unused initializers
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"]), None


def measure(net, rounds: int, threads: int) -> dict:
    row = {"model": net.name.split("/", 1)[1]}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        model, feeds, expected = networks.load(net)
        try:
            # the first build is what a user waits for; later ones reuse caches (kernels
            # built for the same source text), so they are shown apart
            t0 = time.perf_counter()
            imp, mod, exe = networks.build(model)
            row["load"] = time.perf_counter() - t0
            if rounds > 1:
                row["load_again"] = _best(lambda: networks.build(model), rounds - 1)
        except Exception as e:  # noqa: BLE001 (a missing converter is a figure we report)
            row["error"] = _first_line(e)
            return row
        args = [feeds[n] for n in imp.inputs]
        vm = VirtualMachine(exe)
        vm.invoke("main", list(args))  # warm-up: lazily built kernels, first-touch memory
        calls = kernel_calls(exe, args)
        row["calls"] = len(calls)
        timed = {"vm": lambda: vm.invoke("main", list(args)),
                 "direct": lambda: direct_loop(calls)}
        sess, why = ort_session(net.path, threads)
        if sess is None:
            row["ort_error"] = why
        else:
            ort_feeds = dict(feeds)
            sess.run(None, ort_feeds)
            timed["ort"] = lambda: sess.run(None, ort_feeds)
        row.update(_interleaved(timed, rounds))
    return row


def _secs(v) -> str:
    return "-" if v is None else f"{v:.3f} s" if v >= 0.1 else f"{v * 1e3:.1f} ms"


def report(rows: list) -> None:
    head = (f"{'network':<16} {'import+check+compile':>21} {'again':>9} {'VM run':>10} "
            f"{'onnxruntime':>12} "
            f"{'VM/ort':>7} {'kernels direct':>15} {'VM/direct':>9} {'calls':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['model']:<16} not measured: {r['error']}")
            continue
        vs_ort = f"{r['vm'] / r['ort']:.1f}x" if r.get("ort") else "-"
        vs_direct = f"{r['vm'] / r['direct']:.2f}x" if r.get("direct") else "-"
        print(f"{r['model']:<16} {_secs(r['load']):>21} {_secs(r.get('load_again')):>9} "
              f"{_secs(r['vm']):>10} "
              f"{_secs(r.get('ort')):>12} {vs_ort:>7} {_secs(r['direct']):>15} "
              f"{vs_direct:>9} {r['calls']:>6}")
    why = next((r["ort_error"] for r in rows if "ort_error" in r), None)
    if why:
        print(f"onnxruntime: {why}")
    print(f"targets: import+check+compile of resnet50 < {TARGETS['resnet50_load']} s; VM within "
          f"{TARGETS['vs_ort']:.0f}x of onnxruntime; VM within {TARGETS['vm_vs_direct']:.2f}x "
          "of the kernels called directly")


def light_networks(ap, names=None) -> list:
    """The model-zoo networks of `backend/test/data/light` named (default: all nine), or the
    parser's error naming an unknown one."""
    light = {n.name.split("/", 1)[1]: n for n in networks.networks() if n.light}
    for name in names or ():
        if name not in light:
            ap.error(f"unknown network {name!r}; from: {', '.join(light)}")
    return [light[name] for name in names] if names else list(light.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="best of R runs (default 3)")
    ap.add_argument("--quick", action="store_true",
                    help="SqueezeNet only, one round (a smoke run)")
    ap.add_argument("--models", help="comma-separated network names (default: all nine)")
    ap.add_argument("--threads", type=int, default=2,
                    help="onnxruntime's intra-op threads (default 2)")
    ap.add_argument("--blas-threads", type=int, default=int(BLAS_THREADS),
                    help="NumPy's BLAS threads for the VM (default: rvmdbg's --threads "
                         "default)")
    ns = ap.parse_args(argv)
    rounds = 1 if ns.quick else max(1, ns.rounds)
    nets = light_networks(ap, QUICK if ns.quick else ns.models.split(",") if ns.models else None)
    print(f"load average before: {os.getloadavg()[0]:.2f}; onnxruntime threads: {ns.threads}, BLAS threads: "
          f"{ns.blas_threads}")
    rows = [measure(net, rounds, ns.threads) for net in nets]
    report(rows)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
