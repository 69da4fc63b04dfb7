"""The MiniVM's semantics: each opcode, halting, falling off the end, wrapping, the step
limit, and the repeated-state stop of a program that can never halt."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.limits import Limits
from rvmdbg.minivm import MiniMachine, load_mvm, parse_mvm, run_program
from rvmdbg.minivm.machine import REPEATED_STATE
from rvmdbg.vm.machine import VMError

ROOT = Path(__file__).resolve().parents[2]


def test_demo_takes_the_add_branch():
    regs, steps = run_program(load_mvm(str(ROOT / "programs/demo.mvm")))
    assert regs == (5, 3, 2) and steps == 5


def test_negative_r1_takes_the_sub_branch():
    text = (ROOT / "programs/demo.mvm").read_text().replace("LD  r1 3", "LD  r1 -3")
    regs, steps = run_program(parse_mvm(text))
    assert regs == (-5, -3, 2) and steps == 6   # CH falls through to SUB, then JM, HL


def test_ch_jumps_on_zero():
    regs, _ = run_program(parse_mvm("LD r0 0\nCH r0 3\nLD r1 1\nHL\n"))
    assert regs == (0, 0)


def test_falling_off_the_end_halts():
    m = MiniMachine(parse_mvm("LD r0 4\nADD r0 r0 r1\n"))
    assert m.invoke() == (4, 8) and m.halted and m.steps == 2 and m.frames == []


def test_arithmetic_wraps_at_64_bits():
    regs, _ = run_program(parse_mvm(f"LD r0 {2**63 - 1}\nLD r1 1\nADD r0 r1 r2\nHL\n"))
    assert regs[2] == -2**63


def test_step_reports_reads_writes_and_jumps():
    m = MiniMachine(parse_mvm("LD r0 2\nCH r0 3\nHL\nSUB r0 r0 r1\nHL\n"))
    m.start()
    info = m.step()
    assert info.writes[0][1:] == (0, 0, 2) and info.jump_target is None and info.next_pc == 1
    info = m.step()
    assert info.reads == (0,) and info.jump_target == 3 and info.writes == ()
    info = m.step()
    assert info.writes[0][1:] == (1, 0, 0)
    info = m.step()
    assert info.halted and info.result == (2, 0)


def test_breakpoints_stop_before_but_leave_the_current_one():
    m = MiniMachine(parse_mvm("LD r0 1\nLD r0 2\nLD r0 3\nHL\n"))
    m.start()
    assert m.run(breakpoints=frozenset([(0, 2)])) is None and m.frames[0].pc == 2
    assert m.run(breakpoints=frozenset([(0, 2)])) == (3,)


def test_hl_that_stays_is_a_repeated_state():
    m = MiniMachine(load_mvm(str(ROOT / "programs/demo_spin.mvm")))
    m.start()
    with pytest.raises(VMError) as info:
        m.run()
    err = info.value
    assert err.stop_reason == REPEATED_STATE and err.pc == 6 and err.limit is None
    assert m.steps == 5 and m.frames[0].pc == 6 and not m.halted   # stopped before the repeat
    assert "step 5 repeats the state of step 4" in err.message and ".hl stays" in err.message
    assert "demo_spin.mvm:11:9" in err.format()


def test_a_longer_loop_is_caught_at_its_first_repeat():
    # r0 counts 0, 1, 2, 0, 1, 2, ... : the state at the loop head repeats after 3 turns
    text = """
        LD r1 1
        LD r2 -2
top:    ADD r0 r1 r0
        ADD r0 r2 r3
        CH r3 reset
        JM top
reset:  LD r0 0
        JM top
