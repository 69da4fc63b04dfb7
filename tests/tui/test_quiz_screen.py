"""`Q` opens the check-yourself quiz over the debugger and over the teaching views: number keys
answer, the VM answers by stepping (the debugger's panes follow), Enter goes on or skips,
Esc closes and the score is kept."""
from __future__ import annotations

from conftest import make_app, press, screen_of, settle, wait_for

from rvmdbg.tui.quiz_screen import QuizScreen
from rvmdbg.tui.views.base import TeachingScreen


def _text(app, part: str) -> str:
    return str(app.screen.query_one(part).render())


async def test_q_asks_the_number_keys_answer_and_the_vm_steps(tmp_path):
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "Q")
        assert isinstance(app.screen, QuizScreen)
        quiz = app.screen.quiz
        q = quiz.current
        # the first question is the graph executor's decision: sum_up branches and recurses
        assert q.kind == "executor"
        assert "Which executor" in _text(app, "#quiz-question")
        right = q.choices.index("the VM only") + 1
        await press(app, pilot, str(right))
        assert "Right!" in _text(app, "#quiz-feedback")
        assert "score: 1/1" in _text(app, "#quiz-title")
        await press(app, pilot, "enter")      # the next question: about pc 0 of @main
        q = quiz.current
        assert q.steps and "@main pc=0" in _text(app, "#quiz-about")
        await press(app, pilot, "1")
        assert app.session.step_count == 1     # the VM answered by stepping
        assert "The VM did:" in _text(app, "#quiz-feedback")
        assert quiz.asked == 2
        await press(app, pilot, "escape")
        assert not isinstance(app.screen, QuizScreen)
        # the debugger's panes followed the step
        assert "[step 1]" in str(screen_of(app).status.render())
        await press(app, pilot, "Q")           # the same quiz: the score is kept
        assert app.screen.quiz is quiz
        assert f"score: {quiz.right}/2" in _text(app, "#quiz-title")


async def test_enter_skips_a_question_and_a_number_out_of_range_does_nothing(tmp_path):
    app = make_app("programs/loop.relay", ["2"], config_dir=str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "Q")
        quiz = app.screen.quiz
        await press(app, pilot, "9")           # two choices: 9 is no answer
        assert quiz.history == []
        await press(app, pilot, "enter")       # skipped: answered, not scored
        assert len(quiz.history) == 1 and quiz.asked == 0
        assert "Skipped: the answer is" in _text(app, "#quiz-feedback")


async def test_q_in_a_teaching_view_opens_the_quiz_over_it(tmp_path):
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "3")
        assert isinstance(app.screen, TeachingScreen)
        await press(app, pilot, "Q")
        assert isinstance(app.screen, QuizScreen)
        await press(app, pilot, "enter", "enter", "1")
        await wait_for(pilot, lambda: app.session.step_count == 1, "the quiz's step")
        await press(app, pilot, "escape")
        assert isinstance(app.screen, TeachingScreen)


async def test_the_quiz_says_when_the_program_has_ended(tmp_path):
    app = make_app("programs/tuples.relay", config_dir=str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "c")
        assert app.session.finished
        await press(app, pilot, "Q")
        if app.screen.quiz.current is not None:   # the executor question comes first
            await press(app, pilot, "1", "enter")
        assert "no more questions" in _text(app, "#quiz-question")


async def test_m_in_view_1_lists_the_misconceptions_with_their_evidence(tmp_path):
    from rvmdbg.tui.misconceptions_screen import MisconceptionsScreen
    from rvmdbg.tui.views.flow import FlowScreen
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "1")
        assert isinstance(app.screen, FlowScreen)
        await press(app, pilot, "M")
        assert isinstance(app.screen, MisconceptionsScreen)
        await wait_for(pilot, lambda: "kill_register $4" in _text(app, "#mis-text"),
                       "the first claim's evidence")
        assert "registers_freed_at_return.relay" in _text(app, "#mis-text")
        await press(app, pilot, "down", "down")
        await wait_for(pilot, lambda: "100 / 0 never happens" in _text(app, "#mis-text"),
                       "the third claim's evidence")
        await press(app, pilot, "escape")
        assert isinstance(app.screen, FlowScreen)


async def test_help_lists_the_quiz_and_view_1_keys(tmp_path):
    from rvmdbg.tui.help_screen import HelpScreen
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = dict(app.screen.rows())
        assert "Check yourself" in rows["Q"]
        assert "VM then answers" in rows["1-9"]
        assert "misconceptions" in rows["M"]


async def test_q_on_a_minivm_program(tmp_path):
    app = make_app("programs/demo.mvm", config_dir=str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "Q")
        assert isinstance(app.screen, QuizScreen)
        assert "@main pc=0: LD r1 3" in _text(app, "#quiz-about")
        await press(app, pilot, "1")
        assert app.session.step_count == 1
        assert "The VM did:" in _text(app, "#quiz-feedback")


async def test_the_quiz_and_the_misconceptions_in_chinese(chinese, tmp_path):
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "Q")
        assert "自我检测" in _text(app, "#quiz-title")
        for _ in range(12):   # every kind of question and feedback comes up on sum_up
            await press(app, pilot, "1")
            await press(app, pilot, "enter")
        await press(app, pilot, "enter")          # a skipped one
        await press(app, pilot, "escape", "question_mark", "escape", "1", "M")
        for _ in range(7):
            await wait_for(pilot, lambda: "……" not in _text(app, "#mis-text"), "the evidence")
            await press(app, pilot, "down")
        assert "虚拟机显示" in _text(app, "#mis-text")
    assert chinese == set(), sorted(chinese)


async def test_the_evidence_is_gathered_again_in_the_language_shown(tmp_path):
    """The evidence is cached per claim and per language: the Chinese lines gathered first are
    not shown to the next English screen (the cache once held one entry per claim, and the
    English snapshot showed Chinese evidence after the Chinese test in the same process)."""
    from rvmdbg import i18n
    i18n.set_language("zh_CN")
    try:
        app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path / "zh"))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await press(app, pilot, "1", "M")
            await wait_for(pilot, lambda: "虚拟机显示" in _text(app, "#mis-text")
                           and "……" not in _text(app, "#mis-text"), "the Chinese evidence")
    finally:
        i18n.set_language("en")
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path / "en"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "1", "M")
        await wait_for(pilot, lambda: "A register's value is released when it is last used"
                       in _text(app, "#mis-text"), "the English evidence", timeout=10)
