"""The convolution and pooling kernels on the layer shapes of mobilenet-v1 and resnet-18.

For each layer it times the registry's kernels exactly as the VM calls them
(`OPS[name].kernel(args, attrs)`): nn.conv2d, then nn.batch_norm and nn.relu on its output as
an unsimplified TVM model runs them; pooling and the classifier at the end. Where a naive
version is useful (the first layers, and every layer with `--naive`) it also times a
straightforward NumPy convolution with no matrix product (one multiply-add per kernel position
and input channel, all output channels at once), so the two columns show what im2col + BLAS
buys. The mobilenet-v1 list is summed; then the whole network, generated as a Relay program
with its weights as arguments, runs on the VM (`compile_module`, `VirtualMachine.invoke`),
which is the issue's target: mobilenet-v1 (1x3x224x224) inference under 1.5 s.

Figures only (best of `--repeats` runs each); the machine's load decides them. BLAS runs on
one thread unless the environment says otherwise (as in bench_graph.py: on a shared machine
idle BLAS threads spinning against other jobs cost more than they give).
Run: `python3 benchmarks/bench_kernels.py [--quick] [--naive] [--repeats N]`.
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

from rvmdbg.relay.ops import OPS, normalize_attrs  # noqa: E402


def mobilenet_v1(size: int) -> list:
    """(name, in_channels, out_channels, spatial in, stride, depthwise) of mobilenet-v1."""
    layers = [("conv1", 3, 32, size, 2, False)]
    plan = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
            (256, 512, 2)] + [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    s = size // 2
    for i, (cin, cout, stride) in enumerate(plan, start=2):
        layers.append((f"dw{i}", cin, cin, s, stride, True))
        s = (s + stride - 1) // stride
        layers.append((f"pw{i}", cin, cout, s, 1, False))
    return layers


def resnet18(size: int) -> list:
    """(name, in, out, spatial in, stride, kernel) of resnet-18's distinct convolutions."""
    s = size // 4
    out = [("conv1 7x7", 3, 64, size, 2, 7), ("layer1 3x3", 64, 64, s, 1, 3)]
    for i, (cin, cout) in enumerate([(64, 128), (128, 256), (256, 512)], start=2):
        out.append((f"layer{i} 3x3 s2", cin, cout, s, 2, 3))
        s //= 2
        out.append((f"layer{i} 3x3", cout, cout, s, 1, 3))
        out.append((f"layer{i} 1x1 s2", cin, cout, s * 2, 2, 1))
    return out


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def naive_conv(x, w, stride, pad, groups):
    """A convolution with no matrix product: per kernel position and input channel of a
    group, multiply the strided input plane into all of the group's output channels."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), dtype=x.dtype)
    og = o // groups
    for g in range(groups):
        for ci in range(cg):
            for i in range(kh):
                for j in range(kw):
                    plane = xp[:, g * cg + ci, i:i + (oh - 1) * stride + 1:stride,
                               j:j + (ow - 1) * stride + 1:stride]
                    out[:, g * og:(g + 1) * og] += (plane[:, None]
                                                    * w[g * og:(g + 1) * og, ci, i, j, None, None])
    return out


def kernel(name, **attrs):
    op = OPS[name]
    a = normalize_attrs(op, attrs)
    return lambda *args: op.kernel(list(args), a)


def conv_layer_row(rng, label, cin, cout, s, stride, k, groups, repeats, naive):
    x = rng.standard_normal((1, cin, s, s)).astype("float32")
    w = rng.standard_normal((cout, cin // groups, k, k)).astype("float32")
    pad = k // 2
    conv = kernel("nn.conv2d", strides=[stride, stride], padding=[pad] * 4, groups=groups)
    y = conv(x, w)
    vec = np.ones(cout, dtype="float32")
    bn = kernel("nn.batch_norm")
    relu = kernel("nn.relu")
    t_conv = best(lambda: conv(x, w), repeats)
    t_rest = best(lambda: relu(bn(y, vec, vec, vec, vec)[0]), repeats)
    t_naive = best(lambda: naive_conv(x, w, stride, pad, groups), 1) if naive else None
    if naive:
        np.testing.assert_allclose(conv(x, w), naive_conv(x, w, stride, pad, groups),
                                   rtol=1e-3, atol=1e-3)
    shape = f"{cin}->{cout} {k}x{k}/{stride} @{s}"
    naive_txt = f"{t_naive * 1e3:9.1f}" if naive else f"{'-':>9}"
    print(f"  {label:<16} {shape:<22} {t_conv * 1e3:8.2f} {naive_txt} {t_rest * 1e3:8.2f}")
    return t_conv, t_rest


def mobilenet_program(size: int) -> tuple:
    """mobilenet-v1 as Relay text (conv2d, batch_norm, relu per layer; pool; dense) and the
    shapes of its arguments (data, then each layer's weight and batch-norm vectors)."""
    params = ["%data: Tensor[(1, 3, {0}, {0}), float32]".format(size)]
    shapes = [(1, 3, size, size)]
    body, cur, idx = [], "%data", 0
    for name, cin, cout, s, stride, dw in mobilenet_v1(size):
        groups = cin if dw else 1
        k = 1 if name.startswith("pw") else 3
        pad = k // 2
        params.append(f"%{name}_w: Tensor[({cout}, {cin // groups}, {k}, {k}), float32]")
        shapes.append((cout, cin // groups, k, k))
        for v in ("g", "b", "m", "v"):
            params.append(f"%{name}_{v}: Tensor[({cout},), float32]")
            shapes.append((cout,))
        body.append(f"  %{idx} = nn.conv2d({cur}, %{name}_w, strides=[{stride}, {stride}], "
                    f"padding=[{pad}, {pad}, {pad}, {pad}], groups={groups}, channels={cout}, "
                    f"kernel_size=[{k}, {k}]);")
        body.append(f"  %{idx + 1} = nn.batch_norm(%{idx}, %{name}_g, %{name}_b, %{name}_m, "
                    f"%{name}_v);")
        body.append(f"  %{idx + 2} = nn.relu(%{idx + 1}.0);")
        cur, idx = f"%{idx + 2}", idx + 3
    params += ["%fc_w: Tensor[(1000, 1024), float32]", "%fc_b: Tensor[(1000,), float32]"]
    shapes += [(1000, 1024), (1000,)]
    body.append(f"  %{idx} = nn.global_avg_pool2d({cur});")
    body.append(f"  %{idx + 1} = nn.batch_flatten(%{idx});")
    body.append(f"  %{idx + 2} = nn.dense(%{idx + 1}, %fc_w, units=1000);")
    body.append(f"  nn.bias_add(%{idx + 2}, %fc_b)")
    text = ('#[version = "0.0.5"]\ndef @main(' + ", ".join(params)
            + ") -> Tensor[(1, 1000), float32] {\n" + "\n".join(body) + "\n}\n")
    return text, shapes


def run_vm(size: int, repeats: int) -> None:
    from rvmdbg.relay.loader import load_module
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    text, shapes = mobilenet_program(size)
    t0 = time.perf_counter()
    exe = compile_module(load_module(text, "<mobilenet>"))
    t_compile = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    args = [(rng.standard_normal(s) * 0.1).astype("float32") for s in shapes]
    for i, s in enumerate(shapes):  # variances positive
        if len(s) == 1 and i % 5 == 4:
            args[i] = np.abs(args[i]) + np.float32(1)
    VirtualMachine(exe).invoke("main", args)  # builds the kernels once
    t_run = best(lambda: VirtualMachine(exe).invoke("main", args), repeats)
    print(f"mobilenet-v1 1x3x{size}x{size} on the VM: load+check+compile {t_compile:.2f} s, "
          f"inference {t_run:.3f} s (best of {repeats}); target: inference under 1.5 s at 224")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="32x32 inputs, one round (smoke test)")
    ap.add_argument("--naive", action="store_true", help="time the naive conv on every layer")
    ap.add_argument("--repeats", type=int, default=3)
    opts = ap.parse_args()
    size = 32 if opts.quick else 224
    repeats = 1 if opts.quick else opts.repeats
    rng = np.random.default_rng(0)
    print(f"load average: {os.getloadavg()[0]:.2f}; NumPy {np.__version__}; input {size}x{size}")
    header = (f"  {'layer':<16} {'shape':<22} {'conv ms':>8} {'naive ms':>9} "
              f"{'bn+relu':>8}")
    print(f"\nmobilenet-v1 layers (conv2d, then batch_norm + relu on its output):\n{header}")
    total_conv = total_rest = 0.0
    for i, (name, cin, cout, s, stride, dw) in enumerate(mobilenet_v1(size)):
        k = 1 if name.startswith("pw") else 3
        t_conv, t_rest = conv_layer_row(rng, name, cin, cout, s, stride, k,
                                        cin if dw else 1, repeats, opts.naive or i < 3)
        total_conv += t_conv
        total_rest += t_rest
    x = rng.standard_normal((1, 1024, max(size // 32, 1), max(size // 32, 1))).astype("float32")
    gap = kernel("nn.global_avg_pool2d")
    t_gap = best(lambda: gap(x), repeats)
    print(f"  sum over the list: conv {total_conv * 1e3:.1f} ms, batch_norm + relu "
          f"{total_rest * 1e3:.1f} ms, global_avg_pool2d {t_gap * 1e3:.2f} ms")

    print(f"\nresnet-18 convolutions and pooling:\n{header}")
    for label, cin, cout, s, stride, k in resnet18(size):
        conv_layer_row(rng, label, cin, cout, s, stride, k, 1, repeats,
                       opts.naive or label.startswith("conv1") or opts.quick)
    x = rng.standard_normal((1, 64, size // 2, size // 2)).astype("float32")
    mp = kernel("nn.max_pool2d", pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    ap2 = kernel("nn.avg_pool2d", pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    t_mp = best(lambda: mp(x), repeats)
    t_ap = best(lambda: ap2(x), repeats)
    print(f"  max_pool2d 3x3/2 @{size // 2}x64: {t_mp * 1e3:.2f} ms; avg_pool2d same shape: "
          f"{t_ap * 1e3:.2f} ms")
    print()
    run_vm(size, repeats)


if __name__ == "__main__":
    main()
