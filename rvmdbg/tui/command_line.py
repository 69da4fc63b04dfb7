"""The `:` command line: one line of the batch-mode command language, with history,
reverse search and completion.

Enter sends the line to the screen (`CommandLine.Submitted`, Textual's Input message); Up
and Down walk the lines entered before; Ctrl+R searches them backwards for the text typed
(again: further back), as readline's reverse-i-search; Tab completes the word before the
cursor (a command, an `@function`, a `$register` of the selected frame, an `op:` name), and
when several fit shows them in the console; Escape closes it. The screen runs the line
through `CommandInterpreter` and shows the output in the console.
"""
from __future__ import annotations

import os

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input
from rvmdbg.i18n import NP_, N_, _


class CommandLine(Input):
    BINDINGS = [
        Binding("up", "history(-1)", N_("Previous"), show=False, tooltip=N_("The previous command")),
        Binding("down", "history(1)", NP_("command history", "Next"), show=False, tooltip=N_("The next command")),
        Binding("ctrl+r", "reverse_search", N_("Search back"),
                tooltip=N_("Search the commands entered before (again: further back)")),
        Binding("tab", "complete", N_("Complete"),
                tooltip=N_("Complete a command, @function, $register or op: name")),
        Binding("escape", "close", N_("Close"), show=True, tooltip=N_("Close the command line")),
    ]

    PLACEHOLDER = N_("command (help, break @f:3, step 5, info registers, ...; Tab completes)")

    class Closed(Message):
        """The user left the command line without running anything."""

    class Note(Message):
        """A line for the status bar (the reverse search's state)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Completions(Message):
        """Tab found several completions: the screen shows them in the console."""

        def __init__(self, words: list[str]) -> None:
            super().__init__()
            self.words = words

    def __init__(self, **kwargs) -> None:
        # not selected on focus: a pre-filled line (`e` gives `condition 1 `) is added to
        # by typing, never replaced by it
        super().__init__(placeholder=_(self.PLACEHOLDER), select_on_focus=False, **kwargs)
        self.history: list[str] = []
        self._position = 0
        self.complete = None            # callable(text) -> (start, words), set by the screen
        self._search: tuple[str, int] | None = None   # (query, index of the last match)

    def remember(self, line: str) -> None:
        if line and (not self.history or self.history[-1] != line):
            self.history.append(line)
        self._position = len(self.history)
        self._end_search()

    def action_history(self, delta: int) -> None:
        self._end_search()
        if not self.history:
            return
        self._position = max(0, min(len(self.history), self._position + delta))
        self.value = self.history[self._position] if self._position < len(self.history) else ""
        self.cursor_position = len(self.value)

    # ------------------------------------------------------------ Ctrl+R

    def action_reverse_search(self) -> None:
        query, last = self._search if self._search is not None else (self.value, len(self.history))
        for i in range(last - 1, -1, -1):
            if query in self.history[i]:
                self._search = (query, i)
                self._position = i
                self._set_quietly(self.history[i])
                self.post_message(self.Note(_("(reverse-i-search) `{query}`: Ctrl+R again "
                                              "for an older one, Enter runs it").format(query=query)))
                return
        self._search = (query, last)
        self.post_message(self.Note(_("(failing reverse-i-search) `{query}`: no older command "
                                      "has it").format(query=query)))

    def _set_quietly(self, text: str) -> None:
        """Set the text without ending a reverse search (its Changed message comes later)."""
        self._quiet_value = text
        self.value = text
        self.cursor_position = len(text)

    def _end_search(self) -> None:
        self._search = None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.value != getattr(self, "_quiet_value", None):
            self._end_search()  # typing ends a reverse search and starts from the new text

    # ------------------------------------------------------------ Tab

    def action_complete(self) -> None:
        if self.complete is None:
            return
        before = self.value[:self.cursor_position]
        start, words = self.complete(before)
        if not words:
            self.app.bell()
            return
        common = os.path.commonprefix(words)
        tail = self.value[self.cursor_position:]
        if len(words) == 1:
            common += " "
        elif len(common) <= len(before) - start:
            self.post_message(self.Completions(words))
        self._set_quietly(before[:start] + common + tail)
        self.cursor_position = start + len(common)

    def action_close(self) -> None:
        self._end_search()
        self.post_message(self.Closed())


__all__ = ["CommandLine"]
