"""Registers in TVM's numbering and reused by liveness: stepping gives the same stops and
results in both, the reused register of every live value holds that value, switching keeps
the step and the breakpoints, and `numbering` works in the command language and batch mode."""
from __future__ import annotations

import pytest

from rvmdbg.debug import DebugSession
from rvmdbg.debug.commands import CommandInterpreter, run_batch
from rvmdbg.debug.numbering import LiveRanges, Numberings, reused_executable
from rvmdbg.values import values_equal
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder
from rvmdbg.vm.regalloc import REGISTER_OPERANDS, liveness

from dbg_helpers import PROGRAM_NAMES, fresh_args, program

MAX_STEPS = 300   # per program: enough to pass calls, loops and returns, quick on 2 cores


def register_map(tvm_fn, reused_fn) -> dict[int, int]:
    """TVM register -> reused register, read off the two functions' operands."""
    out = {p: p for p in range(len(tvm_fn.params))}
    for a, b in zip(tvm_fn.instructions, reused_fn.instructions):
        for slot in type(a).__slots__:
            if slot in REGISTER_OPERANDS:
                x, y = getattr(a, slot), getattr(b, slot)
                for r, c in zip(x if isinstance(x, tuple) else (x,),
                                y if isinstance(y, tuple) else (y,)):
                    assert out.setdefault(r, c) == c
    return out


def same(a, b) -> bool:
    """Equal values; a storage or a tensor placeholder (objects of their own run) by size."""
    if isinstance(a, StorageObject) or isinstance(b, StorageObject):
        return type(a) is type(b) and a.size == b.size
    if isinstance(a, TensorPlaceholder) or isinstance(b, TensorPlaceholder):
        return type(a) is type(b) and (a.shape, a.dtype) == (b.shape, b.dtype)
    return values_equal(a, b)


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_stepping_in_both_numberings_gives_the_same_stops_and_values(name):
    exe, _ = program(name)
    reused, report = reused_executable(exe)
    assert all(after <= before for before, after in report.values())
    assert [f.name for f in reused.functions] == [f.name for f in exe.functions]
    maps = [register_map(a, b) for a, b in zip(exe.functions, reused.functions)]
    live = [liveness(f, exe.kernels)[2] for f in exe.functions]
    tvm = DebugSession(exe, fresh_args(name))
    reu = DebugSession(reused, fresh_args(name))
    for _ in range(MAX_STEPS):
        assert tvm.location() == reu.location()
        if tvm.finished:
            break
        a, b = tvm.frame(), reu.frame()
        fi, pc = tvm.location()
        for r in live[fi][pc]:        # what the registers pane shows under the reused name
            assert same(a.registers[r], b.registers[maps[fi][r]]), (name, fi, pc, r)
        ev_a, ev_b = tvm.step(), reu.step()
        assert ev_a.reason == ev_b.reason
    tvm.cont()
    reu.cont()
    assert tvm.finished == reu.finished
    assert (tvm.error is None) == (reu.error is None)
    if tvm.error is None:
        assert values_equal(tvm.result, reu.result)
    assert tvm.step_count == reu.step_count


def test_switching_keeps_the_step_and_plain_breakpoints():
    exe, args = program("sum_up.relay")
    s = DebugSession(exe, args)
    s.breakpoints.add("@sum_up:6")
    s.breakpoints.add("@sum_up:15", condition="$0 == 1")
    s.cont()
    s.cont()
    nb = Numberings(s)
    r = nb.switch("reused")
    assert nb.current == "reused" and r is nb.session and r is not s
    assert r.step_count == s.step_count == 20 and r.location() == s.location()
    assert len(r.frame().registers) == nb.sizes("sum_up")[1] < nb.sizes("sum_up")[0]
    # the plain breakpoint followed, the conditional one (it names $0) stayed
    assert [bp.spec for bp in r.breakpoints] == ["@sum_up:6"]
    ev = r.cont()
    assert ev.reason == "breakpoint" and r.step_count == 33
    r.breakpoints.add("@sum_up:26")
    back = nb.toggle()
    assert back is s and s.step_count == 33 and s.location() == r.location()
    assert {bp.spec for bp in s.breakpoints} == {"@sum_up:6", "@sum_up:15", "@sum_up:26"}
    assert nb.switch("tvm") is s
    with pytest.raises(ValueError):
        nb.switch("bogus")


def test_live_ranges_mark_births_lives_and_last_reads():
    exe, _ = program("sum_up.relay")
    reused, _ = reused_executable(exe)
    fn = reused.functions[exe.func_index("sum_up")]
    lr = LiveRanges(fn, reused.kernels)
    assert lr.marks[0][1] == "def"             # load_const $1: born, read at pc 1
    assert lr.marks[1][1] in ("end", "def")    # alloc_storage $1 $1: last read and reborn
    # one register, several values over time: some column is born more than once
    births = [sum(1 for row in lr.marks if row.get(r) in ("def", "point"))
              for r in range(fn.register_file_size)]
    assert max(births) > 1


def test_numbering_command_and_batch():
    exe, args = program("sum_up.relay")
    ci = CommandInterpreter(DebugSession(exe, args))
    ci.execute("step 8")
    out = ci.execute("numbering reused")
    assert "reused numbering at step 8" in out and "@sum_up: register file 17 -> 6" in out
    assert "if $2 $3 1 4" in ci.execute("list")
    assert ci.session.step_count == 8
    assert "TVM's numbering at step 8" in ci.execute("numbering toggle")
    assert "if $4 $5 1 4" in ci.execute("list")
    assert ci.execute("numbering sideways").startswith("error: usage")
    lines = []
    run_batch(DebugSession(exe, args), ["numbering reused", "continue"], lines.append)
    text = "".join(lines)
    assert "register file" in text and "finished" in text


def test_a_client_holding_its_session_refuses_the_switch():
    exe, args = program("sum_up.relay")
    session = DebugSession(exe, args)
    ci = CommandInterpreter(session)
    ci.may_switch_session = False          # as the DAP adapter sets it
    assert ci.execute("numbering reused").startswith("error: numbering switches the session")
    assert ci.session is session
    assert "in TVM's numbering at step 0" in ci.execute("numbering")   # asking is fine
    assert ci.session is session