"""
    m = MiniMachine(parse_mvm(text))
    with pytest.raises(VMError) as info:
        m.invoke()
    assert info.value.stop_reason == REPEATED_STATE
    first = int(info.value.message.split("state of step ")[1].split(" ")[0])
    # replaying from the start to the reported steps gives equal states
    a, b = MiniMachine(parse_mvm(text)), MiniMachine(parse_mvm(text))
    a.start(), b.start()
    a.run(until_step=first), b.run(until_step=m.steps)
    assert (a.frames[0].pc, a.frames[0].registers) == (b.frames[0].pc, b.frames[0].registers)


def test_a_counter_that_never_repeats_hits_the_step_limit():
    m = MiniMachine(parse_mvm("LD r1 1\ntop: ADD r0 r1 r0\nJM top\n"), Limits(max_steps=1000))
    with pytest.raises(VMError) as info:
        m.invoke()
    assert info.value.limit == "max_steps" and m.steps == 1000


def test_start_refuses_other_entries_and_arguments():
    m = MiniMachine(parse_mvm("HL\n"))
    with pytest.raises(VMError, match="no function @f"):
        m.start("f")
    with pytest.raises(VMError, match="takes no arguments"):
        m.start("main", [1])


_PROGRAMS = st.lists(st.one_of(
    st.builds(lambda d, v: ("LD", d, v), st.integers(0, 3), st.integers(-3, 3)),
    st.builds(lambda o, a, b, d: (o, a, b, d), st.sampled_from(["ADD", "SUB"]),
              st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
    st.builds(lambda r, t: ("CH", r, t), st.integers(0, 3), st.integers(0, 11)),
    st.builds(lambda t: ("JM", t), st.integers(0, 11)),
    st.just(("HL",))), min_size=1, max_size=12)


def _text(prog) -> str:
    n = len(prog)
    out = []
    for ins in prog:
        if ins[0] == "LD":
            out.append(f"LD r{ins[1]} {ins[2]}")
        elif ins[0] in ("ADD", "SUB"):
            out.append(f"{ins[0]} r{ins[1]} r{ins[2]} r{ins[3]}")
        elif ins[0] == "CH":
            out.append(f"CH r{ins[1]} {ins[2] % n}")
        elif ins[0] == "JM":
            out.append(f"JM {ins[1] % n}")
        else:
            out.append("HL")
    return ".registers 4\n" + "\n".join(out)


def _reference(text: str, max_steps: int):
    """The tutorial's loop, written out plainly: the oracle for the machine."""
    code = [line.split() for line in text.split("\n")[1:]]
    regs, pc, steps, seen = [0] * 4, 0, 0, {}
    while pc < len(code):
        state = (pc, *regs)
        if state in seen:
            return "loop", None
        seen[state] = steps
        if steps >= max_steps:
            return "limit", None
        op, *a = code[pc]
        r = [int(x[1:]) if x.startswith("r") else int(x) for x in a]
        steps += 1
        if op == "LD":
            regs[r[0]] = r[1]
        elif op == "ADD":
            regs[r[2]] = regs[r[0]] + regs[r[1]]
        elif op == "SUB":
            regs[r[2]] = regs[r[0]] - regs[r[1]]
        elif op == "CH" and regs[r[0]] >= 0:
            pc = r[1]
            continue
        elif op == "JM":
            pc = r[0]
            continue
        elif op == "HL":
            break
        pc += 1
    return "halted", tuple(regs)


@settings(max_examples=80, deadline=None)
@given(_PROGRAMS)
def test_matches_the_plain_loop(prog):
    text = _text(prog)
    kind, regs = _reference(text, 400)
    # more steps than the oracle's: the machine looks for repeats only at loop heads, at
    # most one turn of the loop later than the oracle, which looks at every step
    m = MiniMachine(parse_mvm(text), Limits(max_steps=1000))
    try:
        got = ("halted", m.invoke())
    except VMError as err:
        got = ("loop" if getattr(err, "stop_reason", None) == REPEATED_STATE else "limit", None)
    if kind == "limit":
        assert got[0] in ("loop", "limit")   # a long loop: the oracle's budget ran out first
        return
    assert got == (kind, regs)


def test_the_benchmark_runs_and_agrees(capsys):
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_minivm
    bench_minivm.main(["--quick"])   # asserts the sum on each path itself
    out = capsys.readouterr().out
    assert "MiniMachine.run (fast path)" in out and "DebugSession.cont" in out
    # the counting program's instruction count is what the benchmark divides by
    m = MiniMachine(parse_mvm(bench_minivm.counting_program(7)))
    m.invoke()
    assert m.steps == bench_minivm.instructions(7)


def test_fast_path_and_step_agree_on_random_programs():
    import random
    rng = random.Random(17)
    for _ in range(40):
        n = rng.randint(1, 10)
        lines = []
        for _ in range(n):
            k = rng.randrange(5)
            if k == 0:
                lines.append(f"LD r{rng.randrange(4)} {rng.randint(-3, 3)}")
            elif k == 1:
                lines.append(f"{rng.choice(['ADD', 'SUB'])} r{rng.randrange(4)} "
                             f"r{rng.randrange(4)} r{rng.randrange(4)}")
            elif k == 2:
                lines.append(f"CH r{rng.randrange(4)} {rng.randrange(n)}")
            elif k == 3:
                lines.append(f"JM {rng.randrange(n)}")
            else:
                lines.append("HL")
        text = ".registers 4\n.hl stays\n" + "\n".join(lines) if rng.random() < 0.3 else \
            ".registers 4\n" + "\n".join(lines)
        outcomes = []
        for fast in (True, False):
            m = MiniMachine(parse_mvm(text), Limits(max_steps=300))
            m.start()
            try:
                if fast:
                    m.run()
                else:
                    while not m.halted:
                        m.step()
                outcomes.append(("halted", m.result, m.steps))
            except VMError as err:
                outcomes.append((getattr(err, "stop_reason", err.limit), err.pc, m.steps))
        assert outcomes[0] == outcomes[1], text
