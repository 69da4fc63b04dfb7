"""ManifestAlloc and ManifestLifetimes: explicit allocation, destination passing, kills."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_helpers import f32, i32, load, nodes, run, same

from rvmdbg.passes.manifest_alloc import (ALLOC_STORAGE, ALLOC_TENSOR, DIALECT_OPS, INVOKE_TVM_OP,
                                          KILL, RESHAPE_TENSOR, SHAPE_FUNC, SHAPE_OF,
                                          manifest_alloc)
from rvmdbg.passes.manifest_lifetimes import manifest_lifetimes
from rvmdbg.passes.pipeline import DEFAULT_PASSES, Pipeline, default_pipeline
from rvmdbg.relay.ast import Call, Function, Let, OpRef, Var
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.types import StorageType, TensorType
from rvmdbg.values import make_tuple
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

PROGRAMS = sorted((Path(__file__).resolve().parents[2] / "programs").glob("*.relay"))
BEFORE = Pipeline([p for p in DEFAULT_PASSES if p.name not in ("ManifestAlloc", "ManifestLifetimes")])


def lowered(text: str):
    """(module before ManifestAlloc, after it, after ManifestLifetimes)."""
    before = BEFORE.apply(load(text))
    alloc = manifest_alloc(before)
    return before, alloc, manifest_lifetimes(alloc)


def chain(e) -> list:
    """(var, value) bindings of a let chain, then ("tail", atom)."""
    out = []
    while isinstance(e, Let):
        out.append((e.var, e.value))
        e = e.body
    return out + [("tail", e)]


def dialect_name(value):
    if isinstance(value, Call) and isinstance(value.op, OpRef) and value.op.name in DIALECT_OPS:
        return value.op.name
    return None


def dialect_sequence(e) -> list:
    return [n for n in (dialect_name(v) for _, v in chain(e)) if n is not None]


def vm_run(mod_or_text, *args, entry="main"):
    exe = compile_module(load(mod_or_text) if isinstance(mod_or_text, str) else mod_or_text)
    return VirtualMachine(exe).invoke(entry, list(args))


def test_pipeline_ends_with_the_memory_passes():
    assert default_pipeline().names()[-3:] == ["ManifestAlloc", "ManifestLifetimes", "MemoryPlan"]


def test_static_call_becomes_storage_tensor_and_invoke():
    _, alloc, _ = lowered("""
def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  (%a + %b) * %a
}""")
    bindings = chain(alloc.functions["main"].body)
    assert dialect_sequence(alloc.functions["main"].body) == [ALLOC_STORAGE, ALLOC_TENSOR,
                                                               INVOKE_TVM_OP]
    storage = bindings[0][1]
    assert int(storage.args[0].data) == 2 * 3 * 4 and storage.attrs["alignment"] == 64
    assert storage.attrs["dtype_hint"] == "float32"
    assert bindings[0][0].checked_type == StorageType()
    tensor = bindings[1][1]
    assert tensor.args[0] is bindings[0][0]
    assert tensor.attrs["const_shape"] == [2, 3] and tensor.attrs["dtype"] == "float32"
    invoke = bindings[2][1]
    prim, ins, outs = invoke.args
    assert isinstance(prim, Function) and prim.is_primitive
    assert [v.name for v in ins.fields] == ["a", "b"]
    assert outs.fields == [bindings[1][0]]
    # the let that bound the call now binds the output tensor (an alias: no copy)
    result_var, value = bindings[3]
    assert value is bindings[1][0]
    assert bindings[4] == ("tail", result_var)


def test_no_primitive_call_survives_and_every_node_is_typed():
    for path in PROGRAMS:
        mod = default_pipeline().apply(load(path.read_text()))
        for fn in mod.functions.values():
            for n in nodes(fn, enter_primitives=False):
                assert n.checked_type is not None, (path.name, type(n).__name__)
                if isinstance(n, Call) and isinstance(n.op, Function):
                    pytest.fail(f"{path.name}: a primitive call survived ManifestAlloc")
        text = print_module(mod)
        assert "memory.alloc_storage(" in text or "vm.invoke_tvm_op" not in text


def test_stage_prints_readably():
    stages = default_pipeline().run(load("""
def @main(%x: float32) -> float32 { %x * 2f + 1f }"""))
    text = {s.name: s.text for s in stages}["ManifestAlloc"]
    assert 'let %storage_0 = memory.alloc_storage(4i64, alignment=64, dtype_hint="float32");' in text
    assert 'memory.alloc_tensor(%storage_0, 0i64' in text and "const_shape=[]" in text
    assert "vm.invoke_tvm_op(fn (" in text and "(%x,), (%tensor_0,));" in text


def test_dynamic_output_computes_its_shape_at_run_time():
    text = """
