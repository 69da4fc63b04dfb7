"""--max-bytes and the memory a kernel holds (issue 16): a fused kernel drops each
intermediate after its last use, knows from the static types the most bytes of
intermediates it holds at once, and the VM checks those against the limit before calling it,
on run() (fused blocks included) and on single steps; the interpreter checks an operator's
output of a shape known only at run time against the limit before the kernel allocates."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.limits import Limits
from rvmdbg.relay.interpreter import Interpreter, InterpreterError
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine, VMError
from rvmdbg.vm.pool import round_to_page

N = 200     # a 200x200 float32 tensor: 160,000 bytes
MB = 4 * N * N
CHAIN = f'''#[version = "0.0.5"]
def @main(%x: Tensor[({N}, {N}), float32]) -> Tensor[({N}, {N}), float32] {{
  %0 = fn (%p: Tensor[({N}, {N}), float32], Primitive=1) -> Tensor[({N}, {N}), float32] {{
    %1 = add(%p, 1f);
    %2 = multiply(%1, 2f);
    %3 = add(%2, %1);
    %4 = exp(%3);
    %5 = add(%4, %2);
    negative(%5)
  }};
  %0(%x)
}}
'''
DYNAMIC = '''#[version = "0.0.5"]
def @main(%x: Tensor[(?), float32]) {
  multiply(expand_dims(%x, axis=1), %x)
}
'''


def _module(text):
    return check_module(load_module(text, "<t>"))


def test_a_fused_kernel_knows_the_intermediates_it_holds_at_once():
    exe = compile_module(_module(CHAIN))
    (kernel,) = [k for k in exe.kernels if not k.builtin]
    # %1 and %2 live while %3 is made (three tensors); each is dropped after its last use,
    # and the result is the VM's own allocation, counted there
    assert kernel.impl.intermediate_bytes == 3 * MB


def test_the_fused_kernel_computes_the_same_with_intermediates_dropped():
    exe = compile_module(_module(CHAIN))
    x = np.linspace(-1, 1, N * N, dtype="float32").reshape(N, N)
    out = VirtualMachine(exe).invoke("main", [x])
    x1 = x + np.float32(1)
    x2 = x1 * np.float32(2)
    assert np.allclose(out, -(np.exp(x2 + x1) + x2), rtol=1e-6)


def _run_to_end(vm, x, by_steps: bool):
    """@main on `x`, by run() or by single steps."""
    if by_steps:
        vm.start("main", [x])
        while not vm.halted:
            vm.step()
    else:
        vm.invoke("main", [x])


@pytest.mark.parametrize("by_steps", [False, True])
def test_the_vm_checks_a_kernels_intermediates_before_calling_it(by_steps):
    exe = compile_module(_module(CHAIN))
    x = np.zeros((N, N), dtype="float32")
    # the output's storage (as the pool rounds it: whole pages) and the peak of intermediates
    enough = round_to_page(MB) + 3 * MB
    assert VirtualMachine(exe, Limits(max_bytes=enough)).invoke("main", [x]).shape == (N, N)
    vm = VirtualMachine(exe, Limits(max_bytes=enough - 1))
    with pytest.raises(VMError) as info:
        _run_to_end(vm, x, by_steps)
    assert info.value.limit == "max_bytes"
    assert f"would hold {3 * MB} bytes of intermediates" in info.value.message


def test_the_interpreter_checks_a_run_time_shape_before_allocating():
    mod = _module(DYNAMIC)
    x = np.ones(30_000, dtype="float32")       # the product would be 3.6 GB
    interp = Interpreter(mod, Limits(max_bytes=100_000_000))
    with pytest.raises(InterpreterError) as info:
        interp.run("main", [x])
    assert "would allocate 3600000000 bytes" in info.value.message
    small = Interpreter(mod, Limits(max_bytes=100_000_000)).run("main", [x[:100]])
    assert small.shape == (100, 100)


# a fused kernel whose intermediate (an n x n product) has a shape known only at run time
DYNAMIC_INTERMEDIATE = '''#[version = "0.0.5"]
def @main(%x: Tensor[(?), float32]) -> float32 {
  sum(multiply(expand_dims(%x, axis=1), %x))
}
'''


@pytest.mark.parametrize("by_steps", [False, True])
def test_a_run_time_shaped_intermediate_is_checked_before_it_is_made(by_steps):
    exe = compile_module(_module(DYNAMIC_INTERMEDIATE))
    (kernel,) = [k for k in exe.kernels if not k.builtin and "sum" in k.name]
    assert kernel.impl.intermediate_bytes is None      # not known from the types
    x = np.ones(30_000, dtype="float32")                # the product would be 3.6 GB
    vm = VirtualMachine(exe, Limits(max_bytes=100_000_000))
    with pytest.raises(VMError) as info:
        _run_to_end(vm, x, by_steps)
    assert info.value.limit == "max_bytes"
    # the n x n product and expand_dims' n x 1 (fused in, a broadcast op as in TVM)
    assert "would hold 3600120000 bytes of intermediates at multiply" in info.value.message
    # small enough: the same kernel runs, and gives the product's sum
    out = VirtualMachine(exe, Limits(max_bytes=100_000_000)).invoke("main", [x[:100]])
    assert float(out) == 100 * 100
