"""`rvmdbg quiz PROGRAM [ARG...] [--seed N]`: the terminal check-yourself loop with piped answers
(cli-contract.md's exit codes: 0 normal, 1 the program failed, 2 bad input)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quiz(*argv, answers: str = "", cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "rvmdbg", "quiz", *argv], input=answers,
                       capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    assert "Traceback" not in p.stderr
    return p.returncode, p.stdout, p.stderr


def test_piped_answers_are_judged_and_eof_ends_with_the_score():
    code, out, err = quiz("programs/sum_up.relay", "3", "--seed", "2", answers="2\n3\n\n")
    assert code == 0, err
    # question 1 is the executor question: sum_up recurses and branches, so the VM only
    assert "Q1 [step 0] Which executor can run @main?" in out
    assert "right: the VM only" in out
    assert "right. The VM did: @sum_up pc=0" in out          # the invoke enters the callee
    assert "skipped: the answer is" in out
    assert out.rstrip().endswith("score: 2/2")


def test_the_same_seed_gives_the_same_transcript():
    a = quiz("programs/loop.relay", "3", "--seed", "4", answers="1\n2\n1\n2\n1\n")
    b = quiz("programs/loop.relay", "3", "--seed", "4", answers="1\n2\n1\n2\n1\n")
    assert a == b


def test_answering_every_question_runs_the_program_to_its_end():
    code, out, _ = quiz("programs/tuples.relay", answers="1\n" * 400)
    assert code == 0
    assert "the program finished: returned" in out
    m = re.search(r"score: (\d+)/(\d+)", out)
    assert m and int(m.group(2)) > 0


def test_questions_limits_the_number_asked_and_q_stops():
    code, out, _ = quiz("programs/fib.relay", "--questions", "3", answers="1\n" * 10)
    assert code == 0 and out.count("\nQ") == 3
    code, out, _ = quiz("programs/fib.relay", answers="1\nq\n1\n")
    assert code == 0 and out.count("\nQ") == 2 and "score: " in out


def test_a_bad_answer_asks_again():
    code, out, _ = quiz("programs/sum_up.relay", "--seed", "2", answers="9\nabc\n2\n")
    assert code == 0
    assert out.count("a number from 1 to 2") == 2
    assert "right: the VM only" in out


def test_a_bad_program_is_a_located_error_exit_2(tmp_path):
    bad = tmp_path / "bad.relay"
    bad.write_text('#[version = "0.0.5"]\ndef @main() -> int32 {\n  %x\n}\n')
    code, out, err = quiz(str(bad))
    assert code == 2 and out == ""
    assert re.search(r"bad\.relay:3:3: error", err)
    code, _, err = quiz("programs/no_such.relay")
    assert code == 2 and "no_such.relay" in err
    code, _, err = quiz("programs/sum_up.relay", "1", "2")
    assert code == 2 and "error:" in err


def test_a_program_that_fails_while_answering_exits_1():
    # option.relay with 17 0: @expect's match? finds None
    code, out, err = quiz("programs/option.relay", "17", "0", answers="\n" * 2000)
    assert code == 1
    assert "the VM could not answer" in out and "score: 0/0" in out
    assert "@expect" in err


def test_the_minivm_is_quizzed_through_the_same_protocol():
    code, out, _ = quiz("programs/demo.mvm", answers="1\n" * 20)
    assert code == 0
    assert "CH jumped to pc 5" in out            # r1 = 3 >= 0: the branch is taken
    assert "The VM did: r0 (r0 = 5)" in out        # ADD r1 r2 r0, named as the program names them
    assert "the program finished" in out
    code, out, err = quiz("programs/demo_spin.mvm", answers="1\n" * 20)
    assert code == 1 and "repeated state" in out and "never halts" in err


def test_the_quiz_in_chinese():
    code, out, _ = quiz("programs/sum_up.relay", "3", "--seed", "2", "--lang", "zh_CN",
                        answers="2\n3\n\n")
    assert code == 0
    assert "第 1 题 [第 0 步] 哪种执行器能运行 @main？" in out
    assert "正确：只有虚拟机" in out and out.rstrip().endswith("得分：2/2")


@pytest.mark.parametrize("path", ["programs/demo.mvm", "programs/demo_spin.mvm", "programs/fib.relay",
                                  "programs/loop.relay"])
@pytest.mark.parametrize("seed", ["0", "3", "11"])
def test_no_question_has_a_single_answer(path, seed):
    """Issue 28: `作答（1-1）` at MiniVM's HL: a question with one choice asks nothing."""
    args = ["3"] if path.endswith(".relay") else []
    code, out, _err = quiz(path, *args, "--seed", seed, answers="1\n" * 60)
    assert "(1-1)" not in out and "answer (1-" in out
