"""The machine protocol: the Relay VM and the MiniVM are both `debug.machine.Machine`s, and
one driver, written against the protocol only, debugs both through `DebugSession`: stepping
forward and back (time travel), breakpoints, watchpoints, data dependencies, goto."""
from __future__ import annotations

import pytest

from rvmdbg.debug import DebugSession
from rvmdbg.debug.machine import Machine, machine_for
from rvmdbg.minivm import MiniMachine, load_mvm
from rvmdbg.vm.machine import VirtualMachine

from dbg_helpers import PROGRAMS, program


def _minivm():
    return load_mvm(str(PROGRAMS / "demo.mvm")), []


def _relay():
    # the same demo written in Relay (if x >= 0 then x + y else x - y), on x=3, y=2
    return program("minivm.relay", ["3", "2"])


MACHINES = {"minivm": _minivm, "relay": _relay}


@pytest.mark.parametrize("name", MACHINES)
def test_both_machines_implement_the_protocol(name):
    exe, _ = MACHINES[name]()
    m = machine_for(exe)
    assert isinstance(m, Machine)
    assert isinstance(m, MiniMachine if name == "minivm" else VirtualMachine)


def _state(s: DebugSession):
    """What a learner sees: where, and the innermost frame's registers (None once done)."""
    if s.finished:
        return ("finished", s.step_count)
    f = s.frame()
    return (f.func_name, f.pc, s.step_count, tuple(map(repr, f.registers)))


def drive(s: DebugSession) -> dict:
    """The protocol's motions, the same calls on any machine; returns what they showed."""
    forward = [_state(s)]
    while not s.finished:
        ev = s.step()
        assert ev.reason in ("step", "finished")
        forward.append(_state(s))
    end = s.step_count
    # time travel: back one step at a time through the very same states
    for expected in reversed(forward[:-1]):
        s.rstep()
        assert _state(s) == expected
    # goto anywhere, both ways
    for target in (end - 1, 1, end):
        s.goto(target)
        assert _state(s) == forward[target]
    s.restart()
    # a breakpoint on each instruction that writes: continue stops there, reverse continue
    # comes back to the previous hit
    fi, _ = s.location()
    code = s.exe.functions[fi].instructions
    writers = [pc for pc, ins in enumerate(code) if ins.writes()]
    bp = s.breakpoints.add(f"@{s.func_name(fi)}:{writers[-1]}")
    hit = s.cont()
    assert hit.reason == "breakpoint" and hit.number == bp.id and hit.pc == writers[-1]
    hit_step = s.step_count
    # data dependencies: each register the instruction reads names the step that wrote it,
    # and going to that step shows that instruction about to write it
    deps = s.deps()
    for read in deps.reads:
        if read.write_step is not None:
            assert read.write_step < hit_step
            ins = code[read.write_pc]
            assert read.register in ins.writes() or ins.is_call
    # a watchpoint on what it writes fires right after it
    wp = s.watch(code[writers[-1]].writes()[0])
    ev = s.step()
    assert ev.reason in ("step", "watchpoint")
    s.rcontinue()
    assert s.step_count == hit_step
    s.delete(wp.id)
    final = s.cont()
    assert final.reason == "finished" and s.step_count == end
    return {"steps": end, "forward": forward, "result": s.result}


@pytest.mark.parametrize("name", MACHINES)
def test_one_driver_debugs_both_machines(name):
    exe, args = MACHINES[name]()
    out = drive(DebugSession(exe, args, interval=2))
    assert out["steps"] > 3


def test_both_compute_the_same_value():
    mini = drive(DebugSession(*_minivm()))
    relay = drive(DebugSession(*_relay()))
    assert mini["result"][0] == int(relay["result"]) == 5
