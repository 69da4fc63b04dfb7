"""The `/` search box: finds text in the pane that had focus when it opened.

In the bytecode listing it searches every function, says which match of how many it is at,
and Enter or Down goes to the next, Up to the previous; in the other panes Enter jumps to the
next match. Escape closes the box and returns focus to the pane.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input
from rvmdbg.i18n import N_, _


class SearchBar(Input):
    BINDINGS = [
        Binding("escape", "close", N_("Close"), show=True, tooltip=N_("Close the search box")),
        Binding("down", "move(1)", N_("Next match"), tooltip=N_("The next match")),
        Binding("up", "move(-1)", N_("Previous match"), tooltip=N_("The previous match")),
    ]

    class Closed(Message):
        """The user closed the search box."""

    class Moved(Message):
        """Up or Down: the previous or next match of the text in the box."""

        def __init__(self, bar: "SearchBar", delta: int) -> None:
            super().__init__()
            self.bar = bar
            self.delta = delta

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder=_("search"), **kwargs)
        self.target = None     # the pane being searched

    def open_for(self, pane, name: str) -> None:
        self.target = pane
        where = _("every function's bytecode") if name == "Bytecode" else _(name)
        self.placeholder = _("search in {where} (Enter or Down: next match, Up: previous, Esc: close)").format(where=where)

    def action_move(self, delta: int) -> None:
        self.post_message(self.Moved(self, delta))

    def action_close(self) -> None:
        self.post_message(self.Closed())


__all__ = ["SearchBar"]
