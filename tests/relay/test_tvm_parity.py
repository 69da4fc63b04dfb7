"""TVM parity of the operators (issue 10 §3, docs/tvm-parity.md): every probe of the parity
table type-checks or is refused as the table says (and a `+!` probe gets its note), and the
operators fixed for parity compute TVM's values, or stop with TVM's reason, on the VM, the
reference interpreter and the graph executor alike."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import OPS, SCALAR_FAST, KernelError, OpError, normalize_attrs
from rvmdbg.relay.typecheck import TypeNote, check_module
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

TABLE = Path(__file__).resolve().parents[2] / "docs" / "tvm-parity.md"
VERSION = '#[version = "0.0.5"]\n'

# ---------------------------------------------------------------------------------------------
# The parity table's probes

_PROBE = re.compile(r"`(\+!|-!|\+|-) ([\w.]+)\((.*?)\)`")
_TENSOR = re.compile(r"\s*(\w+)\[([^\]]*)\]\s*")


def _tensor(text: str) -> TensorType:
    m = _TENSOR.fullmatch(text)
    assert m, f"bad tensor in a probe: {text!r}"
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    return TensorType(tuple(None if d == "?" else int(d) for d in dims), m.group(1))


def _split_top(text: str) -> list:
    """Split at commas outside brackets and parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _arg(text: str):
    text = text.strip()
    if text.startswith("("):
        return TupleType(tuple(_tensor(t) for t in _split_top(text[1:-1])))
    return _tensor(text)


def _attrs(text: str) -> dict:
    out = {}
    for item in _split_top(text):
        key, _eq, value = item.partition("=")
        out[key.strip()] = ast.literal_eval(value.strip())  # literals only, never eval
    return out


def parse_probes(markdown: str) -> list:
    """(operators of the row, kind, op, arg types, attrs, probe text) for every probe."""
    probes = []
    for line in markdown.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split(" | ")
        ops = re.findall(r"`([\w.]+)`", cells[0])
        for m in _PROBE.finditer(cells[-1]):
            kind, op, inside = m.groups()
            args_text, _semi, attrs_text = inside.partition(";")
            args = [_arg(a) for a in _split_top(args_text)]
            probes.append((tuple(ops), kind, op, args, _attrs(attrs_text), m.group(0)))
    return probes


PROBES = parse_probes(TABLE.read_text(encoding="utf-8"))


def test_the_table_has_probes_for_every_operator_it_names():
    assert len(PROBES) > 50
    named = {op for ops, *_rest in PROBES for op in ops}
    probed = {p[2] for p in PROBES}
    assert named <= set(OPS), named - set(OPS)
    rows = {}
    for ops, *_rest in PROBES:
        rows.setdefault(ops, set()).add(_rest[1])
    for ops, used in rows.items():
        assert used <= set(ops), (ops, used)  # a probe belongs to its row's operators
    assert probed <= set(OPS)
    assert set(OPS) <= named, sorted(set(OPS) - named)  # every registered operator has a row


@pytest.mark.parametrize("ops,kind,op,args,attrs,text", PROBES, ids=[p[5] for p in PROBES])
def test_parity_probe(ops, kind, op, args, attrs, text):
    opdef = OPS[op]
    try:
        opdef.type_rel(args, attrs)
        accepted = True
    except OpError:
        accepted = False
    assert accepted == (kind in ("+", "+!")), text
    if accepted:
        note = opdef.tvm_note(args, normalize_attrs(opdef, attrs)) if opdef.tvm_note else None
        assert (note is not None) == (kind == "+!"), (text, note)


def test_a_note_reaches_check_at_the_call():
    mod = check_module(load_module(VERSION + "def @main(%x: Tensor[(3), int8]) {\n"
                                   "  clip(%x, a_min=-300f, a_max=5f)\n}\n", "clip.relay"))
    notes = [w for w in mod.warnings if isinstance(w, TypeNote)]
    assert len(notes) == 1
    text = notes[0].format()
    assert "clip.relay:3:3: note: TVM refuses this" in text
    assert "a_min=-300.0 a constant of int8" in text


