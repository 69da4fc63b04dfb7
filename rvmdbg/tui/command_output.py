"""The console's scrollback: everything the session printed, from the first stop on.

Every command line and its output, every stop the keys made and the displays shown at it
stay for the whole session (no line limit). It can be focused (Tab, or a click), scrolled
(arrows, PgUp/PgDn, Home/End) and made taller or shorter (`+`, `-`). A command whose output
is longer than the pane is shown from its first line, as a pager does, with the number of
lines still below in the frame; `Y` copies the whole scrollback.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Log
from rvmdbg.i18n import N_, _

MIN_HEIGHT = 3


class CommandOutput(Log):
    title = N_("Console")

    BINDINGS = [
        Binding("plus,equals_sign", "resize(2)", N_("Taller"), tooltip=N_("Make the console taller")),
        Binding("minus", "resize(-2)", N_("Shorter"), tooltip=N_("Make the console shorter")),
        Binding("Y", "screen.copy_pane", N_("Copy"), tooltip=N_("Copy the whole console text (OSC 52)")),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(max_lines=None, auto_scroll=True, **kwargs)
        self.border_title = _(self.title)
        self._pager_end = 0   # the last line of a long output shown from its top
        self._pending: list[str] = []   # lines recorded while hidden (see show_lines)

    def show_command(self, line: str, output: str) -> None:
        """`(rvmdbg) LINE` and its output; a long output is shown from its first line."""
        self.show_lines([f"(rvmdbg) {line}"] + (output.rstrip("\n").split("\n") if output else []))

    @property
    def lines(self) -> list[str]:
        self.flush()
        return super().lines

    def show_lines(self, lines: list[str]) -> None:
        if not self.has_class("-shown"):
            # Hidden, lines wait here: writing to the log lays out the screen (its size
            # grows), which cost every step a full repaint. `Console.show` writes them.
            self._pending.extend(lines)
            return
        self.flush()
        self._write(lines)

    def flush(self) -> None:
        """Write the lines kept while the scrollback was hidden."""
        if self._pending:
            lines, self._pending = self._pending, []
            self.write_lines(lines)   # to the end, as they would have been while hidden
            self._note_more()

    def _write(self, lines: list[str]) -> None:
        start = self.line_count
        height = self.scrollable_content_region.height or self.size.height
        if height and len(lines) > height:
            self.write_lines(lines, scroll_end=False)
            self.scroll_to(y=start, animate=False, immediate=True)
            self._pager_end = start + len(lines)
        else:
            self.write_lines(lines)
        self._note_more()

    def _note_more(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        below = self.line_count - (int(self.scroll_offset.y) + height)
        subtitle = _("{n} more lines: Tab here, PgDn").format(n=below) if below > 0 else ""
        if subtitle != (self.border_subtitle or ""):
            self.border_subtitle = subtitle   # (setting it repaints the whole pane)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._note_more()

    def text(self) -> str:
        return "\n".join(self.lines)

    def action_resize(self, delta: int) -> None:
        height = int(self.styles.height.value) if self.styles.height is not None else 8
        limit = max(MIN_HEIGHT, self.screen.size.height - 8)
        self.styles.height = max(MIN_HEIGHT, min(limit, height + delta))
        self.call_after_refresh(self._note_more)


__all__ = ["CommandOutput"]
