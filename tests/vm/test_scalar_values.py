"""Cheap scalars end to end (rvmdbg/scalars.py): each scalar-capable elementwise operator on
random 0-d operands, overflow and NaN included, gives the same value on the VM (run() and
step()), the reference interpreter and the graph executor as the operator's kernel on 0-d
arrays; every executor holds the result as a NumPy scalar; constants of every scalar dtype
survive an `.rvmx` round trip; and the `--json` form of a scalar is that of the 0-d array."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import get_op, normalize_attrs
from rvmdbg.scalars import SCALAR_OPS, SCALAR_TYPES, scalar_op
from rvmdbg.values import format_value, to_json, value_summary
from rvmdbg.vm import serialize
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")


def _values(dtype: str):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans().map(np.bool_)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = st.sampled_from([info.min, info.max, 0, 1])
        return st.one_of(edges, st.integers(int(info.min), int(info.max))).map(dt.type)
    return st.floats(width=dt.itemsize * 8).map(dt.type)


# (operator, dtype) pairs with a scalar path, two per operator to keep the suite quick:
# the first and last dtype it takes (tests/test_scalars.py checks every dtype at the kernel)
def _pairs():
    out = []
    for name in sorted(SCALAR_OPS - {"copy"}):
        arity = get_op(name).num_inputs
        ok = [d for d in DTYPES if scalar_op(name, (d,) * arity) is not None]
        out += [(name, d) for d in dict.fromkeys((ok[0], ok[-1]))]
    return out


PAIRS = _pairs()
VERSION = '#[version = "0.0.5"]\n'
_programs: dict = {}


def _program(name: str, dtype: str):
    """(module, executable, graph executor) of `main(%a, %b) = name(%a, %b)` at `dtype`."""
    key = (name, dtype)
    if key not in _programs:
        arity = get_op(name).num_inputs
        params = ", ".join(f"%p{i}: {dtype}" for i in range(arity))
        args = ", ".join(f"%p{i}" for i in range(arity))
        mod = load_module(f"{VERSION}def @main({params}) {{ {name}({args}) }}", "<scalar>")
        graph = lower_to_graph(mod, "main")
        _programs[key] = (mod, compile_module(mod), GraphExecutor(graph, plan_memory(graph)))
    return _programs[key]


def _same(got, want) -> bool:
    if type(got) not in SCALAR_TYPES or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f" and np.isnan(want):
        return bool(np.isnan(got))
    return bool(got == want)


@pytest.mark.parametrize("name,dtype", PAIRS)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_every_executor_computes_the_kernels_scalar(name, dtype, data):
    mod, exe, graph = _program(name, dtype)
    args = [data.draw(_values(dtype)) for _ in range(get_op(name).num_inputs)]
    op = get_op(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = op.kernel([np.asarray(a) for a in args], normalize_attrs(op, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warning escapes an executor
        vm = VirtualMachine(exe)
        ran = vm.invoke("main", args)
        vm.start("main", [np.asarray(a) for a in args])  # 0-d arrays in: the same
        while not vm.halted:
            vm.step()
        stepped = vm.result
        interp = Interpreter(mod).run("main", args)
        graphed = graph.run(args)
    for who, got in (("run", ran), ("step", stepped), ("interp", interp), ("graph", graphed)):
        assert _same(got, want), (who, name, dtype, args, got, want)


def test_int32_wraps_around_on_every_executor():
    text = VERSION + "def @main(%x: int32) -> int32 { %x * 65536 + 2147483647 }"
    mod = load_module(text, "<wrap>")
    exe = compile_module(mod)
    want = (70000 * 65536 + 2147483647 + 2 ** 31) % 2 ** 32 - 2 ** 31  # two's complement
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [VirtualMachine(exe).invoke("main", [np.int32(70000)]),
               Interpreter(mod).run("main", [np.int32(70000)])]
    assert all(type(g) is np.int32 and g == want for g in got)


def test_constants_of_every_dtype_survive_an_rvmx_round_trip(tmp_path):
    # one function per dtype, each adding or comparing with a constant of that dtype
    consts = {"int8": "-7i8", "int16": "300i16", "int32": "-2147483648", "int64": "5i64",
              "uint8": "255u8", "float16": "0.1f16", "float32": "0.1f", "float64": "0.1f64"}
    defs = "\n".join(f"def @f_{d}(%x: {d}) -> {d} {{ %x - {c} }}" for d, c in consts.items())
    defs += "\ndef @f_bool(%x: bool) -> bool { logical_and(%x, True) }"
    defs += "\ndef @main() -> int32 { 0 }"
    mod = load_module(VERSION + defs, "<consts>")
    exe = compile_module(mod, entries=("main", *(f"f_{d}" for d in [*consts, "bool"])))
    path = tmp_path / "consts.rvmx"
    serialize.save(exe, path)
    back = serialize.load(path)
    for d in [*consts, "bool"]:
        arg = np.dtype(d).type(1)
        a = VirtualMachine(exe).invoke(f"f_{d}", [arg])
        b = VirtualMachine(back).invoke(f"f_{d}", [arg])
        assert type(a) is type(b) is np.dtype(d).type, d
        assert a.tobytes() == b.tobytes(), d
        assert json.dumps(to_json(a)) == json.dumps(to_json(b)), d


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_scalar_prints_and_converts_to_json_as_the_0d_array(dtype):
    for v in (0, 1, -1, 0.1, 1e30, float("nan"), float("inf")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                a = np.array(v).astype(dtype)
            except (OverflowError, ValueError):
                continue
        s = a[()]
        assert type(s) in SCALAR_TYPES
        assert json.dumps(to_json(s)) == json.dumps(to_json(a))
        assert format_value(s) == format_value(a)
        assert value_summary(s) == value_summary(a)
