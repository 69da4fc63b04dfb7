"""rvmdbg's Relax VM stepper against TVM's own VM on a small CNN, side by side in one run
(issue 31): the stepper's `continue` time, TVM's `vm["main"]` time, and the stepper's
overhead per instruction.

The CNN is written here in TVMScript (two conv2d + bias + relu + max-pool stages and a dense
layer; 1x3xSxS input, S=32, or 16 with --quick) and built with `relax.build(mod,
target="llvm")` after TVM's "zero" pipeline (legalize, fold constants, fuse), as
`--engine tvm` builds an ONNX model. Each figure is the best of R rounds:

- `TVM vm["main"]`: TVM's C++ dispatch loop running the same executable;
- `stepper run()`: `RelaxMachine.run()`, what `run` and a breakpoint-free `continue` do;
- `stepper in a session`: a new `DebugSession` and its `cont()`, the screen's `continue` (with the history's
  checkpoints and the journal of every in-place kernel write, for reverse stepping);
- the instruction count, and (stepper - TVM) / instructions: the overhead per instruction.

The results are checked equal (bit for bit) before any figure is printed.
Run: `python3 benchmarks/bench_relax.py [--rounds R] [--quick]`. Needs apache-tvm.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def cnn_source(size: int) -> str:
    s1 = size // 2
    s2 = s1 // 2
    return f"""# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, {size}, {size}), "float32"),
             w1: R.Tensor((8, 3, 3, 3), "float32"), b1: R.Tensor((1, 8, 1, 1), "float32"),
             w2: R.Tensor((16, 8, 3, 3), "float32"), b2: R.Tensor((1, 16, 1, 1), "float32"),
             wd: R.Tensor((10, {16 * s2 * s2}), "float32")):
        with R.dataflow():
            c1 = R.nn.conv2d(x, w1, padding=[1, 1, 1, 1])
            r1 = R.nn.relu(R.add(c1, b1))
            p1 = R.nn.max_pool2d(r1, pool_size=[2, 2], strides=[2, 2])
            c2 = R.nn.conv2d(p1, w2, padding=[1, 1, 1, 1])
            r2 = R.nn.relu(R.add(c2, b2))
            p2 = R.nn.max_pool2d(r2, pool_size=[2, 2], strides=[2, 2])
            f = R.reshape(p2, R.shape([1, {16 * s2 * s2}]))
            y = R.matmul(f, R.permute_dims(wd, [1, 0]))
            z = R.nn.softmax(y, axis=1)
            R.output(z)
        return z
"""


def inputs(size: int) -> list:
    rng = np.random.default_rng(0)
    s2 = size // 4
    shapes = [(1, 3, size, size), (8, 3, 3, 3), (1, 8, 1, 1), (16, 8, 3, 3), (1, 16, 1, 1),
              (10, 16 * s2 * s2)]
    return [rng.standard_normal(s).astype("float32") * 0.3 for s in shapes]


def best(fn, rounds: int) -> float:
    out = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="a 16x16 input, 2 rounds")
    ns = ap.parse_args()
    size, rounds = (16, 2) if ns.quick else (32, max(1, ns.rounds))
    try:
        import tvm
        from tvm import relax
    except ImportError:
        print("bench_relax: apache-tvm is not installed (pip install 'rvmdbg[tvm]'): skipped")
        return
    from rvmdbg.debug import DebugSession
    from rvmdbg.relax.executable import from_tvm
    from rvmdbg.relax.machine import to_host

    t = time.perf_counter()
    mod = tvm.script.from_source(cnn_source(size))
    tvm_exe = relax.build(relax.get_pipeline("zero")(mod), target="llvm")
    build_s = time.perf_counter() - t
    exe = from_tvm(tvm_exe)
    args = inputs(size)
    vm = relax.VirtualMachine(tvm_exe, tvm.cpu())
    dev_args = [tvm.runtime.tensor(a) for a in args]

    m = exe.machine()
    m.start("main", args)
    ours = to_host(m.run())
    steps = m.steps
    theirs = vm["main"](*dev_args).numpy()
    assert np.array_equal(ours, theirs), "the stepper's result differs from TVM's"

    def stepper():
        m.start("main", args)
        m.run()

    def session():
        DebugSession(exe, args).cont()

    t_tvm = best(lambda: vm["main"](*dev_args), rounds)
    t_run = best(stepper, rounds)
    t_ses = best(session, rounds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"small CNN 1x3x{size}x{size}: {steps} instructions, built in {build_s:.2f} s "
          f"(load average {load:.2f}, best of {rounds})")
    label = 'TVM vm["main"]'
    print(f"  {label:<42}{t_tvm * 1e3:10.3f} ms")
    for label, t in (("stepper run()", t_run), ("stepper in a session (opened + continue)", t_ses)):
        per = (t - t_tvm) / steps * 1e6
        print(f"  {label:<42}{t * 1e3:10.3f} ms   {t / t_tvm:6.1f}x TVM   "
              f"overhead {per:8.1f} us/instruction")
    print("  results: bit-identical")


if __name__ == "__main__":
    main()
