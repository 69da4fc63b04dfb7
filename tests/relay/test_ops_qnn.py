"""Tests of the quantized operators (rvmdbg/relay/ops/qnn.py) against formulas written here:
quantize = clip(round(x / scale) + zp), dequantize = scale * (q - zp), requantize's two
rounding modes on ties, int32 accumulation in qnn.dense and qnn.conv2d, add/mul/concatenate
against the exact real-valued result; type relations and attributes; a differential run of a
small quantized program on the VM and the interpreter."""
from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import OPS, KernelError, OpAttrError, OpTypeError
from rvmdbg.relay.types import TensorType
from rvmdbg.values import values_equal
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

from op_cases import T, rel, run


def f32(v):
    return np.asarray(v, dtype="float32")


def i32(v):
    return np.asarray(v, dtype="int32")


def exact(v) -> Fraction:
    return v if isinstance(v, Fraction) else Fraction(float(v))


def round_away(v) -> int:
    """Round half away from zero, on an exact value."""
    v = exact(v)
    return int(math.copysign(math.floor(abs(v) + Fraction(1, 2)), v))


def round_up(v) -> int:
    """Round half up (toward +infinity), on an exact value."""
    return math.floor(exact(v) + Fraction(1, 2))


def clip(v, dtype):
    info = np.iinfo(dtype)
    return max(int(info.min), min(int(info.max), v))


# ---------------------------------------------------------------------------- registry

def test_registered_with_tvm_arguments_and_patterns():
    arity = {"qnn.quantize": 3, "qnn.dequantize": 3, "qnn.requantize": 5, "qnn.dense": 6,
             "qnn.conv2d": 6, "qnn.add": 8, "qnn.mul": 8, "qnn.concatenate": 5}
    for name, n in arity.items():
        assert OPS[name].num_inputs == n, name
    # TVM's TOpPattern (C++) and register_pattern (python/tvm/relay/qnn/op/_qnn.py)
    assert OPS["qnn.add"].pattern == OPS["qnn.mul"].pattern == "broadcast"
    assert OPS["qnn.dense"].pattern == OPS["qnn.conv2d"].pattern == "out_elemwise_fusable"
    for name in ("qnn.quantize", "qnn.dequantize", "qnn.requantize"):
        assert OPS[name].pattern == "elemwise"
    assert OPS["qnn.concatenate"].pattern == "injective"
    defaults = {a.name: a.default for a in OPS["qnn.requantize"].attrs}
    assert defaults == {"axis": -1, "rounding": "None", "compute_dtype": "None",
                        "out_dtype": "int8"}
    assert {a.name: a.default for a in OPS["qnn.quantize"].attrs} == \
        {"axis": -1, "out_dtype": "int8"}
    assert {a.name: a.default for a in OPS["qnn.dense"].attrs} == \
        {"units": None, "out_dtype": "int32"}
    conv = {a.name: a.default for a in OPS["qnn.conv2d"].attrs}
    assert conv["out_dtype"] == "int32" and conv["data_layout"] == "NCHW" and \
        conv["kernel_layout"] == "OIHW" and conv["groups"] == 1


# ---------------------------------------------------------------------------- quantize

@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-300, 300, width=32), min_size=1, max_size=12),
       st.floats(0.125, 4.0, width=32), st.integers(-20, 20),
       st.sampled_from(["int8", "uint8", "int32"]))
def test_quantize_is_clip_round_plus_zero_point(values, scale, zp, dtype):
    x = f32(values)
    out = run("qnn.quantize", x, f32(scale), i32(zp), out_dtype=dtype)
    assert out.dtype == np.dtype(dtype)
    for v, q in zip(x, out):
        quotient = np.float32(v) / np.float32(scale)  # TVM divides in float32
        assert q == clip(round_away(quotient) + zp, dtype)


def test_quantize_ties_round_away_from_zero_and_per_channel():
    out = run("qnn.quantize", f32([-0.75, -0.25, 0.25, 0.75]), f32(0.5), i32(0))
    assert out.tolist() == [-2, -1, 1, 2]
    x = f32([[1.0, 1.0], [1.0, 1.0]])
    out = run("qnn.quantize", x, f32([0.5, 0.25]), i32([0, 10]), axis=1, out_dtype="uint8")
    assert out.tolist() == [[2, 14], [2, 14]]
    out = run("qnn.quantize", x, f32([0.5, 0.25]), i32([0, 10]), axis=0, out_dtype="uint8")
    assert out.tolist() == [[2, 2], [14, 14]]


