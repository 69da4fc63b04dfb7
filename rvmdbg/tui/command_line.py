"""The `:` command line: one line of the batch-mode command language, with history.

Enter sends the line to the screen (`CommandLine.Submitted`, Textual's Input message); Up and
Down walk the lines entered before; Escape closes it. The screen runs the line through
`CommandInterpreter` and shows the output in the command output pane.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class CommandLine(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "Previous", show=False),
        Binding("down", "history(1)", "Next", show=False),
        Binding("escape", "close", "Close", show=True),
    ]

    class Closed(Message):
        """The user left the command line without running anything."""

    def __init__(self, **kwargs) -> None:
        # not selected on focus: a pre-filled line (`e` gives `condition 1 `) is added to
        # by typing, never replaced by it
        super().__init__(placeholder="command (help, break @f:3, step 5, info registers, ...)",
                         select_on_focus=False, **kwargs)
        self.history: list[str] = []
        self._position = 0

    def remember(self, line: str) -> None:
        if line and (not self.history or self.history[-1] != line):
            self.history.append(line)
        self._position = len(self.history)

    def action_history(self, delta: int) -> None:
        if not self.history:
            return
        self._position = max(0, min(len(self.history), self._position + delta))
        self.value = self.history[self._position] if self._position < len(self.history) else ""
        self.cursor_position = len(self.value)

    def action_close(self) -> None:
        self.post_message(self.Closed())


__all__ = ["CommandLine"]
