"""Last writes found without a replay (`Inspection._straight_writes`): in the innermost frame's
straight run (no jump, call or jump target between a value's write and its read) the write
ran exactly (pc - writer) steps ago. At every step of every program, and at every depth, the
answer equals the one found by replaying history, which the fast way must never change."""
from __future__ import annotations

import pytest

from rvmdbg.debug import DebugSession

from dbg_helpers import PROGRAM_NAMES, calls_exe, count_loop_exe, fatal_exe, i64, program

MAX_STEPS = 400


def _compare_everywhere(s: DebugSession, max_steps: int = MAX_STEPS) -> int:
    """Steps `s` to the end (or `max_steps`) and compares both ways at each stop; returns how
    many reads the fast way answered."""
    quick = 0
    for _ in range(max_steps):
        frames = s.vm.frames
        for depth in range(len(frames)):
            f = frames[depth]
            ins = s.exe.functions[f.func_index].instructions[f.pc]
            regs = sorted(set(ins.reads()))
            if not regs:
                continue
            replayed = s._last_writes(depth, regs, straight=False)
            fast = s._last_writes(depth, regs)
            assert fast == replayed, (s.step_count, depth, ins.text())
            if depth == len(frames) - 1:
                quick += len(s._straight_writes(f, regs, s.register_index(f.func_index)[0]))
        if s.finished or s.vm.halted:
            break
        try:
            s.step()
        except Exception:
            break
    return quick


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_straight_writes_equal_the_replayed_ones(name):
    exe, args = program(name)
    s = DebugSession(exe, args, interval=8)
    _compare_everywhere(s)


@pytest.mark.parametrize("make, args", [(calls_exe, [i64(5)]), (count_loop_exe, [i64(3)]),
                                        (fatal_exe, [i64(0)])])
def test_straight_writes_in_loops_calls_and_errors(make, args):
    s = DebugSession(make(), args, interval=8)
    _compare_everywhere(s)


def test_a_straight_program_needs_no_replay():
    """In a straight @main every read's writer is found without a replay (the VM's state
    objects stay the very same: nothing was recomputed)."""
    exe, args = program("mlp.relay")
    s = DebugSession(exe, args, interval=8)
    assert _compare_everywhere(s) > 0
    s.goto(0)
    s.step(12)
    before = list(s.vm.frames[-1].registers)
    s.deps_cache.clear()
    s.deps()
    assert all(a is b for a, b in zip(before, s.vm.frames[-1].registers))


def test_steps_before_the_start_of_history_are_not_guessed():
    """A write older than the oldest checkpoint kept is reported as the replay reports it
    (a tiny history budget drops old checkpoints, moving the start of history forward)."""
    exe, args = program("cnn.relay")
    s = DebugSession(exe, args, interval=4, history_bytes=1)
    s.step(40)
    assert s.history.start > 0
    _compare_everywhere(s, 80)


@pytest.mark.parametrize("name", ["demo.mvm", "demo_spin.mvm"])
def test_straight_writes_on_the_minivm(name):
    """Another machine's bytecode (MiniVM's CH/JM jumps, HL's halt) gives the same answers."""
    from dbg_helpers import PROGRAMS
    from rvmdbg.minivm.parser import load_mvm
    s = DebugSession(load_mvm(str(PROGRAMS / name)), [], interval=4)
    _compare_everywhere(s, 300)
