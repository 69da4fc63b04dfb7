"""Breakpoints, conditions and watchpoints as traps in the run loop (rvmdbg/debug/traps.py)
stop exactly where single steps find them (stepping_reference.py): the same stops, at the
same steps, with the same messages, hit counts and log lines, going forward and backward,
across checkpoint boundaries (small intervals), in recursion (one activation only).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg.debug import DebugSession
from rvmdbg.debug.breakpoints import Condition, ConditionError
from rvmdbg.debug.commands import CommandInterpreter
from rvmdbg.debug.machine import machine_for
from rvmdbg.values import ADTValue

from dbg_helpers import PROGRAM_NAMES, PROGRAMS, program
from stepping_reference import Reference, reverse_stops

# every program, short enough for single steps (loop.relay runs 24,016 instructions)
SMALL = [n for n in PROGRAM_NAMES if n != "loop.relay"]


def session_and_reference(name, interval, setup, args=None):
    """A session and a reference over the same program; `setup(session)` adds breakpoints
    and watchpoints (and may move the session, whose step the reference then reaches)."""
    exe, values = program(name, args)
    s = DebugSession(exe, values, interval=interval)
    logs = []
    s.on_log = lambda bp, text: logs.append(text)
    setup(s)
    _, fresh = program(name, args)
    ref = Reference(s.exe, fresh, list(s.breakpoints), s.watches)
    while ref.vm.steps < s.step_count:
        ref.vm.step()
    return s, ref, logs


def stop_of(ev):
    return (ev.reason, ev.number, ev.step, ev.message)


def forward_agrees(s, ref, motions, logs=None):
    """Run the motions on both; every stop must be the same. Returns the session's stops."""
    events = []
    for motion in motions:
        ev = getattr(s, "cont" if motion == "cont" else motion)()
        want = getattr(ref, motion)()
        got = stop_of(ev)
        if want[0] == "finished":
            got = got[:3] + (None,)
        assert got == want, f"{motion}: session {got} != single steps {want}"
        events.append(ev)
        if ev.reason in ("finished", "error"):
            break
    if logs is not None:
        assert logs == ref.logs
    return events


def reverse_agrees(s, ref, limit=40):
    """Repeated rcontinue from here stops where single steps say, back to the start."""
    want = reverse_stops(ref.every_hit(), s.step_count)
    for expected in want[:limit]:
        ev = s.rcontinue()
        assert (ev.reason, ev.number, ev.step) == expected


def watch_in(s, depth, registers, on="write"):
    return [s.watch(r, depth, on) for r in registers]


def _registers_of(s, depth=None):
    return len(s.frame(depth).registers)


# ------------------------------------------------------------ every program


@pytest.mark.parametrize("name", SMALL)
def test_watchpoints_stop_where_single_steps_do(name):
    """Watch every register of the entry frame and of the first activation it calls (write
    and change), continue to the end, then reverse continue back to the start."""
    def setup(s):
        n = _registers_of(s)
        watch_in(s, 0, range(min(n, 6)))
        s.step()
        if s.depth() == 1:
            k = _registers_of(s, 1)
            watch_in(s, 1, range(0, k, 2), "change")
            watch_in(s, 1, range(1, k, 2))
    s, ref, _ = session_and_reference(name, 16, setup)
    forward_agrees(s, ref, ["cont"] * 400)
    reverse_agrees(s, ref)


@pytest.mark.parametrize("name", ["fib.relay", "sum_up.relay", "list_ops.relay", "refs.relay"])
def test_read_watchpoints_stop_where_single_steps_do(name):
    def setup(s):
        s.step()
        depth = s.depth()
        watch_in(s, depth, range(min(_registers_of(s, depth), 4)), "read")
    s, ref, _ = session_and_reference(name, 32, setup)
    forward_agrees(s, ref, ["cont"] * 200)
    reverse_agrees(s, ref)


# ------------------------------------------------------------ conditions and hit counts


