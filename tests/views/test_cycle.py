"""Fetch, decode, execute one phase at a time (rvmdbg.views.cycle): the fields are the .rvmx
ones, the handler is the dispatch table's, and turning the loop to the end is a real run."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rvmdbg.views.context import ViewContext
from rvmdbg.views.cycle import DispatchCycle
from rvmdbg.vm import serialize
from rvmdbg.vm.machine import HANDLERS, VirtualMachine

ROOT = Path(__file__).resolve().parents[2]


def _ctx(n: int = 3) -> ViewContext:
    text = (ROOT / "programs" / "sum_up.relay").read_text()
    return ViewContext.from_text(text, "sum_up.relay", session_args=[np.array(n, np.int32)])


def test_turning_the_loop_to_the_end_is_a_run():
    ctx = _ctx()
    s = ctx.session
    cycle = DispatchCycle()
    phases = []
    while not s.finished:
        phases.append(cycle.advance(s, lambda: s.step()))
        assert len(phases) < 10_000
    assert phases[:6] == ["fetch", "decode", "execute"] * 2
    assert phases.count("execute") == s.step_count
    expected = VirtualMachine(ctx.exe).invoke("main", [np.array(3, np.int32)])
    assert int(s.result) == int(expected) == 6
    assert "the outermost frame returned: result 6" in cycle.rows(s)[2][1]
    assert cycle.advance(s, lambda: s.step()) == ""       # nothing left to run


def test_fetch_shows_the_serialized_fields_and_decode_the_handler():
    ctx = _ctx()
    s = ctx.session
    cycle = DispatchCycle()
    cycle.advance(s, lambda: s.step())
    f = cycle.fetched
    ins = ctx.exe.functions[f.func_index].instructions[f.pc]
    # what an .rvmx stores for the instruction: its opcode, then its fields
    round_trip = serialize.loads(serialize.dumps(ctx.exe))
    assert round_trip.functions[f.func_index].instructions[f.pc].fields() == list(f.fields)
    assert (f.opcode, list(f.fields)) == (ins.opcode, ins.fields())
    cycle.advance(s, lambda: s.step())
    d = cycle.decoded
    assert d.factory == HANDLERS[f.opcode].__name__ == "_invoke"
    assert d.reads == ((0, "3"),)
    assert s.step_count == 0                                # nothing ran yet


def test_a_motion_elsewhere_starts_the_cycle_afresh():
    ctx = _ctx()
    s = ctx.session
    cycle = DispatchCycle()
    cycle.advance(s, lambda: s.step())
    assert [state for *_, state in cycle.rows(s)] == ["done", "next", "later"]
    s.step()
    assert [state for *_, state in cycle.rows(s)] == ["next", "later", "later"]
    assert cycle.advance(s, lambda: s.step()) == "fetch"


def test_the_minivm_turns_the_same_loop_without_a_table():
    from rvmdbg.debug import DebugSession
    from rvmdbg.debug.commands import CommandInterpreter
    from rvmdbg.minivm.parser import load_mvm
    program = load_mvm(str(ROOT / "programs" / "demo.mvm"))
    s = DebugSession(program, [])
    cycle = DispatchCycle()
    cycle.advance(s, lambda: s.step())
    cycle.advance(s, lambda: s.step())
    assert cycle.decoded.table.startswith("MiniMachine") and cycle.decoded.factory == "_decode"
    assert "LD r1 3" in cycle.rows(s)[0][1]
    while not s.finished:
        cycle.advance(s, lambda: s.step())
    assert s.step_count > 0
    # register reuse is a pass over Relay VM bytecode: refused with a message
    out = CommandInterpreter(s).execute("numbering reused")
    assert out.startswith("error: register reuse is a pass over Relay VM bytecode")
    # swap? names the MiniVM's registers as it does
    assert "write after write of r0" in CommandInterpreter(s).execute("swap? 3 5")
