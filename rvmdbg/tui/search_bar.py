"""The `/` search box: finds text in the pane that had focus when it opened.

In the bytecode listing it searches every function, says which match of how many it is at,
and Enter or Down goes to the next, Up to the previous; in the other panes Enter jumps to the
next match. Escape closes the box and returns focus to the pane.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SearchBar(Input):
    BINDINGS = [
        Binding("escape", "close", "Close", show=True, tooltip="Close the search box"),
        Binding("down", "move(1)", "Next", tooltip="The next match"),
        Binding("up", "move(-1)", "Previous", tooltip="The previous match"),
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
        super().__init__(placeholder="search", **kwargs)
        self.target = None     # the pane being searched

    def open_for(self, pane, name: str) -> None:
        self.target = pane
        where = "every function's bytecode" if name == "Bytecode" else name
        self.placeholder = f"search in {where} (Enter or Down: next match, Up: previous, Esc: close)"

    def action_move(self, delta: int) -> None:
        self.post_message(self.Moved(self, delta))

    def action_close(self) -> None:
        self.post_message(self.Closed())


__all__ = ["SearchBar"]
