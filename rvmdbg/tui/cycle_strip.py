"""The fetch-decode-execute strip: three lines under the listing (and in View 1) showing the
dispatch loop turning for the instruction about to run (`rvmdbg.views.cycle`).

The phases done are in plain text, the one `s` does next is marked and in reverse video, the
ones after it in italics, so the strip reads the same without colour.
"""
from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from rvmdbg.i18n import _
from rvmdbg.views.cycle import PHASE_LABELS, DispatchCycle
from rvmdbg.views.text import wrap


def cycle_of(app) -> DispatchCycle:
    """The app's one dispatch cycle, shared by the debugger screen and View 1 (a phase shown
    in one is where the other goes on)."""
    cycle = getattr(app, "dispatch_cycle", None)
    if cycle is None:
        cycle = app.dispatch_cycle = DispatchCycle()
    return cycle


class CycleStrip(Static):
    """Three lines: fetch, decode, execute (`show(rows)` with `DispatchCycle.rows()`)."""

    DEFAULT_CSS = """
    CycleStrip { height: auto; max-height: 10; padding: 0 1; border-top: solid $primary-darken-1;
                 display: none; }
    CycleStrip.-shown { display: block; }
    """

    def __init__(self, marker: str = "▶", **kwargs) -> None:
        super().__init__("", **kwargs)
        self.marker = marker
        self.rows: list = []

    def show(self, rows) -> None:
        self.rows = list(rows)
        # each phase's explanation wraps under it (hanging indent), never cut at 80 columns
        width = self.content_region.width or 76
        text = Text()
        for i, (phase, line, state) in enumerate(rows):
            if i:
                text.append("\n")
            mark = self.marker if state == "next" else " "
            style = {"done": "bold", "next": "bold reverse", "later": "italic"}[state]
            label = _(PHASE_LABELS[phase])   # padded by cells: 取指 is two wide characters
            head = f"{mark} {label}" + " " * max(0, 8 - cell_len(label))
            text.append(head, style=style)
            indent = cell_len(head) + 1
            body_style = {"done": "", "next": "bold", "later": "italic"}[state]
            for k, part in enumerate(wrap(line, max(16, width - indent)) or [""]):
                text.append(("\n" + " " * indent if k else " ") + part, style=body_style)
        self.update(text)

    def on_resize(self) -> None:
        if self.rows:
            self.show(self.rows)

    def plain(self) -> str:
        return "\n".join(f"{phase}: {line}" for phase, line, _ in self.rows)


__all__ = ["CycleStrip", "cycle_of"]