# ---------------------------------------------------------------------------- dequantize

@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-128, 127), min_size=1, max_size=10),
       st.floats(0.0078125, 8.0, width=32), st.integers(-128, 127))
def test_dequantize_is_scale_times_difference(values, scale, zp):
    out = run("qnn.dequantize", np.array(values, "int8"), f32(scale), i32(zp))
    assert out.dtype == np.float32
    expected = [np.float32(v - zp) * np.float32(scale) for v in values]
    assert out.tolist() == expected


# ---------------------------------------------------------------------------- requantize

TIES = [-7, -5, -3, -1, 1, 3, 5, 7]  # odd values halved: every one a tie


@pytest.mark.parametrize("compute_dtype", ["None", "int64", "float32", "float64"])
def test_requantize_rounding_modes_on_ties(compute_dtype):
    x = i32(TIES)
    common = dict(compute_dtype=compute_dtype, out_dtype="int32")
    scales = (f32(1.0), i32(0), f32(2.0), i32(0))
    up = run("qnn.requantize", x, *scales, rounding="UPWARD", **common)
    near = run("qnn.requantize", x, *scales, rounding="TONEAREST", **common)
    default = run("qnn.requantize", x, *scales, **common)
    assert up.tolist() == [round_up(Fraction(v, 2)) for v in TIES] == [-3, -2, -1, 0, 1, 2, 3, 4]
    assert near.tolist() == [round_away(Fraction(v, 2)) for v in TIES] == \
        [-4, -3, -2, -1, 1, 2, 3, 4]
    assert default.tolist() == up.tolist()  # TVM's default rounding is UPWARD


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2 ** 20, 2 ** 20), min_size=1, max_size=8),
       st.floats(0.0078125, 10, width=32), st.floats(0.0078125, 10, width=32),
       st.integers(-50, 50), st.integers(-50, 50),
       st.sampled_from(["UPWARD", "TONEAREST"]), st.sampled_from(["int8", "int32"]))
def test_requantize_is_the_rounded_rescale(values, in_scale, out_scale, in_zp, out_zp,
                                           rounding, out_dtype):
    """Within half a step of the exact result, and exactly the mode's rounding unless the
    exact result is next to a tie (where the 31-bit multiplier may decide)."""
    out = run("qnn.requantize", i32(values), f32(in_scale), i32(in_zp), f32(out_scale),
              i32(out_zp), rounding=rounding, out_dtype=out_dtype)
    m = Fraction(float(np.float32(in_scale))) / Fraction(float(np.float32(out_scale)))
    for v, q in zip(values, out.tolist()):
        exact = (v - in_zp) * m
        rounded = (round_up if rounding == "UPWARD" else round_away)(exact) + out_zp
        frac = exact - math.floor(exact)
        if abs(frac - Fraction(1, 2)) > Fraction(1, 2 ** 20) * (1 + abs(exact)):
            assert q == clip(rounded, out_dtype)
        else:
            assert abs(q - clip(rounded, out_dtype)) <= 1


def test_requantize_per_channel_and_saturation():
    x = i32([[100, 100], [-100, -100]])
    out = run("qnn.requantize", x, f32([1.0, 4.0]), i32([0, 0]), f32(2.0), i32(5), axis=1)
    assert out.tolist() == [[55, 127], [-45, -128]]
    assert out.dtype == np.int8
    out = run("qnn.requantize", x, f32([1.0, 4.0]), i32([10, 0]), f32(2.0), i32(0), axis=0,
              out_dtype="int16")
    assert out.tolist() == [[45, 45], [-200, -200]]


# ---------------------------------------------------------------------------- dense

def _dense_reference(data, weight, zp, kzp):
    """Sum of (x - zp) * (w - kzp) over k, in int32 (wrapping as int32 arithmetic does)."""
    rows = []
    for x in data.tolist():
        row = []
        for j, w in enumerate(weight.tolist()):
            kz = int(kzp[j]) if np.ndim(kzp) else int(kzp)
            s = sum((a - zp) * (b - kz) for a, b in zip(x, w))
            row.append((s + 2 ** 31) % 2 ** 32 - 2 ** 31)
        rows.append(row)
    return rows


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 6), st.integers(0, 255),
       st.integers(-128, 127), st.data())
