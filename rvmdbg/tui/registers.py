"""The registers of the selected frame: `$N`, type, value summary, changed and read/write marks.

A register whose value changed since the last stop is marked with `*` and a colour; at the
innermost frame the registers the next instruction reads and writes carry the listing's read
and write symbols. Registers that hold nothing are left out unless they just changed (a
`kill_register` shows as a change to `-`).
"""
from __future__ import annotations

import numpy as np
from rich.segment import Segment
from textual.binding import Binding

from rvmdbg.tui.line_pane import LinePane
from rvmdbg.tui.summary import value_summary, value_type

_SUMMARY_WIDTH = 160
_TYPE_WIDTH = 16


class RegisterPane(LinePane):
    title = "Registers"

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "registers--name", "registers--type", "registers--value", "registers--changed",
        "registers--read", "registers--write", "registers--empty", "registers--param",
    }

    BINDINGS = [
        Binding("w", "screen.watch_cursor", "Watch", tooltip="Watch this register", id="watch"),
        Binding("enter", "screen.print_register", "Print", tooltip="Print the whole value", id="print"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.registers: list = []
        self.rows: list[int] = []
        self.changed: set[int] = set()
        self.reads: set[int] = set()
        self.writes: set[int] = set()
        self.params = 0
        self.constructor_types: dict[str, str] = {}
        self.register_prefix = "$"   # "r" for a MiniVM program, as its text names registers
        self.message = "no frame"
        self._generation = 0
        self._versions: list[int] = []
        self._name_width = 3
        self._type_width = 6

    def set_frame(self, registers, changed=(), reads=(), writes=(), params: int = 0,
                  title: str | None = None) -> None:
        """Show a register file; keeps the cursor on the same register when it can, and
        repaints only the rows whose value or marks changed."""
        keep = self.rows[self.cursor] if self.rows and self.cursor < len(self.rows) else None
        old_regs, old_rows = self.registers, self.rows
        old_marks = (self.changed, self.reads, self.writes)
        regs = list(registers)
        changed, reads, writes = set(changed), set(reads), set(writes)
        rows = [i for i, v in enumerate(regs) if v is not None or i in changed or i < params]
        name_width = len(str(len(regs))) + len(self.register_prefix)
        types = [len(value_type(regs[i], self.constructor_types)) for i in rows[:2000]]
        type_width = min(_TYPE_WIDTH, max(types, default=4))
        title = title or self.title
        self.registers, self.rows, self.params = regs, rows, params
        self.changed, self.reads, self.writes = changed, reads, writes
        self.message = "" if rows else "no registers in use"
        same_layout = (rows == old_rows and len(regs) == len(old_regs)
                       and title == self.border_title and name_width == self._name_width
                       and type_width == self._type_width and rows)
        if same_layout:
            versions = self._versions
            for i, r in enumerate(rows):
                v = regs[r]
                marks = (r in changed, r in reads, r in writes)
                old = (r in old_marks[0], r in old_marks[1], r in old_marks[2])
                # ADT values may hold reference cells, whose contents change in place
                if (v is not old_regs[r] or marks != old
                        or not isinstance(v, (np.ndarray, np.generic))):
                    versions[i] += 1
                    self.refresh_content_line(i)
            return
        self._generation += 1
        self._versions = [0] * len(rows)
        self._name_width, self._type_width = name_width, type_width
        self.border_title = title
        self.set_lines(len(rows) if rows else 1, 4 + name_width + type_width + _SUMMARY_WIDTH)
        if keep is not None and keep in rows:
            self.set_cursor(rows.index(keep), quiet=True)

    def clear(self, message: str) -> None:
        self.registers, self.rows, self._versions = [], [], []
        self.message = message
        self._generation += 1
        self.border_title = self.title
        self.set_lines(1, len(message) + 2)

    @property
    def has_rows(self) -> bool:
        return bool(self.rows)

    def line_state(self, index: int) -> tuple:
        versions = self._versions
        return (self._generation, versions[index] if index < len(versions) else 0)

    def register_at(self, index: int) -> int | None:
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def cursor_register(self) -> int | None:
        return self.register_at(self.cursor)

    def line_text(self, index: int) -> str:
        r = self.register_at(index)
        if r is None:
            return self.message
        v = self.registers[r]
        return (f"{self.register_prefix}{r} {value_type(v, self.constructor_types)} "
                f"{value_summary(v, _SUMMARY_WIDTH)}")

    def render_full_line(self, index: int, cursor: str):
        base = self.base_style
        if cursor:
            base = base + self.cursor_style(cursor)
        st = self.style
        r = self.register_at(index)
        if r is None:
            return [Segment(f" {self.message}", base + st("registers--empty"))], base
        g = self.glyphs
        v = self.registers[r]
        changed = r in self.changed
        segs = []
        segs.append(Segment(g.changed if changed else " ", base + st("registers--changed")))
        if r in self.writes:
            segs.append(Segment(g.write, base + st("registers--write")))
        elif r in self.reads:
            segs.append(Segment(g.read, base + st("registers--read")))
        else:
            segs.append(Segment(" ", base))
        name_style = base + st("registers--name", "registers--changed" if changed else
                               "registers--param" if r < self.params else "registers--name")
        segs.append(Segment(f"{self.register_prefix + str(r):<{self._name_width}} ", name_style))
        vtype = value_type(v, self.constructor_types)
        if len(vtype) > self._type_width:
            vtype = vtype[:self._type_width - 1] + "~"
        segs.append(Segment(f"{vtype:<{self._type_width}} ", base + st("registers--type")))
        summary = value_summary(v, _SUMMARY_WIDTH, g.ellipsis)
        segs.append(Segment(summary, base + st("registers--empty" if v is None else
                                               "registers--changed" if changed else "registers--value")))
        return segs, base


__all__ = ["RegisterPane"]
