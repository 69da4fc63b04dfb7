"""Convolutional programs end to end: the fused kernels the compiler makes of conv2d + bias_add +
relu and of a tuple-returning batch_norm, VM against the interpreter and a NumPy definition on
programs/cnn.relay, a conv2d with a `?` batch planned at run time, and located type errors
from `python3 -m rvmdbg check`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.args import parse_program_args
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module, program_default_args
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

ROOT = Path(__file__).resolve().parents[2]
CNN = ROOT / "programs" / "cnn.relay"
HEADER = '#[version = "0.0.5"]\n'


def compiled(text: str, name: str = "<test>"):
    mod = load_module(text, name)
    return mod, compile_module(mod)


def kernel_names(exe) -> list:
    return [k.name for k in exe.kernels]


def numpy_cnn(x, w, b, gamma, beta, mean, var, fc, fcb):
    """programs/cnn.relay written with NumPy only (3x3 conv by shifted sums, 2x2 max pool)."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 2, 6, 6), dtype=np.float64)
    for i in range(3):
        for j in range(3):
            conv += xp[:, :, i:i + 6, j:j + 6] * w[None, :, 0, i, j, None, None]
    act = np.maximum(conv + b[None, :, None, None], 0)
    bn = ((act - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
          * gamma[None, :, None, None] + beta[None, :, None, None])
    pooled = bn.reshape(1, 2, 3, 2, 3, 2).max(axis=(3, 5))
    return pooled.reshape(1, 18) @ fc.T + fcb


def test_cnn_fuses_conv_bias_relu_into_one_kernel():
    mod, exe = compiled(CNN.read_text(), CNN.name)
    names = kernel_names(exe)
    # TVM's SimplifyInference made batch_norm(...).0 a multiply and an add by a scale and a
    # shift computed from the statistics (parameters here: their own kernel), and FuseOps put
    # them in the convolution's kernel
    conv = [n for n in names if n.startswith("vm_mod_fused_nn_conv2d_nn_bias_add_nn_relu")]
    assert len(conv) == 1 and "multiply" in conv[0] and "negative" in conv[0]
    assert "vm_mod_fused_add_sqrt_divide_multiply" in names
    assert not any("batch_norm" in n for n in names)
    assert "vm_mod_fused_nn_max_pool2d" in names
    assert "vm_mod_fused_nn_dense_nn_bias_add" in names


def test_cnn_vm_interpreter_and_numpy_agree_on_the_default_args():
    mod, exe = compiled(CNN.read_text(), CNN.name)
    args = parse_program_args(mod, "main", program_default_args(CNN.read_text()))
    vm = VirtualMachine(exe).invoke("main", args)
    interp = Interpreter(mod).run("main", args)
    np.testing.assert_array_equal(vm, interp)
    want = numpy_cnn(*[np.asarray(a, dtype=np.float64) for a in args])
    np.testing.assert_allclose(vm, want, rtol=1e-5, atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_cnn_differential_on_random_weights(seed):
    mod, exe = _cnn()
    rng = np.random.default_rng(seed)
    shapes = [(1, 1, 6, 6), (2, 1, 3, 3), (2,), (2,), (2,), (2,), (2,), (3, 18), (3,)]
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    args[6] = np.abs(args[6]) + np.float32(0.1)  # a variance
    vm = VirtualMachine(exe).invoke("main", args)
    np.testing.assert_array_equal(vm, Interpreter(mod).run("main", args))
    np.testing.assert_allclose(vm, numpy_cnn(*[a.astype(np.float64) for a in args]),
                               rtol=1e-4, atol=1e-4)


_CACHE: dict = {}


def _cnn():
    if "cnn" not in _CACHE:
        _CACHE["cnn"] = compiled(CNN.read_text(), CNN.name)
    return _CACHE["cnn"]


DYNAMIC = HEADER + """
def @main(%x: Tensor[(?, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4,), float32]) -> Tensor[(?, 4, 4, 4), float32] {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.batch_norm(%2, %b, %b, %b, %b);
  %3.0
}
"""


@pytest.mark.parametrize("batch", [1, 3])
def test_conv2d_with_unknown_batch_runs_on_the_vm(batch):
    mod, exe = compiled(DYNAMIC)
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 3, 8, 8)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    b = np.abs(rng.standard_normal(4)).astype("float32") + np.float32(0.5)
    got = VirtualMachine(exe).invoke("main", [x, w, b])
    assert got.shape == (batch, 4, 4, 4)
    np.testing.assert_array_equal(got, Interpreter(mod).run("main", [x, w, b]))
    # the same convolution by a sum over the kernel window
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    conv = np.zeros((batch, 4, 4, 4))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 8:2, j:j + 8:2], w[:, :, i, j])
    act = np.maximum(conv + b[None, :, None, None], 0)
    bb = b[None, :, None, None]
    np.testing.assert_allclose(got, (act - bb) / np.sqrt(bb + 1e-5) * bb + bb,
                               rtol=1e-4, atol=1e-4)
    assert any("shape_func" in k.name or "shape" in k.name for k in exe.kernels)