def test_condition_with_hit_count_counts_at_its_trap():
    def setup(s):
        s.breakpoints.add("@fib", "$0 == 1 or $0 == 3", hit_condition="% 3")
        s.breakpoints.add("@fib", "$0 == 0", log_message="fib(0) at depth {$0}")
    s, ref, logs = session_and_reference("fib.relay", 64, setup, ["8"])
    forward_agrees(s, ref, ["cont"] * 100, logs)
    bp = next(iter(s.breakpoints))
    assert bp.hits == ref.hits[bp.id] > 3
    assert logs and logs == ref.logs
    # the hit condition holds going forward only: reverse continue ignores that breakpoint
    reverse_agrees(s, ref)


def test_never_true_condition_counts_nothing_and_runs_to_the_end():
    exe, values = program("fib.relay")
    s = DebugSession(exe, values)
    bp = s.breakpoints.add("@fib", "$0 == -1")
    ev = s.cont()
    assert ev.reason == "finished" and bp.hits == 0
    assert s.rcontinue().reason == "start of history"


def test_condition_that_cannot_be_evaluated_stops_with_the_reason():
    def setup(s):
        s.breakpoints.add("@fib:10", "$5 == 1")   # load_consti 1 or nothing (not run)
        s.breakpoints.add("@fib:3", "$40 == 1")   # outside the register file
    s, ref, _ = session_and_reference("fib.relay", 8, setup, ["4"])
    events = forward_agrees(s, ref, ["cont"] * 6)
    assert any("$40 is outside the register file" in (ev.message or "") for ev in events)


# ------------------------------------------------------------ recursion


def test_watch_in_recursion_stops_only_in_its_activation():
    """fib's activations all run the same instructions: a watch on one of them stops only
    there, at the same steps as single steps, and only while that frame is on the stack."""
    def setup(s):
        fib = s.exe.func_index("fib")
        s.breakpoints.add("@fib")
        for _ in range(4):
            s.cont()          # the fourth activation of @fib, three frames deep in fib
        s.breakpoints.delete(next(iter(s.breakpoints)).id)
        assert s.location() == (fib, 0) and s.depth() == 4
        for r in (0, 4, 6, 11, 16, 20):
            s.watch(r, 4, "change" if r == 6 else "write")
        s.watch(6, 2)   # an outer activation, which resumes after ours returns
    s, ref, _ = session_and_reference("fib.relay", 32, setup, ["9"])
    serials = {w.serial for w in s.watches}
    stops = []
    for _ in range(100):
        ev = s.cont()
        if ev.reason == "finished":
            break
        want = ref.cont()
        assert stop_of(ev) == want
        stops.append(ev)
        wp = s.watch_by_id(ev.number)
        assert wp.serial in serials
        assert s.vm.frames[wp.depth].serial == wp.serial
    depths = {s.watch_by_id(ev.number).depth for ev in stops}
    assert depths == {2, 4}
    reverse_agrees(s, ref)


def test_watch_on_a_call_result_stops_after_the_return():
    """`invoke $11 ...` writes $11 when the callee returns: the stop is in the caller right
    after the return, with the old and new values."""
    exe, values = program("fib.relay", ["6"])
    s = DebugSession(exe, values, interval=4)
    fib = s.exe.func_index("fib")
    s.step()
    s.run_to(fib, 14)
    wp = s.watch(11)
    depth = s.depth()
    ev = s.cont()
    assert (ev.reason, ev.number) == ("watchpoint", wp.id)
    assert s.location() == (fib, 15) and s.depth() == depth
    assert ev.message.startswith("$11 of @fib: - -> ")
    assert s.rcontinue().reason == "start of history"


def test_watch_on_a_parameter_of_an_activation_not_yet_pushed():
    """A watchpoint on a frame that returned, after going back to before its call: going
    forward again pushes the same activation (same serial), whose parameter is written by
    the call."""
    exe, values = program("fib.relay", ["5"])
    s = DebugSession(exe, values, interval=8)
    s.step()
    wp = s.watch(0)
    s.rstep()
    ev = s.cont()
    assert (ev.reason, ev.number, ev.step) == ("watchpoint", wp.id, 1)


# ------------------------------------------------------------ motions over calls


