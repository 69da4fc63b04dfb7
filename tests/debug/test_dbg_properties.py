"""Properties of reverse execution over every program in programs/ (hypothesis):

- k steps forward then k steps back returns exactly the starting state;
- running to the end, then `goto j`, gives the state a fresh run has at step j;
- reverse continue stops at the last breakpoint hit that forward continue would have stopped
  at (and forward continue from there stops at the next one).

Checkpoint intervals are drawn small so that restores and replays happen all the time.
"""
from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg.debug import DebugSession
from rvmdbg.vm.machine import VirtualMachine

from dbg_helpers import PROGRAM_NAMES, fresh_args, fresh_vm_at, program, same_state

SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@lru_cache(maxsize=None)
def total_steps(name: str) -> int:
    exe, args = program(name)
    vm = VirtualMachine(exe)
    vm.start("main", args)
    vm.run()
    return vm.steps


def new_session(name: str, interval: int) -> DebugSession:
    exe, args = program(name)
    return DebugSession(exe, args, interval=interval)


@pytest.mark.parametrize("name", PROGRAM_NAMES)
@SETTINGS
@given(data=st.data())
def test_forward_k_then_back_k_is_identity(name, data):
    n = total_steps(name)
    interval = data.draw(st.integers(1, 64), label="interval")
    j = data.draw(st.integers(0, n - 1), label="start")
    k = data.draw(st.integers(1, min(n - j, 3000)), label="k")
    s = new_session(name, interval)
    s.goto(j)
    assert s.step_count == j
    s.step(k)
    assert s.step_count == j + k
    ev = s.rstep(k)
    assert ev.step == j
    exe, _ = program(name)
    assert same_state(s.vm, fresh_vm_at(exe, fresh_args(name), j))


@pytest.mark.parametrize("name", PROGRAM_NAMES)
@SETTINGS
@given(data=st.data())
def test_goto_matches_fresh_run(name, data):
    n = total_steps(name)
    interval = data.draw(st.integers(1, 64), label="interval")
    s = new_session(name, interval)
    assert s.cont().reason == "finished" and s.step_count == n
    exe, _ = program(name)
    for j in data.draw(st.lists(st.integers(0, n), min_size=1, max_size=4), label="targets"):
        s.goto(j)
        assert same_state(s.vm, fresh_vm_at(exe, fresh_args(name), j))


def _locations(name):
    exe, _ = program(name)
    return [(fi, pc) for fi, fn in enumerate(exe.functions) for pc in range(len(fn.instructions))]


@pytest.mark.parametrize("name", PROGRAM_NAMES)
@SETTINGS
@given(data=st.data())
def test_reverse_continue_mirrors_forward_continue(name, data):
    n = total_steps(name)
    interval = data.draw(st.integers(1, 64), label="interval")
    locs = data.draw(st.lists(st.sampled_from(_locations(name)), min_size=1, max_size=3,
                              unique=True), label="breakpoints")
    s = new_session(name, interval)
    exe = s.exe
    for fi, pc in locs:
        s.breakpoints.add(f"@{exe.functions[fi].name}:{pc}")
    # Every hit forward continue stops at, from the start (capped: some locations run often);
    # a breakpoint on the very first instruction counts as hit at step 0.
    hits = [0] if s.location() in set(locs) else []
    while len(hits) < 60:  # noqa: PLR2004
        ev = s.cont()
        if ev.reason != "breakpoint":
            break
        hits.append(ev.step)
    if len(hits) == 60:
        last = hits[-1]
    else:
        assert ev.reason == "finished"
        last = n
    p = data.draw(st.integers(0, last), label="position")
    s.goto(p)
    ev = s.rcontinue()
    before = [h for h in hits if h < p]
    if before:
        assert ev.reason == "breakpoint" and ev.step == before[-1]
        assert s.location() in set(locs)
    else:
        assert ev.reason == "start of history" and ev.step == 0
    # and forward again from there stops at the next hit after it
    after = [h for h in hits if h > ev.step]
    if after:
        ev2 = s.cont()
        assert ev2.reason == "breakpoint" and ev2.step == after[0]


_WORDS = ["break", "b", "delete", "d", "disable", "enable", "condition", "step", "s", "next",
          "n", "finish", "f", "continue", "c", "rstep", "rnext", "rfinish", "rcontinue", "goto",
          "run-to", "info", "backtrace", "bt", "print", "p", "heap", "deps", "last-write",
          "watch", "list", "source", "frame", "up", "down", "restart", "help", "bogus", ""]
_ARGS = ["1", "0", "-1", "3", "99999999999999999999", "$0", "$3", "$-1", "$x", "@main",
         "@map:2", "@nope", "@main:999", "op:AllocADT", "op:Nope", "registers", "frame",
         "breakpoints", "if", "$0 == 1", "==", "and", "Nil", "(", ")", "change", "-c", "7",
         "x", "", "\t", "é", "#"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(st.sampled_from(_WORDS),
                          st.lists(st.sampled_from(_ARGS), max_size=4)), min_size=1, max_size=6))
def test_any_command_line_answers_with_text(lines):
    """Whatever is typed on the command line (or in a batch script), the interpreter answers
    with text, an `error: ...` line at worst; it never raises."""
    from rvmdbg.debug import CommandInterpreter
    exe, args = program("list_ops.relay")
    interp = CommandInterpreter(DebugSession(exe, args, interval=16))
    for word, rest in lines:
        out = interp.execute(" ".join([word, *rest]))
        assert isinstance(out, str)
