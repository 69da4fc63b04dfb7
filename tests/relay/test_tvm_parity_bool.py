"""TVM parity of bool (and narrow-dtype) tensors in the operators whose rows of
docs/tvm-parity.md were `-!`: convolutions, nn.pad, resizing, global and adaptive pooling,
cumsum and the sorts (and their unchecked axes), and bool indices of take. Each kernel is checked against a direct loop or formula of TVM's
semantics (TVM's bool is a 1-bit integer: a sum of bools is their parity), each operator runs
alike on the VM, the reference interpreter and the graph executor, and FoldConstant on constant
inputs gives the same value or leaves the call to stop at run time."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_tvm_parity import VERSION, _all_executors, _program, _same
from rvmdbg.passes.fold_constant import fold_constant
from rvmdbg.relay.ast import Call, Constant, Function, Var
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import OPS, KernelError
from rvmdbg.relay.typecheck import check_module

RNG = np.random.default_rng(20261201)


def _bools(*shape) -> np.ndarray:
    return RNG.random(shape) < 0.5


def _run(op: str, args: list, **attrs):
    return OPS[op].kernel(list(args), attrs)


# ---------------------------------------------------------------------------------------------
# Direct-loop references


def _conv2d_loops(x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Sum over channels and kernel positions, in Python integers (NCHW, OIHW)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    oh = (h + pt + pb - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd + pl + pr - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    per_group = o // groups
    for b, f, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = f // per_group
        total = 0
        for ch, a, e in itertools.product(range(cg), range(kh), range(kw)):
            y = i * strides[0] + a * dilation[0] - pt
            z = j * strides[1] + e * dilation[1] - pl
            if 0 <= y < h and 0 <= z < wd:
                total += int(x[b, g * cg + ch, y, z]) * int(w[f, ch, a, e])
        out[b, f, i, j] = total
    return out


def _conv2d_transpose_loops(x, w, strides=(1, 1), padding=(0, 0, 0, 0)):
    """Every input pixel adds its weighted kernel into the output, then the padding crops."""
    n, c, h, wd = x.shape
    _c, o, kh, kw = w.shape
    full = np.zeros((n, o, strides[0] * (h - 1) + kh, strides[1] * (wd - 1) + kw), np.int64)
    for b, ch, i, j, f, a, e in itertools.product(range(n), range(c), range(h), range(wd),
                                                  range(o), range(kh), range(kw)):
        full[b, f, i * strides[0] + a, j * strides[1] + e] += int(x[b, ch, i, j]) * int(w[ch, f, a, e])
    pt, pl, pb, pr = padding
    return full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]


def _odd(total: np.ndarray) -> np.ndarray:
    return total % 2 == 1


@settings(max_examples=25, deadline=None)
@given(c=st.integers(1, 2), o=st.integers(1, 3), hw=st.integers(3, 5), k=st.integers(1, 3),
       stride=st.integers(1, 2), pad=st.integers(0, 1), dil=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_a_bool_conv2d_is_the_parity_of_the_ands(c, o, hw, k, stride, pad, dil, seed):
    rng = np.random.default_rng(seed)
    if (k - 1) * dil + 1 > hw + 2 * pad:
        return
    x = rng.random((1, c, hw, hw)) < 0.5
    w = rng.random((o, c, k, k)) < 0.5
    attrs = dict(strides=[stride, stride], padding=[pad] * 4, dilation=[dil, dil])
    got = _run("nn.conv2d", [x, w], **attrs)
    want = _conv2d_loops(x, w, (stride, stride), (pad,) * 4, (dil, dil))
    assert got.dtype == np.bool_ and np.array_equal(got, _odd(want))
    # out_dtype="int32": topi casts the bools to int32 first, so it counts the ands
    counted = _run("nn.conv2d", [x, w], out_dtype="int32", **attrs)
    assert counted.dtype == np.int32 and np.array_equal(counted, want)


def test_grouped_and_depthwise_bool_conv2d():
    x = _bools(1, 4, 4, 4)
    grouped = _bools(4, 2, 2, 2)
    assert np.array_equal(_run("nn.conv2d", [x, grouped], groups=2),
                          _odd(_conv2d_loops(x, grouped, groups=2)))
    depthwise = _bools(4, 1, 3, 3)
    assert np.array_equal(_run("nn.conv2d", [x, depthwise], groups=4, padding=[1, 1, 1, 1]),
                          _odd(_conv2d_loops(x, depthwise, padding=(1, 1, 1, 1), groups=4)))


def test_a_bool_conv1d_and_conv2d_transpose():
    x1, w1 = _bools(2, 2, 7), _bools(3, 2, 3)
    want1 = _conv2d_loops(x1[:, :, None, :], w1[:, :, None, :], (1, 2), (0, 1, 0, 1))[:, :, 0]
    got1 = _run("nn.conv1d", [x1, w1], strides=[2], padding=[1, 1])
    assert got1.dtype == np.bool_ and np.array_equal(got1, _odd(want1))
    x2, w2 = _bools(1, 2, 3, 3), _bools(2, 3, 3, 3)
    got2 = _run("nn.conv2d_transpose", [x2, w2], strides=[2, 2], padding=[1, 1, 1, 1])
    want2 = _conv2d_transpose_loops(x2, w2, (2, 2), (1, 1, 1, 1))
    assert got2.dtype == np.bool_ and np.array_equal(got2, _odd(want2))


def test_a_float_conv_cast_to_bool_tests_nonzero_nan_false():
    x = np.array([[[[np.nan, 0.5], [0.0, -2.0]]]], np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    got = _run("nn.conv2d", [x, w], out_dtype="bool")
    assert got.tolist() == [[[[False, True], [False, True]]]]


def test_bool_pad_copies_and_casts_the_pad_value():
    x = np.array([[True, False], [False, True]])
    got = _run("nn.pad", [x, np.array(True)], pad_width=[[1, 0], [0, 2]])
    want = np.ones((3, 4), bool)
    want[1:, :2] = x
    assert got.dtype == np.bool_ and np.array_equal(got, want)
    # PadCompute casts the value to data's dtype as TVM's cast does: NaN != 0 is false
    assert not _run("nn.pad", [x, np.array(np.nan, np.float32)], pad_width=[[1, 1], [0, 0]])[0].any()
    edge = _run("nn.pad", [np.array([True, False]), np.array(False)], pad_width=[[2, 1]],
                pad_mode="edge")
    assert edge.tolist() == [True, True, True, False, False]
    reflect = _run("nn.pad", [np.array([True, False, False]), np.array(False)],
                   pad_width=[[1, 2]], pad_mode="reflect")
    assert reflect.tolist() == [False, True, False, False, False, True]


def test_bool_resizing_copies_nearest_and_blends_linear_in_float32():
    x = _bools(1, 2, 3, 3)
    up = _run("nn.upsampling", [x], scale_h=2.0, scale_w=3.0)
    want = np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)
    assert up.dtype == np.bool_ and np.array_equal(up, want)
    # linear, align_corners on a row [True, False] to 3: weights 1, 1/2, 0 -> [T, T, F]
    row = np.array([[[[True, False]]]])
    got = _run("image.resize2d", [row], size=[1, 3], method="linear",
               coordinate_transformation_mode="align_corners")
    assert got.tolist() == [[[[True, True, False]]]]
    # in general: the float32 blend of the bools as 0/1, then `!= 0`
    for method in ("linear", "cubic"):
        got = _run("image.resize2d", [x], size=[5, 4], method=method)
        blend = _run("image.resize2d", [x.astype(np.float32)], size=[5, 4], method=method)
        assert got.dtype == np.bool_ and np.array_equal(got, blend != 0), method


def _adaptive_windows(size: int, out: int) -> list:
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def test_bool_global_and_adaptive_pooling():
    x = _bools(2, 3, 4, 5)
    assert np.array_equal(_run("nn.global_max_pool2d", [x]), x.any(axis=(2, 3), keepdims=True))
    one = _bools(2, 3, 1, 1)
    assert np.array_equal(_run("nn.global_avg_pool2d", [one]), one)  # the sum of one, / 1
    # unequal windows: the lengths are cast to bool when the kernel runs (1), the sum is the
    # parity
    x = _bools(1, 2, 5, 7)
    got = _run("nn.adaptive_avg_pool2d", [x], output_size=[3, 2])
    for c, (i, (h0, h1)), (j, (w0, w1)) in itertools.product(
            range(2), enumerate(_adaptive_windows(5, 3)), enumerate(_adaptive_windows(7, 2))):
        assert got[0, c, i, j] == (int(x[0, c, h0:h1, w0:w1].sum()) % 2 == 1)


def test_bool_average_pooling_over_equal_windows_stops_as_tvm_lowering_does():
    # make_const(bool, 4): "Literal value 4 exceeds maximum of bool", the height's first
    for op, attrs, size in (("nn.global_avg_pool2d", {}, 4),
                            ("nn.adaptive_avg_pool2d", {"output_size": [2, 3]}, 2),
                            ("nn.adaptive_avg_pool2d", {"output_size": [4, 2]}, 3)):
        with pytest.raises(KernelError, match=f"the window size {size} exceeds the maximum of "
                                              "bool"):
            _run(op, [_bools(1, 1, 4, 6)], **attrs)


def test_integer_global_average_divides_by_the_factor_wrapped_in_the_dtype():
    # int8 12 x 12: the sum wraps (288 -> 32) and so does the factor (144 -> -112): 32 / -112
    assert _run("nn.global_avg_pool2d", [np.full((1, 1, 12, 12), 2, np.int8)]).item() == 0
    assert _run("nn.global_avg_pool2d", [np.full((1, 1, 5, 5), -3, np.int8)]).item() == -3
    # uint8 16 x 16: the factor wraps to 0
    with pytest.raises(KernelError, match="integer division by zero"):
        _run("nn.global_avg_pool2d", [np.ones((1, 1, 16, 16), np.uint8)])
    # int8 over a 200-long axis: the constant 200 does not fit int8
    with pytest.raises(KernelError, match="the window size 200 exceeds the maximum of int8"):
        _run("nn.global_avg_pool2d", [np.ones((1, 1, 200, 1), np.int8)])
    # int32 truncates toward zero
    x = np.array([[[[-7, 0], [0, 0]]]], np.int32)
    assert _run("nn.adaptive_avg_pool2d", [x], output_size=[1, 1]).item() == -1


def test_bool_cumsum_is_a_running_xor():
    x = _bools(3, 6)
    for axis, exclusive in itertools.product((0, 1, None), (False, True)):
        got = _run("cumsum", [x], axis=axis, exclusive=exclusive)
        flat = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else axis
        want = np.zeros(flat.shape, bool)
        for index in np.ndindex(*flat.shape):
            k = index[ax]
            lead = index[:ax] + (slice(0, k if exclusive else k + 1),) + index[ax + 1:]
            want[index] = int(flat[lead].sum()) % 2 == 1
        assert got.dtype == np.bool_ and np.array_equal(got, want), (axis, exclusive)
    counted = _run("cumsum", [x], axis=1, dtype="int32")
    assert counted.dtype == np.int32 and np.array_equal(counted, np.cumsum(x, axis=1))
    # dtype="bool" casts each element first: a NaN is false
    got = _run("cumsum", [np.array([2.0, np.nan, 0.0, 1.0], np.float32)], dtype="bool")
    assert got.tolist() == [True, True, True, False]


# TVM v0.14 src/runtime/contrib/sort/sort.cc on x86: data dtypes, and their index dtypes
_SORT_TAKES = {"float32", "float64", "float16", "int32", "int64"}
_TOPK_TAKES = _SORT_TAKES | {"int8", "uint8"}
_INDEX = {"int32", "int64", "float32", "float64"}
_ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", _ALL)
def test_the_sorts_run_only_the_dtypes_tvms_runtime_functions_take(dtype):
    x = np.array([3, 1, 2, 1]).astype(dtype)
    for op, takes, attrs in (("sort", _SORT_TAKES, {}), ("argsort", _SORT_TAKES, {}),
                             ("topk", _TOPK_TAKES, {"k": 2})):
        if dtype in takes:
            _run(op, [x], **attrs)
        else:
            with pytest.raises(KernelError, match=f'Unsupported input dtype: {dtype}"'):
                _run(op, [x], **attrs)
    for index in _ALL:
        ok = dtype in _SORT_TAKES and index in _INDEX
        ok_topk = dtype in _TOPK_TAKES and (index in _INDEX or index == dtype in ("int8", "uint8"))
        for op, fine, attrs in (("argsort", ok, {}), ("topk", ok_topk, {"k": 2})):
            if fine:
                got = _run(op, [x], dtype=index, **attrs)
                indices = got[1] if op == "topk" else got
                assert indices.dtype == np.dtype(index)
                # stable: the two 1s keep their order; topk takes the largest two
                want = [1, 3, 2, 0] if op == "argsort" else [0, 2]
                assert indices.astype(int).tolist() == want, (op, dtype, index)
            elif dtype in (_TOPK_TAKES if op == "topk" else _SORT_TAKES):
                with pytest.raises(KernelError, match=f'Unsupported output dtype: {index}"'):
                    _run(op, [x], dtype=index, **attrs)
    if dtype in _TOPK_TAKES:  # values only: TVM passes no index buffer
        assert _run("topk", [x], k=2, ret_type="values", dtype="int16").tolist() == [3, 2]


# ---------------------------------------------------------------------------------------------
# Every executor, and FoldConstant

B4 = np.array([[[[True, False, True], [True, True, False], [False, True, True]]]])
K2 = np.array([[[[True, True], [False, True]]]])
K1 = np.array([[[True, False], [True, True], [False, True]]])  # (O, C, W) for B4[0]

VALUES = [
    # (call, arguments, TVM's value)
    ("nn.conv2d(%a, %b)", [B4, K2], _odd(_conv2d_loops(B4, K2))),
    # conv1d: the same loops on a height of 1
    ("nn.conv1d(%a, %b)", [B4[0], K1],
     _odd(_conv2d_loops(B4[0][:, :, None, :], K1[:, :, None, :])[:, :, 0])),
    ("nn.conv2d_transpose(%a, %b)", [B4, K2], _odd(_conv2d_transpose_loops(B4, K2))),
    ("nn.pad(%a, %b, pad_width=[[0, 0], [0, 0], [1, 0], [0, 1]])", [K2, np.array(True)],
     np.array([[[[True, True, True], [True, True, True], [False, True, True]]]])),
    ("nn.upsampling(%a, scale_h=2f, scale_w=1f)", [K2],
     np.array([[[[True, True], [True, True], [False, True], [False, True]]]])),
    ("image.resize2d(%a, size=[1, 3], method=\"linear\", "
     "coordinate_transformation_mode=\"align_corners\")", [np.array([[[[True, False]]]])],
     np.array([[[[True, True, False]]]])),
    ("nn.global_max_pool2d(%a)", [K2], np.array([[[[True]]]])),
    ("nn.adaptive_avg_pool2d(%a, output_size=[2, 2])", [B4],
     np.array([[[[True, False], [True, True]]]])),
    ("cumsum(%a)", [np.array([True, True, False, True])], np.array([True, False, False, True])),
    # bool indices are TVM's 1-bit unsigned integers: 0 and 1
    ("take(%a, %b, axis=0)", [np.array([1, 2, 3], np.float32), np.array([True, False, True])],
     np.array([2, 1, 2], np.float32)),
    ("take(%a, %b, mode=\"wrap\")", [np.array([[5, 6]], np.int8), np.array([[True], [False]])],
     np.array([[6], [5]], np.int8)),
    ("topk(%a, k=2, ret_type=\"indices\", dtype=\"float32\")",
     [np.array([1, 5, 3], np.float32)], np.array([1, 2], np.float32)),
]

REFUSALS = [
    ("nn.global_avg_pool2d(%a)", [K2], "the window size 2 exceeds the maximum of bool"),
    ("sort(%a)", [np.array([True, False])], 'Unsupported input dtype: bool'),
    ("argsort(%a)", [np.array([3, 1], np.uint8)], 'Unsupported input dtype: uint8'),
    ("topk(%a, k=1)", [np.array([True, False])], 'Unsupported input dtype: bool'),
    ("topk(%a, k=1, dtype=\"int16\")", [np.array([3, 1], np.int8)],
     'Unsupported output dtype: int16'),
    # axes only lowering (cumsum) or the run-time function (sort) meets
    ("cumsum(%a, axis=1)", [np.array([1, 2], np.int32)], "cannot use axis 1 of a 1-d tensor"),
    ("sort(%a)", [np.array(1.5, np.float32)], "cannot use axis -1 of a 0-d tensor"),
]


def test_the_adaptive_value_case_is_the_loop_value():
    # adaptive 3 -> 2 windows [0, 2), [1, 3): the parity of each 2 x 2 block of B4
    x = B4[0, 0].astype(int)
    want = [[(x[i:i + 2, j:j + 2].sum() % 2) == 1 for j in range(2)] for i in range(2)]
    [case] = [c for c in VALUES if c[0].startswith("nn.adaptive_avg_pool2d")]
    assert case[2][0, 0].tolist() == want


@pytest.mark.parametrize("call,args,want", VALUES, ids=[c[0].split("(")[0] for c in VALUES])
def test_every_executor_computes_tvms_bool_value(call, args, want):
    for got in _all_executors(_program(call, args), args):
        assert not isinstance(got, str), got
        got = got[1] if isinstance(got, tuple) else got
        assert _same(got, want), (call, got, want)


@pytest.mark.parametrize("call,args,reason", REFUSALS, ids=[c[0].split("(")[0] for c in REFUSALS])
def test_every_executor_stops_with_tvms_reason_for_bool(call, args, reason):
    check_module(load_module(VERSION + _program(call, args), "parity.relay"))  # as in TVM
    for got in _all_executors(_program(call, args), args):
        assert isinstance(got, str) and reason in got, (call, got)


def _on_constants(call: str, args: list):
    """@main with the call's arguments as constants, before and after FoldConstant."""
    mod = load_module(VERSION + _program(call, args), "fold.relay")
    fn = mod.functions["main"]
    values = dict(zip(fn.params, args))
    body = fn.body
    assert isinstance(body, Call) and all(isinstance(a, Var) for a in body.args)
    mod.functions["main"] = Function(
        [], Call(body.op, [Constant(values[a], a.span) for a in body.args], body.attrs,
                 body.span), span=fn.span)
    mod = check_module(mod)
    return mod, check_module(fold_constant(mod))


@pytest.mark.parametrize("call,args,want", VALUES, ids=[c[0].split("(")[0] for c in VALUES])
def test_fold_constant_gives_tvms_bool_value(call, args, want):
    _mod, folded = _on_constants(call, args)
    body = folded.functions["main"].body
    value = body.data if isinstance(body, Constant) else Interpreter(folded).run("main", [])
    value = value[1] if isinstance(value, tuple) else value
    assert _same(value, want), (call, value)


@pytest.mark.parametrize("call,args,reason", REFUSALS, ids=[c[0].split("(")[0] for c in REFUSALS])
def test_fold_constant_leaves_a_refused_call_to_run_time(call, args, reason):
    _mod, folded = _on_constants(call, args)
    body = folded.functions["main"].body
    assert isinstance(body, Call) and body.op.name == call.split("(")[0]
    with pytest.raises(Exception, match=reason):
        Interpreter(folded).run("main", [])
