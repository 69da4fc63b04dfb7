"""What compiled kernels would buy on issue 26's last target: a network on the VM with its
NumPy kernels, the same VM with some fused kernels built by TVM 0.27 instead, and onnxruntime,
side by side in one run. A measurement for a decision, not a feature: rvmdbg's Relay VM runs
NumPy kernels, and with them ShuffleNet stays near 4x of onnxruntime (bench_onnx.py).

Each primitive function whose operators are all in `LOWER` (depthwise conv2d, the elementwise
and broadcast operators, relu, pooling, reshape, transpose) and whose tensors are float32 of
static shape is lowered to TVM's tensor expressions through topi, TVM's own operator library
(the computes TVM's Relay build used), and compiled with TVM's LLVM backend for `--mcpu`
with no schedule (no tuning, one thread). The VM then calls it in place of the NumPy kernel.
Other kernels (the convolutions that run as BLAS products among them) keep NumPy.

TVM's kernels read 64-byte aligned memory (a misaligned input crashed the process): inputs
NumPy made elsewhere are copied to aligned buffers first, counted in `copies`; constants are
copied once. Every substituted kernel is checked against its NumPy kernel on the run's real
inputs (`max |diff|`: TVM's LLVM code may fuse a multiply and an add, so the last bits
differ), and the network's output against the output the `onnx` package ships.

Run: `python3 benchmarks/bench_tvm_kernels.py [--models shufflenet,squeezenet] [--rounds R]
[--mcpu CPU] [--quick]`. Needs `apache-tvm` (the `tvm` extra) and, for its column,
onnxruntime (the `bench` extra).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_onnx import (BLAS_THREADS, _interleaved, light_networks,  # noqa: E402
                        ort_session)   # (imported first: it sets NumPy's BLAS threads)
import numpy as np  # noqa: E402

from bench_models import kernel_calls  # noqa: E402
from rvmdbg.onnx import networks  # noqa: E402
from rvmdbg.relay.ast import Call  # noqa: E402
from rvmdbg.relay.types import TensorType  # noqa: E402
from rvmdbg.vm.kernels import parse_primitive  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

QUICK = ("shufflenet",)
ALIGN = 64


def _ints(v) -> list:
    return [int(x) for x in v]


def _conv2d(topi, args, attrs, types):
    data, weight = args
    c = types[0].shape[1]
    if (attrs.get("groups") != c or types[1].shape[1] != 1 or types[1].shape[0] != c
            or attrs.get("data_layout", "NCHW") != "NCHW"
            or attrs.get("kernel_layout", "OIHW") != "OIHW" or attrs.get("out_dtype")):
        return None   # not depthwise: BLAS products stay NumPy's
    return topi.nn.depthwise_conv2d_nchw(data, weight, _ints(attrs["strides"]),
                                         _ints(attrs["padding"]), _ints(attrs["dilation"]))


def _pool(kind):
    def lower(topi, args, attrs, types):
        if attrs.get("layout", "NCHW") != "NCHW":
            return None
        return topi.nn.pool2d(args[0], _ints(attrs["pool_size"]), _ints(attrs["strides"]),
                              _ints(attrs["dilation"]), _ints(attrs["padding"]), kind,
                              bool(attrs["ceil_mode"]), "NCHW",
                              bool(attrs.get("count_include_pad", False)))
    return lower


# Relay operator -> its topi compute, as TVM's Relay strategies called it (None: not lowered)
LOWER = {
    "nn.conv2d": _conv2d,
    "add": lambda topi, a, attrs, t: topi.add(*a),
    "subtract": lambda topi, a, attrs, t: topi.subtract(*a),
    "multiply": lambda topi, a, attrs, t: topi.multiply(*a),
    "nn.relu": lambda topi, a, attrs, t: topi.nn.relu(a[0]),
    "nn.bias_add": lambda topi, a, attrs, t: topi.nn.bias_add(a[0], a[1], int(attrs["axis"])),
    "nn.max_pool2d": _pool("max"),
    "nn.avg_pool2d": _pool("avg"),
    "reshape": lambda topi, a, attrs, t: topi.reshape(a[0], _ints(t[-1].shape)),
    "transpose": lambda topi, a, attrs, t: topi.transpose(a[0], _ints(attrs["axes"])
                                                          if attrs["axes"] else None),
}


def _static_f32(t) -> bool:
    return (isinstance(t, TensorType) and t.dtype == "float32"
            and all(type(d) is int for d in t.shape))


def lower(source: str, tvm, te, topi):
    """The primitive function's TE (params, result), or None when an operator, a dtype or a
    shape is outside what this benchmark lowers."""
    fn = parse_primitive(source)
    if not all(_static_f32(p.checked_type) for p in fn.params):
        return None
    made = {}
    params = []
    for p in fn.params:
        made[p] = te.placeholder(tuple(p.checked_type.shape), "float32", name=p.name)
        params.append(made[p])

    def visit(e):
        if e in made:
            return made[e]
        if not isinstance(e, Call):   # a constant, a tuple, ...: not lowered here
            raise LookupError
        rule = LOWER.get(getattr(e.op, "name", None))
        if rule is None or not _static_f32(e.checked_type):
            raise LookupError
        args = [visit(a) for a in e.args]
        out = rule(topi, args, e.attrs, [a.checked_type for a in e.args] + [e.checked_type])
        if out is None:
            raise LookupError
        made[e] = out
        return out

    try:
        result = visit(fn.body)
    except LookupError:
        return None
    return params, result


def aligned_empty(shape, dtype=np.float32) -> np.ndarray:
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.empty(nbytes + ALIGN, np.uint8)
    at = (-buf.ctypes.data) % ALIGN
    return buf[at:at + nbytes].view(dtype).reshape(shape)


def aligned(a: np.ndarray) -> np.ndarray:
    out = aligned_empty(a.shape, a.dtype)
    out[...] = a
    return out


class Compiled:
    """A TVM-built kernel in the VM's calling convention (a list of arrays in, one out)."""

    copies = 0

    def __init__(self, fn, out_shape, tvm_ffi):
        self.fn, self.out_shape, self.ffi = fn, out_shape, tvm_ffi
        self.held: dict = {}   # id -> aligned copy, for constants (the same array every run)

    def __call__(self, inputs):
        ffi = self.ffi
        args = []
        for a in inputs:
            if not a.flags.writeable:   # a constant (DLPack cannot export it): copied once
                hit = self.held.get(id(a))
                if hit is None or hit[0] is not a:
                    if len(self.held) > 64:
                        self.held.clear()
                    hit = self.held[id(a)] = (a, aligned(a))
                a = hit[1]
            elif a.ctypes.data % ALIGN or not a.flags.c_contiguous:
                Compiled.copies += 1
                a = aligned(a)
            args.append(ffi.from_dlpack(a))
        out = aligned_empty(self.out_shape)
        self.fn(*args, ffi.from_dlpack(out))
        return out


