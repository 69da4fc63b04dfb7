"""May these two instructions swap? The reasons `swap_verdict` gives (register and kind of a
data dependence, or the control dependence), `swap?` in the command language, and the
property that matters: exchanging two instructions the checker calls legal never changes what
a program computes, in every program of programs/ and in random programs."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg.debug import DebugSession
from rvmdbg.debug.commands import CommandInterpreter, run_batch
from rvmdbg.debug.deps import may_swap, swap_verdict, swapped
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import values_equal
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.executable import Executable, VMFunction
from rvmdbg.vm.machine import VirtualMachine, VMError

from dbg_helpers import (PROGRAM_NAMES, count_loop_exe, fresh_args, kernels, program,
                         refs_exe)
from random_relay import programs as random_programs

WINDOW = 4   # pairs at most this far apart: legal swaps across longer stretches are rare


def legal_pairs(exe) -> list[tuple[int, int, int]]:
    """(function, pc, pc) of every legal swap within WINDOW of each other."""
    out = []
    for fi, fn in enumerate(exe.functions):
        n = len(fn.instructions)
        for a in range(n):
            for b in range(a + 1, min(n, a + WINDOW + 1)):
                if may_swap(fn, a, b, exe):
                    out.append((fi, a, b))
    return out


def outcome(exe, args):
    try:
        return ("result", VirtualMachine(exe).invoke("main", args))
    except VMError as exc:
        return ("error", str(exc).split("\n")[0])


@lru_cache(maxsize=None)
def _pairs_of(name: str):
    return legal_pairs(program(name)[0])


def _same(a, b) -> bool:
    return a[0] == b[0] and (values_equal(a[1], b[1]) if a[0] == "result" else True)


# ------------------------------------------------------------------ reasons

def test_reasons_name_register_and_kind():
    fn = count_loop_exe().functions[0]
    v = swap_verdict(fn, 10, 11)
    assert not v.ok and not v
    assert ("RAW", 8) in {(r.kind, r.register) for r in v.reasons}
    assert "read after write of $8" in v.reasons[0].text()
    v = swap_verdict(fn, 9, 10)   # alloc_tensor $8, then the kernel call writing into it
    assert [(r.kind, r.register, r.detail) for r in v.reasons] == [("RAW", 8, "out")]
    assert {r.kind for r in swap_verdict(fn, 7, 8).reasons} >= {"jump"}
    assert {r.kind for r in swap_verdict(fn, 12, 13).reasons} >= {"jump"}
    target = [r for r in swap_verdict(fn, 4, 5).reasons if r.kind == "target"]
    assert target and target[0].first == 13 and target[0].second == 5   # the loop's goto
    assert swap_verdict(fn, 0, 1).ok and swap_verdict(fn, 0, 1).reasons == ()
    assert [r.kind for r in swap_verdict(fn, 3, 3).reasons] == ["same"]
    assert [r.kind for r in swap_verdict(fn, 0, 99).reasons] == ["outside"]


def test_a_kernel_reads_its_output_register_and_writes_the_tensors_memory():
    """Issue 28 (11): `alloc_tensor $4` then `invoke_packed (out: $4)` on fib.relay is a
    read after write of the register (TVM passes the kernel the tensor object in $4), and the
    kernel writes the tensor's memory; it was called a write after write."""
    from pathlib import Path
    from rvmdbg import cli
    path = Path(__file__).resolve().parents[2] / "programs" / "fib.relay"
    program = cli.load_program(str(path))
    interp = CommandInterpreter(DebugSession(cli.executable_of(program),
                                             cli.program_arguments(program, "main", [])))
    out = "\n".join(interp.execute(c) for c in
                    ["break @fib", "continue", "swap? 3 4", "swap? 4 6"])
    assert ("  - read after write of $4: pc 3 writes $4, pc 4 reads it (the kernel is passed "
            "the tensor in $4 as its output); the kernel then writes the tensor's memory, not "
            "the register") in out
    assert "write after write of $4" not in out
    # the kernel's write still orders it before a read of the tensor (the if at pc 6)
    assert "read after write of $4: pc 4 writes $4, pc 6 reads it" in out


def test_write_after_read_between_them():
    fn = VMFunction("main", ["x"], 4, [
        bc.Move(0, 1), bc.Move(1, 2), bc.LoadConsti(5, 1), bc.Ret(2)])
    # moving pc 2 above pc 1 would overwrite $1 before pc 1 reads it
    kinds = {(r.kind, r.register, r.first, r.second) for r in swap_verdict(fn, 0, 2).reasons}
    assert ("WAR", 1, 1, 2) in kinds and ("WAW", 1, 0, 2) in kinds


