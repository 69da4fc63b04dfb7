"""The VM dispatch loop on hand-assembled executables: every opcode, calls, closures, jumps,
errors with state intact, limits, and step()/run()/unstep() agreeing with each other."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.limits import Limits
from rvmdbg.relay.diagnostics import Span
from rvmdbg.values import ADTValue, RefCell, format_value, values_equal
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.machine import HANDLERS, VirtualMachine, VMError, format_step, trace_lines
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder, VMClosure

from kernel_helpers import i32, i64, k_add, k_less, k_sub


ADD, SUB, LESS = 0, 1, 2


def kernels(*extra):
    return [Kernel("add", "", 2, 1, impl=k_add), Kernel("sub", "", 2, 1, impl=k_sub),
            Kernel("less", "", 2, 1, impl=k_less), *extra]


def fn(name, params, size, code):
    return VMFunction(name, params, size, code)


def exe_of(*functions, constants=(), extra_kernels=(), **kw):
    return Executable(list(functions), list(constants), kernels(*extra_kernels), **kw)


def scalar_op(kernel, a, b, out, dtype, size_reg, off_reg, storage_reg):
    """alloc_storage + alloc_tensor + invoke_packed: how the compiler calls a scalar kernel."""
    return [bc.AllocStorage(size_reg, 64, dtype, storage_reg),
            bc.AllocTensor(storage_reg, off_reg, [], dtype, out),
            bc.InvokePacked(kernel, 3, 1, [a, b, out])]


def count_loop():
    """main(n): i = 0; while i < n: i = i + 1; return i   (a backward goto)."""
    return fn("main", ["n"], 9, [
        bc.LoadConsti(0, 1), bc.LoadConsti(1, 2), bc.LoadConsti(8, 6), bc.LoadConsti(0, 7),
        bc.LoadConsti(1, 5),
        bc.AllocStorage(6, 64, "int64", 4),          # 5: loop head
        bc.AllocTensor(4, 7, [], "bool", 3),
        bc.InvokePacked(LESS, 3, 1, [1, 0, 3]),
        bc.If(3, 5, 1, 6),                           # 8: -> 9 or 14
        bc.AllocTensor(4, 7, [], "int64", 8),
        bc.InvokePacked(ADD, 3, 1, [1, 2, 8]),
        bc.Move(8, 1),
        bc.KillRegister(4),
        bc.Goto(-8),                                 # 13: -> 5
        bc.Ret(1),
    ])


def fib_function(index=0):
    """fib(n) = n if n < 2 else fib(n - 1) + fib(n - 2), with TVM-style allocation."""
    return fn("fib", ["n"], 14, [
        bc.LoadConsti(2, 1), bc.LoadConsti(16, 2), bc.LoadConsti(0, 3),
        bc.AllocStorage(2, 64, "int64", 4),
        bc.AllocTensor(4, 3, [], "bool", 5),
        bc.InvokePacked(LESS, 3, 1, [0, 1, 5]),      # 5
        bc.LoadConsti(1, 6),
        bc.If(5, 6, 1, 3),                           # 7: -> 8 or 10
        bc.Move(0, 13),
        bc.Goto(13),                                 # 9: -> 22
        bc.LoadConsti(1, 7),
        bc.AllocTensor(4, 3, [], "int64", 8),
        bc.InvokePacked(SUB, 3, 1, [0, 7, 8]),
        bc.Invoke(index, [8], 9),                    # 13
        bc.AllocStorage(2, 64, "int64", 4),
        bc.AllocTensor(4, 3, [], "int64", 10),
        bc.InvokePacked(SUB, 3, 1, [0, 1, 10]),
        bc.Invoke(index, [10], 11),                  # 17
        bc.AllocStorage(2, 64, "int64", 4),
        bc.AllocTensor(4, 3, [], "int64", 12),
        bc.InvokePacked(ADD, 3, 1, [9, 11, 12]),
        bc.Move(12, 13),
        bc.Ret(13),                                  # 22
    ])


NIL = ADTValue(0, "Nil", ())


def cons_list(values):
    out = NIL
    for v in reversed(values):
        out = ADTValue(1, "Cons", (i32(v), out))
    return out


def length_exe():
    """length(l): match l { Nil => 0, Cons(_, t) => 1 + length(t) } as a GetTag decision tree,
    with `fatal` where no clause matches."""
    f = fn("length", ["l"], 12, [
        bc.GetTag(0, 1),
        bc.LoadConsti(0, 2),
        bc.If(1, 2, 1, 3),                           # 2: Nil -> 3, else -> 5
        bc.LoadConst(0, 11),                         # 3: 0
        bc.Goto(12),                                 # 4: -> 16
        bc.LoadConsti(1, 2),                         # 5
        bc.If(1, 2, 1, 11),                          # 6: Cons -> 7, else -> 17
        bc.GetField(0, 1, 3),                        # 7: the tail
        bc.Invoke(0, [3], 4),                        # 8
        bc.LoadConsti(4, 5), bc.LoadConsti(0, 6),
        bc.AllocStorage(5, 64, "int32", 7),          # 11
        bc.AllocTensor(7, 6, [], "int32", 8),
        bc.LoadConst(1, 9),                          # 13: 1
        bc.InvokePacked(ADD, 3, 1, [9, 4, 8]),
        bc.Move(8, 11),                              # 15: the merge register
        bc.Ret(11),                                  # 16
        bc.Fatal(),                                  # 17
    ])
    return exe_of(f, constants=[i32(0), i32(1)])


# ---------------------------------------------------------------- basics of each opcode


def test_handlers_cover_every_opcode():
    assert sorted(HANDLERS) == list(range(len(bc.OPCODES)))


def test_move_load_consti_ret():
    vm = VirtualMachine(exe_of(fn("main", [], 3, [bc.LoadConsti(7, 1), bc.Move(1, 2),
                                                   bc.Ret(2)])))
    r = vm.invoke("main", [])
    assert r.dtype == np.int64 and r.shape == () and int(r) == 7
    assert vm.halted and vm.steps == 3 and vm.frames == []


def test_load_const_shares_the_pool_value():
    c = np.array([1.5, 2.5], dtype=np.float32)
    vm = VirtualMachine(exe_of(fn("main", [], 1, [bc.LoadConst(0, 0), bc.Ret(0)]),
                               constants=[c]))
    assert vm.invoke("main") is c


def test_invoke_passes_args_and_returns_into_dst():
    # @pair_sum(a, b) = a + b; main(x) = pair_sum(x, x)
    callee = fn("pair_sum", ["a", "b"], 5, [
        bc.LoadConsti(4, 2), bc.LoadConsti(0, 3),
        *scalar_op(ADD, 0, 1, 4, "int32", 2, 3, 2),
        bc.Ret(4)])
    main = fn("main", ["x"], 3, [bc.Invoke(1, [0, 0], 2), bc.Move(2, 1), bc.Ret(1)])
    vm = VirtualMachine(exe_of(main, callee))
    r = vm.invoke("main", [i32(21)])
    assert r.dtype == np.int32 and int(r) == 42 and vm.steps == 3 + 6


def test_alloc_adt_get_field_get_tag_with_constructor_table():
    main = fn("main", ["a", "b"], 6, [
        bc.AllocADT(0, [], 2),           # Nil
        bc.AllocADT(1, [1, 2], 3),       # Cons(b, Nil)
        bc.AllocADT(0, [0, 3], 4),       # a tuple (a, Cons(b, Nil))
        bc.GetField(4, 1, 5),
        bc.GetTag(5, 1),
        bc.AllocADT(0, [1, 5, 4], 0),
        bc.Ret(0)])
    exe = exe_of(main)
    exe.adt_constructor = {(0, 0): "Nil", (0, 1): "Cons"}  # absent (0, 2), (0, 5): tuples
    vm = VirtualMachine(exe)
    r = vm.invoke("main", [i32(1), i32(2)])
    assert r.con is None and len(r.fields) == 3
    tag, lst, tup = r.fields
    assert tag.dtype == np.int32 and tag.shape == () and int(tag) == 1
    assert format_value(lst) == "Cons(2, Nil)"
    assert format_value(tup) == "(1, Cons(2, Nil))"


def test_closure_captures_come_first():
    # @sub_from(k, x) = k - x; main(k, x) builds a closure over k and calls it with x.
    sub_from = fn("sub_from", ["k", "x"], 5, [
        bc.LoadConsti(8, 2), bc.LoadConsti(0, 3),
        bc.AllocStorage(2, 64, "int32", 4),
        bc.AllocTensor(4, 3, [], "int32", 2),
        bc.InvokePacked(SUB, 3, 1, [0, 1, 2]),
        bc.Ret(2)])
    main = fn("main", ["k", "x"], 4, [
        bc.AllocClosure(1, [0], 2),
        bc.InvokeClosure(2, [1], 3),
        bc.Ret(3)])
    vm = VirtualMachine(exe_of(main, sub_from))
    assert int(vm.invoke("main", [i32(10), i32(3)])) == 7
    vm.start("main", [i32(10), i32(3)])
    vm.step()
    clo = vm.frames[-1].registers[2]
    assert isinstance(clo, VMClosure) and clo.name == "sub_from"
    assert format_value(clo) == "<closure @sub_from>"
    info = vm.step()
    assert info.pushed is vm.frames[-1] and info.pushed.caller_return_register == 3
    assert [w.register for w in info.writes] == [0, 1]
    assert [int(w.new) for w in info.writes] == [10, 3]


def test_closure_returned_as_a_value_prints_its_name():
    main = fn("main", [], 1, [bc.AllocClosure(1, [], 0), bc.Ret(0)])
    other = fn("other", ["x"], 1, [bc.Ret(0)])
    r = VirtualMachine(exe_of(main, other)).invoke("main")
    assert r.name == "other" and r.captured == ()


def test_invoke_closure_wrong_arity_and_non_closure():
    other = fn("other", ["x"], 1, [bc.Ret(0)])
    main = fn("main", ["x"], 3, [bc.AllocClosure(1, [], 1), bc.InvokeClosure(1, [0, 0], 2),
                                 bc.Ret(2)])
    vm = VirtualMachine(exe_of(main, other))
    with pytest.raises(VMError, match="takes 1 argument, called with 2"):
        vm.invoke("main", [i32(1)])
    main2 = fn("main", ["x"], 3, [bc.InvokeClosure(0, [0], 2), bc.Ret(2)])
    with pytest.raises(VMError, match=r"\$0 holds 1, not a closure"):
        VirtualMachine(exe_of(main2, other)).invoke("main", [i32(1)])


def test_if_and_goto_are_relative():
    # main(c): if c == 1 then 10 else 20, the TVM shape with a merge register.
    main = fn("main", ["c"], 4, [
        bc.LoadConsti(1, 1),
        bc.If(0, 1, 1, 3),       # 1: -> 2 or 4
        bc.LoadConsti(10, 3),
        bc.Goto(2),              # 3: -> 5
        bc.LoadConsti(20, 3),
        bc.Ret(3)])
    vm = VirtualMachine(exe_of(main))
    assert int(vm.invoke("main", [np.array(True)])) == 10
    assert int(vm.invoke("main", [np.array(False)])) == 20
    assert int(vm.invoke("main", [i64(1)])) == 10
    vm.start("main", [np.array(False)])
    vm.step()
    info = vm.step()
    assert info.jump_target == 4 and info.next_pc == 4 and info.reads == (0, 1)


def test_count_loop_with_backward_goto():
    vm = VirtualMachine(exe_of(count_loop()))
    assert int(vm.invoke("main", [i64(25)])) == 25
    assert vm.steps == 5 + 9 * 25 + 4 + 1
    assert vm.live_bytes == 0  # every storage was killed or released at return


def test_match_decision_tree_and_recursion():
    vm = VirtualMachine(length_exe())
    for values in ([], [5], [5, 6, 7]):
        r = vm.invoke("length", [cons_list(values)])
        assert r.dtype == np.int32 and int(r) == len(values)


def test_fatal_stops_with_state_intact():
    src = "def @length(%l) {\n  match? (%l) { Nil => 0 }\n}\n"
    exe = length_exe()
    exe.source_map = {(0, 17): Span(2, 3, 2, 27, "prog.relay")}
    exe.source_text, exe.source_name = src, "prog.relay"
    vm = VirtualMachine(exe)
    bogus = ADTValue(2, "Weird", ())
    arg = ADTValue(1, "Cons", (i32(1), bogus))
    with pytest.raises(VMError) as info:
        vm.invoke("length", [arg])
    err = info.value
    assert vm.error is err and not vm.halted
    assert (err.func_name, err.pc, err.instruction) == ("length", 17, "fatal")
    assert len(vm.frames) == 2 and vm.frames[-1].pc == 17 and vm.frames[0].pc == 8
    assert vm.frames[-1].registers[0] is bogus
    assert err.backtrace == [("length", 17), ("length", 8)]
    text = err.format()
    assert text.splitlines()[:3] == ["error: match? found no matching clause",
                                     "  at @length pc=17: fatal",
                                     "  from prog.relay:2:3"]
    assert "match? (%l) { Nil => 0 }" in text and "^~~~" in text
    # The failing instruction did not count as executed, and retrying fails the same way.
    steps = vm.steps
    with pytest.raises(VMError, match="no matching clause"):
        vm.step()
    assert vm.steps == steps


def test_error_without_source_text_has_no_quote():
    vm = VirtualMachine(exe_of(fn("main", [], 1, [bc.Fatal()])))
    with pytest.raises(VMError) as info:
        vm.invoke("main")
    assert info.value.format() == "error: match? found no matching clause\n  at @main pc=0: fatal"


def test_storage_tensor_shape_of_reshape_device_copy():
    def k_iota(xs):
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    main = fn("main", [], 10, [
        bc.LoadConsti(24, 0), bc.LoadConsti(0, 1),
        bc.AllocStorage(0, 64, "float32", 2),
        bc.AllocTensor(2, 1, [2, 3], "float32", 3),
        bc.ShapeOf(3, 4),                       # shape of a not yet written tensor
        bc.InvokePacked(3, 1, 1, [3]),
        bc.LoadConst(0, 5),                     # [3, 2]
        bc.ReshapeTensor(3, 5, 6),
        bc.DeviceCopy(6, 1, 1, 7),
        bc.AllocADT(0, [4, 6, 7], 8),
        bc.Ret(8)])
    exe = exe_of(main, constants=[i64([3, 2])], extra_kernels=[Kernel("iota", "", 0, 1,
                                                                         impl=k_iota)])
    vm = VirtualMachine(exe)
    shape, reshaped, copied = vm.invoke("main").fields
    assert shape.dtype == np.int64 and shape.tolist() == [2, 3]
    assert reshaped.shape == (3, 2) and reshaped.dtype == np.float32
    assert np.array_equal(reshaped, np.arange(6, dtype=np.float32).reshape(3, 2))
    assert values_equal(copied, reshaped) and copied is not reshaped


def test_alloc_tensor_reg_takes_its_shape_from_a_register():
    def k_ones(xs):
        return np.ones((2, 2), dtype=np.int32)

    main = fn("main", [], 6, [
        bc.LoadConsti(16, 0), bc.LoadConsti(0, 1), bc.LoadConst(0, 4),
        bc.AllocStorage(0, 64, "int32", 2),
        bc.AllocTensorReg(2, 1, 4, "int32", 3),
        bc.InvokePacked(3, 1, 1, [3]),
        bc.Ret(3)])
    exe = exe_of(main, constants=[i64([2, 2])],
                 extra_kernels=[Kernel("ones", "", 0, 1, impl=k_ones)])
    assert VirtualMachine(exe).invoke("main").tolist() == [[1, 1], [1, 1]]


def test_uninitialized_tensor_prints_as_such_and_cannot_be_read():
    main = fn("main", [], 5, [
        bc.LoadConsti(8, 0), bc.LoadConsti(0, 1),
        bc.AllocStorage(0, 64, "int32", 2),
        bc.AllocTensor(2, 1, [], "int32", 3),
        bc.AllocTensor(2, 1, [], "int32", 4),
        bc.InvokePacked(ADD, 3, 1, [3, 3, 4]),
        bc.Ret(4)])
    vm = VirtualMachine(exe_of(main))
    with pytest.raises(VMError, match=r"kernel add reads \$3, an uninitialized tensor"):
        vm.invoke("main")
    t = vm.frames[0].registers[3]
    assert isinstance(t, TensorPlaceholder)
    assert format_value(t) == "<uninitialized tensor [] int32>"
    assert isinstance(vm.frames[0].registers[2], StorageObject)


def test_alloc_tensor_must_fit_its_storage():
    main = fn("main", [], 4, [
        bc.LoadConsti(8, 0), bc.LoadConsti(0, 1),
        bc.AllocStorage(0, 64, "float32", 2),
        bc.AllocTensor(2, 1, [4], "float32", 3),
        bc.Ret(3)])
    with pytest.raises(VMError, match="16 bytes at offset 0 do not fit in a storage of 8"):
        VirtualMachine(exe_of(main)).invoke("main")


def test_kill_register_clears_and_releases():
    main = fn("main", [], 3, [
        bc.LoadConsti(100, 0),
        bc.AllocStorage(0, 64, "int8", 1),
        bc.KillRegister(1),
        bc.Ret(0)])
    vm = VirtualMachine(exe_of(main))
    vm.start("main")
    vm.step()
    info = vm.step()
    assert info.allocated_bytes == 100 and vm.live_bytes == 100
    info = vm.step()
    assert info.freed_bytes == 100 and vm.live_bytes == 0
    assert vm.frames[0].registers[1] is None and isinstance(info.writes[0].old, StorageObject)


# ---------------------------------------------------------------- kernels


def test_kernel_shape_mismatch_names_both_shapes():
    def k_wrong(xs):
        return np.zeros((3,), dtype=np.float32)

    main = fn("main", [], 4, [
        bc.LoadConsti(64, 0), bc.LoadConsti(0, 1),
        bc.AllocStorage(0, 64, "float32", 2),
        bc.AllocTensor(2, 1, [2, 2], "float32", 3),
        bc.InvokePacked(3, 1, 1, [3]),
        bc.Ret(3)])
    exe = exe_of(main, extra_kernels=[Kernel("fused_wrong", "", 0, 1, impl=k_wrong)])
    vm = VirtualMachine(exe)
    with pytest.raises(VMError) as info:
        vm.invoke("main")
    msg = info.value.message
    assert "fused_wrong" in msg and "[3] float32" in msg and "[2, 2] float32" in msg
    assert info.value.pc == 4
    assert isinstance(vm.frames[0].registers[3], TensorPlaceholder)  # not overwritten


def test_kernel_dtype_mismatch():
    main = fn("main", ["a"], 5, [
        bc.LoadConsti(8, 1), bc.LoadConsti(0, 2),
        bc.AllocStorage(1, 64, "float32", 3),
        bc.AllocTensor(3, 2, [], "float32", 4),
        bc.InvokePacked(ADD, 3, 1, [0, 0, 4]),
        bc.Ret(4)])
    with pytest.raises(VMError, match=r"produced \[\] int32 but output \$4 was allocated as "
                                      r"\[\] float32"):
        VirtualMachine(exe_of(main)).invoke("main", [i32(1)])


def test_kernel_exceptions_become_located_errors():
    def k_boom(xs):
        raise ZeroDivisionError("integer division by zero")

    main = fn("main", ["a"], 5, [
        bc.LoadConsti(8, 1), bc.LoadConsti(0, 2),
        bc.AllocStorage(1, 64, "int32", 3),
        bc.AllocTensor(3, 2, [], "int32", 4),
        bc.InvokePacked(3, 2, 1, [0, 4]),
        bc.Ret(4)])
    exe = exe_of(main, extra_kernels=[Kernel("fused_divide", "", 1, 1, impl=k_boom)])
    vm = VirtualMachine(exe)
    with pytest.raises(VMError) as info:
        vm.invoke("main", [i32(1)])
    assert info.value.message == ("kernel fused_divide failed: ZeroDivisionError: "
                                  "integer division by zero")
    assert info.value.pc == 4 and vm.frames[0].pc == 4 and vm.steps == 4


def test_kernel_error_class_is_reported_plainly():
    ops = pytest.importorskip("rvmdbg.relay.ops")

    def k_fail(xs):
        raise ops.KernelError("shapes [2] and [3] do not broadcast")

    main = fn("main", [], 1, [bc.InvokePacked(3, 1, 1, [0]), bc.Ret(0)])
    exe = exe_of(main, extra_kernels=[Kernel("fused_add", "", 0, 1, impl=k_fail)])
    with pytest.raises(VMError) as info:
        VirtualMachine(exe).invoke("main")
    assert info.value.message == "kernel fused_add: shapes [2] and [3] do not broadcast"


def test_multi_output_kernel():
    def k_split(xs):
        return (np.asarray(xs[0][:1]), np.asarray(xs[0][1:]))

    main = fn("main", ["x"], 6, [
        bc.LoadConsti(32, 1), bc.LoadConsti(0, 2),
        bc.AllocStorage(1, 64, "float32", 3),
        bc.AllocTensor(3, 2, [1], "float32", 4),
        bc.AllocTensor(3, 2, [3], "float32", 5),
        bc.InvokePacked(3, 3, 2, [0, 4, 5]),
        bc.AllocADT(0, [4, 5], 0),
        bc.Ret(0)])
    exe = exe_of(main, extra_kernels=[Kernel("split", "", 1, 2, impl=k_split)])
    r = VirtualMachine(exe).invoke("main", [np.arange(4, dtype=np.float32)])
    assert r.fields[0].tolist() == [0.0] and r.fields[1].tolist() == [1.0, 2.0, 3.0]


def test_builtin_reference_kernels():
    def ref_create(xs):
        return [RefCell(xs[0])]

    def ref_read(xs):
        return [xs[0].value]

    def ref_write(xs):
        xs[0].value = xs[1]
        return [ADTValue(0, None, ())]

    refs = [Kernel("ref_create", "", 1, 1, builtin=True, impl=ref_create),
            Kernel("ref_read", "", 1, 1, builtin=True, impl=ref_read),
            Kernel("ref_write", "", 2, 1, builtin=True, impl=ref_write)]
    main = fn("main", ["a", "b"], 6, [
        bc.InvokePacked(3, 2, 1, [0, 2]),
        bc.InvokePacked(5, 3, 1, [2, 1, 3]),
        bc.InvokePacked(4, 2, 1, [2, 4]),
        bc.AllocADT(0, [4, 3, 2], 5),
        bc.Ret(5)])
    r = VirtualMachine(exe_of(main, extra_kernels=refs)).invoke("main", [i32(1), i32(2)])
    assert format_value(r) == "(2, (), ref(2))"


# ---------------------------------------------------------------- limits


def test_max_steps_stops_an_infinite_loop():
    main = fn("main", [], 1, [bc.LoadConsti(1, 0), bc.Goto(-1)])
    vm = VirtualMachine(exe_of(main), Limits(max_steps=1001))
    with pytest.raises(VMError) as info:
        vm.invoke("main")
    err = info.value
    assert err.limit == "max_steps" and "--max-steps" in err.message and "1001" in err.message
    assert vm.steps == 1001 and vm.frames[0].pc == 1  # stopped before the 1002nd instruction
    # step() enforces the same limit at the same point
    vm.start("main")
    while vm.steps < 1001:
        vm.step()
    with pytest.raises(VMError, match="--max-steps"):
        vm.step()


def test_max_steps_allows_a_program_that_needs_exactly_that_many():
    vm = VirtualMachine(exe_of(count_loop()), Limits(max_steps=5 + 9 * 3 + 5))
    assert int(vm.invoke("main", [i64(3)])) == 3


def test_max_depth_stops_infinite_recursion():
    main = fn("main", ["x"], 2, [bc.Invoke(0, [0], 1), bc.Ret(1)])
    vm = VirtualMachine(exe_of(main), Limits(max_depth=500))
    with pytest.raises(VMError) as info:
        vm.invoke("main", [i32(0)])
    err = info.value
    assert err.limit == "max_depth" and "--max-depth" in err.message
    assert len(vm.frames) == 500 and err.pc == 0 and err.instruction.startswith("invoke")
    assert len(err.backtrace) == 32


def test_max_bytes_stops_a_large_allocation():
    main = fn("main", [], 2, [bc.LoadConsti(10 ** 12, 0), bc.AllocStorage(0, 64, "int8", 1),
                              bc.Ret(1)])
    vm = VirtualMachine(exe_of(main), Limits(max_bytes=10 ** 9))
    with pytest.raises(VMError) as info:
        vm.invoke("main")
    assert info.value.limit == "max_bytes" and "--max-bytes" in info.value.message
    assert vm.live_bytes == 0 and vm.frames[0].registers[1] is None


def test_max_bytes_counts_live_storage_only():
    # 25 iterations allocate 8 bytes each; with a 64-byte limit only killing keeps it alive.
    ok = VirtualMachine(exe_of(count_loop()), Limits(max_bytes=64))
    assert int(ok.invoke("main", [i64(25)])) == 25
    leaky = count_loop()
    leaky.instructions[12] = bc.Move(4, 4)  # no kill_register: storage piles up
    vm = VirtualMachine(exe_of(leaky), Limits(max_bytes=64))
    with pytest.raises(VMError, match="--max-bytes"):
        vm.invoke("main", [i64(25)])
    assert vm.live_bytes == 64


def test_frame_return_releases_its_storage():
    vm = VirtualMachine(exe_of(fib_function()), Limits(max_bytes=16 * 3 * 12))
    assert int(vm.invoke("fib", [i64(12)])) == 144
    assert vm.live_bytes == 0


# ---------------------------------------------------------------- step, run, unstep


def run_by_steps(vm, name, args):
    vm.start(name, args)
    infos = []
    while not vm.halted:
        infos.append(vm.step())
    return vm.result, infos


@pytest.mark.parametrize("exe, name, args", [
    (lambda: exe_of(count_loop()), "main", [i64(7)]),
    (lambda: exe_of(fib_function()), "fib", [i64(8)]),
    (length_exe, "length", [cons_list([1, 2, 3, 4])]),
])
def test_step_and_run_agree(exe, name, args):
    e = exe()
    fast = VirtualMachine(e)
    r1 = fast.invoke(name, args)
    slow = VirtualMachine(e)
    r2, infos = run_by_steps(slow, name, args)
    assert values_equal(r1, r2) and fast.steps == slow.steps == len(infos)
    assert [i.step for i in infos] == list(range(len(infos)))
    assert infos[-1].halted and values_equal(infos[-1].result, r1)
    assert slow.live_bytes == fast.live_bytes


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 12), pause=st.integers(0, 400))
def test_run_until_and_step_interleave(n, pause):
    """Running to step `pause`, then stepping a few, then running on, matches one run."""
    e = exe_of(fib_function())
    ref = VirtualMachine(e)
    expected = int(ref.invoke("fib", [i64(n)]))
    vm = VirtualMachine(e)
    vm.start("fib", [i64(n)])
    vm.run(until_step=pause)
    assert vm.halted or vm.steps == pause
    for _ in range(3):
        if not vm.halted:
            vm.step()
    if not vm.halted:
        vm.run()
    assert int(vm.result) == expected and vm.steps == ref.steps


def snapshot(vm):
    return ([(f.func_index, f.pc, list(f.registers), f.caller_return_register, f.owned_bytes)
             for f in vm.frames], vm.steps, vm.live_bytes, vm.halted)


def same_snapshot(a, b):
    fa, *ra = a
    fb, *rb = b
    if ra != rb or len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        if x[:2] != y[:2] or x[3:] != y[3:] or len(x[2]) != len(y[2]):
            return False
        if any(u is not v for u, v in zip(x[2], y[2])):
            return False
    return True


@pytest.mark.parametrize("exe, name, args", [
    (lambda: exe_of(count_loop()), "main", [i64(3)]),
    (lambda: exe_of(fib_function()), "fib", [i64(5)]),
    (length_exe, "length", [cons_list([1, 2])]),
])
def test_unstep_restores_every_state(exe, name, args):
    vm = VirtualMachine(exe())
    vm.start(name, args)
    snaps, infos = [], []
    while not vm.halted:
        snaps.append(snapshot(vm))
        infos.append(vm.step())
    final = vm.result
    for info, snap in zip(reversed(infos), reversed(snaps)):
        vm.unstep(info)
        assert same_snapshot(snapshot(vm), snap), f"after undoing step {info.step}"
    assert not vm.halted and vm.steps == 0
    vm.run()
    assert values_equal(vm.result, final)


def test_step_reports_writes_with_old_and_new_values():
    main = fn("main", [], 3, [bc.LoadConsti(1, 0), bc.LoadConsti(2, 0), bc.Move(0, 1),
                              bc.Ret(1)])
    vm = VirtualMachine(exe_of(main))
    vm.start("main")
    a = vm.step()
    assert a.writes[0].register == 0 and a.writes[0].old is None and int(a.writes[0].new) == 1
    b = vm.step()
    assert b.writes[0].old is a.writes[0].new and int(b.writes[0].new) == 2
    c = vm.step()
    assert c.reads == (0,) and c.writes[0].register == 1 and c.writes[0].new is b.writes[0].new
    assert c.pushed is None and c.popped is None and c.jump_target is None


def test_call_and_return_step_infos():
    vm = VirtualMachine(exe_of(fib_function()))
    vm.start("fib", [i64(2)])
    infos = []
    while not vm.halted:
        infos.append(vm.step())
    call = next(i for i in infos if i.pushed is not None)
    assert call.pc == 13 and call.depth == 0 and call.next_func_index == 0 and call.next_pc == 0
    assert call.writes[0].depth == 1 and int(call.writes[0].new) == 1
    ret = next(i for i in infos if i.popped is not None)
    assert ret.depth == 1 and ret.next_pc == 14
    assert ret.writes[0].depth == 0 and ret.writes[0].register == 9
    assert int(ret.writes[0].new) == 1 and ret.writes[0].old is None
    assert infos[-1].halted and int(infos[-1].result) == 1 and infos[-1].popped is not None


_FIELDS = ("step", "frame", "depth", "func_index", "pc", "instruction", "reads", "writes",
           "pushed", "popped", "jump_target", "next_func_index", "next_pc", "allocated_bytes",
           "freed_bytes", "halted", "result")


def _fields(info):
    """Every field of a step record, values by identity (a later step must not change them)."""
    out = []
    for name in _FIELDS:
        v = getattr(info, name)
        if name == "writes":
            v = tuple((w.depth, w.register, id(w.old), id(w.new)) for w in v)
        elif name in ("frame", "pushed", "popped", "result", "instruction"):
            v = id(v)
        out.append(v)
    return out


@pytest.mark.parametrize("program, args", [("fib.relay", ["5"]), ("quicksort.relay", None),
                                           ("closures.relay", None)])
def test_step_records_read_the_same_later(program, args):
    """step()'s record is computed from what the step captured: read at the end of the run,
    with register reuse overwriting parameters and results, every field (the writes' old and
    new values, the callee's parameters, the next pc after a return) is what it was just
    after the step."""
    from pathlib import Path
    from rvmdbg.args import parse_program_args
    from rvmdbg.relay.loader import load_module, program_default_args
    from rvmdbg.vm.compiler import compile_module
    text = (Path(__file__).resolve().parents[2] / "programs" / program).read_text()
    mod = load_module(text, program)
    vm = VirtualMachine(compile_module(mod, reuse_registers=True))
    vm.start("main", parse_program_args(mod, "main", args or program_default_args(text) or []))
    records, at_once = [], []
    while not vm.halted:
        info = vm.step()
        records.append(info)
        at_once.append(_fields(info))
        assert info.next_pc == (vm.frames[-1].pc if vm.frames else None)
        assert info.next_func_index == (vm.frames[-1].func_index if vm.frames else None)
    assert any(r.pushed is not None for r in records) and records[-1].halted
    assert [_fields(r) for r in records] == at_once


def test_run_stops_at_breakpoints_and_moves_on():
    vm = VirtualMachine(exe_of(count_loop()))
    vm.start("main", [i64(3)])
    bps = {(0, 10)}
    hits = []
    while vm.run(breakpoints=bps) is None:
        hits.append((vm.steps, vm.location))
    assert [loc for _, loc in hits] == [(0, 10)] * 3
    assert [s for s, _ in hits] == [5 + 5, 5 + 9 + 5, 5 + 18 + 5]
    assert int(vm.result) == 3


def test_start_rejects_unknown_function_and_wrong_arity():
    vm = VirtualMachine(exe_of(count_loop()))
    with pytest.raises(VMError, match="no function @nope"):
        vm.start("nope")
    with pytest.raises(VMError, match="takes 1 argument, got 0"):
        vm.start("main", [])
    with pytest.raises(VMError, match="no program started"):
        vm.step()


def test_malformed_instruction_fails_when_executed():
    main = fn("main", [], 2, [bc.LoadConsti(0, 0), bc.Ret(0), bc.Invoke(7, [], 1)])
    vm = VirtualMachine(exe_of(main))  # decoding does not fail
    assert int(vm.invoke("main")) == 0
    main.instructions[1] = bc.Goto(5)
    with pytest.raises(VMError, match="outside @main"):
        VirtualMachine(exe_of(main)).invoke("main")


# ---------------------------------------------------------------- trace


def test_trace_lines():
    vm = VirtualMachine(exe_of(fib_function()))
    vm.start("fib", [i64(2)])
    lines = list(trace_lines(vm))
    assert len(lines) == vm.steps
    assert lines[0] == "[step 0] @fib pc=0: load_consti $1 2    $1=2i64"
    assert lines[3] == "[step 3] @fib pc=3: alloc_storage $4 $2 64 int64 0    $4=<storage 16 bytes>"
    assert lines[4].endswith("$5=<uninitialized tensor [] bool>")
    assert lines[7] == "[step 7] @fib pc=7: if $5 $6 1 3    -> pc=10"
    call = next(line for line in lines if "invoke $" in line)
    assert call.endswith("call @fib($0=1i64)")
    assert any(line.endswith("return to @fib $9=1i64") for line in lines)
    assert lines[-1].endswith("halt: 1i64")


@pytest.mark.parametrize("code, message", [
    ([bc.GetField(0, 0, 1), bc.Ret(1)], r"get_field: \$0 holds 5, not an ADT value"),
    ([bc.GetTag(0, 1), bc.Ret(1)], r"get_tag: \$0 holds 5, not an ADT value"),
    ([bc.If(1, 0, 1, 2), bc.Ret(0), bc.Ret(0)], r"if: \$1 holds nothing"),
    ([bc.Move(0, 1)], "ran past the last instruction of @main"),
    ([bc.DeviceCopy(1, 0, 0, 1), bc.Ret(1)], r"device_copy: \$1 holds nothing, not a tensor"),
])
def test_wrong_values_in_registers_are_clear_errors(code, message):
    vm = VirtualMachine(exe_of(fn("main", ["x"], 2, code)))
    with pytest.raises(VMError) as info:
        vm.invoke("main", [i32(5)])
    assert info.value.func_name == "main"
    assert re.search(message, info.value.message), info.value.message


def test_get_field_index_out_of_range():
    main = fn("main", ["x"], 2, [bc.AllocADT(0, [0], 1), bc.GetField(1, 3, 0), bc.Ret(0)])
    with pytest.raises(VMError, match=r"has 1 fields, no field 3"):
        VirtualMachine(exe_of(main)).invoke("main", [i32(5)])
