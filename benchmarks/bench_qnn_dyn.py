"""The quantized kernels and the dynamic-shape path, timed as the VM calls them.

qnn: `qnn.conv2d` on mobilenet-v1-like layers (uint8 data, int8 weights, per-channel kernel
scales) beside `nn.conv2d` in float32 on the same shapes, `qnn.dense` on a classifier and
`qnn.requantize` in both rounding modes on a conv output. dyn: one VM call of a program whose
output shapes come from a run-time tensor (`dyn.reshape`, `dyn.zeros`: a data-dependent shape
kernel and `alloc_tensor_reg` before each kernel) beside the same program with static shapes.

Figures only (best of `--repeats` runs each); the machine's load decides them. BLAS runs on
one thread unless the environment says otherwise.
Run: `python3 benchmarks/bench_qnn_dyn.py [--quick] [--repeats N]`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rvmdbg.relay.loader import load_module  # noqa: E402
from rvmdbg.relay.ops import OPS, normalize_attrs  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def best(fn, repeats: int) -> float:
    """The best wall time of fn() in milliseconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def conv_layers(quick: bool) -> list:
    """(name, in_channels, out_channels, spatial, kernel, groups) of mobilenet-v1-like layers."""
    if quick:
        return [("pw", 8, 16, 8, 1, 1), ("dw", 8, 8, 8, 3, 8), ("conv", 3, 8, 16, 3, 1)]
    return [("conv1 3x3/2", 3, 32, 224, 3, 1), ("dw 3x3", 64, 64, 112, 3, 64),
            ("pw 1x1", 64, 128, 56, 1, 1), ("pw 1x1", 512, 512, 14, 1, 1),
            ("dw 3x3", 512, 512, 14, 3, 512)]


def bench_qnn(quick: bool, repeats: int) -> None:
    rng = np.random.default_rng(0)
    print(f"{'qnn.conv2d layer':<28} {'qnn.conv2d ms':>14} {'nn.conv2d f32 ms':>17}")
    for name, cin, cout, size, k, groups in conv_layers(quick):
        stride = 2 if name.startswith("conv1") else 1
        x = rng.integers(0, 256, (1, cin, size, size)).astype("uint8")
        w = rng.integers(-128, 128, (cout, cin // groups, k, k)).astype("int8")
        attrs = {"strides": [stride, stride], "padding": [k // 2, k // 2], "groups": groups}
        qattrs = normalize_attrs("qnn.conv2d", attrs)
        fattrs = normalize_attrs("nn.conv2d", attrs)
        qargs = [x, w, np.array(128, "int32"), np.array(0, "int32"), np.array(0.02, "float32"),
                 rng.uniform(0.001, 0.01, cout).astype("float32")]
        fargs = [x.astype("float32"), w.astype("float32")]
        tq = best(lambda: OPS["qnn.conv2d"].kernel(qargs, qattrs), repeats)
        tf = best(lambda: OPS["nn.conv2d"].kernel(fargs, fattrs), repeats)
        label = f"{name} {cin}->{cout} @{size}"
        print(f"{label:<28} {tq:>14.2f} {tf:>17.2f}")

    units, features = (16, 32) if quick else (1000, 1024)
    x = rng.integers(0, 256, (1, features)).astype("uint8")
    w = rng.integers(-128, 128, (units, features)).astype("int8")
    dargs = [x, w, np.array(128, "int32"), np.array(0, "int32"), np.array(0.02, "float32"),
             np.array(0.01, "float32")]
    dattrs = normalize_attrs("qnn.dense", {})
    print(f"qnn.dense 1x{features} -> {units}: "
          f"{best(lambda: OPS['qnn.dense'].kernel(dargs, dattrs), repeats):.2f} ms")

    shape = (1, 8, 8, 8) if quick else (1, 64, 56, 56)
    acc = rng.integers(-50000, 50000, shape).astype("int32")
    for rounding in ("UPWARD", "TONEAREST"):
        attrs = normalize_attrs("qnn.requantize", {"rounding": rounding, "axis": 1})
        rargs = [acc, rng.uniform(1e-4, 1e-3, shape[1]).astype("float32"),
                 np.array(0, "int32"), np.array(0.05, "float32"), np.array(3, "int32")]
        t = best(lambda: OPS["qnn.requantize"].kernel(rargs, attrs), repeats)
        print(f"qnn.requantize {rounding:<9} per-channel {'x'.join(map(str, shape))}: "
              f"{t:.2f} ms")


DYNAMIC = """#[version = "0.0.5"]
def @main(%x: Tensor[(64, 64), float32], %s: Tensor[(2), int64]) {
  %0 = dyn.reshape(%x, %s);
  %1 = dyn.zeros(%s, dtype="float32");
  add(%0, %1)
}
"""

STATIC = """#[version = "0.0.5"]
def @main(%x: Tensor[(64, 64), float32], %s: Tensor[(2), int64]) {
  %0 = reshape(%x, newshape=[32, 128]);
  %1 = zeros(shape=[32, 128], dtype="float32");
  add(%0, %1)
}
"""


def bench_dyn(quick: bool, repeats: int) -> None:
    args = [np.ones((64, 64), "float32"), np.array([32, 128], "int64")]
    calls = 20 if quick else 500
    rows = []
    for label, text in (("static shapes", STATIC), ("dyn.reshape + dyn.zeros", DYNAMIC)):
        exe = compile_module(load_module(text, label))
        vm = VirtualMachine(exe)
        instructions = sum(len(f.instructions) for f in exe.functions)

        def run(vm=vm):
            for _ in range(calls):
                vm.invoke("main", args)
        rows.append((label, best(run, repeats) / calls * 1e3, instructions))
    print(f"{'VM call (64x64 -> 32x128)':<28} {'us per call':>12} {'instructions':>13}")
    for label, us, n in rows:
        print(f"{label:<28} {us:>12.1f} {n:>13}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    ap.add_argument("--repeats", type=int, default=5)
    ns = ap.parse_args()
    repeats = 1 if ns.quick else ns.repeats
    bench_qnn(ns.quick, repeats)
    print()
    bench_dyn(ns.quick, repeats)


if __name__ == "__main__":
    main()