def test_calls_returns_and_reference_cells():
    exe = refs_exe()
    fn = exe.functions[0]
    effect = [r for r in swap_verdict(fn, 10, 11, exe).reasons if r.kind == "effect"]
    assert effect and "ref_" in effect[0].text()
    exe2, _ = program("sum_up.relay")
    fn = exe2.functions[exe2.func_index("main")]
    kinds = {r.kind for r in swap_verdict(fn, 0, 1, exe2).reasons}
    assert {"call", "return"} <= kinds


def test_allocation_order_keeps_kill_before_alloc():
    fn = VMFunction("main", ["x"], 6, [
        bc.LoadConsti(8, 1), bc.AllocStorage(1, 64, "int64", 2), bc.KillRegister(2),
        bc.LoadConsti(8, 3), bc.AllocStorage(3, 64, "int64", 4), bc.Ret(0)])
    exe = Executable([fn], [], kernels())
    reasons = swap_verdict(fn, 2, 4, exe).reasons
    alloc = [r for r in reasons if r.kind == "alloc"]
    assert alloc and alloc[0].register == 2 and "peak memory" in alloc[0].text()
    # a kill of a register no alloc_storage wrote frees nothing: no allocation-order reason
    fn2 = VMFunction("main", ["x"], 6, [
        bc.LoadConsti(8, 1), bc.KillRegister(1), bc.LoadConsti(8, 3),
        bc.AllocStorage(3, 64, "int64", 4), bc.Ret(0)])
    assert not [r for r in swap_verdict(fn2, 1, 3).reasons if r.kind == "alloc"]


def test_swapped_leaves_the_original_alone():
    exe, args = program("mlp.relay")
    fi, a, b = _pairs_of("mlp.relay")[0]
    before = [list(f.instructions) for f in exe.functions]
    other = swapped(exe, fi, a, b)
    assert [list(f.instructions) for f in exe.functions] == before
    assert other.functions[fi].instructions[a] == exe.functions[fi].instructions[b]


# ------------------------------------------------------------------ the command

def test_swap_command_and_batch():
    exe, args = program("sum_up.relay")
    ci = CommandInterpreter(DebugSession(exe, args))
    out = ci.execute("swap? @sum_up:2 3")
    assert "may not swap" in out and "read after write of $3" in out
    out = ci.execute("swap? @sum_up:24 25")
    assert "may swap" in out and "may not" not in out
    assert "call" in ci.execute("swap? 0 1")          # the selected frame's function (@main)
    assert ci.execute("swap? 1").startswith("error: usage")
    assert ci.execute("swap? x 1").startswith("error: expected a pc")
    assert ci.execute("swap? @nope:1 2").startswith("error: no function @nope")
    assert "swap?" in ci.execute("help")
    lines = []
    run_batch(DebugSession(exe, args), ["swap? @sum_up:5 7"], lines.append)
    text = "\n".join(lines)
    assert "pc 6 is a jump (if)" in text and "branch target" in text


# ------------------------------------------------------------------ the property

def test_every_program_has_legal_swaps():
    # the property below is not vacuous: the checker allows swaps in real programs
    assert sum(len(_pairs_of(n)) for n in PROGRAM_NAMES) > 50


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROGRAM_NAMES), st.data())
def test_legal_swap_never_changes_the_result_of_a_program(name, data):
    pairs = _pairs_of(name)
    if not pairs:
        return
    fi, a, b = data.draw(st.sampled_from(pairs))
    exe = program(name)[0]
    expected = outcome(exe, fresh_args(name))
    assert _same(outcome(swapped(exe, fi, a, b), fresh_args(name)), expected), (name, fi, a, b)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_programs(), st.integers(-5, 5), st.integers(-5, 5), st.data())
def test_legal_swap_never_changes_the_result_of_a_random_program(text, x, y, data):
    exe = compile_module(check_module(load_module('#[version = "0.0.5"]\n' + text, "<random>")))
    pairs = legal_pairs(exe)
    args = [np.array(x, dtype=np.int32), np.array(y, dtype=np.int32)]
    expected = outcome(exe, args)
    for fi, a, b in data.draw(st.lists(st.sampled_from(pairs), max_size=4)) if pairs else []:
        assert _same(outcome(swapped(exe, fi, a, b), args), expected), (text, fi, a, b)


@pytest.mark.parametrize("name", ["sum_up.relay", "mlp.relay"])
def test_an_illegal_swap_can_change_the_result(name):
    # the other half: some forbidden swap really breaks the program, so the property above
    # would catch a checker that allowed it
    exe, _ = program(name)
    expected = outcome(exe, fresh_args(name))
    for fi, fn in enumerate(exe.functions):
        for a in range(len(fn.instructions) - 1):
            v = swap_verdict(fn, a, a + 1, exe)
            if any(r.kind == "RAW" for r in v.reasons) and all(not r.control for r in v.reasons):
                if not _same(outcome(swapped(exe, fi, a, a + 1), fresh_args(name)), expected):
                    return
    pytest.fail("no RAW-forbidden swap changed the result")
