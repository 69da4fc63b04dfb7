"""The session features an editor adapter (DAP) needs, as general protocol features: hit
conditions, log points, stepping by statement or line forwards and backwards, visits of an
instruction set (jump to cursor), and the last writer of a register without moving."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.debug import DebugError, DebugSession
from rvmdbg.debug.breakpoints import BreakpointError, HitCondition, log_text
from rvmdbg.values import ADTValue

from dbg_helpers import i32, program

FIB_BODY = 6  # programs/fib.relay: `if (%n < 2) {`


def fib_session(n=6, **kw):
    exe, _ = program("fib.relay")
    return DebugSession(exe, [i32(n)], **kw)


@pytest.mark.parametrize("text, hits, expected", [
    ("3", [1, 2, 3, 4], [False, False, True, False]),
    ("== 2", [2, 3], [True, False]),
    (">= 2", [1, 2, 9], [False, True, True]),
    ("> 2", [2, 3], [False, True]),
    ("< 2", [1, 2], [True, False]),
    ("<= 2", [2, 3], [True, False]),
    ("% 3", [2, 3, 6, 7], [False, True, True, False]),
])
def test_hit_conditions(text, hits, expected):
    h = HitCondition(text)
    assert [h.holds(n) for n in hits] == expected


@pytest.mark.parametrize("text", ["", "often", "% 0", ">> 2", "3 4"])
def test_bad_hit_conditions_are_refused(text):
    with pytest.raises(BreakpointError):
        HitCondition(text)


def test_hit_condition_stops_at_the_nth_hit_and_reverse_skips_it():
    s = fib_session()
    bp = s.breakpoints.add(str(FIB_BODY), hit_condition="3")
    ev = s.cont()
    assert ev.reason == "breakpoint" and s.frame().registers[0].item() == 4  # 6, 5, 4
    assert bp.hits == 3
    main = s.breakpoints.add("@main")
    ev = s.rcontinue()  # hit counts are forward-only: back past fib's first two hits
    assert ev.reason == "breakpoint" and ev.number == main.id and s.step_count == 0


def test_log_points_report_and_do_not_stop():
    s = fib_session(3)
    lines = []
    s.on_log = lambda bp, text: lines.append(text)
    s.breakpoints.add("@fib", log_message="n={%n} reg={$0} bad={$99} {what}")
    assert s.cont().reason == "finished"
    assert lines[0] == "n=3 reg=3 bad={$99: no such register} {what?}"
    assert len(lines) == 5  # fib(3): 5 calls
    s.breakpoints.add("@main")
    assert s.rcontinue().reason == "breakpoint"  # at @main, not at a log point


def test_log_text_reads_registers_and_parameters():
    regs = [i32(4), ADTValue(0, "Nil", ())]
    assert log_text("{%x} and {$1}", regs, ["x"]) == "4 and Nil"


def _span_key(s, unit):
    sp = s.current_span()
    return (sp.file, sp.line) if unit == "line" else (sp.file, sp.line, sp.col, sp.end_line,
                                                     sp.end_col)


@pytest.mark.parametrize("unit", ["statement", "line"])
def test_source_steps_reach_another_position_and_back(unit):
    s = fib_session(4)
    s.breakpoints.add("@fib")
    s.cont()
    s.breakpoints.clear()
    positions = []
    for _ in range(6):
        before = (s.step_count, _span_key(s, unit))
        ev = s.step(1, unit)
        assert ev.reason == "step" and s.step_count > before[0]
        positions.append((before, s.step_count))
    # going back by the same unit revisits the same steps in reverse
    for (before, after) in reversed(positions[1:]):
        assert s.step_count == after
        s.rstep(1, unit)
    assert s.step_count == positions[0][1]


def test_next_by_line_stays_in_the_frame():
    s = fib_session(5)
    s.breakpoints.add("@fib")
    s.cont()
    s.breakpoints.clear()
    depth = s.depth()
    while not s.finished and s.depth() >= depth:
        ev = s.next(unit="line")
        assert s.depth() <= depth
        if ev.reason != "step":
            break
    here = s.step_count
    s.rnext(unit="line")
    assert s.step_count < here


def test_unknown_unit_is_an_error():
    s = fib_session()
    with pytest.raises(DebugError):
        s.step(1, "word")


def test_visits_find_the_previous_and_next_steps_without_moving():
    s = fib_session(4)
    locs = s.breakpoints.resolve("9")["locations"]  # the line with the two calls
    before, after = s.visits(locs)
    assert before is None and after is not None and s.step_count == 0
    s.goto(after)
    assert s.location() in locs
    s.step(3)
    now = s.step_count
    before2, after2 = s.visits(locs)
    assert before2 == after and after2 > now and s.step_count == now


def test_last_writer_does_not_move():
    s = fib_session(4)
    s.run_to_locations(s.breakpoints.resolve("@fib:14")["locations"])
    now = s.step_count
    step, fi, pc, text = s.last_writer(10)
    assert step is not None and pc == 13 and "invoke_packed" in text
    assert s.step_count == now
    with pytest.raises(DebugError):
        s.last_writer(999)


@settings(max_examples=15, deadline=None)
@given(moves=st.lists(st.sampled_from(["s", "n", "rs", "rn"]), min_size=1, max_size=8),
       unit=st.sampled_from(["statement", "line"]))
def test_source_motion_is_deterministic(moves, unit):
    """Two sessions given the same source-level moves land on the same steps."""
    a, b = fib_session(4), fib_session(4)
    for m in moves:
        for s in (a, b):
            {"s": lambda: s.step(1, unit), "n": lambda: s.next(unit),
             "rs": lambda: s.rstep(1, unit), "rn": lambda: s.rnext(unit)}[m]()
        assert a.step_count == b.step_count


def test_info_breakpoints_shows_hit_conditions_and_log_messages():
    from rvmdbg.debug import CommandInterpreter
    s = fib_session()
    s.breakpoints.add("@fib", "$0 > 1", hit_condition=">= 2")
    s.breakpoints.add("@main", log_message="start {%n}")
    text = CommandInterpreter(s).execute("info breakpoints")
    assert "if $0 > 1 hits >= 2" in text and "log 'start {%n}'" in text
