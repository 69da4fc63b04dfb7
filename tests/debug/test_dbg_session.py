"""DebugSession: every motion and stop reason, on hand-assembled executables and real programs,
checked against fresh runs of the plain VM."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from rvmdbg.debug import DebugError, DebugSession
from rvmdbg.limits import Limits
from rvmdbg.values import ADTValue, RefCell, values_equal
from rvmdbg.vm.machine import VirtualMachine, VMError

from dbg_helpers import (calls_exe, count_loop_exe, fatal_exe, fresh_vm_at, i32, i64, program,
                         refs_exe, same_state)


def session(exe, args, **kw):
    kw.setdefault("interval", 8)
    return DebugSession(exe, args, **kw)


# ------------------------------------------------------------------ basic state

def test_initial_state_and_frames():
    s = session(calls_exe(), [i64(5)])
    assert s.step_count == 0 and s.history_start == 0 and s.last_step == 0
    assert not s.finished and s.result is None and s.error is None
    fs = s.frames()
    assert len(fs) == 1 and fs[0].func_name == "main" and fs[0].pc == 0 and fs[0].depth == 0
    assert values_equal(fs[0].registers[0], i64(5)) and fs[0].registers[1] is None
    assert fs[0].types[0] == "int64" and fs[0].types[1] == ""
    assert s.location() == (2, 0)
    assert s.current_instruction().text() == "invoke $1 VMFunc[1]($0)"


def test_step_into_calls_and_stop_line():
    s = session(calls_exe(), [i64(5)])
    ev = s.step()
    assert ev.reason == "step" and ev.step == 1 and ev.func_name == "twice" and ev.pc == 0
    assert ev.line() == "[step 1] @twice pc=0: invoke $1 VMFunc[0]($0)    (step)"
    ev = s.step(2)
    assert ev.step == 3 and ev.func_name == "inc" and ev.pc == 1
    assert [f.func_name for f in s.frames()] == ["main", "twice", "inc"]
    assert [f.depth for f in s.frames()] == [0, 1, 2]


def test_next_steps_over_calls():
    s = session(calls_exe(), [i64(5)])
    ev = s.next()  # over twice(): 1 + 2 * 8 steps
    assert ev.reason == "step" and ev.func_name == "main" and ev.pc == 1
    assert values_equal(s.frames()[0].registers[1], i64(7))
    assert ev.step == fresh_steps_to(calls_exe(), [i64(5)], (2, 1))


def fresh_steps_to(exe, args, loc):
    vm = VirtualMachine(exe)
    vm.start("main", args)
    while vm.location != loc:
        vm.step()
    return vm.steps


def test_next_on_plain_instruction_is_one_step():
    s = session(count_loop_exe(), [i64(3)])
    ev = s.next()
    assert ev.step == 1 and ev.pc == 1


def test_finish_returns_to_caller():
    s = session(calls_exe(), [i64(5)])
    s.step(3)  # inside inc, called from twice
    ev = s.finish()
    assert ev.func_name == "twice" and ev.pc == 1
    assert values_equal(s.frames()[-1].registers[1], i64(6))
    ev = s.finish()
    assert ev.func_name == "main" and ev.pc == 1
    ev = s.finish()  # outermost frame: runs to the end
    assert ev.reason == "finished" and s.finished and values_equal(s.result, i64(8))
    assert ev.pc is None and "returned 8" in ev.line() and ev.line().endswith("(finished)")


def test_continue_to_breakpoint_and_hits():
    s = session(calls_exe(), [i64(5)])
    bp = s.breakpoints.add("@inc")
    ev = s.cont()
    assert ev.reason == "breakpoint" and ev.number == bp.id and ev.func_name == "inc"
    assert ev.line().endswith(f"(breakpoint {bp.id})")
    seen = [ev.step]
    while True:
        ev = s.cont()
        if ev.reason != "breakpoint":
            break
        seen.append(ev.step)
    assert ev.reason == "finished" and len(seen) == 3 and bp.hits == 3


def test_run_to_instruction():
    s = session(count_loop_exe(), [i64(4)])
    ev = s.run_to(0, 11)
    assert ev.reason == "step" and ev.pc == 11
    first = ev.step
    ev = s.run_to(0, 11)  # the next arrival, one loop iteration later
    assert ev.pc == 11 and ev.step == first + 9


def test_conditional_breakpoint():
    s = session(count_loop_exe(), [i64(10)])
    bp = s.breakpoints.add("@main:11", "$8 == 4")
    ev = s.cont()
    assert ev.reason == "breakpoint" and values_equal(s.frames()[0].registers[8], i64(4))
    assert bp.hits == 1
    s.breakpoints.set_condition(bp.id, "$8 > 8 and $1 != 0")
    ev = s.cont()
    assert values_equal(s.frames()[0].registers[8], i64(9))


def test_condition_error_stops_with_message():
    s = session(count_loop_exe(), [i64(3)])
    s.breakpoints.add("@main:0", "$8 == 1")  # $8 is empty at pc 0
    s.step()
    s.restart()
    ev = s.cont()
    assert ev.reason == "finished"  # pc 0 only runs at the start, which continue leaves
    s.restart()
    s.breakpoints.add("@main:5", "$3 == 1")  # $3 is empty on the first visit
    ev = s.cont()
    assert ev.reason == "breakpoint" and "could not be evaluated" in ev.message


def test_disabled_and_deleted_breakpoints_do_not_stop():
    s = session(calls_exe(), [i64(5)])
    bp = s.breakpoints.add("@inc")
    s.breakpoints.disable(bp.id)
    assert s.cont().reason == "finished"
    s.restart()
    s.breakpoints.enable(bp.id)
    assert s.cont().reason == "breakpoint"
    s.breakpoints.delete(bp.id)
    assert s.cont().reason == "finished"


def test_opcode_breakpoint():
    exe, args = program("list_ops.relay")
    s = session(exe, args)
    bp = s.breakpoints.add("op:AllocADT")
    ev = s.cont()
    assert ev.reason == "breakpoint" and s.current_instruction().name == "AllocADT"
    bp2 = s.breakpoints.add("op:alloc_data")  # TVM's mnemonic names the same opcode
    assert bp2.locations == bp.locations


# ------------------------------------------------------------------ backwards

def test_rstep_matches_fresh_run():
    exe, args = calls_exe(), [i64(5)]
    s = session(exe, args)
    s.step(20)
    for target in (19, 12, 7, 1):
        ev = s.rstep(s.step_count - target)
        assert ev.step == target
        assert same_state(s.vm, fresh_vm_at(exe, [i64(5)], target))


def test_rstep_past_start_is_start_of_history():
    s = session(calls_exe(), [i64(5)])
    s.step(3)
    ev = s.rstep(10)
    assert ev.reason == "start of history" and ev.step == 0
    ev = s.rstep()
    assert ev.reason == "start of history" and ev.step == 0 and not s.finished


def test_rnext_undoes_a_call_as_a_whole():
    s = session(calls_exe(), [i64(5)])
    ev = s.next()
    assert ev.func_name == "main" and ev.pc == 1
    ev = s.rnext()
    assert ev.reason == "step" and ev.step == 0 and ev.func_name == "main" and ev.pc == 0


def test_rnext_plain_and_at_function_entry():
    s = session(calls_exe(), [i64(5)])
    s.step(4)  # inc pc 2
    ev = s.rnext()
    assert ev.func_name == "inc" and ev.pc == 1 and ev.step == 3
    s.goto(2)  # inc pc 0: the step before is twice's invoke
    ev = s.rnext()
    assert ev.func_name == "twice" and ev.pc == 0 and ev.step == 1


def test_rfinish_goes_back_to_the_call():
    s = session(calls_exe(), [i64(5)])
    s.step(5)  # inside the first inc
    ev = s.rfinish()
    assert ev.func_name == "twice" and ev.pc == 0 and ev.step == 1
    ev = s.rfinish()
    assert ev.func_name == "main" and ev.pc == 0 and ev.step == 0
    ev = s.rfinish()  # the outermost frame: back to the start
    assert ev.reason == "start of history"


def test_rcontinue_stops_at_previous_hit():
    s = session(calls_exe(), [i64(5)])
    bp = s.breakpoints.add("@inc")
    forward = []
    while (ev := s.cont()).reason == "breakpoint":
        forward.append(ev.step)
    assert ev.reason == "finished"
    backward = []
    while (ev := s.rcontinue()).reason == "breakpoint":
        assert ev.number == bp.id
        backward.append(ev.step)
    assert ev.reason == "start of history" and s.step_count == 0
    assert backward == forward[::-1]


def test_goto_forward_back_and_end():
    exe, args = program("sum_up.relay", ["20"])
    s = session(exe, args)
    ev = s.goto(300)
    assert ev.step == 300 and same_state(s.vm, fresh_vm_at(exe, program("sum_up.relay", ["20"])[1], 300))
    s.goto(10)
    assert same_state(s.vm, fresh_vm_at(exe, program("sum_up.relay", ["20"])[1], 10))
    ev = s.goto(10 ** 9)
    assert ev.reason == "finished" and values_equal(s.result, i32(210))
    end = ev.step
    ev = s.goto(end + 5)
    assert ev.reason == "finished" and ev.step == end
    ev = s.goto(-3)
    assert ev.reason == "start of history" and ev.step == 0


def test_forward_after_back_replays_exactly():
    exe, args = program("quicksort.relay")
    s = session(exe, args)
    s.goto(400)
    s.rstep(150)
    s.step(150)
    assert same_state(s.vm, fresh_vm_at(exe, program("quicksort.relay")[1], 400))
    ev = s.cont()
    ref = VirtualMachine(exe)
    assert ev.reason == "finished"
    assert values_equal(s.result, ref.invoke("main", program("quicksort.relay")[1]))


# ------------------------------------------------------------------ watchpoints

def test_watch_write_and_change():
    s = session(count_loop_exe(), [i64(3)])
    s.step(5)
    wp = s.watch(1)  # i
    ev = s.cont()
    assert ev.reason == "watchpoint" and ev.number == wp.id
    assert s.vm.frames[0].pc == 12 and values_equal(s.frames()[0].registers[1], i64(1))
    assert "-> 1" in ev.message
    ev = s.cont()
    assert ev.reason == "watchpoint" and values_equal(s.frames()[0].registers[1], i64(2))
    s.delete(wp.id)
    wc = s.watch(5, on="change")  # $5 is written once with 1, never changes again
    ev = s.cont()
    assert ev.reason == "finished" and wc.hits == 0


def test_watch_change_skips_same_value_writes():
    s = session(count_loop_exe(), [i64(3)])
    w = s.watch(7, on="change")  # pc 3 writes 0; nothing writes it again
    ev = s.cont()
    assert ev.reason == "watchpoint" and ev.step == 4 and w.hits == 1
    assert s.cont().reason == "finished"


def test_watch_callee_return_and_scope():
    s = session(calls_exe(), [i64(5)])
    s.step()  # into twice (activation 1)
    wp = s.watch(1)
    ev = s.cont()
    # written by inc's return into twice: the stop is right after that return
    assert ev.reason == "watchpoint" and ev.func_name == "twice" and ev.pc == 1
    assert values_equal(s.frames()[1].registers[1], i64(6))
    # main's $1 is a different frame: not watched
    assert s.cont().reason == "finished" and wp.hits == 1


def test_rcontinue_finds_watchpoint_hits():
    s = session(count_loop_exe(), [i64(4)])
    s.step(5)
    s.watch(1)
    hits = []
    while (ev := s.cont()).reason == "watchpoint":
        hits.append(ev.step)
    back = []
    while (ev := s.rcontinue()).reason == "watchpoint":
        back.append(ev.step)
    # the write at step 0 (before the watch was set at step 5) is a hit going back too
    assert back == hits[::-1] + [1] and len(hits) == 4


def test_watch_errors():
    s = session(calls_exe(), [i64(5)])
    with pytest.raises(DebugError):
        s.watch(99)
    with pytest.raises(DebugError):
        s.watch(0, depth=5)
    with pytest.raises(DebugError):
        s.watch(0, on="access")


# ------------------------------------------------------------------ errors, limits, interrupts

def test_error_stops_at_failing_instruction_with_state_intact():
    s = session(fatal_exe(), [i64(0)])
    ev = s.cont()
    assert ev.reason == "error" and ev.pc == 3 and ev.step == 3
    assert "match? found no matching clause" in ev.message
    assert s.error is not None and s.error.pc == 3 and not s.finished
    assert values_equal(s.frames()[0].registers[2], i64(0))
    again = s.step()
    assert again.reason == "error" and again.step == 3
    ev = s.rstep()
    assert ev.reason == "step" and ev.step == 2 and s.error is None
    ev = s.cont()
    assert ev.reason == "error" and ev.step == 3
    assert s.goto(100).reason == "error"


def test_kernel_error_in_real_program():
    exe, args = program("option.relay", ["17", "0"])
    s = session(exe, args)
    ev = s.cont()
    assert ev.reason == "error" and ev.func_name == "expect"
    back = s.rstep()
    assert back.reason == "step" and back.step == ev.step - 1
    bt = [f.func_name for f in s.frames()]
    assert bt[0] == "main"


def test_step_limit_stops_with_reason_limit():
    s = session(count_loop_exe(), [i64(1000)], limits=Limits(max_steps=100))
    ev = s.cont()
    assert ev.reason == "limit" and ev.step == 100 and "max_steps" in ev.message
    assert s.rstep().step == 99


def _wait_until(condition, timeout: float = 30.0) -> None:
    """Poll `condition` from the test's thread until it holds (never a fixed pause)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_interrupt_from_another_thread():
    exe, args = program("fib.relay", ["27"])
    s = DebugSession(exe, args, limits=Limits(max_steps=10 ** 9))
    out = []
    t = threading.Thread(target=lambda: out.append(s.cont()))
    t.start()
    _wait_until(lambda: s.vm.steps > 1000)  # the continue is running
    s.interrupt()
    t.join(10)
    assert not t.is_alive()
    ev = out[0]
    assert ev.reason == "interrupted" and 0 < ev.step < 10 ** 8
    assert same_state(s.vm, fresh_vm_at(exe, program("fib.relay", ["27"])[1], ev.step))
    assert s.step().step == ev.step + 1


