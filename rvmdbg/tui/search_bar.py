"""The `/` search box: finds text in the pane that had focus when it opened.

Enter jumps to the next match (again and again); Escape closes the box and returns focus to
the pane.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SearchBar(Input):
    BINDINGS = [Binding("escape", "close", "Close", show=True)]

    class Closed(Message):
        """The user closed the search box."""

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder="search", **kwargs)
        self.target = None     # the pane being searched

    def open_for(self, pane, name: str) -> None:
        self.target = pane
        self.placeholder = f"search in {name} (Enter: next match, Esc: close)"

    def action_close(self) -> None:
        self.post_message(self.Closed())


__all__ = ["SearchBar"]