@pytest.mark.parametrize("interval", [1, 3, 64, 2048])
def test_next_and_finish_stop_where_single_steps_do(interval):
    def setup(s):
        s.breakpoints.add("@fib", "$0 == 2", hit_condition=">= 5")
        s.step()
        s.watch(6, 1, "change")
    s, ref, _ = session_and_reference("fib.relay", interval, setup, ["8"])
    motions = (["next"] * 12 + ["step", "step", "finish"] + ["next", "step"] * 6 + ["finish"]
               + ["cont"] * 4)
    forward_agrees(s, ref, motions)


# ------------------------------------------------------------ the condition compiler


REGS = [np.array(3, np.int32), np.array(0, np.int64), np.array(2.5, np.float32),
        np.array(True), ADTValue(1, "Cons", ()), ADTValue(0, "Nil", ()),
        np.zeros((2, 2)), None, ADTValue(0, None, ()), np.array([7], np.int32)]

_atoms = st.one_of(st.integers(0, 10).map(lambda r: f"${r}"),
                   st.integers(-3, 4).map(str), st.sampled_from(["2.5", "True", "Nil", "Cons"]))


def _conditions():
    leaf = st.builds(lambda a, op, b: f"{a} {op} {b}", _atoms,
                     st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), _atoms)
    terms = st.one_of(leaf, _atoms, st.builds(lambda a, b: f"{a} + {b}", _atoms, _atoms),
                      st.builds(lambda a: f"-{a}", _atoms))
    return st.recursive(terms, lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a}) and ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) or ({b})", inner, inner),
        st.builds(lambda a: f"not ({a})", inner)), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(text=_conditions())
def test_compiled_condition_agrees_with_walking_the_tree(text):
    cond = Condition(text)

    def outcome(fn):
        try:
            return ("value", fn(REGS))
        except ConditionError as exc:
            return ("error", str(exc))
    assert outcome(cond.holds) == outcome(cond.walk)


# ------------------------------------------------------------ random stops (hypothesis)


PROGRAMS_FOR_RANDOM = ["fib.relay", "sum_up.relay", "list_ops.relay", "refs.relay",
                       "quicksort.relay", "closures.relay", "collatz.relay"]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_stops_agree_with_single_steps(data):
    name = data.draw(st.sampled_from(PROGRAMS_FOR_RANDOM), label="program")
    interval = data.draw(st.sampled_from([1, 5, 64, 2048]), label="interval")
    exe, _ = program(name)
    locations = [(fi, pc) for fi, fn in enumerate(exe.functions)
                 for pc in range(len(fn.instructions))]

    def setup(s):
        for _ in range(data.draw(st.integers(0, 4), label="breakpoints")):
            fi, pc = data.draw(st.sampled_from(locations), label="location")
            r = data.draw(st.integers(0, 6), label="register")
            cond = data.draw(st.sampled_from([None, f"${r} == 1", f"${r} < 3",
                                              f"${r} != 0 and $0 > 1", f"not ${r} == Nil"]),
                             label="condition")
            hit = data.draw(st.sampled_from([None, None, "2", ">= 3", "% 2"]), label="hits")
            log = data.draw(st.sampled_from([None, None, None, "at {$0}"]), label="log")
            s.breakpoints.add(f"@{exe.functions[fi].name}:{pc}", cond, hit_condition=hit,
                              log_message=log)
        start = data.draw(st.integers(0, 60), label="start")
        ev = s.goto(start)
        for _ in range(data.draw(st.integers(0, 4), label="watchpoints")):
            if ev.reason in ("finished", "error") or not s.vm.frames:
                break
            depth = data.draw(st.integers(0, s.depth()), label="depth")
            r = data.draw(st.integers(0, _registers_of(s, depth) - 1), label="watched")
            on = data.draw(st.sampled_from(["write", "change", "read"]), label="on")
            s.watch(r, depth, on)
        if s.watches and data.draw(st.booleans(), label="disable one"):
            s.disable(s.watches[0].id)

    s, ref, logs = session_and_reference(name, interval, setup)
    motions = data.draw(st.lists(st.sampled_from(["cont", "cont", "cont", "step", "next",
                                                  "finish"]), min_size=1, max_size=12),
                        label="motions")
    forward_agrees(s, ref, motions, logs)
    reverse_agrees(s, ref, limit=12)


