"""The VM plans the outputs of dynamic-shape operators at run time as TVM's does: a shape
kernel that reads input VALUES (data-dependent shape functions) feeds `alloc_tensor_reg`.
Differential runs (VM vs the reference interpreter, also after a `.rvmx` round trip), the
emitted code, and the errors: a bad run-time shape stops the VM at the instruction (exit 1),
a bad attribute is a located type error (exit 2)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from rvmdbg import cli
from rvmdbg.relay.interpreter import Interpreter, InterpreterError
from rvmdbg.relay.loader import load_module
from rvmdbg.values import values_equal
from rvmdbg.vm import serialize
from rvmdbg.vm.compiler import compile_module, compile_stages
from rvmdbg.vm.machine import VirtualMachine, VMError

HEADER = '#[version = "0.0.5"]\n'

RESHAPE_LIKE = """
def @main(%x: Tensor[(?, 6), float32], %y: Tensor[(?, ?), float32]) {
  %0 = shape_of(%y, dtype="int64");
  %1 = dyn.reshape(%x, %0);
  add(%1, 1f)
}"""

ZEROS = """
def @main(%s: Tensor[(2), int64]) {
  %0 = dyn.zeros(%s, dtype="float32");
  add(%0, 2f)
}"""

MIXED = """
def @main(%x: Tensor[(?, 3), float32], %s: Tensor[(3), int64], %b: Tensor[(1), int64],
          %e: Tensor[(1), int64], %st: Tensor[(1), int64], %r: Tensor[(2), int64]) {
  %0 = dyn.broadcast_to(%x, %s);
  %1 = dyn.strided_slice(%0, %b, %e, %st);
  %2 = dyn.tile(%x, %r);
  %3 = dyn.full(3i64, %r, dtype="float32");
  (%1, multiply(%2, 2f), %3, dyn.ones(%r, dtype="int32"))
}"""

_cache: dict = {}


def compiled(body: str):
    if body not in _cache:
        mod = load_module(HEADER + body, "<test>")
        _cache[body] = (mod, compile_module(mod))
    return _cache[body]


def both(body: str, args: list, exe=None):
    mod, default = compiled(body)
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(exe or default).invoke("main", args)
    return expected, got


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


def i64(*values):
    return np.array(values, dtype="int64")


@pytest.mark.parametrize("x, y", [((2, 6), (3, 4)), ((1, 6), (6, 1)), ((4, 6), (2, 12))])
def test_reshape_to_the_run_time_shape_of_another_tensor(x, y):
    expected, got = both(RESHAPE_LIKE, [f32(*x), f32(*y)])
    assert got.shape == y and values_equal(expected, got)
    assert np.array_equal(got, f32(*x).reshape(y) + 1)


@pytest.mark.parametrize("shape", [(2, 3), (0, 4), (5, 1)])
def test_zeros_of_a_shape_given_as_an_argument(shape):
    expected, got = both(ZEROS, [i64(*shape)])
    assert values_equal(expected, got) and np.array_equal(got, np.full(shape, 2, "float32"))


def test_mixed_dynamic_ops_agree_after_a_save_load_round_trip(tmp_path):
    _, exe = compiled(MIXED)
    path = tmp_path / "mixed.rvmx"
    serialize.save(exe, path)
    loaded = serialize.load(path)
    args = [f32(2, 3), i64(2, 2, 3), i64(1), i64(2), i64(1), i64(2, 1)]
    for executable in (exe, loaded):
        expected, got = both(MIXED, args, executable)
        assert values_equal(expected, got)
    sliced, tiled, full, ones = (got.fields[i] for i in range(4))
    assert np.array_equal(sliced, np.broadcast_to(f32(2, 3), (2, 2, 3))[1:2])
    assert np.array_equal(tiled, np.tile(f32(2, 3), (2, 1)) * 2)
    assert full.shape == (2, 1) and ones.dtype == np.int32


def test_the_shape_kernel_reads_the_argument_and_feeds_alloc_tensor_reg():
    _, exe = compiled(ZEROS)
    listing = exe.bytecode()
    lines = listing.splitlines()
    # the shape kernel's input is %s itself ($0), not a shape_of of it
    shape_call = next(line for line in lines if "invoke_packed PackedFunc[0]" in line)
    assert "(in: $0, out: $" in shape_call
    out_reg = re.search(r"out: (\$\d+)\)", shape_call).group(1)
    alloc = [line for line in lines if "alloc_tensor_reg" in line]
    assert alloc and alloc[0].split("#")[1].split()[4] == out_reg  # dst storage offset SHAPE
    assert exe.kernels[0].name.startswith("vm_mod_shape_func_")  # TVM 0.18 naming


def test_passes_show_is_input_and_dyn_reshape_becomes_reshape_tensor():
    mod, _ = compiled(ZEROS)
    stages, _ = compile_stages(mod)
    last = stages[-1].text
    assert "is_input=[1]" in last and "ShapeFunc=1" in last
    _, exe = compiled(RESHAPE_LIKE)
    text = exe.bytecode()
    assert "reshape_tensor" in text and "alloc_tensor_reg" in text


def test_a_data_dependent_call_stands_alone_in_its_kernel():
    """TVM makes it opaque: dyn.zeros and the add after it are two kernels."""
    _, exe = compiled(ZEROS)
    names = [k.name for k in exe.kernels]
    assert "vm_mod_fused_dyn_zeros" in names and "vm_mod_fused_add" in names


def test_cli_compile_passes_prints(capsys, tmp_path):
    path = tmp_path / "z.relay"
    path.write_text(HEADER + ZEROS)
    assert cli.main(["compile", str(path), "--passes"]) == 0
    out, _ = capsys.readouterr()
    assert "vm.shape_func(" in out and "is_input=[1]" in out


def test_a_run_time_shape_mismatch_stops_at_the_instruction(capsys, tmp_path):
    path = tmp_path / "r.relay"
    path.write_text(HEADER + RESHAPE_LIKE)
    code = cli.main(["run", str(path), "[[1, 2, 3, 4, 5, 6]]", "[[1, 2, 3, 4]]"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert "cannot reshape" in err
    assert re.search(r"at @main pc=\d+: invoke_packed PackedFunc\[\d+\]", err)
    assert "dyn.reshape" in err  # the Relay line
    with pytest.raises(VMError, match="cannot reshape"):
        VirtualMachine(compiled(RESHAPE_LIKE)[1]).invoke("main", [f32(1, 6), f32(1, 4)])
    with pytest.raises(InterpreterError, match="cannot reshape"):
        Interpreter(compiled(RESHAPE_LIKE)[0]).run("main", [f32(1, 6), f32(1, 4)])


def test_a_bad_attribute_is_a_located_type_error(capsys, tmp_path):
    path = tmp_path / "bad.relay"
    path.write_text(HEADER + ZEROS.replace('dtype="float32"', 'dtype="float31"'))
    code = cli.main(["run", str(path), "[2, 3]"])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert re.search(r"bad\.relay:4:\d+: error: .*dyn\.zeros.*dtype", err)
    assert "^" in err