@pytest.mark.parametrize("call, words", [
    ("nn.conv2d(%x, %w, padding=[1, 2, 3])", ["nn.conv2d", "'padding'"]),
    ("nn.conv2d(%x, %w, groups=2)", ["nn.conv2d", "'groups'"]),
    ("nn.max_pool2d(%x, pool_size=[9, 9])", ["nn.max_pool2d", "'pool_size'"]),
    ("nn.conv2d(%x, %w, strides=[1, 1], stride=[2, 2])", ["nn.conv2d", "'stride'"]),
])
def test_check_locates_bad_attributes(tmp_path, call, words):
    src = tmp_path / "bad.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(1, 3, 8, 8), float32], "
                   "%w: Tensor[(4, 3, 3, 3), float32]) {\n  " + call + "\n}\n")
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "check", str(src)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert f"{src}:3:3: error:" in proc.stderr
    assert "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr


def test_cnn_with_weights_in_metadata_runs_as_tvm_prints_it():
    from rvmdbg.relay.metadata import metadata_text
    rng = np.random.default_rng(4)
    shapes = [(2, 1, 3, 3), (2,), (2,), (2,), (2,), (2,), (3, 18), (3,)]
    weights = [rng.standard_normal(s).astype("float32") for s in shapes]
    weights[5] = np.abs(weights[5]) + np.float32(0.1)
    ty = ["Tensor[(2, 1, 3, 3), float32]"] + ["Tensor[(2,), float32]"] * 5 + [
        "Tensor[(3, 18), float32]", "Tensor[(3,), float32]"]
    meta = [f"meta[relay.Constant][{i}] /* ty={t} */" for i, t in enumerate(ty)]
    body = f"""def @main(%x: Tensor[(1, 1, 6, 6), float32]) -> Tensor[(1, 3), float32] {{
  %0 = nn.conv2d(%x, {meta[0]}, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, {meta[1]});
  %2 = nn.relu(%1);
  %3 = nn.batch_norm(%2, {meta[2]}, {meta[3]}, {meta[4]}, {meta[5]});
  %4 = nn.max_pool2d(%3.0, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0]);
  %5 = nn.batch_flatten(%4);
  %6 = nn.dense(%5, {meta[6]}, units=3);
  nn.bias_add(%6, {meta[7]})
}}"""
    text = HEADER + body + "\n#[metadata]\n" + metadata_text(weights) + "\n"
    mod, exe = compiled(text, "cnn_meta.relay")
    # the statistics are constants: FoldConstant computed scale and shift, one kernel is left
    assert "vm_mod_fused_nn_conv2d_nn_bias_add_nn_relu_multiply_add" in kernel_names(exe)
    x = rng.standard_normal((1, 1, 6, 6)).astype("float32")
    got = VirtualMachine(exe).invoke("main", [x])
    np.testing.assert_array_equal(got, Interpreter(mod).run("main", [x]))
    np.testing.assert_allclose(got, numpy_cnn(x.astype(np.float64), *weights), rtol=1e-4,
                               atol=1e-4)