# ---------------------------------------------------------------------------------------------
# Values and refusals on every executor

def _all_executors(body: str, args: list) -> list:
    """What the VM, the interpreter and the graph executor give: a value, or the kernel's
    error message."""
    mod = load_module(VERSION + body, "parity.relay")
    out = []
    runners = [
        lambda: VirtualMachine(compile_module(mod)).invoke("main", args),
        lambda: Interpreter(mod).run("main", args),
        lambda: GraphExecutor(*_graph(mod)).run(args),
    ]
    for run in runners:
        try:
            out.append(run())
        except Exception as e:  # each executor wraps the kernel's error its own way
            out.append("error: " + str(e))
    return out


def _graph(mod):
    graph = lower_to_graph(mod, "main")
    return graph, plan_memory(graph)


def _fn(params: str, expr: str) -> str:
    return f"def @main({params}) {{\n  {expr}\n}}\n"


def _t(shape, dtype):
    return f"Tensor[({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}), {dtype}]"


B1 = np.array([False, True, False, True])
B2 = np.array([False, False, True, True])

VALUE_CASES = [
    # (operator call with %a, %b, arguments, TVM's value)
    ("add(%a, %b)", [B1, B2], B1 ^ B2),
    ("subtract(%a, %b)", [B1, B2], B1 ^ B2),
    ("multiply(%a, %b)", [B1, B2], B1 & B2),
    ("divide(%a, %b)", [B1, np.ones(4, bool)], B1),
    ("floor_mod(%a, %b)", [B1, np.ones(4, bool)], np.zeros(4, bool)),
    ("sum(%a)", [np.array([True, True, True, False])], np.array(True)),
    # topi::sum reduces bools with tvm::any: a logical or, not the 1-bit parity
    ("sum(%a, axis=[1])", [np.array([[True, True], [True, False], [False, False]])],
     np.array([True, True, False])),
    ("prod(%a)", [B1], np.array(False)),
    ("mean(%a, axis=[1])", [np.array([[True], [False]])], np.array([True, False])),
    ("logical_xor(%a, %b)", [np.array([5, 3], "int32"), np.array([1, 1], "int32")],
     np.array([4, 2], "int32")),
    ("argmax(%a)", [B2], np.array(2, "int32")),
    ("mean(%a)", [np.array([-7, 2], "int8")], np.array(-2, "int8")),  # truncates toward 0
    ("mean(%a)", [np.array([1, 2, 2], "float16")], np.array(5 / 3, "float16")),
    ("variance(%a, %b)", [np.array([1, 2, 4], "int64"), np.array([2], "int64")],
     np.array(1, "int64")),  # (1 + 0 + 4) / 3 truncated
    ("variance(%a, %b, unbiased=True)", [np.array([1, 2, 4], "uint64"),
                                         np.array([2], "uint64")], np.array(2, "uint64")),
    ("not_equal(%a, %b)", [np.array([np.nan, 1], "float32"), np.array([np.nan, 2], "float32")],
     np.array([False, True])),
    ("where(%a, %b, %c)", [np.array([np.nan, 0, -2], "float32"), np.array([1, 1, 1], "int32"),
                           np.array([0, 0, 0], "int32")], np.array([0, 0, 1], "int32")),
    ("cast(%a, dtype=\"bool\")", [np.array([np.nan, 0, 3], "float32")],
     np.array([False, False, True])),
    ("nn.relu(%a)", [np.array([np.nan, -0.0, -1, 2], "float32")],
     np.array([0, 0, 0, 2], "float32")),
    ("maximum(%a, %b)", [np.array([np.nan, 1], "float32"), np.array([1, np.nan], "float32")],
     np.array([1, np.nan], "float32")),
    ("minimum(%a, %b)", [np.array([np.nan, 1], "float32"), np.array([1, np.nan], "float32")],
     np.array([1, np.nan], "float32")),
    ("clip(%a, a_min=-1f, a_max=0.5f)", [np.array([np.nan, 3, -4], "float32")],
     np.array([0.5, 0.5, -1], "float32")),
    ("negative(%a)", [B1], B1),
    # topi's sign is two ordered selects: NaN compares false both ways and gives 0
    ("sign(%a)", [np.array([np.nan, -np.nan, -2, 0, 3], "float32")],
     np.array([0, 0, -1, 0, 1], "float32")),
    ("tanh(%a)", [np.array([-0.0, np.inf, -np.inf, 30, -30], "float32")],
     np.array([0.0, 1, -1, 1, -1], "float32")),
    ("nn.dense(%a, %b, out_dtype=\"int32\")", [np.array([[200, 1, 2]], "uint8"),
                                                np.array([[-1, 2, 3]], "int8")],
     np.array([[-192]], "int32")),  # both cast to int32 first, as topi does
    ("nn.dense(%a, %b)", [np.array([[True, True, True]]), np.array([[True, True, False]])],
     np.array([[False]])),  # the parity of the ands
    ("nn.bias_add(%a, %b, axis=0)", [B1, B2], B1 ^ B2),
    ("nn.leaky_relu(%a, alpha=-2.5f)", [np.array([-5, 3], "int32")], np.array([10, 3], "int32")),
    ("nn.prelu(%a, %b, axis=0)", [np.array([-0.0, np.nan], "float32"),
                                   np.array([-1, 2], "float32")],
     np.array([0.0, np.nan], "float32")),
    ("nn.avg_pool2d(%a, pool_size=[2, 2])", [np.array([[[[-5, 0], [0, 0]]]], "int32")],
     np.array([[[[-1]]]], "int32")),  # -5 / 4 truncated toward zero
    ("nn.max_pool2d(%a, pool_size=[2, 2])", [np.array([[[[False, True], [False, False]]]])],
     np.array([[[[True]]]])),
]


