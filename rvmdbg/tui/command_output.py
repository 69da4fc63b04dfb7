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
from rvmdbg.views.text import fold_line

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
        self._raw: list[str] = []       # every line as printed (the pane shows them folded)
        self._folded_at = 0             # the width the shown lines were folded to

    def show_command(self, line: str, output: str) -> None:
        """`(rvmdbg) LINE` and its output; a long output is shown from its first line."""
        self.show_lines([f"(rvmdbg) {line}"] + (output.rstrip("\n").split("\n") if output else []))

    @property
    def lines(self) -> list[str]:
        """Every line as printed (copy and tests read these), not as folded on screen."""
        self.flush()
        return self._raw

    def _fold_width(self) -> int:
        width = self.scrollable_content_region.width
        return width - 1 if width > 0 else 0

    def _fold(self, lines: list[str]) -> list[str]:
        """Lines wider than the pane folded under themselves: a console line is never cut."""
        width = self._folded_at = self._fold_width()
        if width <= 0:
            return list(lines)
        return [piece for line in lines for piece in fold_line(line, width)]

    def on_resize(self) -> None:
        if self._raw and self._fold_width() != self._folded_at:
            self.call_after_refresh(self._refold)

    def _refold(self) -> None:
        self.clear()
        super().write_lines(self._fold(self._raw))
        self._note_more()

    def write_lines(self, lines, scroll_end=None):
        self._raw.extend(lines)
        return super().write_lines(self._fold(list(lines)), scroll_end=scroll_end)

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
        shown = sum(len(fold_line(line, self._fold_width())) for line in lines)
        if height and shown > height:
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