def test_dense_accumulates_in_int32(batch, units, k, zp, kzp, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = rng.integers(0, 256, (batch, k)).astype("uint8")
    w = rng.integers(-128, 128, (units, k)).astype("int8")
    per_channel = data.draw(st.booleans())
    kz = i32(rng.integers(-5, 5, units)) if per_channel else i32(kzp)
    out = run("qnn.dense", x, w, i32(zp), kz, f32(0.5), f32([0.1] * units) if per_channel
              else f32(0.1), units=units)
    assert out.dtype == np.int32
    assert out.tolist() == _dense_reference(x, w, zp, kz)


def test_dense_int32_accumulation_wraps_like_int32():
    x = np.full((1, 1000), 32767, "int16")
    w = np.full((1, 1000), 127, "int8")
    out = run("qnn.dense", x, w, i32(0), i32(0), f32(1), f32(1))
    assert out.tolist() == _dense_reference(x, w, 0, 0) and out[0, 0] < 0
    out64 = run("qnn.dense", x, w, i32(0), i32(0), f32(1), f32(1), out_dtype="int64")
    assert out64[0, 0] == 32767 * 127 * 1000


# ---------------------------------------------------------------------------- conv2d

def _conv_reference(x, w, zp, kzp, stride, pad, groups):
    """NCHW/OIHW direct loops: sum of (x - zp) * (w - kzp[o]) over the window, padding with
    the input zero point (TVM's qnn.conv2d), wrapped to int32."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), dtype=object)
    og = o // groups
    for b in range(n):
        for oc in range(o):
            g = oc // og
            kz = int(kzp[oc]) if np.ndim(kzp) else int(kzp)
            for y in range(oh):
                for xx in range(ow):
                    s = 0
                    for ic in range(i):
                        for dy in range(kh):
                            for dx in range(kw):
                                yy, xi = y * stride + dy - pad, xx * stride + dx - pad
                                inside = 0 <= yy < h and 0 <= xi < wd
                                v = int(x[b, g * i + ic, yy, xi]) if inside else zp
                                s += (v - zp) * (int(w[oc, ic, dy, dx]) - kz)
                    out[b, oc, y, xx] = (s + 2 ** 31) % 2 ** 32 - 2 ** 31
    return out.tolist()


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 2), st.sampled_from([1, 2]), st.integers(0, 1), st.integers(0, 255),
       st.integers(-10, 10), st.booleans(), st.booleans(), st.integers(0, 2 ** 16))
def test_conv2d_accumulates_in_int32(c, stride, pad, zp, kzp, per_channel, depthwise, seed):
    rng = np.random.default_rng(seed)
    groups = c if depthwise else 1
    o = c * 2 if depthwise else 3
    x = rng.integers(0, 256, (1, c, 5, 4)).astype("uint8")
    w = rng.integers(-128, 128, (o, c // groups, 3, 2)).astype("int8")
    kz = i32(rng.integers(-5, 5, o)) if per_channel else i32(kzp)
    scale = f32([0.5] * o) if per_channel else f32(0.5)
    out = run("qnn.conv2d", x, w, i32(zp), kz, f32(0.1), scale, strides=[stride, stride],
              padding=[pad, pad], groups=groups, kernel_size=[3, 2])
    assert out.dtype == np.int32
    assert out.tolist() == _conv_reference(x, w, zp, kz, stride, pad, groups)


def test_conv2d_layouts_and_out_dtype():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 2, 4, 4)).astype("int8")
    w = rng.integers(-128, 128, (3, 2, 2, 2)).astype("int8")
    kz = i32([1, -2, 3])
    nchw = run("qnn.conv2d", x, w, i32(-4), kz, f32(1), f32([1, 1, 1]))
    nhwc = run("qnn.conv2d", x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), i32(-4), kz,
               f32(1), f32([1, 1, 1]), data_layout="NHWC", kernel_layout="HWIO",
               out_dtype="int64")
    assert nhwc.dtype == np.int64
    assert np.array_equal(nhwc.transpose(0, 3, 1, 2), nchw)
    assert nchw.tolist() == _conv_reference(x, w, -4, kz, 1, 0, 1)


def test_conv2d_type_errors_name_qnn_conv2d():
    with pytest.raises(OpTypeError, match="^qnn.conv2d: .*channels"):
        rel("qnn.conv2d", T((1, 3, 5, 5), "int8"), T((4, 2, 3, 3), "int8"), T((), "int32"),
            T((), "int32"), T(()), T(()))
    with pytest.raises(OpTypeError, match="kernel_scale must be a scalar or a vector of 4"):
        rel("qnn.conv2d", T((1, 3, 5, 5), "int8"), T((4, 3, 3, 3), "int8"), T((), "int32"),
            T((), "int32"), T(()), T((3,)))
    with pytest.raises(OpTypeError, match="data must be"):
        rel("qnn.conv2d", T((1, 3, 5, 5)), T((4, 3, 3, 3), "int8"), T((), "int32"),
            T((), "int32"), T(()), T(()))


# ---------------------------------------------------------------------------- add, mul

@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-128, 127), st.integers(-128, 127)), min_size=1,
                max_size=8),
       st.sampled_from([0.25, 0.5, 1.0, 0.1, 0.37]), st.sampled_from([0.25, 0.5, 0.07]),
       st.sampled_from([0.5, 1.0, 0.3]), st.integers(-10, 10), st.integers(-10, 10),
       st.integers(-10, 10))
def test_add_and_mul_against_the_real_result(pairs, ls, rs, os, lzp, rzp, ozp):
    a = np.array([p[0] for p in pairs], "int8")
    b = np.array([p[1] for p in pairs], "int8")
    args = (a, b, f32(ls), i32(lzp), f32(rs), i32(rzp), f32(os), i32(ozp))
    fr = [Fraction(float(np.float32(s))) for s in (ls, rs, os)]
    for name, combine, slack in (("qnn.add", lambda x, y: x + y, 1),
                                 ("qnn.mul", lambda x, y: x * y, 1)):
        out = run(name, *args)
        assert out.dtype == np.int8
        for x, y, q in zip(a.tolist(), b.tolist(), out.tolist()):
            real = combine(fr[0] * (x - lzp), fr[1] * (y - rzp))
            expected = clip(round_up(real / fr[2]) + ozp, "int8")
            # each side is rounded on its own (add) or the float32 scale product (mul)
            assert abs(q - expected) <= slack, (name, x, y, q, expected)


def test_add_with_the_output_scale_is_exact():
    a, b = np.array([1, 100, -100], "int8"), np.array([2, 100, -100], "int8")
    out = run("qnn.add", a, b, f32(0.5), i32(3), f32(0.5), i32(3), f32(0.5), i32(3))
    assert out.tolist() == [0, 127, -128]  # (1-3)+(2-3)+3, then saturated


def test_mul_per_channel_needs_one_axis():
    with pytest.raises(OpTypeError, match="lhs_axis == rhs_axis"):
        rel("qnn.mul", T((2, 3), "int8"), T((2, 3), "int8"), T((3,)), T((), "int32"),
            T((3,)), T((), "int32"), T(()), T((), "int32"), lhs_axis=1, rhs_axis=0)
    a = np.array([[2, 4], [6, 8]], "int8")
    out = run("qnn.mul", a, a, f32([1.0, 0.5]), i32(0), f32([1.0, 0.5]), i32(0), f32(1.0),
              i32(0), lhs_axis=1, rhs_axis=1)
    assert out.tolist() == [[4, 4], [36, 16]]


def test_concatenate_requantizes_each_input():
    a, b = np.array([10, 20], "uint8"), np.array([10, 20], "uint8")
    out = run("qnn.concatenate", (a, b), (f32(1.0), f32(2.0)), (i32(0), i32(10)), f32(1.0),
              i32(0), axis=0)
    assert out.dtype == np.uint8 and out.tolist() == [10, 20, 0, 20]


# ---------------------------------------------------------------------------- type errors

@pytest.mark.parametrize("call, message", [
    (lambda: rel("qnn.quantize", T((2,), "int8"), T(()), T((), "int32")), "data must be"),
    (lambda: rel("qnn.quantize", T((2, 3)), T((2,)), T((), "int32")), "vector of 3"),
    (lambda: rel("qnn.quantize", T((2, 3)), T((), "float64"), T((), "int32")), "float32"),
    (lambda: rel("qnn.requantize", T((4,), "int32"), T(()), T((), "int32"), T((4,)),
                 T((), "int32")), "scalar"),
    (lambda: rel("qnn.dense", T((1, 3), "int8"), T((2, 3), "int8"), T((), "int32"),
                 T((), "int32"), T(()), T((3,))), "vector of 2"),
    (lambda: rel("qnn.add", T((2,), "int8"), T((2,), "uint8"), T(()), T((), "int32"),
                 T(()), T((), "int32"), T(()), T((), "int32")), "same dtype"),
])
def test_type_errors(call, message):
    with pytest.raises(OpTypeError, match=message):
        call()


def test_bad_attributes_name_the_attribute():
    for attrs, name in (({"rounding": "DOWN"}, "rounding"), ({"out_dtype": "float32"},
                                                              "out_dtype")):
        with pytest.raises(OpAttrError) as e:
            rel("qnn.requantize", T((4,), "int32"), T(()), T((), "int32"), T(()),
                T((), "int32"), **attrs)
        assert e.value.attr_name == name


def test_run_time_channel_mismatch_is_a_kernel_error():
    with pytest.raises(KernelError, match="per-channel"):
        run("qnn.requantize", i32([[1, 2]]), f32([1, 2, 3]), i32(0), f32(1), i32(0), axis=1)


# ---------------------------------------------------------------------------- VM vs interpreter

PROGRAM = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), int8], %b: Tensor[(3), int32]) {
  %0 = qnn.quantize(%x, 0.05f, 3, out_dtype="uint8");
  %1 = qnn.dense(%0, %w, 3, 0, 0.05f, 0.02f, units=3);
  %2 = nn.bias_add(%1, %b);
  %3 = qnn.requantize(%2, 0.001f, 0, 0.1f, -2, rounding="TONEAREST", out_dtype="int8");
  %4 = qnn.add(%3, %3, 0.1f, -2, 0.1f, -2, 0.2f, 0);
  qnn.dequantize(%4, 0.2f, 0)
}
"""


CONV_PROGRAM = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 5, 5), uint8], %w: Tensor[(3, 2, 3, 3), int8],
          %ks: Tensor[(3), float32]) {
  %0 = qnn.conv2d(%x, %w, 128, 0, 0.02f, %ks, padding=[1, 1], channels=3, kernel_size=[3, 3]);
  %1 = clip(%0, a_min=-100000f, a_max=100000f);
  %2 = qnn.requantize(%1, %ks, 0, 0.5f, 0, axis=1, out_dtype="int8");
  qnn.dequantize(%2, 0.5f, 0)
}
"""


def test_quantized_dense_program_agrees_on_vm_and_interpreter():
    mod = load_module(PROGRAM, "<qnn>")
    exe = compile_module(mod)
    rng = np.random.default_rng(7)
    for _ in range(3):
        args = [rng.uniform(-5, 5, (2, 4)).astype("float32"),
                rng.integers(-128, 128, (3, 4)).astype("int8"),
                rng.integers(-500, 500, 3).astype("int32")]
        expected = Interpreter(mod).run("main", args)
        got = VirtualMachine(exe).invoke("main", args)
        assert values_equal(expected, got) and got.dtype == np.float32
    # dense and the bias add after it are one kernel, as in TVM (out_elemwise_fusable)
    assert any("qnn_dense" in k.name and "bias_add" in k.name for k in exe.kernels)


def test_quantized_conv_program_agrees_on_vm_and_interpreter():
    mod = load_module(CONV_PROGRAM, "<qnn-conv>")
    exe = compile_module(mod)
    rng = np.random.default_rng(11)
    args = [rng.integers(0, 256, (1, 2, 5, 5)).astype("uint8"),
            rng.integers(-128, 128, (3, 2, 3, 3)).astype("int8"), f32([0.01, 0.02, 0.05])]
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(exe).invoke("main", args)
    assert values_equal(expected, got) and got.shape == (1, 3, 5, 5)
    # conv2d and the clip after it are one kernel (out_elemwise_fusable, then elemwise)
    assert any("qnn_conv2d" in k.name and "clip" in k.name for k in exe.kernels)


# ---- fixed_point_multiply (TVM's q_multiply_shift with q = 31, rounding half up)

def _fixed_point_reference(x: int, m: int, shift: int) -> int:
    """x * m * 2**(shift - 31) rounded half up, in exact rationals."""
    exact = Fraction(x * m) * Fraction(2) ** (shift - 31)
    return math.floor(exact + Fraction(1, 2))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(1 << 20), 1 << 20), min_size=1, max_size=6),
       st.integers(1 << 29, (1 << 31) - 1), st.integers(-20, 8))
def test_fixed_point_multiply_matches_exact_rounding(xs, m, shift):
    kernel = OPS["fixed_point_multiply"].kernel
    got = kernel([np.array(xs, dtype="int32")], {"multiplier": m, "shift": shift})
    assert got.dtype == np.int32
    assert got.tolist() == [_fixed_point_reference(x, m, shift) for x in xs]


def test_fixed_point_multiply_types_and_refusals():
    rel = OPS["fixed_point_multiply"].type_rel
    t = TensorType((2, 3), "int32")
    assert rel([t], {"multiplier": 1 << 30, "shift": -1}) == t
    with pytest.raises(OpTypeError, match="int32"):
        rel([TensorType((2,), "float32")], {"multiplier": 1 << 30, "shift": 0})
    with pytest.raises(OpTypeError, match="shift"):
        rel([t], {"multiplier": 1 << 30, "shift": 40})
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(3), int32]) {
  fixed_point_multiply(%x, multiplier=1073741824, shift=0)
}
"""
    x = np.array([-3, 4, 5], dtype="int32")  # times 0.5, ties rounded up: -1, 2, 3
    out = Interpreter(load_module(text, "fpm.relay")).run("main", [x])
    assert out.tolist() == [-1, 2, 3]


