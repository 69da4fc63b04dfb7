"""`Q`: check yourself, on the screen. A dialog asks a question about the next step of the
program being debugged (`rvmdbg.views.quiz`), the number keys answer, and the VM answers by
really stepping, through the debugger screen so its panes follow.

One `Quiz` per app and session (`app_quiz`): closing the dialog and opening it again keeps
the score; a restart (a new session) starts a new quiz.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rvmdbg.i18n import NP_, N_, _
from rvmdbg.views.quiz import Quiz
from rvmdbg.tui.line_pane import ascii_scrollbars_under

MAX_CHOICES = 9


class QuizStepError(Exception):
    """The step could not be made (the debugger is busy); the question stays."""


def app_quiz(app) -> Quiz | None:
    """The app's quiz on its current session (made on first use), or None before it starts."""
    session = getattr(app, "session", None)
    if session is None:
        return None
    quiz = getattr(app, "_quiz", None)
    if quiz is None or quiz.session is not session:
        from rvmdbg.tui.drive import drive_session

        def step() -> None:
            error = drive_session(app, True)
            if error is not None:
                raise QuizStepError(error)
        program = getattr(app, "program", None)
        module = getattr(program, "module", None)
        if module is None:   # the views' demo host hands over a context instead
            module = getattr(getattr(app, "teaching_context", None), "module", None)
        quiz = Quiz(session, module, seed=getattr(app, "quiz_seed", 0), step=step)
        app._quiz = quiz
    return quiz


class QuizScreen(ModalScreen[None]):
    """The question, its choices (1-9), then the VM's answer and why; Enter goes on."""

    DEFAULT_CSS = """
    #quiz-dialog { width: 100; max-width: 95%; height: auto; max-height: 90%;
                   border: round $accent; background: $panel; padding: 0 1; }
    #quiz-title { text-style: bold; }
    #quiz-about { color: $text-muted; margin-bottom: 1; }
    #quiz-feedback { margin-top: 1; }
    #quiz-keys { color: $text-muted; margin-top: 1; }
    """

    BINDINGS = [Binding(str(i), f"choose({i})", str(i), show=False) for i in range(1, 10)] + [
        Binding("enter,space", "go_on", NP_("quiz", "Next"), tooltip=N_("Skip the question, or go on to the next")),
        Binding("escape,q", "close", N_("Close"), tooltip=N_("Close the quiz (the score is kept)")),
    ]

    def __init__(self, quiz: Quiz) -> None:
        super().__init__()
        self.quiz = quiz
        self.verdict = None

    def compose(self) -> ComposeResult:
        with Vertical(id="quiz-dialog"):
            yield Static("", id="quiz-title", markup=False)
            yield Static("", id="quiz-question", markup=False)
            yield Static("", id="quiz-about", markup=False)
            yield Static("", id="quiz-choices")
            yield Static("", id="quiz-feedback")
            yield Static("", id="quiz-keys", markup=False)

    def on_mount(self) -> None:
        ascii_scrollbars_under(self)
        self._show()

    @property
    def question(self):
        return self.quiz.current

    def _show(self, error: str | None = None) -> None:
        quiz = self.quiz
        q = quiz.question() if self.verdict is None else self.verdict.question
        self.query_one("#quiz-title", Static).update(
            _("Check yourself") + f"   {quiz.score_text()}"
            + ("   " + _("question {n}").format(n=q.number) if q else ""))
        if q is None:
            end = quiz.session.last_event
            self.query_one("#quiz-question", Static).update(
                _("The program has ended: no more questions.")
                + (f"\n{end.line()}" if end is not None else ""))
            for part in ("#quiz-about", "#quiz-choices", "#quiz-feedback"):
                self.query_one(part, Static).update("")
            self.query_one("#quiz-keys", Static).update(_("Esc closes"))
            return
        self.query_one("#quiz-question", Static).update(q.prompt)
        self.query_one("#quiz-about", Static).update("\n".join(q.about))
        choices = Text()
        v = self.verdict
        for i, label in enumerate(q.choices[:MAX_CHOICES]):
            mark = "  "
            style = ""
            if v is not None and i == v.correct:
                mark, style = "= ", "bold green"
            elif v is not None and i == v.chosen:
                mark, style = "x ", "bold red"
            choices.append(f"{mark}{i + 1}) {label}\n", style=style)
        self.query_one("#quiz-choices", Static).update(choices)
        feedback = Text()
        if error:
            feedback.append(error, style="bold red")
        elif v is not None:
            if v.correct is None:
                feedback.append(_("The VM could not answer:") + " ", style="bold")
            elif v.chosen is None:
                feedback.append(_("Skipped: the answer is {n}.").format(n=v.correct + 1) + " ",
                                style="bold")
            elif v.right:
                feedback.append(_("Right!") + " ", style="bold green")
            else:
                feedback.append(_("Wrong: the answer is {n}.").format(n=v.correct + 1) + " ",
                                style="bold red")
            feedback.append(_("The VM did: {answer}").format(answer=v.answer) if q.steps
                            else v.answer)
            feedback.append("\n" + _("Why: {why}").format(why=v.explanation))
            if v.stop:
                feedback.append(f"\n{v.stop}")
        self.query_one("#quiz-feedback", Static).update(feedback)
        n = min(len(q.choices), MAX_CHOICES)
        keys = (_("Enter: next question   Esc: close") if v is not None else
                _("1-{n}: answer   Enter: skip (the VM still answers)   Esc: close").format(n=n))
        self.query_one("#quiz-keys", Static).update(keys)

    def _answer(self, choice: int | None) -> None:
        try:
            self.verdict = self.quiz.answer(choice)
        except QuizStepError as exc:
            self._show(str(exc))
            return
        self._show()

    def action_choose(self, number: int) -> None:
        q = self.quiz.question() if self.verdict is None else None
        if q is None or number > len(q.choices):
            return
        self._answer(number - 1)

    def action_go_on(self) -> None:
        if self.verdict is not None:
            self.verdict = None
            self._show()
        elif self.quiz.question() is not None:
            self._answer(None)

    def action_close(self) -> None:
        self.dismiss(None)


def open_quiz(app) -> str | None:
    """Open the quiz over whatever is on screen; an error message when it cannot open."""
    quiz = app_quiz(app)
    if quiz is None:
        return _("the program has not started")
    app.push_screen(QuizScreen(quiz))
    return None


__all__ = ["QuizScreen", "open_quiz", "app_quiz"]