def _program(call: str, args: list) -> str:
    names = ["%a", "%b", "%c"][:len(args)]
    params = ", ".join(f"{n}: {_t(a.shape, a.dtype)}" for n, a in zip(names, args))
    return _fn(params, call)


def _same(got, want) -> bool:
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        return bool(np.array_equal(got, want, equal_nan=True))
    return bool(np.array_equal(got, want))


@pytest.mark.parametrize("call", ["sign(%a)", "tanh(%a)"])
def test_sign_and_tanh_of_negative_zero_are_positive_zero_as_in_tvm(call):
    # sign: x > 0 ? 1 : (x < 0 ? -1 : 0); tanh: LLVM's legalization takes x >= 0's branch,
    # (1 - e^0) / (1 + e^0) = +0.0 (target/llvm/intrin_rule_llvm.cc)
    args = [np.array([-0.0, np.nan], "float32")]
    for got in _all_executors(_program(call, args), args):
        assert not isinstance(got, str), got
        assert got[0] == 0 and not np.signbit(got[0]), (call, got)


def test_tanh_is_llvms_formula_in_the_dtype():
    from rvmdbg.relay.ops import OPS
    x = np.array([1e-9, -1e-9, 0.25, 0.5, -3.0], "float32")
    one, two = np.float32(1), np.float32(2)
    en, ep = np.exp(-two * x), np.exp(two * x)
    want = np.where(x >= 0, (one - en) / (one + en), (ep - one) / (ep + one))
    got = OPS["tanh"].kernel([x], {})
    assert got.dtype == np.float32 and np.array_equal(got, want)
    assert got[0] == 0  # 1 - e^-2e-9 cancels in float32, as it does in TVM's kernel
    np.testing.assert_allclose(got[2:], np.tanh(x[2:]), rtol=1e-6)