def @main(%a: Tensor[(?,), float32], %b: Tensor[(?,), float32]) -> Tensor[(?,), float32] {
  %a * %b + %a
}"""
    _, alloc, _ = lowered(text)
    seq = dialect_sequence(alloc.functions["main"].body)
    assert seq[:2] == [SHAPE_OF, SHAPE_OF] and SHAPE_FUNC in seq
    assert seq[-1] == INVOKE_TVM_OP
    tensors = [v for _, v in chain(alloc.functions["main"].body) if dialect_name(v) == ALLOC_TENSOR]
    data_tensor = tensors[-1]
    assert "const_shape" not in data_tensor.attrs  # shape from a register: alloc_tensor_reg
    assert data_tensor.checked_type == TensorType((None,), "float32")
    for n in (3, 0, 7):
        a, b = f32(np.arange(n)), f32(np.arange(n) + 1)
        assert same(vm_run(text, a, b), a * b + a)


def test_reshape_only_primitive_becomes_reshape_tensor():
    text = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(3, 2), float32] {
  reshape(%x, newshape=[3, 2])
}"""
    _, alloc, _ = lowered(text)
    seq = dialect_sequence(alloc.functions["main"].body)
    assert seq == [RESHAPE_TENSOR]
    x = f32(np.arange(6).reshape(2, 3))
    assert same(vm_run(text, x), x.reshape(3, 2))


@pytest.mark.parametrize("call, shape", [
    ("nn.batch_flatten(%x)", (2, 12)),
    ("contrib_reverse_reshape(%x, newshape=[4, -1])", (4, 6)),
    ("expand_dims(squeeze(reshape(%x, newshape=[1, 24]), axis=[0]), axis=0)", (1, 24)),
])
def test_every_tvm_reshape_op_becomes_reshape_tensor(call, shape):
    # TVM registers nn.batch_flatten and contrib_reverse_reshape as TReshapeOp too: a group of
    # them alone is relay.reshape_only, and its call a reshape_tensor, not a kernel
    text = f"def @main(%x: Tensor[(2, 3, 4), float32]) {{ {call} }}"
    _, alloc, _ = lowered(text)
    assert dialect_sequence(alloc.functions["main"].body) == [RESHAPE_TENSOR]
    x = f32(np.arange(24).reshape(2, 3, 4))
    assert same(vm_run(text, x), x.reshape(shape))


def test_batch_flatten_of_a_dynamic_batch_reshapes_by_its_shape_function():
    text = "def @main(%x: Tensor[(?, 2, 3), float32]) { nn.batch_flatten(%x) }"
    _, alloc, _ = lowered(text)
    seq = dialect_sequence(alloc.functions["main"].body)
    assert seq[-1] == RESHAPE_TENSOR and INVOKE_TVM_OP not in seq
    for n in (1, 3):
        x = f32(np.arange(6 * n).reshape(n, 2, 3))
        assert same(vm_run(text, x), x.reshape(n, 6))


def test_tuple_parameters_are_split_into_tensors():
    text = """
def @main(%t: (Tensor[(2,), float32], (Tensor[(1,), float32], Tensor[(2,), float32]))) -> Tensor[(5,), float32] {
  %0 = fn (%p: (Tensor[(2,), float32], (Tensor[(1,), float32], Tensor[(2,), float32])), Primitive=1) -> Tensor[(5,), float32] {
    concatenate((%p.0, (%p.1).0, (%p.1).1), axis=0)
  };
  %0(%t)
}"""
    _, alloc, _ = lowered(text)
    invoke = next(v for _, v in chain(alloc.functions["main"].body) if dialect_name(v) == INVOKE_TVM_OP)
    prim = invoke.args[0]
    assert all(isinstance(p.checked_type, TensorType) for p in prim.params)
    assert len(prim.params) == 3 and len(invoke.args[1].fields) == 3
    a, b, c = f32([1, 2]), f32([3]), f32([4, 5])
    assert same(vm_run(text, make_tuple([a, make_tuple([b, c])])), f32([1, 2, 3, 4, 5]))


# ---------------------------------------------------------------- lifetimes

