"""The check-yourself quiz (rvmdbg.views.quiz): its answers are what the VM does.

Each stepping question is answered by the session; a second, plain VM stepped alongside with
`VirtualMachine.step()` is the witness: its `StepInfo` (next pc, registers written) must give
the same right choice. Swaps the quiz calls legal are made in the bytecode and the program's
result must not change.
"""
from __future__ import annotations

import pytest

from functools import lru_cache
from pathlib import Path

from rvmdbg.args import parse_program_args
from rvmdbg.debug import DebugSession
from rvmdbg.debug import deps as deps_mod
from rvmdbg.views.quiz import END, Quiz, executor_verdict, question_lines, verdict_lines
from rvmdbg.values import values_equal
from rvmdbg.relay.loader import load_file, program_default_args
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def _module(name: str):
    return check_module(load_file(str(ROOT / "programs" / name)))


@lru_cache(maxsize=None)
def _executable(name: str):
    return compile_module(_module(name))


def program(name: str, args=None):
    """(executable, argument values) of programs/NAME (its `// args:` line by default)."""
    if args is None:
        args = program_default_args((ROOT / "programs" / name).read_text()) or []
    return _executable(name), parse_program_args(_module(name), "main", args)


PROGRAMS = ["sum_up.relay", "loop.relay", "fib.relay", "closures.relay", "list_ops.relay",
            "mlp.relay", "refs.relay", "tuples.relay", "option.relay"]
ARGS = {"sum_up.relay": ["4"], "loop.relay": ["5"], "fib.relay": ["4"]}


def _quiz(name: str, seed: int = 0, **kw):
    exe, args = program(name, ARGS.get(name))
    session = DebugSession(exe, args)
    return Quiz(session, _module(name), seed=seed, **kw), exe, args


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("seed", [0, 7])
def test_answers_match_a_plain_vm_stepped_alongside(name, seed):
    quiz, exe, args = _quiz(name, seed)
    witness = VirtualMachine(exe)
    witness.start("main", args)
    expected_result = VirtualMachine(exe).invoke("main", args)
    kinds = set()
    for _ in range(80):
        q = quiz.question()
        if q is None:
            break
        kinds.add(q.kind)
        depth = len(witness.frames) - 1
        v = quiz.answer(0)
        assert v.correct is not None, (name, q, v)   # the VM's answer is always a choice
        if q.kind in ("next-pc", "if"):
            info = witness.step()
            key = END if info.halted else (info.next_func_index, info.next_pc)
            assert q.keys[v.correct] == key
        elif q.kind == "writes":
            info = witness.step()
            written = {w.register for w in info.writes
                       if w.depth == depth and w.new is not w.old}
            assert q.keys[v.correct] == frozenset(written)
        elif q.kind == "swap":
            ok, fi, a, b = q.keys[v.correct]
            assert ok == deps_mod.may_swap(exe.functions[fi], a, b, exe)
            if ok:   # the tool says legal: the swapped program computes the same
                got = VirtualMachine(deps_mod.swapped(exe, fi, a, b)).invoke("main", args)
                assert values_equal(got, expected_result)
        elif q.kind == "executor":
            assert q.number == 1
        assert quiz.session.step_count == witness.steps
    assert kinds & {"next-pc", "writes", "if"}


def test_a_right_answer_scores_and_a_skip_does_not():
    quiz, _, _ = _quiz("sum_up.relay", 3)
    v = None
    for _ in range(10):
        quiz.question()
        v = quiz.answer(None)   # skipped: the VM still answers, nothing is scored
        assert not v.scored and quiz.asked == 0
    quiz2, _, _ = _quiz("sum_up.relay", 3)   # the same questions, answered right
    right = 0
    for past in quiz.history:
        quiz2.question()
        w = quiz2.answer(past.correct)
        assert w.right
        right += 1
    assert quiz2.score_text() == f"score: {right}/{right}"
    assert v is not None


def test_the_same_seed_asks_the_same_questions_and_another_seed_others():
    def transcript(seed):
        quiz, _, _ = _quiz("loop.relay", seed)
        lines = []
        for _ in range(25):
            q = quiz.question()
            if q is None:
                break
            lines += question_lines(q)
            lines += verdict_lines(quiz.answer(1 if len(q.choices) > 1 else 0))
        return lines
    assert transcript(5) == transcript(5)
    assert transcript(5) != transcript(6)


def test_if_questions_say_which_branch_the_vm_took():
    quiz, _, _ = _quiz("sum_up.relay", 0, kinds=("if",))
    seen = []
    while (q := quiz.question()) is not None:
        v = quiz.answer(0)
        if q.kind == "if":
            seen.append(v)
            assert "only that branch runs" in v.explanation
    # sum_up(4): the `if (%n == 0)` goes to the else branch four times, then the then branch
    assert len(seen) == 5
    jumps = [s.question.choices[s.correct].startswith("jumps") for s in seen]
    assert jumps == [True] * 4 + [False]


def test_the_executor_question_follows_the_graph_executors_decision():
    assert executor_verdict(_module("mlp.relay"))[0] is True
    can, why = executor_verdict(_module("sum_up.relay"))
    assert can is False and "sum_up.relay:" in why
    assert executor_verdict(None) is None
    quiz, _, _ = _quiz("mlp.relay")
    q = quiz.question()
    assert q.kind == "executor"
    v = quiz.answer(0)
    assert q.keys[v.correct] is True


def test_a_call_writes_nothing_in_the_caller_until_it_returns():
    quiz, _, _ = _quiz("sum_up.relay", 0, kinds=("writes",))
    q = quiz.question()
    assert "invoke" in q.about[0]
    v = quiz.answer(0)
    assert q.keys[v.correct] == frozenset()
    assert "written when it returns" in v.explanation


def test_no_question_once_the_program_has_finished():
    quiz, _, _ = _quiz("tuples.relay", 0, kinds=("next-pc",))
    for _ in range(1000):
        if quiz.question() is None:
            break
        quiz.answer(None)
    assert quiz.done and quiz.session.finished
    with pytest.raises(ValueError):
        quiz.answer(0)


def test_a_question_is_asked_anew_when_the_session_moved_before_the_answer():
    quiz, _, _ = _quiz("loop.relay", 1, kinds=("next-pc",))
    q = quiz.question()
    assert q.at_step == 0
    quiz.session.step(3)          # the debugger stepped while the question was open
    q2 = quiz.question()
    assert q2 is not q and q2.at_step == 3
    v = quiz.answer(0)
    assert v.correct is not None and quiz.session.step_count == 4


def test_the_swap_explanation_is_the_verdicts_first_reason():
    quiz, exe, _args = _quiz("sum_up.relay", 0, kinds=("swap", "writes"))
    fn = exe.functions[exe.global_map["sum_up"]]
    seen = 0
    for _i in range(40):
        q = quiz.question()
        if q is None:
            break
        v = quiz.answer(0)
        if q.kind == "swap":
            ok, fi, a, b = q.keys[v.correct]
            verdict = deps_mod.swap_verdict(exe.functions[fi], a, b, exe)
            assert ok == verdict.ok
            if not ok:
                assert v.explanation.startswith(verdict.reasons[0].text())
            seen += 1
    assert seen > 3 and fn is not None