@pytest.mark.parametrize("call,args,want", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_every_executor_computes_tvms_value(call, args, want):
    for got in _all_executors(_program(call, args), args):
        assert not isinstance(got, str), got
        assert _same(got, want), (call, got, want)


REFUSALS = [
    # (operator call, arguments, TVM's reason as the message gives it)
    ("power(%a, %b)", [np.array([2, 3], "int32")] * 2, "power only applies to float"),
    ("power(%a, %b)", [B1, B2], "TVM has no bool kernel"),
    ("nn.softmax(%a)", [np.array([[1, 2]], "int32")], "lowering calls a float intrinsic"),
    ("nn.log_softmax(%a)", [np.array([1, 2], "int8")], "lowering calls a float intrinsic"),
    ("logsumexp(%a)", [np.array([1, 2], "int32")], "lowering calls a float intrinsic"),
    ("logical_and(%a, %b)", [np.array([1, 0], "int32")] * 2, "needs boolean arguments"),
    ("logical_not(%a)", [np.array([1.0, 0.0], "float32")], "needs boolean arguments"),
    ("logical_xor(%a, %b)", [np.array([1.0], "float32")] * 2, "its ^ needs integer"),
    ("all(%a)", [np.array([1, 2], "int32")], "all reduces booleans only"),
    ("sign(%a)", [np.array([1, 2], "uint8")], "cannot make an unsigned -1"),
    ("mean(%a)", [B1], "the element count 4 exceeds the maximum of bool"),
    ("mean(%a)", [np.zeros(200, "int8")], "the element count 200 exceeds the maximum of int8"),
    ("variance(%a, %b)", [np.array([1, 2], "int32"), np.array([1], "int32")],
     "divides by an int64 count and returns int64"),
    ("std(%a, %b)", [np.array([1, 2], "int64"), np.array([1], "int64")],
     "lowering calls a float intrinsic"),
    ("nn.avg_pool2d(%a, pool_size=[2, 2])", [np.zeros((1, 1, 2, 2), "int8")],
     "divides by an int32 count and returns int32"),
    ("nn.layer_norm(%a, %b, %c)", [np.ones((2, 2), "int32")] + [np.ones(2, "int32")] * 2,
     "lowering calls a float intrinsic"),
    ("nn.l2_normalize(%a, eps=0.001f, axis=[1])", [np.ones((2, 2), "int32")],
     "lowering calls a float intrinsic"),
    ("nn.leaky_relu(%a, alpha=-1f)", [np.array([1, 2], "uint8")],
     "cannot make an unsigned -1"),
]


@pytest.mark.parametrize("call,args,reason", REFUSALS, ids=[f"{c[0]}-{c[1][0].dtype}"
                                                             for c in REFUSALS])
def test_every_executor_stops_with_tvms_reason(call, args, reason):
    check_module(load_module(VERSION + _program(call, args), "parity.relay"))  # as in TVM
    for got in _all_executors(_program(call, args), args):
        assert isinstance(got, str) and reason in got, (call, got)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum",
                                  "minimum", "logical_xor", "not_equal", "power"])
@pytest.mark.parametrize("x,y", [(True, True), (True, False), (False, True)])
def test_the_scalar_path_agrees_with_the_array_path_on_bools(name, x, y):
    a, b = np.array(x), np.array(y)

    def call(f):
        try:
            return f()
        except KernelError as e:
            return e.message
    scalar = call(lambda: SCALAR_FAST[name](a, b))
    array = call(lambda: OPS[name].kernel([a.reshape(1), b.reshape(1)], {}))
    if isinstance(array, np.ndarray):
        assert isinstance(scalar, np.ndarray) and scalar.dtype == array.dtype
        assert scalar.item() == array.item()
    else:
        assert scalar == array


# ---------------------------------------------------------------------------------------------
# Calls TVM's relations accept that rvmdbg refused before: float indices of gather_nd and
# one_hot, a float shape_of dtype, variance of mixed dtypes, and the values TVM's lowering
# gives NaN in max/min/argmax/argmin and narrow integers in global/adaptive average pooling

NAN, INF = np.nan, np.inf
F4 = np.arange(4, dtype="float32") * 10


def _f32(*values):
    return np.array(values, "float32")


