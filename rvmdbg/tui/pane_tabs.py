"""A one-line tab bar naming the panes of a column, for narrow terminals.

Below 100 columns the screen shows one pane per column at a time; this bar names them all,
marks the one shown (reverse video and brackets, so it reads without colour), and switches on
a click. Keys do the same from anywhere: Tab and Shift+Tab cycle the panes (the digits
open the teaching views, so the labels carry none).
"""
from __future__ import annotations

from rich.text import Text
from rich.cells import cell_len
from textual.message import Message
from textual.widget import Widget

from rvmdbg.i18n import _


class PaneTabs(Widget):
    COMPONENT_CLASSES = {"tabs--active", "tabs--inactive"}

    class Chosen(Message):
        def __init__(self, tabs: "PaneTabs", pane_id: str) -> None:
            super().__init__()
            self.tabs = tabs
            self.pane_id = pane_id

    def __init__(self, panes: list[tuple[str, str]], **kwargs) -> None:
        """`panes`: (pane id, label) in order."""
        super().__init__(**kwargs)
        self.panes = panes
        self.active = panes[0][0] if panes else ""
        self._spans: list[tuple[int, int, str]] = []

    def set_active(self, pane_id: str) -> None:
        if pane_id != self.active:
            self.active = pane_id
            self.refresh()

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        self._spans = []
        for pane_id, label in self.panes:
            start = cell_len(out.plain)   # cells, not characters: a Chinese label is 2 a character
            active = pane_id == self.active
            style = self.get_component_rich_style("tabs--active" if active else "tabs--inactive",
                                                  partial=True)
            out.append("[" if active else " ", style)
            out.append(_(label), style)
            out.append("]" if active else " ", style)
            self._spans.append((start, cell_len(out.plain), pane_id))
        return out

    def on_click(self, event) -> None:
        for start, end, pane_id in self._spans:
            if start <= event.x < end:
                self.post_message(self.Chosen(self, pane_id))
                return


__all__ = ["PaneTabs"]