KILLS_PROGRAM = """
def @g(%x: float32) -> float32 { %x }
def @main(%x: float32, %c: bool) -> float32 {
  let %a = %x + 1f;
  let %r = if (%c) { %a * 2f } else { %x };
  let %b = @g(%a);
  let %d = %b * 3f;
  let %e = @g(%d);
  %r + %e
}"""


def kills_after(body) -> dict:
    """binding var name -> names killed right after it (in the top-level chain)."""
    out, last = {}, None
    for var, value in chain(body):
        if dialect_name(value) == KILL:
            out.setdefault(last, []).append(value.args[0].name)
        elif var != "tail":
            last = var.name
    return out


def test_kills_follow_the_last_use_in_straight_line_code():
    _, alloc, lifetimes = lowered(KILLS_PROGRAM)
    main = lifetimes.functions["main"].body
    kills = kills_after(main)
    killed = [v for vs in kills.values() for v in vs]
    # %a is used inside the if and by @g(%a): its kill waits for @g
    assert "a" in kills["b"]
    assert "a" not in killed[:killed.index("a")]
    # nothing is killed inside the branch that uses %a, since %a is used after the if
    branch = next(v for var, v in chain(main) if getattr(var, "name", None) == "r")
    assert KILL not in dialect_sequence(branch.true_branch)
    # the returned value and its operands' last use
    tail = chain(main)[-1][1]
    assert tail.name not in killed
    # %a's storage escaped into @g's argument: it is not released early
    storages = [var.name for var, v in chain(main) if dialect_name(v) == ALLOC_STORAGE]
    assert storages[0] not in killed
    # every kill names a tensor or storage variable bound in this chain
    bound = {var for var, _ in chain(main) if var != "tail"}
    for _, v in chain(main):
        if dialect_name(v) == KILL:
            assert v.args[0] in bound
            assert isinstance(v.args[0].checked_type, (TensorType, StorageType))


def test_kills_release_storage_of_tensors_that_stay_local():
    _, _, lifetimes = lowered("""
def @f(%n: int32) -> int32 {
  if (%n < 2) { %n } else { @f(%n - 1) }
}""")
    body = lifetimes.functions["f"].body
    seq = chain(body)
    killed = [v.args[0].name for _, v in seq if dialect_name(v) == KILL]
    cond_storage = next(var.name for var, v in seq if dialect_name(v) == ALLOC_STORAGE)
    cond_tensor = next(var.name for var, v in seq if dialect_name(v) == ALLOC_TENSOR)
    # the condition is used only by the if: its tensor, then its storage, die after it
    assert killed.index(cond_storage) > 0 and cond_storage in killed
    assert cond_tensor in killed or any(
        isinstance(v, Var) and v.name == cond_tensor for _, v in seq)
    # inside the else-branch, %n - 1 escapes into the recursive call: storage kept
    branch = next(v for _, v in seq if type(v).__name__ == "If")
    inner = chain(branch.false_branch)
    inner_killed = [v.args[0].name for _, v in inner if dialect_name(v) == KILL]
    inner_storages = [var.name for var, v in inner if dialect_name(v) == ALLOC_STORAGE]
    assert not set(inner_killed) & set(inner_storages)


def test_kills_never_touch_values_bound_outside_the_chain():
    _, _, lifetimes = lowered("""
def @main(%x: float32, %c: bool) -> float32 {
  let %a = %x + 1f;
  if (%c) { let %b = %a; %b } else { %a * 2f }
}""")
    main = lifetimes.functions["main"].body
    branch = next(v for _, v in chain(main) if type(v).__name__ == "If")
    for arm in (branch.true_branch, branch.false_branch):
        for _, v in chain(arm):
            if dialect_name(v) == KILL:
                assert v.args[0].name != "a"


@pytest.mark.parametrize("c", [True, False])
def test_kills_keep_results(c):
    mod = load(KILLS_PROGRAM)
    x = f32(1.5)
    expected = run(mod, x, np.array(c))
    assert same(vm_run(KILLS_PROGRAM, x, np.array(c)), expected)


def test_long_let_chains_do_not_recurse():
    n = 3000
    lines = ["def @main(%x: int32) -> int32 {", "  let %a0 = %x + 1;"]
    lines += [f"  let %a{i} = (%a{i - 1}, %x).0;" for i in range(1, n)]
    lines += [f"  %a{n - 1}", "}"]
    text = "\n".join(lines)
    before, alloc, lifetimes = lowered(text)
    assert len(chain(lifetimes.functions["main"].body)) > n
    assert same(vm_run(text, i32(4)), i32(5))
