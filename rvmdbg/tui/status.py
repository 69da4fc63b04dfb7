"""The status line: where execution stopped and where it is in history, or that it is running.

Line one is the stop line of the debugger conventions (`[step 42] @sum_up pc=7: ...
(breakpoint 1)`), or the error that stopped the program, or the result it finished with.
Line two is the position in history (`step 120 of 340, history from step 0`) and the last
message from an action; while a run is in progress it shows the steps done, the rate and
how to interrupt.
"""
from __future__ import annotations

from rich.cells import cell_len, set_cell_size

from rich.text import Text
from textual.widget import Widget

from rvmdbg.views.text import wrap


class StatusLine(Widget):
    COMPONENT_CLASSES = {"status--stop", "status--error", "status--finished", "status--history",
                         "status--message", "status--running", "status--warning"}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stop_text = ""
        self.stop_kind = "stop"       # "stop", "error", "finished"
        self.history_text = ""
        self.message = ""
        self.message_kind = "message"  # "message" or "warning"
        self.running_text = ""

    def set_stop(self, text: str, kind: str = "stop") -> None:
        self.stop_text, self.stop_kind = text, kind
        self._update()

    def set_history(self, text: str) -> None:
        self.history_text = text
        self._update()

    def set_message(self, text: str, warning: bool = False) -> None:
        self.message = text
        self.message_kind = "warning" if warning else "message"
        self._update()
        self._fit_height()

    MAX_MESSAGE_LINES = 4

    def _message_lines(self) -> list[str] | None:
        """The message wrapped under the history line when it does not fit beside it (an
        explanation is never cut: a swap? reason, a phase hint), else None."""
        width = self.content_region.width or self.size.width
        if not self.message or width <= 0:
            return None
        sep = "   " if self.history_text else ""
        if cell_len(self.history_text + sep + self.message) <= width:
            return None
        return wrap(self.message, width)[:self.MAX_MESSAGE_LINES]

    def _fit_height(self) -> None:
        # a layout only when the message's line count changes (2 rows otherwise)
        lines = self._message_lines()
        height = 2 + (len(lines) if lines and not self.running_text else 0)
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height

    def set_running(self, text: str) -> None:
        was = bool(self.running_text)
        self.running_text = text
        self._update()
        if was != bool(text):
            self._fit_height()

    def _update(self) -> None:
        # A repaint, never a layout: the line has a fixed size (2 rows, the full width).
        self.refresh()

    def render(self) -> Text:
        st = self.get_component_rich_style
        out = Text(no_wrap=True, overflow="ellipsis")
        kind = {"error": "status--error", "finished": "status--finished"}.get(self.stop_kind, "status--stop")
        out.append(self._fit(self.stop_text) or " ", st(kind, partial=True))
        out.append("\n")
        if self.running_text:
            out.append(self.running_text, st("status--running", partial=True))
        else:
            out.append(self.history_text, st("status--history", partial=True))
            wrapped = self._message_lines()
            if wrapped:
                for line in wrapped:
                    out.append("\n" + line, st(f"status--{self.message_kind}", partial=True))
            elif self.message:
                sep = "   " if self.history_text else ""
                out.append(sep + self.message, st(f"status--{self.message_kind}", partial=True))
        return out

    def _fit(self, text: str) -> str:
        """The stop line cut to the width, keeping its `(reason)` at the end in view."""
        width = self.content_region.width or self.size.width
        if width <= 0 or cell_len(text) <= width:
            return text
        head, sep, reason = text.rpartition("    (")
        if not sep:
            return text
        reason = "  (" + reason
        keep = width - cell_len(reason) - 1
        if keep < 12:
            return text
        # cut by cells, never through a wide (Chinese) character
        return set_cell_size(head, keep).rstrip() + "…" + reason

    def on_resize(self) -> None:
        self.refresh()
        self._fit_height()

    @property
    def plain(self) -> str:
        """Both lines as plain text (tests read this)."""
        second = self.running_text or (self.history_text + ("   " + self.message if self.message else ""))
        return f"{self.stop_text}\n{second}"


__all__ = ["StatusLine"]
