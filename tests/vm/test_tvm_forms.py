"""Forms of TVM's printed IR on the VM, against the interpreter: primitive functions bound by
`let`, called directly, passed on; a file that is one expression; codegen attributes."""
import numpy as np
import pytest

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.values import values_equal
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

HEADER = '#[version = "0.0.5"]\n'
T = "Tensor[(2), float32]"

PROGRAMS = {
    "let_bound": f"""
def @main(%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ multiply(%p0, 2f) }};
  %f(%f(%x))
}}""",
    "aliased_and_passed_on": f"""
def @apply(%g: fn ({T}) -> {T}, %v: {T}) -> {T} {{ %g(%v) }}
def @main(%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ multiply(%p0, 2f) }};
  let %h = %f;
  %0 = %h(%x);
  %1 = @apply(%f, %0);
  @apply(fn (%p0: {T}, Primitive=1) -> {T} {{ add(%p0, 1f) }}, %1)
}}""",
    "graph_bound_with_codegen_attrs": f"""
def @main(%x: {T}) -> {T} {{
  %0 = fn (%p0: {T}, Primitive=1, Compiler="ccompiler", global_symbol="f0", Inline=1) -> {T} {{
    exp(%p0)
  }};
  %1 = fn (%p0: {T}, Primitive=1, relay.reshape_only=1) -> Tensor[(2, 1), float32] {{
    reshape(%p0, newshape=[2, 1])
  }};
  %2 = %1(%0(%x));
  reshape(%2, newshape=[2])
}}""",
    "bare_expression": f"""
fn (%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ negative(%p0) }};
  add(%f(%x), %x)
}}""",
}


def run_both(text: str, args):
    mod = load_module(HEADER + text.lstrip("\n"), "t.relay")
    exe = compile_module(mod)
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(exe).invoke("main", args)
    return exe, expected, got


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vm_agrees_with_the_interpreter(name):
    x = np.array([1.5, -2.0], dtype="float32")
    _, expected, got = run_both(PROGRAMS[name], [x])
    assert values_equal(expected, got)


def test_a_let_bound_primitive_is_one_kernel_called_directly():
    exe, _, _ = run_both(PROGRAMS["let_bound"], [np.ones(2, "float32")])
    assert [f.name for f in exe.functions] == ["main"]
    assert len(exe.kernels) == 1
    listing = exe.bytecode()
    assert listing.count("invoke_packed PackedFunc[0]") == 2
    assert "alloc_closure" not in listing and "invoke_closure" not in listing


def test_a_primitive_passed_on_becomes_a_closure_over_one_kernel_call():
    exe, _, _ = run_both(PROGRAMS["aliased_and_passed_on"], [np.ones(2, "float32")])
    names = [f.name for f in exe.functions]
    assert names[:2] == ["apply", "main"] and len(names) == 4  # two lifted wrappers
    assert len(exe.kernels) == 2
