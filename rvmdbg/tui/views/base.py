"""What the three teaching views share: their screen, how they are opened over the debugger,
and how they move the debugger's session.

Each view is a widget (`FlowView`, `ExecutorsView`, `ControlFlowView`) on its own screen,
pushed over the debugger screen, which stays exactly where it was underneath. Keys 1, 2 and 3
switch between the views, 0 or Esc go back. The screens are installed once per app and kept,
so a view keeps its own position (stage, selection, scroll) between visits.

A host app provides `program` (a `DebugProgram`: module, exe, source) and `session` (the
`DebugSession`, or None before it starts). Stepping from a view goes through the debugger
screen's `drive()` when there is one, so its panes follow; otherwise the session is stepped
directly.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from rvmdbg.views.context import ViewContext
from rvmdbg.tui.line_pane import ascii_scrollbars_under
from rvmdbg.views.text import symbols_for
from rvmdbg.i18n import N_, _
from rvmdbg.tui.drive import drive_session  # noqa: F401 (the views import it from here)
from rvmdbg.tui.footer import KeyFooter

VIEW_ORDER = ("flow", "executors", "control")
VIEW_SCREENS = {"flow": ("rvmdbg.tui.views.flow", "FlowScreen"),
                "executors": ("rvmdbg.tui.views.executors", "ExecutorsScreen"),
                "control": ("rvmdbg.tui.views.control_flow", "ControlFlowScreen")}
VIEW_TITLES = {"flow": N_("1 Compile & execute"), "executors": N_("2 VM vs graph"),
               "control": N_("3 Control flow & ADTs")}


def view_context(app) -> ViewContext:
    """The app's one ViewContext (stages are computed once and shared by the views), with
    the current session."""
    given = getattr(app, "teaching_context", None)   # a host may hand one over (demos, tests)
    if given is not None:
        if hasattr(app, "session"):
            given.session = app.session
        return given
    program = getattr(app, "program", None)
    ctx = getattr(app, "_teaching_context", None)
    if ctx is None or getattr(app, "_teaching_program", None) is not program:
        if program is None:
            raise RuntimeError("the app has no program to show")
        ctx = ViewContext.from_program(program)
        app._teaching_context = ctx
        app._teaching_program = program
    ctx.session = getattr(app, "session", None)
    return ctx


def _screen_key(name: str) -> str:
    return f"rvmdbg-view-{name}"


def show_view(app, name: str) -> None:
    """Open view `name` over the debugger (or switch to it from another view)."""
    import importlib
    app.last_teaching_view = name   # `v` on the debugger reopens it
    key = _screen_key(name)
    if not app.is_screen_installed(key):
        module, cls = VIEW_SCREENS[name]
        screen_class = getattr(importlib.import_module(module), cls)
        app.install_screen(screen_class(ascii_only=bool(getattr(app, "ascii_only", False))), key)
    current = app.screen
    if isinstance(current, TeachingScreen):
        if current.view_name == name:
            return
        app.switch_screen(key)
    else:
        app.push_screen(key)


def leave_views(app) -> None:
    """Back to the screen under the views (the debugger)."""
    while isinstance(app.screen, TeachingScreen):
        app.pop_screen()


class TeachingScreen(Screen):
    """A view's screen: a title bar, the view, a status line and the footer."""

    BINDINGS = [
        Binding("1", "view('flow')", N_("Flow"), tooltip=N_("View 1: compile and execute flow"),
                id="view-flow"),
        Binding("2", "view('executors')", N_("VM/graph"), tooltip=N_("View 2: VM versus graph executor"),
                id="view-executors"),
        Binding("3", "view('control')", N_("CFG/ADTs"), tooltip=N_("View 3: control flow and ADTs"),
                id="view-control"),
        Binding("0,escape", "back", N_("Debugger"), tooltip=N_("Back to the debugger"), id="view-back"),
        Binding("s", "step(True)", N_("Step"), tooltip=N_("Step the program one instruction"),
                id="step"),
        Binding("S", "step(False)", N_("Back"), tooltip=N_("Step the program back one instruction"),
                id="rstep"),
        Binding("Q", "quiz", N_("Quiz"), show=False,
                tooltip=N_("Check yourself: predict the next step, then the VM answers"), id="quiz"),
        Binding("q", "app.quit", N_("Quit"), show=False, id="quit"),
    ]

    view_name = ""

    def __init__(self, ascii_only: bool = False) -> None:
        super().__init__()
        self.ascii_only = ascii_only
        self.symbols = symbols_for(ascii_only)

    def compose(self) -> ComposeResult:
        yield Static(self._title_text(), id="view-title")
        yield from self.compose_view()
        yield Static("", id="view-status")
        yield KeyFooter(compact=True)

    def compose_view(self) -> ComposeResult:
        raise NotImplementedError

    def on_mount(self) -> None:
        ascii_scrollbars_under(self)

    def _title_text(self) -> str:
        sep = " | " if self.ascii_only else " │ "
        parts = []
        for name in VIEW_ORDER:
            title = _(VIEW_TITLES[name])
            parts.append(f"[b reverse] {title} [/]" if name == self.view_name else f" {title} ")
        return sep.join(parts) + f"{sep} " + _("0 debugger")

    @property
    def view(self):
        raise NotImplementedError

    def context(self) -> ViewContext:
        return view_context(self.app)

    def set_status(self, text: str) -> None:
        self.query_one("#view-status", Static).update(text)

    def action_view(self, name: str) -> None:
        show_view(self.app, name)

    def action_back(self) -> None:
        leave_views(self.app)

    def action_quiz(self) -> None:
        from rvmdbg.tui.quiz_screen import open_quiz
        error = open_quiz(self.app)
        if error:
            self.set_status(error)

    def on_screen_resume(self) -> None:
        self.view.refresh_from_session()
        self.view.focus_main()

    def action_step(self, forward: bool) -> None:
        err = drive_session(self.app, forward)
        self.set_status(err or "")
        self.view.refresh_from_session(stepped=True)


__all__ = ["TeachingScreen", "view_context", "show_view", "leave_views", "drive_session",
           "VIEW_ORDER", "VIEW_TITLES"]