def test_progress_callback():
    exe, args = program("fib.relay", ["22"])
    s = DebugSession(exe, args)
    seen = []
    s.on_progress = lambda steps, rate: seen.append((steps, rate))
    assert s.cont().reason == "finished"
    # a run of over a million steps reports progress, every ~0.1 s, with growing counts
    assert seen and all(rate > 0 for _, rate in seen)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:]))


def test_restart_keeps_breakpoints_and_watches():
    s = session(calls_exe(), [i64(5)])
    bp = s.breakpoints.add("@inc")
    s.step()
    s.watch(1)
    s.cont()
    ev = s.restart()
    assert ev.step == 0 and s.step_count == 0
    assert list(s.breakpoints) == [bp] and len(s.watches) == 1
    assert s.cont().reason in ("breakpoint", "watchpoint")


def test_restart_after_history_budget_dropped_step_zero():
    exe, args = program("refs.relay")
    s = DebugSession(exe, args, interval=4, history_bytes=1)
    s.cont()
    assert s.history_start > 0
    ev = s.restart()
    assert ev.step == 0 and s.history_start == 0
    assert s.cont().reason == "finished"
    ref = VirtualMachine(exe).invoke("main", program("refs.relay")[1])
    assert values_equal(s.result, ref)


# ------------------------------------------------------------------ inspection