def test_a_bad_rounding_is_a_located_type_error(capsys, tmp_path):
    from rvmdbg import cli
    path = tmp_path / "q.relay"
    source = (Path(__file__).resolve().parents[2] / "programs" / "quantized_dense.relay")
    path.write_text(source.read_text().replace('rounding="TONEAREST"', 'rounding="DOWN"'))
    code = cli.main(["run", str(path)])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert re.search(r"q\.relay:9:\d+: error: qnn\.requantize: attribute 'rounding'", err)
    assert "^" in err


# ---------------------------------------------------------------------------- batch_matmul

def test_batch_matmul_registered_as_tvm():
    assert OPS["qnn.batch_matmul"].num_inputs == 6
    assert OPS["qnn.batch_matmul"].pattern == "out_elemwise_fusable"
    assert {a.name: a.default for a in OPS["qnn.batch_matmul"].attrs} == \
        {"out_dtype": "int32", "transpose_a": False, "transpose_b": True}


def test_batch_matmul_accumulates_shifted_integers():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (2, 3, 5)).astype("int8")
    y = rng.integers(-128, 128, (2, 4, 5)).astype("int8")
    out = run("qnn.batch_matmul", x, y, i32(-3), i32(7), f32(0.5), f32(0.25))
    want = [[[sum((int(x[b, i, k]) + 3) * (int(y[b, j, k]) - 7) for k in range(5))
              for j in range(4)] for i in range(3)] for b in range(2)]
    assert out.dtype == np.int32 and out.tolist() == want