TVM_VALUE_CASES = [
    # gather_nd: topi casts float indices to int32, truncating toward zero
    ("gather_nd(%a, %b)", [F4, np.array([[2.9, -0.5, 1.0]], "float32")], _f32(20, 0, 10)),
    ("gather_nd(%a, %b)", [np.arange(6, dtype="float32").reshape(2, 3),
                           np.array([[1.5], [2.2]], "float16")], _f32(5)),
    # one_hot: the position, cast to the indices' float dtype, compared with them
    ("one_hot(%a, 1f, 0f, depth=3, axis=-1, dtype=\"float32\")", [_f32(1, 1.5, NAN, 2)],
     np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1]], "float32")),
    ("one_hot(%a, 5, 0, depth=2, axis=0, dtype=\"int32\")", [np.array([True, False])],
     np.array([[0, 5], [5, 0]], "int32")),  # bool as 0 and 1
    # shape_of: each dimension cast to the dtype
    ("shape_of(%a, dtype=\"float16\")", [np.zeros((3, 2), "int8")], np.array([3, 2], "float16")),
    ("shape_of(%a, dtype=\"bool\")", [np.zeros((3, 0), "int8")], np.array([True, False])),
    # variance: data - mean in TIR's common dtype
    ("variance(%a, %b, axis=[1])", [np.array([[1, 2, 6]], "float32"),
                                    np.array([[3]], "float16")], _f32(14 / 3)),
    ("variance(%a, %b)", [np.array([1, 3], "float16"), np.array([1.5], "float64")],
     np.array(1.25, "float16")),
    ("variance(%a, %b)", [np.array([1, 5], "int64"), np.array([2], "int8")],
     np.array(5, "int64")),  # (1 + 9) / 2
    ("variance(%a, %b)", [np.array([3, 5], "uint64"), np.array([4], "int64")],
     np.array(1, "uint64")),
    # max/min: acc > v ? acc : v from the finite lowest value, row-major
    ("max(%a)", [_f32(NAN, 1)], _f32(1).reshape(())),
    ("max(%a)", [_f32(1, NAN)], _f32(NAN).reshape(())),
    ("max(%a, axis=[1])", [np.array([[NAN, -INF], [2, NAN]], "float32")], _f32(-INF, NAN)),
    ("max(%a)", [_f32(-INF, -INF)], np.array(np.finfo(np.float32).min, "float32")),
    ("min(%a)", [np.array([INF], "float16")], np.array(65504, "float16")),
    ("min(%a)", [_f32(0.0, -0.0)], _f32(-0.0).reshape(())),
    # argmax/argmin: (index, value) from (-1, the dtype's bound), NaN taken then replaced
    ("argmax(%a)", [_f32(NAN, 1, 0)], np.array(1, "int32")),
    ("argmax(%a)", [_f32(3, NAN)], np.array(1, "int32")),
    ("argmin(%a, axis=[1])", [np.array([[NAN, 2, 1], [1, 1, NAN]], "float32")],
     np.array([2, 2], "int32")),
    ("argmax(%a)", [np.zeros(3, "uint8")], np.array(-1, "int32")),
    ("argmax(%a, select_last_index=True)", [np.zeros(3, "uint8")], np.array(2, "int32")),
    ("argmax(%a)", [np.zeros(2, bool)], np.array(-1, "int32")),
    ("argmin(%a)", [_f32(INF, INF)], np.array(-1, "int32")),
    # global/adaptive average pooling: the window's height and width cast to the dtype and
    # multiplied in it (int8 12 * 12 wraps to -112); the sum wraps in the dtype too
    ("nn.global_avg_pool2d(%a)", [np.full((1, 1, 12, 12), 2, "int8")],
     np.full((1, 1, 1, 1), 0, "int8")),  # the sum 288 wraps to 32; 32 / -112 is 0
    ("nn.global_avg_pool2d(%a)", [np.full((1, 1, 2, 2), -7, "int16")],
     np.full((1, 1, 1, 1), -7, "int16")),
    ("nn.adaptive_avg_pool2d(%a, output_size=[1, 2])", [np.arange(12, dtype="int8").reshape(
        1, 1, 3, 4)], np.array([[[[4, 6]]]], "int8")),
    # max pooling: the same reducer as max, over each window in row-major order
    ("nn.max_pool2d(%a, pool_size=[1, 2])", [np.array([[[[NAN, 1, NAN]]]], "float32")],
     np.array([[[[1, NAN]]]], "float32")),
    ("nn.global_max_pool2d(%a)", [np.array([[[[1, NAN], [-INF, -INF]]]], "float32")],
     np.array([[[[-INF]]]], "float32")),
    ("nn.max_pool1d(%a, pool_size=[1])", [np.array([[[-INF]]], "float32")],
     np.array([[[np.finfo(np.float32).min]]], "float32")),
    # an empty reduction: the reducer's start value
    ("max(%a, axis=[1])", [np.zeros((2, 0), "float16")], np.full(2, -65504, "float16")),
    ("argmax(%a, axis=[0])", [np.zeros((0, 2), "int32")], np.array([-1, -1], "int32")),
    # fast_erf clamps a NaN to 4 with its ordered selects; fast_exp gives the NaN back
    ("fast_erf(%a)", [_f32(NAN, -INF)], _f32(1, -1)),
    ("fast_exp(%a)", [_f32(NAN, -INF)], _f32(NAN, 0)),
]