def test_changed_registers():
    s = session(count_loop_exe(), [i64(3)])
    assert s.changed_registers() == set()     # step 0: the arguments are no change (issue 28)
    s.step(2)
    assert s.changed_registers() == {1, 2}
    s.step()
    assert s.changed_registers() == {6}
    s.run_to(0, 12)
    assert {8, 1, 3}.issubset(s.changed_registers())
    s.step()  # pc 12 kills $4 (storage)
    assert s.changed_registers() == {4}


def test_current_span_and_source_lines():
    exe, args = program("sum_up.relay", ["3"])
    s = session(exe, args)
    span = s.current_span()
    assert span is not None and span.file.endswith("sum_up.relay")


def test_heap_marks_sharing():
    exe, args = program("tuples.relay")
    s = session(exe, args)
    for _ in range(200):
        nodes = s.heap()
        shared = [n for n in nodes if n.shared]
        if shared:
            break
        assert s.step().reason == "step"
    assert shared
    regs = s.frames()[-1].registers
    for n in shared:
        holders = [r for r, v in enumerate(regs) if v is n.value]
        inside = sum(1 for m in nodes for f in m.fields if f.node == n.id)
        assert n.refcount == len(holders) + inside > 1
        assert n.roots == holders


def test_heap_graph_on_hand_values():
    from rvmdbg.debug.heap import heap_of
    leaf = ADTValue(1, "Cons", (i32(1), ADTValue(0, "Nil", ())))
    pair = ADTValue(0, None, (leaf, leaf))
    nodes, truncated = heap_of([pair, leaf, None])
    assert not truncated
    by_label = {n.label: n for n in nodes}
    assert by_label["Cons"].shared and by_label["Cons"].refcount == 3
    assert by_label["Cons"].roots == [1] and by_label["tuple"].roots == [0]
    assert [f.node for f in by_label["tuple"].fields] == [by_label["Cons"].id] * 2


