"""Each misconception's program, run on the real VM, shows the claim wrong: the facts asserted
here are the ones its explanation is written from (rvmdbg.views.misconceptions)."""
from __future__ import annotations

import pytest

from rvmdbg.views.misconceptions import MISCONCEPTIONS, PROGRAMS_DIR, demonstrate

BY_KEY = {m.key: m for m in MISCONCEPTIONS}


@pytest.fixture(scope="module")
def evidence():
    return {m.key: demonstrate(m) for m in MISCONCEPTIONS}


def test_every_program_of_the_directory_is_a_misconception_with_its_claim_in_it():
    files = sorted(p.name for p in PROGRAMS_DIR.glob("*.relay"))
    assert files == sorted(m.program for m in MISCONCEPTIONS)
    for m in MISCONCEPTIONS:
        text = m.path.read_text()
        assert "// args:" in text and "Misconception:" in text and "Watch:" in text


def test_registers_are_killed_before_the_function_returns(evidence):
    f = evidence["freed-at-return"].facts
    assert len(f["kills"]) == 3 and f["killed_before_return"]
    assert all(step < f["ret_step"] for step, _ in f["kills"])


def test_each_recipe_of_debugger_commands_shows_what_it_claims():
    """Issue 28 (8): the recipe for "registers are freed when a function returns", run as
    written, stops just after a kill: the register it named is empty while @main runs on.
    (Before, it stopped at the kill, and `info registers` still showed the value.)"""
    from rvmdbg import cli
    from rvmdbg.debug import CommandInterpreter, DebugSession
    m = BY_KEY["freed-at-return"]
    commands = m.watch.split(": ")[0].split(", ")
    assert commands == ["break op:KillRegister", "continue", "step", "info registers"]
    program = cli.load_program(str(m.path))
    args = cli.program_arguments(program, "main", [])
    session = DebugSession(cli.executable_of(program), args)
    interp = CommandInterpreter(session)
    outputs = [interp.execute(c) for c in commands]
    assert "(breakpoint 1)" in outputs[1] and "kill_register" in outputs[1]
    frame = session.vm.frames[-1]
    kill = session.exe.functions[frame.func_index].instructions[frame.pc - 1]
    assert type(kill).__name__ == "KillRegister"             # the step ran the kill
    row = next(line for line in outputs[-1].splitlines()
               if line[2:].split()[:1] == [f"${kill.dst}"])
    assert row.split()[-1] == "-", row                       # the register is empty now
    assert len(session.vm.frames) == 1 and not session.vm.halted   # and @main runs on


def test_the_graph_executor_cannot_run_a_branch_the_vm_runs_cheaply(evidence):
    f = evidence["graph-faster"].facts
    assert "`if`" in f["graph_refusal"] and "graph_always_faster.relay:8:3" in f["graph_refusal"]
    assert f["vm_kernels_shallow"] == 0 and f["vm_kernels_deep"] == 2


def test_an_if_runs_one_branch_only(evidence):
    f = evidence["if-both"].facts
    assert f["result"] == 0 and f["ifs"] == 1
    assert f["divides_at_zero"] == 0          # 100 / 0 would fail: it never runs
    assert f["divides_at_five"] == 1 and f["result_at_five"] == 20


def test_values_die_and_registers_are_reused(evidence):
    f = evidence["own-register"].facts
    assert f["kills"] == 4
    assert f["registers"] == 6 and f["registers_reused"] < f["registers"]
    assert f["same_result"]


def test_a_closure_captures_when_it_is_made(evidence):
    f = evidence["closure-at-call"].facts
    assert f["made_step"] < f["called_step"]
    assert f["captured"] == ["1"] and f["result"] == 11   # not 20: %x was 1 when made


def test_a_tensor_is_passed_not_copied(evidence):
    f = evidence["tensor-copied"].facts
    assert f["same_object"] and f["bytes_allocated_by_call"] == 0


def test_every_tail_call_pushes_a_frame(evidence):
    f = evidence["tail-call"].facts
    assert f["max_depth"] == f["n"] + 2


@pytest.mark.parametrize("key", sorted(BY_KEY))
def test_the_explanation_quotes_the_figures_it_was_made_from(evidence, key):
    e = evidence[key]
    text = "\n".join(e.lines)
    for value in e.facts.values():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            assert str(value) in text, (key, value)
