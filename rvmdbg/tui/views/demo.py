"""A small app hosting the teaching views over a stand-in for the debugger screen.

Tests and `scripts/make_view_screenshots.py` use it to show the views on any program without
the full debugger: `ViewsDemoApp(context, view="flow")`, where `context` is a `ViewContext`
(with a started session for the views that follow execution). Its first screen only states
where the session is; keys 1, 2, 3 open the views over it, exactly as over the debugger.
"""
from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from rvmdbg.tui.views.base import show_view
from rvmdbg.i18n import N_, _
from rvmdbg.tui.footer import KeyFooter
from rvmdbg.tui.glyphs import ASCII_CSS, use_ascii_frames


class StandInScreen(Screen):
    """What the views are opened over in the demo: the session's position."""

    BINDINGS = [
        Binding("1", "view('flow')", N_("Flow")),
        Binding("2", "view('executors')", N_("VM/graph")),
        Binding("3", "view('control')", N_("CFG/ADTs")),
        Binding("q", "app.quit", N_("Quit")),
    ]

    def compose(self) -> ComposeResult:
        yield Static("", id="stand-in")
        yield KeyFooter(compact=True)

    def on_screen_resume(self) -> None:
        s = self.app.session
        if s is None:
            text = _("debugger stand-in: the program has not started")
        else:
            event = getattr(s, "last_event", None)
            text = _("debugger stand-in at step {step}").format(step=s.step_count) + (
                f": {event.line()}" if event is not None else "")
        self.query_one("#stand-in", Static).update(text)

    def on_mount(self) -> None:
        self.on_screen_resume()

    def action_view(self, name: str) -> None:
        show_view(self.app, name)


class ViewsDemoApp(App):
    TITLE = "rvmdbg views"
    CSS = ASCII_CSS
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, context, view: str | None = "flow", ascii_only: bool = False) -> None:
        super().__init__()
        self.animation_level = "none"
        self.teaching_context = context
        self.session = context.session
        self.ascii_only = ascii_only
        use_ascii_frames(self, ascii_only)
        self.first_view = view

    def get_default_screen(self) -> Screen:
        return StandInScreen()

    def on_mount(self) -> None:
        if self.first_view:
            show_view(self, self.first_view)


__all__ = ["ViewsDemoApp", "StandInScreen"]