def test_deps_dynamic_writers():
    s = session(count_loop_exe(), [i64(3)])
    s.run_to(0, 10)  # invoke_packed add reads $1 (i) and $2 (one)
    d = s.deps()
    assert [r.register for r in d.reads] == [1, 2] and d.writes == [8]
    r1, r2 = d.reads
    assert r1.write_pc == 0 and r1.write_step == 0 and r1.write_text == "load_consti $1 0"
    assert r2.write_pc == 1 and r2.write_step == 1
    s.run_to(0, 10)  # second iteration: i now comes from the move at pc 11
    d = s.deps()
    assert d.reads[0].write_pc == 11 and values_equal(d.reads[0].value, i64(1))
    step_before = s.step_count
    ev = s.last_write(1)
    assert ev.pc == 11 and s.step_count < step_before
    assert s.current_instruction().text() == "move $1 $8"


def test_deps_parameters_and_call_results():
    s = session(calls_exe(), [i64(5)])
    s.step(4)  # inc pc 2 ... run to inc's add
    s.run_to(0, 5)
    d = s.deps()
    x = d.reads[0]
    assert x.register == 0 and x.write_func == 1 and x.write_pc == 0 and x.write_step == 1
    s.goto(0)
    s.next()
    s.next()  # main pc 2: ret $2, $2 from the call at pc 1
    d = s.deps()
    assert d.reads[0].write_func == 2 and d.reads[0].write_pc == 1
    d = s.deps()  # cached: same answer
    assert d.reads[0].write_pc == 1
    s.goto(0)
    d = s.deps()
    assert d.reads[0].write_step is None and "argument" in d.reads[0].write_text


