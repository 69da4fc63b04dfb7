"""Kernel times of the transformer and indexing operators at BERT-base sizes (sequence 128,
hidden 768, feed-forward 3072, 12 heads), and `programs/attention.relay` on the VM against the
reference interpreter.

Each figure is the best (shortest) of several repeats, since the machine's load varies; the
kernels are called directly (`OPS[name].kernel`), as the VM calls them. No targets are
asserted: the figures say where a transformer's time goes.

Run: `python3 benchmarks/bench_transformer_ops.py [--repeats R] [--quick]`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rvmdbg.relay.interpreter import Interpreter  # noqa: E402
from rvmdbg.relay.loader import load_module, program_default_args  # noqa: E402
from rvmdbg.relay.ops import OPS  # noqa: E402
from rvmdbg.args import parse_program_args  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def kernel_cases(seq: int, hidden: int, ffn: int, rng):
    f32 = np.float32
    x = rng.standard_normal((1, seq, hidden)).astype(f32)
    qkv = rng.standard_normal((1, seq, 3 * hidden)).astype(f32)
    h = rng.standard_normal((1, seq, ffn)).astype(f32)
    mean = x.mean(axis=-1, keepdims=True)
    ids = rng.integers(0, seq, (1, seq, hidden)).astype(np.int32)
    logits = rng.standard_normal((1, 30522 if hidden >= 768 else 1000)).astype(f32)
    image = rng.standard_normal((1, 64, 56 if hidden >= 768 else 8, 56 if hidden >= 768 else 8)
                                ).astype(f32)
    return [
        (f"erf {h.shape}", "erf", [h], {}),
        (f"strided_slice q of {qkv.shape}", "strided_slice", [qkv],
         {"begin": [0, 0, 0], "end": [1, seq, hidden], "strides": [1, 1, 1]}),
        (f"variance {x.shape} axis -1", "variance", [x, mean], {"axis": [-1], "keepdims": True}),
        (f"gather {x.shape} axis 1", "gather", [x, ids], {"axis": 1}),
        (f"topk k=5 of {logits.shape}", "topk", [logits], {"k": 5}),
        (f"cumsum {x.shape} axis 1", "cumsum", [x], {"axis": 1}),
        (f"logsumexp {logits.shape}", "logsumexp", [logits], {"axis": [1]}),
        (f"layout_transform NCHW->NCHW4c {image.shape}", "layout_transform", [image],
         {"src_layout": "NCHW", "dst_layout": "NCHW4c"}),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (smoke test)")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    seq, hidden, ffn = (8, 16, 32) if args.quick else (128, 768, 3072)
    rng = np.random.default_rng(0)
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    print(f"kernels (best of {repeats}):")
    for label, name, inputs, attrs in kernel_cases(seq, hidden, ffn, rng):
        op = OPS[name]
        t = best(lambda: op.kernel(inputs, attrs), repeats)
        print(f"  {label:<48} {t * 1000:9.2f} ms")
    path = ROOT / "programs" / "attention.relay"
    text = path.read_text()
    mod = load_module(text, path.name)
    exe = compile_module(mod)
    values = parse_program_args(mod, "main", program_default_args(text))
    vm = best(lambda: VirtualMachine(exe).invoke("main", values), repeats)
    interp = best(lambda: Interpreter(mod).run("main", values), repeats)
    print(f"programs/attention.relay (best of {repeats}):")
    print(f"  {'VM invoke':<48} {vm * 1000:9.2f} ms")
    print(f"  {'reference interpreter':<48} {interp * 1000:9.2f} ms")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
