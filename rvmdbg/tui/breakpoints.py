"""Breakpoints and watchpoints: one row each, with its number, state, place and condition.

Space enables or disables the one under the cursor, `x` or Delete removes it, Enter shows a
breakpoint's place in the listing, and `e` opens the command line on `condition N EXPR` to
edit its condition. The screen turns the session's
breakpoint and watch objects into `BreakpointRow`s; this pane only shows them.
"""
from __future__ import annotations

from typing import NamedTuple

from rich.segment import Segment
from textual.binding import Binding
from textual.message import Message

from rvmdbg.tui.line_pane import LinePane
from rvmdbg.i18n import N_, _


class BreakpointRow(NamedTuple):
    kind: str            # "break" or "watch"
    number: int
    enabled: bool
    where: str           # `@f:7`, `line 12`, `op:AllocADT`, `$4 in @f`
    condition: str       # "" when unconditional
    hits: int | None
    location: tuple[int, int] | None   # (func_index, pc) to show, when it has one place


class BreakpointPane(LinePane):
    title = N_("Breakpoints")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "breakpoints--number", "breakpoints--on", "breakpoints--off", "breakpoints--where",
        "breakpoints--condition", "breakpoints--hits", "breakpoints--heading",
    }

    BINDINGS = [
        Binding("space", "toggle", N_("On/off"), tooltip=N_("Enable or disable the breakpoint or watch"),
                id="toggle-breakpoint"),
        Binding("x,delete", "delete", N_("Delete"), tooltip=N_("Delete the breakpoint or watch"),
                id="delete-breakpoint"),
        Binding("enter", "show", N_("Show"), tooltip=N_("Show the breakpoint's place in the listing"),
                id="show-breakpoint"),
        Binding("e", "condition", N_("Condition"),
                tooltip=N_("Edit the breakpoint's condition on the command line"),
                id="condition"),
    ]

    class Changed(Message):
        """The user asked to toggle ("toggle"), delete ("delete"), show ("show") a row or
        edit its condition ("condition")."""

        def __init__(self, action: str, row: BreakpointRow) -> None:
            super().__init__()
            self.action = action
            self.row = row

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[BreakpointRow] = []
        self._generation = 0

    def set_rows(self, rows: list[BreakpointRow]) -> None:
        if rows == self.rows and self.line_count:
            return
        self.rows = list(rows)
        self._generation += 1
        nb = sum(1 for r in rows if r.kind == "break")
        nw = len(rows) - nb
        self.border_title = f"{_(self.title)} ({nb})" + (" " + _("Watches ({n})").format(n=nw) if nw else "")
        self.set_lines(max(1, len(self.rows)), 100)

    @property
    def has_rows(self) -> bool:
        return bool(self.rows)

    def line_state(self, index: int) -> tuple:
        return (self._generation,)

    def current_row(self) -> BreakpointRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def line_text(self, index: int) -> str:
        if not self.rows:
            return _("no breakpoints")
        r = self.rows[index]
        return f"{r.kind} {r.number} {r.where} {r.condition}"

    def render_full_line(self, index: int, cursor: str):
        base = self.base_style
        if cursor:
            base = base + self.cursor_style(cursor)
        st = self.style
        if not self.rows:
            return [Segment(" " + _("no breakpoints: b sets one, w watches a register"),
                            base + st("pane--dim"))], base
        r = self.rows[index]
        g = self.glyphs
        if r.kind == "watch":
            mark = "w" if r.enabled else "-"
        else:
            mark = (g.breakpoint_conditional if r.condition else g.breakpoint) if r.enabled else g.breakpoint_disabled
        segs = [
            Segment(mark, base + st("breakpoints--on" if r.enabled else "breakpoints--off")),
            Segment(f" {r.number:<3}", base + st("breakpoints--number")),
            Segment(r.where, base + st("breakpoints--where" if r.enabled else "breakpoints--off")),
        ]
        if r.condition:
            segs.append(Segment(" " + _("if {condition}").format(condition=r.condition), base + st("breakpoints--condition")))
        if r.hits:
            segs.append(Segment("  " + _("hits {n}").format(n=r.hits), base + st("breakpoints--hits")))
        return segs, base

    def _post(self, action: str) -> None:
        row = self.current_row()
        if row is not None:
            self.post_message(self.Changed(action, row))

    def action_toggle(self) -> None:
        self._post("toggle")

    def action_delete(self) -> None:
        self._post("delete")

    def action_show(self) -> None:
        self._post("show")

    def action_condition(self) -> None:
        self._post("condition")


__all__ = ["BreakpointPane", "BreakpointRow"]