def test_deps_of_caller_frame_excludes_pending_call():
    s = session(calls_exe(), [i64(5)])
    s.step(8)  # inside inc called from twice pc 1? -> twice waits at pc 0 or 1
    d = s.deps(depth=1)
    f = s.frames()[1]
    assert f.func_name == "twice"
    for r in d.reads:
        assert r.write_step is None or r.write_step < s.step_count


def test_last_write_errors():
    s = session(count_loop_exe(), [i64(3)])
    with pytest.raises(DebugError):
        s.last_write(4)  # never written yet
    ev = s.last_write(0)  # an argument of main
    assert ev.step == 0 and "argument" in ev.message


def test_static_def_use_and_may_swap_on_session():
    s = session(count_loop_exe(), [i64(3)])
    du = s.static_def_use(0)
    assert du[7][1] == [0, 11]
    assert s.may_swap(0, 0, 1)
    assert not s.may_swap(0, 10, 11)


def test_ref_cells_restore_exactly():
    exe = refs_exe()
    s = session(exe, [i64(6)], interval=5)
    ev = s.cont()
    assert ev.reason == "finished" and values_equal(s.result, i64(21))
    for target in (60, 13, 44, 2, 100, 37):
        s.goto(target)
        assert same_state(s.vm, fresh_vm_at(exe, [i64(6)], target))
    s.goto(0)
    assert s.cont().reason == "finished" and values_equal(s.result, i64(21))


