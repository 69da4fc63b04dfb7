"""Loading a model printed by TVM with its weights in `#[metadata]`: read, decode, check.

Generates a program in TVM's printed form (graph bindings, `/* ty=... */` comments, weights as
`meta[relay.Constant][i]`) whose float32 weights are about as many as a mobilenet-v1's (4.2M,
a ~20 MB file: the base64 of the tensors is nearly all of it), writes it to a temporary file,
and times the path every command takes: `load_file` (read, split the section off, decode the
JSON and the base64 into NumPy arrays, parse the program) and `check_module`. Each figure is
the best of `--repeats` runs. The peak resident memory is printed beside the file size and the
bytes of weights, so holding the text or the arrays twice would show.

Run: `python3 benchmarks/bench_metadata.py [--weights N] [--repeats R] [--quick]`.
Target: load + check under 2 s for the 20 MB file.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rvmdbg.relay.loader import load_file, load_module  # noqa: E402
from rvmdbg.relay.metadata import metadata_text  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402

TARGET_SECONDS = 2.0
MOBILENET_WEIGHTS = 4_200_000


def generate_model(weights: int, width: int = 512) -> str:
    """A dense network printed as TVM prints it, with about `weights` float32 weights."""
    layers = max(1, weights // (width * width))
    rng = np.random.default_rng(0)
    lines = ['#[version = "0.0.5"]',
             f"def @main(%data: Tensor[(1, {width}), float32]) -> Tensor[(1, {width}), float32] {{"]
    constants = []
    prev = "%data"
    ty = f"/* ty=Tensor[(1, {width}), float32] */"
    for i in range(layers):
        w, b = 2 * i, 2 * i + 1
        constants.append(rng.standard_normal((width, width), dtype=np.float32) * 0.05)
        constants.append(rng.standard_normal(width, dtype=np.float32) * 0.01)
        lines.append(f"  %{3 * i} = nn.dense({prev}, meta[relay.Constant][{w}] "
                     f"/* ty=Tensor[({width}, {width}), float32] */, units={width}) {ty};")
        lines.append(f"  %{3 * i + 1} = nn.bias_add(%{3 * i}, meta[relay.Constant][{b}] "
                     f"/* ty=Tensor[({width}), float32] */) {ty};")
        if i + 1 < layers:
            lines.append(f"  %{3 * i + 2} = nn.relu(%{3 * i + 1}) {ty};")
            prev = f"%{3 * i + 2}"
        else:
            lines.append(f"  nn.softmax(%{3 * i + 1}) {ty}")
    lines.append("}")
    lines.append("#[metadata]")
    return "\n".join(lines) + "\n" + metadata_text(constants) + "\n"


def _constants(mod):
    """The distinct tensor constants of a module."""
    from rvmdbg.relay.ast import ExprVisitor
    seen: dict = {}

    class _Find(ExprVisitor):
        def visit_Constant(self, e):
            seen[id(e.data)] = e.data

    for f in mod.functions.values():
        _Find().visit(f)
    return [a for a in seen.values() if a.ndim]


def _best(fn, repeats: int):
    """(shortest time, last result) over `repeats` runs, each after freeing the last."""
    best = None
    out = None
    for _ in range(repeats):
        out = None  # noqa: F841  (the previous module is freed before the next run)
        gc.collect()
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", type=int, default=MOBILENET_WEIGHTS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny model, one round (smoke test)")
    ns = ap.parse_args(argv)
    if ns.quick:
        ns.weights, ns.repeats = 2 * 64 * 64, 1
    width = 64 if ns.quick else 512
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.relay"
        t = time.perf_counter()
        path.write_text(generate_model(ns.weights, width))
        gen = time.perf_counter() - t
        size = path.stat().st_size
        check_module(load_file(path))  # warm-up: lazy imports, the prelude's first parse
        load_s, mod = _best(lambda: load_file(path), ns.repeats)
        check_s = None
        for _ in range(ns.repeats):
            mod = None
            gc.collect()
            fresh = load_file(path)
            t = time.perf_counter()
            mod = check_module(fresh)
            dt = time.perf_counter() - t
            check_s = dt if check_s is None else min(check_s, dt)
            fresh = None
        mod = None
        both_s, mod = _best(lambda: check_module(load_file(path)), ns.repeats)
        mod = None
        gc.collect()
        tracemalloc.start()
        mod = check_module(load_file(path))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        mod = None
        text = path.read_text(encoding="utf-8")
        gc.collect()
        tracemalloc.start()
        mod = check_module(load_module(text, str(path)))
        parse_peak, kept = tracemalloc.get_traced_memory()[1], tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        text = None
        weights = sum(c.size for c in _constants(mod))
        weight_bytes = weights * 4
        tables = len(mod.functions["main"].checked_type.params)
    print(f"model: {weights:,} float32 weights ({weight_bytes / 1e6:.1f} MB), "
          f"file {size / 1e6:.1f} MB, generated in {gen:.2f} s ({tables} input)")
    print(f"load_file (split, JSON, base64, parse)   {load_s:7.3f} s")
    print(f"check_module                             {check_s:7.3f} s")
    print(f"load + check, best of {ns.repeats}                   {both_s:7.3f} s   "
          f"target: under {TARGET_SECONDS:.1f} s")
    print(f"peak memory allocated by load + check: {peak / 1e6:.1f} MB "
          f"(file {size / 1e6:.1f} MB of text, weights {weight_bytes / 1e6:.1f} MB)")
    print(f"  of which decoding and checking, the text already read: peak {parse_peak / 1e6:.1f} MB, "
          f"kept {kept / 1e6:.1f} MB (the base64 is never copied whole)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