def test_batch_matmul_relation_wants_scalar_parameters():
    assert rel("qnn.batch_matmul", T((2, 3, 5), "uint8"), T((2, 4, 5), "uint8"), T((), "int32"),
               T((), "int32"), T((), "float32"), T((), "float32")) == T((2, 3, 4), "int32")
    with pytest.raises(OpTypeError, match="y_scale must be a scalar"):
        rel("qnn.batch_matmul", T((2, 3, 5), "int8"), T((2, 4, 5), "int8"), T((), "int32"),
            T((), "int32"), T((), "float32"), T((4,), "float32"))


BMM_PROGRAM = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2, 4), int8], %y: Tensor[(2, 3, 4), int8]) {
  %0 = qnn.batch_matmul(%x, %y, 1, -2, 0.5f, 0.25f, out_dtype="int32");
  qnn.requantize(%0, 0.125f, 0, 0.5f, 0, rounding="TONEAREST", out_dtype="int8")
}
"""


def test_batch_matmul_relay_text_runs_on_vm_and_interpreter():
    mod = load_module(BMM_PROGRAM, "<qnn>")
    rng = np.random.default_rng(5)
    args = [rng.integers(-20, 20, (2, 2, 4)).astype("int8"),
            rng.integers(-20, 20, (2, 3, 4)).astype("int8")]
    got = VirtualMachine(compile_module(mod)).invoke("main", args)
    assert values_equal(Interpreter(mod).run("main", args), got) and got.dtype == np.int8
    acc = np.matmul(args[0].astype(int) - 1, np.swapaxes(args[1].astype(int) + 2, 1, 2))
    # TONEAREST: ties away from zero (acc / 4 has ties)
    want = [[[clip(round_away(Fraction(int(v), 4)), "int8") for v in row] for row in m] for m in acc]
    assert got.tolist() == want