def substitute(exe, mcpu: str):
    """Build every kernel `lower` takes with TVM; returns {kernel name: Compiled}, seconds."""
    import tvm
    import tvm_ffi
    from tvm import te, topi
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    built, t0 = {}, time.perf_counter()
    for k in exe.kernels:
        if k.builtin or k.impl is None or k.num_outputs != 1:
            continue
        lowered = lower(k.source, tvm, te, topi)
        if lowered is None:
            continue
        params, result = lowered
        mod = tvm.compile(te.create_prim_func([*params, result]), target=target)
        built[k.name] = Compiled(mod["main"], tuple(int(d) for d in result.shape), tvm_ffi)
    return built, time.perf_counter() - t0


def measure(net, rounds: int, mcpu: str, threads: int) -> dict:
    row = {"model": net.name.split("/", 1)[1]}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        model, feeds, expected = networks.load(net)
        imp, mod, exe = networks.build(model)
        args = [feeds[n] for n in imp.inputs]
        numpy_impls = {k.name: k.impl for k in exe.kernels}
        vm = VirtualMachine(exe)
        vm.invoke("main", list(args))   # warm-up: kernels built lazily, memory first touched
        calls = kernel_calls(exe, args)
        built, row["compile"] = substitute(exe, mcpu)
        names = {id(k.impl): k.name for k in exe.kernels}
        # each substituted kernel against its NumPy kernel, on this run's inputs
        diff = 0.0
        for impl, inputs in calls:
            name = names.get(id(impl))
            if name in built:
                ref = impl(inputs)
                diff = max(diff, float(np.abs(built[name](inputs) - ref).max()))
        row["diff"] = diff
        row["kernels"], row["calls"] = len(built), len(calls)
        row["calls_tvm"] = sum(names.get(id(impl)) in built for impl, _ in calls)
        # the VM reads each kernel's callable when it first runs it: each timed run sets
        # the callables it is to use first
        def use(impls):
            for k in exe.kernels:
                k.impl = impls.get(k.name, numpy_impls[k.name])

        use(built)
        vm_tvm = VirtualMachine(exe)
        got = vm_tvm.invoke("main", list(args))
        row["vs_shipped"] = (networks.compare([np.asarray(got)], expected, networks.TOLERANCE)
                             or "matches the shipped output")
        Compiled.copies = 0
        vm_tvm.invoke("main", list(args))
        row["copies"] = Compiled.copies
        use({})

        def numpy_run():
            use({})
            vm.invoke("main", list(args))

        def tvm_run():
            use(built)
            vm_tvm.invoke("main", list(args))

        timed = {"numpy": numpy_run, "tvm": tvm_run}
        sess, why = ort_session(net.path, threads)
        row["ort_error"] = why
        if sess is not None:
            sess.run(None, dict(feeds))
            timed["ort"] = lambda: sess.run(None, dict(feeds))
        row.update(_interleaved(timed, rounds))
        use({})
    return row