@pytest.mark.parametrize("call,args,want", TVM_VALUE_CASES, ids=[c[0] for c in TVM_VALUE_CASES])
def test_every_executor_computes_tvms_value_of_relaxed_dtypes(call, args, want):
    check_module(load_module(VERSION + _program(call, args), "parity.relay"))
    for got in _all_executors(_program(call, args), args):
        assert not isinstance(got, str), got
        assert _same(got, want), (call, got, want)
        if want.dtype.kind == "f":  # the sign of a zero too (min of 0.0 and -0.0)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (call, got, want)


TVM_REFUSALS = [
    # (call, arguments, the reason the run stops with)
    ("variance(%a, %b)", [_f32(1, 2), np.array([1], "float64")],
     "divides by an int64 count and returns float64"),
    ("variance(%a, %b)", [np.array([1, 2], "int64"), np.array([1], "uint64")],
     "divides by an int64 count and returns uint64"),
    ("nn.global_avg_pool2d(%a)", [np.zeros((1, 1, 16, 16), "int8")],
     "integer division by zero"),  # 16 * 16 wraps to 0 in int8
    ("nn.global_avg_pool2d(%a)", [np.zeros((1, 1, 128, 1), "int8")],
     "the window size 128 exceeds the maximum of int8"),
    ("gather_nd(%a, %b)", [F4, _f32(NAN).reshape(1, 1)], "index nan is out of range"),
    ("gather_nd(%a, %b)", [F4, _f32(4.5).reshape(1, 1)], "index 4.5 is out of range"),
    ("gather_nd(%a, %b)", [F4, np.array([[True]])], "indexes with bool indices unconverted"),
    # integer division by zero: undefined in TVM (LLVM's sdiv/srem, SIGFPE on x86), a clear
    # stop here (docs/differences.md)
] + [
    (f"{name}(%a, %b)", [np.array([5], dtype), np.array([0], dtype)], "integer division by zero")
    for name, dtype in [("divide", "int32"), ("floor_divide", "int8"), ("trunc_divide", "int64"),
                        ("mod", "uint8"), ("floor_mod", "int32"), ("trunc_mod", "int16")]
] + [
    ("divide(%a, %b)", [np.array([True]), np.array([False])], "integer division by zero"),
    # bool and narrow dtypes (test_tvm_parity_bool.py): make_const of the bool window size,
    # the dtypes TVM v0.14's sort functions (src/runtime/contrib/sort/sort.cc) take
    ("nn.global_avg_pool2d(%a)", [np.array([[[[True, True], [False, True]]]])],
     "the window size 2 exceeds the maximum of bool"),
    ("sort(%a)", [np.array([True, False])], "Unsupported input dtype: bool"),
    ("argsort(%a)", [np.array([3, 1], np.uint8)], "Unsupported input dtype: uint8"),
    ("topk(%a, k=1)", [np.array([True, False])], "Unsupported input dtype: bool"),
    ("topk(%a, k=1, dtype=\"int16\")", [np.array([3, 1], np.int8)],
     "Unsupported output dtype: int16"),
    # axes only lowering (cumsum) or the run-time function (sort) meets
    ("cumsum(%a, axis=1)", [np.array([1, 2], np.int32)], "cannot use axis 1 of a 1-d tensor"),
    ("sort(%a)", [np.array(1.5, np.float32)], "cannot use axis -1 of a 0-d tensor"),
]