def test_session_bad_entry_raises():
    with pytest.raises(VMError):
        DebugSession(calls_exe(), [i64(1)], entry="nope")


def test_history_budget_moves_history_start():
    exe, args = program("sum_up.relay", ["60"])
    s = DebugSession(exe, args, interval=16, history_bytes=60_000)
    s.breakpoints.add("@sum_up")
    while s.cont().reason == "breakpoint":
        pass
    assert s.finished and s.history_start > 0
    start = s.history_start
    ev = s.goto(0)
    assert ev.reason == "start of history" and ev.step == start
    assert same_state(s.vm, fresh_vm_at(exe, program("sum_up.relay", ["60"])[1], start))
    s.goto(start + 40)
    ev = s.rstep(100)
    assert ev.reason == "start of history" and ev.step == start
    s.breakpoints.add("@main")  # only hit at step 0, which is gone
    s.goto(start + 5)
    s.breakpoints.disable(1)
    ev = s.rcontinue()
    assert ev.reason == "start of history" and ev.step == start
    # the outermost frame's argument was set long before the oldest checkpoint
    d = s.deps(depth=0)
    assert all(r.write_step is None for r in d.reads)


def test_interrupting_a_reverse_search():
    exe, args = program("fib.relay", ["21"])
    s = DebugSession(exe, args)
    s.cont()
    s.goto(s.last_step - 1)  # main's ret: main's $0 (its argument) was never written since
    s.watch(0, depth=0)  # a watchpoint makes the backward search step one at a time
    out = []
    here = s.vm.steps
    t = threading.Thread(target=lambda: out.append(s.rcontinue()))
    t.start()
    _wait_until(lambda: s.vm.steps != here)  # the search has left the start point
    s.interrupt()
    t.join(30)
    ev = out[0]
    assert ev.reason == "interrupted" and 0 < ev.step < s.last_step - 1
    assert same_state(s.vm, fresh_vm_at(exe, program("fib.relay", ["21"])[1], ev.step))


def test_changed_registers_compare_values_across_replays():
    exe, args = program("list_ops.relay")
    s = session(exe, args)
    s.step(40)
    s.step()
    before = s.changed_registers()
    s.deps()  # replays from a checkpoint: equal values come back as new objects
    assert s.changed_registers() == before
    s.rstep()
    s.step()  # the same step again, replayed: the same registers changed
    assert s.changed_registers() == before


def test_same_value():
    from rvmdbg.debug.heap import same_value
    a = ADTValue(1, "Cons", (i32(1), ADTValue(0, "Nil", ())))
    b = ADTValue(1, "Cons", (i32(1), ADTValue(0, "Nil", ())))
    assert same_value(a, b) and not same_value(a, ADTValue(1, "Cons", (i32(2), a.fields[1])))
    assert same_value(i32(3), i32(3)) and not same_value(i32(3), i64(3))
    assert not same_value(RefCell(1), RefCell(1)) and same_value(None, None)
    assert not same_value(a, None)