def _ms(v) -> str:
    return "-" if v is None else f"{v * 1e3:.1f} ms"


def _ratio(a, ort) -> str:
    return f"{a / ort:.1f}x" if ort else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", help="comma-separated network names (default: shufflenet)")
    ap.add_argument("--rounds", type=int, default=5, help="best of R runs (default 5)")
    ap.add_argument("--mcpu", default=None,
                    help="LLVM's CPU for TVM's kernels (default: the host's, as LLVM names it)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime's threads (default 2)")
    ap.add_argument("--quick", action="store_true", help="ShuffleNet, one round (a smoke run)")
    ns = ap.parse_args(argv)
    try:
        import tvm
    except ImportError:
        print("TVM is not installed (pip install rvmdbg[tvm]): nothing to measure")
        return 0
    mcpu = ns.mcpu or tvm.target.codegen.llvm_get_system_cpu()
    nets = light_networks(ap, QUICK if ns.quick or not ns.models else ns.models.split(","))
    rounds = 1 if ns.quick else max(1, ns.rounds)
    print(f"TVM {tvm.__version__}, LLVM CPU {mcpu}; BLAS threads {BLAS_THREADS}, onnxruntime "
          f"threads {ns.threads}; load average {os.getloadavg()[0]:.2f}")
    head = (f"{'network':<12} {'TVM-built':>10} {'build':>9} {'VM NumPy':>10} {'VM +TVM':>9} "
            f"{'onnxruntime':>12} {'NumPy/ort':>10} {'+TVM/ort':>9} {'copies':>7} "
            f"{'max |diff|':>11}  output")
    print(head)
    print("-" * len(head))
    for net in nets:
        r = measure(net, rounds, mcpu, ns.threads)
        ort = r.get("ort")
        print(f"{r['model']:<12} {r['kernels']:>4} ({r['calls_tvm']:>2}/{r['calls']:<2}) "
              f"{r['compile']:>7.2f} s {_ms(r['numpy']):>10} {_ms(r['tvm']):>9} {_ms(ort):>12} "
              f"{_ratio(r['numpy'], ort):>10} {_ratio(r['tvm'], ort):>9} "
              f"{r['copies']:>7} {r['diff']:>11.1e}  {r['vs_shipped']}")
        if r.get("ort_error"):
            print(f"onnxruntime: {r['ort_error']}")
    print("TVM-built: distinct kernels (their calls of the run's); copies: inputs copied to "
          "64-byte aligned memory in one run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