REFUSAL_IDS = [f"{c[0]}-{c[1][0].dtype}-{c[1][1].dtype if len(c[1]) > 1 else ''}"
               f"{c[1][-1].shape}" for c in TVM_REFUSALS]


@pytest.mark.parametrize("call,args,reason", TVM_REFUSALS, ids=REFUSAL_IDS)
def test_every_executor_stops_where_tvms_lowering_refuses_relaxed_dtypes(call, args, reason):
    check_module(load_module(VERSION + _program(call, args), "parity.relay"))  # as in TVM
    for got in _all_executors(_program(call, args), args):
        assert isinstance(got, str) and reason in got, (call, got)


def folded(call: str, args: list):
    """The checked module whose @main is `call` on its arguments given as constants, after
    FoldConstant."""
    from rvmdbg.passes.fold_constant import fold_constant
    from rvmdbg.relay.ast import Constant, ExprMutator, Function, map_functions

    mod = load_module(VERSION + _program(call, args), "fold.relay")
    main = mod.functions["main"]
    constants = {p: Constant(a) for p, a in zip(main.params, args)}

    class Bind(ExprMutator):
        def visit_Var(self, e):
            return constants.get(e, e)

    body = Bind().visit(main.body)
    bound = check_module(map_functions(mod, lambda name, f: Function([], body)))
    return check_module(fold_constant(bound))


@pytest.mark.parametrize("call,args,want", TVM_VALUE_CASES[::3] + TVM_VALUE_CASES[10:16],
                         ids=[c[0] for c in TVM_VALUE_CASES[::3] + TVM_VALUE_CASES[10:16]])
def test_fold_constant_gives_tvms_value_of_relaxed_dtypes(call, args, want):
    from rvmdbg.relay.ast import Constant
    body = folded(call, args).functions["main"].body
    assert isinstance(body, Constant) and _same(body.data, want), (call, body)


@pytest.mark.parametrize("call,args,reason", TVM_REFUSALS, ids=REFUSAL_IDS)
def test_fold_constant_leaves_a_refused_call_to_run(call, args, reason):
    from rvmdbg.relay.ast import Call
    mod = folded(call, args)
    body = mod.functions["main"].body
    assert isinstance(body, Call) and body.op.name == call.split("(")[0]
    with pytest.raises(Exception, match=re.escape(reason)):
        Interpreter(mod).run("main", [])


def test_sorts_with_nan_keep_the_documented_order():
    # TVM's comparator leaves NaNs where libstdc++'s merge puts them (undefined); rvmdbg's rule,
    # docs/differences.md: ascending puts NaNs last, descending first, each in index order
    from rvmdbg.relay.ops import OPS
    x = np.array([2, np.nan, 1, np.nan, 3], "float32")
    sort, argsort, topk = (OPS[n].kernel for n in ("sort", "argsort", "topk"))
    up = {"axis": -1, "is_ascend": True}
    down = {"axis": -1, "is_ascend": False}
    assert argsort([x], dict(up, dtype="int32")).tolist() == [2, 0, 4, 1, 3]
    assert argsort([x], dict(down, dtype="int32")).tolist() == [1, 3, 4, 0, 2]
    assert np.array_equal(sort([x], up), [1, 2, 3, np.nan, np.nan], equal_nan=True)
    values, indices = topk([x], dict(down, k=3, ret_type="both", dtype="int32"))
    assert indices.tolist() == [1, 3, 4]