@pytest.mark.parametrize("interval", [1, 2, 64])
def test_several_hits_at_one_step_stop_at_the_same_one_both_ways(interval):
    """Found by test_random_stops_agree_with_single_steps: in collatz's @main, $1 is written
    by step 0 (watchpoint 1) and read at step 1 (watchpoint 2). Forward stops at the write;
    with a checkpoint at step 1 (interval 1) rcontinue reported the read, as the write is
    found only by replaying the segment before that checkpoint."""
    def setup(s):
        s.watch(1, 0, "write")
        s.watch(1, 0, "read")
        s.breakpoints.add("@main:1")
    s, ref, logs = session_and_reference("collatz.relay", interval, setup)
    stops = forward_agrees(s, ref, ["cont", "cont"], logs)
    assert (stops[0].reason, stops[0].number, stops[0].step) == ("watchpoint", 1, 1)
    first_back = reverse_stops(ref.every_hit(), s.step_count)[0]
    assert first_back == ("watchpoint", 1, 1)
    reverse_agrees(s, ref, limit=12)


@pytest.mark.parametrize("interval", [1, 2, 64])
def test_two_watched_parameters_written_by_one_push_report_the_lower_register(interval):
    """Found by test_random_stops_agree_with_single_steps: in list_ops at step 3, $1 then $0
    of the new activation are watched (watchpoints 1 and 2); reverse continue back to the
    push that wrote both reported watchpoint 1, where single steps see $0 written first."""
    def setup(s):
        s.goto(3)
        s.watch(1, 1, "write")
        s.watch(0, 1, "write")
    s, ref, logs = session_and_reference("list_ops.relay", interval, setup)
    forward_agrees(s, ref, ["cont"], logs)
    reverse_agrees(s, ref, limit=12)


@pytest.mark.parametrize("interval", [1, 2, 64])
def test_reverse_finish_stops_at_a_watched_parameter_written_at_a_checkpoint(interval):
    """rfinish searches from the step after the call: a parameter written there by the
    push is a hit even when a checkpoint falls on that very step (interval 1)."""
    exe, values = program("fib.relay", ["3"])
    s = DebugSession(exe, values, interval=interval)
    while s.depth() < 1:
        s.step()
    push = s.step_count - 1
    wp = s.watch(0, 1, "write")
    s.step(2)
    ev = s.rfinish()
    assert (ev.reason, ev.number, ev.step) == ("watchpoint", wp.id, push + 1)


def test_watch_read_command_and_rwatch():
    exe, values = program("fib.relay", ["4"])
    s = DebugSession(exe, values)
    ci = CommandInterpreter(s)
    ci.execute("step")
    assert "on read" in ci.execute("watch $0 read")
    assert "on read" in ci.execute("rwatch $0")
    assert ci.execute("watch $0 change read").startswith("error:")
    out = ci.execute("continue")
    assert "(watchpoint" in out and "is read here" in out


def test_a_machine_without_checks_in_its_loop_stops_at_the_same_steps():
    """The MiniVM's run() takes plain breakpoints: the session asks each trap's check at
    the stop (traps.run_checked), with the same stops as single steps."""
    from rvmdbg.minivm import load_mvm
    exe = load_mvm(str(PROGRAMS / "demo.mvm"))
    assert not getattr(machine_for(exe), "traps_with_checks", False)
    for interval in (1, 2, 64):
        s = DebugSession(exe, [], interval=interval)
        s.step()
        for r in range(3):
            s.watch(r, 0, "change" if r == 1 else "write")
        s.breakpoints.add("@main:5")
        ref = Reference(s.exe, [], list(s.breakpoints), s.watches)
        ref.vm.step()
        forward_agrees(s, ref, ["cont"] * 10)
        reverse_agrees(s, ref)
