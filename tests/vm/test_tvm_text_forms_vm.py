"""Forms of TVM text the VM runs as TVM's VM compiler would: a file that is one partitioned
`fn (..., Primitive=1)`, TVM 0.6's `_contrib_reverse_reshape` as test_vm uses it, a module
mixing the memory dialect with plain operator calls (issue 28, items 20, 21, 23)."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

HEADER = '#[version = "0.0.5"]\n'


def _module(text: str, name: str = "t.relay"):
    return check_module(load_module(text, name))


def _opcodes(exe, name="main"):
    return [type(i).__name__ for i in exe.function(name).instructions]


PARTITIONED = HEADER + """\
fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
  %0 = nn.bias_add(%p0, %p1, axis=1);
  nn.relu(%0)
}
"""


def test_a_bare_primitive_fn_runs_on_the_vm_as_one_kernel_call():
    mod = _module(PARTITIONED)
    exe = compile_module(mod)
    assert [f.name for f in exe.functions] == ["main"]
    assert [p for p in exe.function("main").params] == ["p0", "p1"]
    assert _opcodes(exe).count("InvokePacked") == 1 and len(exe.kernels) == 1
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    b = np.array([1, 1, -10], np.float32)
    got = VirtualMachine(exe).invoke("main", [x, b])
    assert np.array_equal(got, np.maximum(x + b, 0))
    assert np.array_equal(Interpreter(_module(PARTITIONED)).run("main", [x, b]), got)


def test_a_primitive_global_that_main_calls_stays_a_kernel():
    text = HEADER + """\
def @k(%a: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] { negative(%a) }
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { @k(%x) }
"""
    exe = compile_module(_module(text))
    assert [f.name for f in exe.functions] == ["main"]
    got = VirtualMachine(exe).invoke("main", [np.array([1, -2], np.float32)])
    assert got.tolist() == [-1, 2]
