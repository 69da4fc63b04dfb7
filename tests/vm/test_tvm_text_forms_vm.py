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


# TVM's test_pass_dead_code_elimination.py, test_impure_op (apache/tvm v0.13.0), with the size
# a parameter so the cast is no constant: the dialect beside a plain operator call
IMPURE = HEADER + """\
def @main(%n: int32) {
   let %size: int64 = cast(%n, dtype="int64");
   let %alignment: int64 = cast(64, dtype="int64");
   let %x = memory.alloc_storage(%size, %alignment);
   let %_ = memory.kill(%x);
   0
}
"""


def test_memory_dialect_beside_plain_operator_calls_is_fused_and_run():
    from rvmdbg.passes.pipeline import memory_stage
    mod = _module(IMPURE)
    assert memory_stage(mod) is None  # not a printed late stage: every pass runs
    exe = compile_module(mod)
    ops = _opcodes(exe)
    # FuseOps made the cast a kernel; the dialect's calls stay as written (TVM: non-computational)
    assert ops.count("InvokePacked") == 1 and ops.count("AllocStorage") == 2
    assert "KillRegister" in ops
    assert exe.kernels[0].name.endswith("fused_cast")
    assert VirtualMachine(exe).invoke("main", [np.int32(1024)]) == 0
    assert Interpreter(_module(IMPURE)).run("main", [np.int32(1024)]) == 0


def test_a_printed_late_stage_still_skips_the_passes_it_is_past():
    from rvmdbg.passes.pipeline import memory_stage
    text = HEADER + """\
def @main() {
  let %s = memory.alloc_storage(16i64, 64i64);
  let %_ = memory.kill(%s);
  0
}
"""
    assert memory_stage(_module(text)) == "ManifestLifetimes"


@pytest.mark.parametrize("call", ["contrib_reverse_reshape(%0, newshape=[-1, 4, 0])",
                                  "_contrib_reverse_reshape(%0, newshape=[-1, 4, 0], "
                                  "reverse=True)"])
def test_reverse_reshape_as_tvms_test_vm_uses_it(call):
    # apache/tvm tests/python/relay/test_vm.py, test_vm_reshape_tensor: reshape(x, [16, -1])
    # then reverse_reshape(y, [-1, 4, 0]) compiles to one reshape_tensor; TVM 0.6 spelled the
    # operator _contrib_reverse_reshape with reverse=True
    text = HEADER + f"""\
def @main(%x: Tensor[(8, 16), float32]) {{
  %0 = reshape(%x, newshape=[16, -1]);
  {call}
}}
"""
    exe = compile_module(_module(text))
    assert _opcodes(exe).count("ReshapeTensor") == 1
    x = np.random.default_rng(0).uniform(size=(8, 16)).astype(np.float32)
    got = VirtualMachine(exe).invoke("main", [x])
    assert got.shape == (4, 4, 8) and np.array_equal(got, x.reshape(4, 4, 8))
