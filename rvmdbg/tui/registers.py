"""The registers of the selected frame: `$N`, type, value summary, changed and read/write marks.

A register whose value changed since the last stop is marked with `*` and a colour; at the
innermost frame the registers the next instruction reads and writes carry the listing's read
and write symbols. Registers that hold nothing are left out unless they just changed (a
`kill_register` shows as a change to `-`).
"""
from __future__ import annotations

from bisect import bisect_left, insort
from itertools import compress, repeat
from operator import is_not

from rich.cells import cell_len
from rich.segment import Segment
from textual.binding import Binding

from rvmdbg.tui.line_pane import LinePane
from rvmdbg.debug.heap import storage_tags
from rvmdbg.tui.summary import heap_registers, is_heap_object, value_summary, value_type
from rvmdbg.i18n import N_, _

_SUMMARY_WIDTH = 160
_TYPE_WIDTH = 16


class RegisterPane(LinePane):
    title = N_("Registers")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "registers--name", "registers--type", "registers--value", "registers--changed",
        "registers--read", "registers--write", "registers--empty", "registers--param",
    }

    BINDINGS = [
        Binding("w", "screen.watch_cursor", N_("Watch"), tooltip=N_("Watch this register"), id="watch"),
        Binding("enter", "screen.print_register", N_("Print"), tooltip=N_("Print the whole value"), id="print"),
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
        self.message = _("no frame")
        self._generation = 0
        self._versions: list[int] = []   # per row: changes when the row must be drawn again
        self._next_version = 1   # versions are never reused within a generation
        self._layouts: dict[str, _Layout] = {}   # title -> rows last shown for that frame
        self._layout: _Layout | None = None      # the one on screen
        self._name_width = 3
        self._type_width = 6

    def set_frame(self, registers, changed=(), reads=(), writes=(), params: int = 0,
                  title: str | None = None) -> None:
        """Show a register file; keeps the cursor on the same register when it can, and
        repaints only the rows whose value or marks changed.

        Nothing here walks the register file in Python: the registers that differ from what
        the pane last showed for this frame (by its title) are found by identity at C speed
        (a 20,000-instruction function has as many registers), and only they, the marked
        ones and those holding ADT values (reference cells change in place) are looked at."""
        keep = self.rows[self.cursor] if self.rows and self.cursor < len(self.rows) else None
        title = title or _(self.title)
        regs = list(registers)
        changed, reads, writes = set(changed), set(reads), set(writes)
        layout = self._layouts.pop(title, None)
        shown = (layout is not None and layout is self._layout and bool(self.rows)
                 and title == self.border_title)
        old_width = self._type_width
        if layout is None or len(layout.regs) != len(regs) or layout.params != params:
            layout = _Layout(regs, changed, params, self.constructor_types)
            shown = False
            differ: set[int] = set()
        else:
            differ = layout.update(regs, changed, self.constructor_types)
            if layout.type_width != old_width:
                shown = False   # every row's columns move
        self._layouts[title] = layout
        while len(self._layouts) > 8:
            self._layouts.pop(next(iter(self._layouts)))
        old_marks = (self.changed, self.reads, self.writes)
        self.registers, self.rows, self.params = regs, layout.rows, params
        self._tags = None   # storage_tags(regs), made when a line is drawn
        self.changed, self.reads, self.writes = changed, reads, writes
        self.message = "" if layout.rows else _("no registers in use")
        if shown and layout.rows:
            rows = layout.rows
            versions = self._versions
            if layout.moved:
                # rows came or went: the rows from the first that moved on are new, those
                # above it keep their place (a register written for the first time in a long
                # function comes at the end, usually below the view: nothing to repaint)
                first = bisect_left(rows, min(layout.moved))
                shown_rows = len(versions)
                del versions[first:]
                versions.extend(range(self._next_version, self._next_version + len(rows) - first))
                self._next_version += len(rows) - first
                self.set_lines(len(rows), self.virtual_size.width, clear=False)
                top = self.scroll_offset.y   # the rows left past the end are blank now
                last = min(max(len(rows), shown_rows), top + self.size.height) - 1
                if max(first, top) <= last:
                    self.refresh_lines(max(first, top), last - max(first, top) + 1)
            else:
                first = len(rows)
            touched = (differ | layout.mutable | (changed ^ old_marks[0]) | (reads ^ old_marks[1])
                       | (writes ^ old_marks[2]))
            for r in touched:
                i = layout.row_index(r)
                if i is not None and i < first:
                    versions[i] = self._next_version
                    self._next_version += 1
                    self.refresh_content_line(i)
            if layout.moved and keep is not None and keep in layout.row_set:
                self.set_cursor(layout.row_index(keep), quiet=True)
            return
        self._layout = layout
        rows = layout.rows
        self._generation += 1
        self._versions = [0] * len(rows)
        self._name_width = layout.digits + len(self.register_prefix)
        self._type_width = layout.type_width
        self.border_title = title
        self.set_lines(len(rows) if rows else 1,
                       4 + self._name_width + layout.type_width + _SUMMARY_WIDTH)
        if keep is not None and keep in layout.row_set:
            self.set_cursor(layout.row_index(keep), quiet=True)

    def clear(self, message: str) -> None:
        self.registers, self.rows, self._versions = [], [], []
        self._tags = None
        self._layout = None
        self.message = message
        self._generation += 1
        self.border_title = _(self.title)
        self.set_lines(1, cell_len(message) + 2)

    def heap_registers(self) -> list[int] | None:
        """The shown registers holding heap objects (ADT values, references, closures), in
        order; None while no register file is shown."""
        return sorted(self._layout.mutable) if self._layout is not None else None

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
                f"{value_summary(v, _SUMMARY_WIDTH)}{self._storage_tag(v)}")

    def _storage_tag(self, v) -> str:
        """` in s3`: the pool buffer a storage, or a tensor laid out in one, lives in."""
        if v is None:
            return ""
        tags = getattr(self, "_tags", None)
        if tags is None:
            tags = self._tags = storage_tags(self.registers)
        tag = tags.get(id(v))
        return f" in {tag}" if tag else ""

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
        summary = value_summary(v, _SUMMARY_WIDTH, g.ellipsis) + self._storage_tag(v)
        segs.append(Segment(summary, base + st("registers--empty" if v is None else
                                               "registers--changed" if changed else "registers--value")))
        return segs, base


class _Layout:
    """The rows a register file shows: registers that hold a value, just changed, or are
    parameters; and the column widths. Kept per frame and updated from the registers that
    differ from the last time it was shown."""

    def __init__(self, regs: list, changed: set[int], params: int, constructor_types) -> None:
        n = len(regs)
        self.params = params
        self.regs = regs
        held = compress(range(n), map(is_not, regs, repeat(None)))
        self.row_set = set(held) | {r for r in changed if 0 <= r < n} | set(range(min(params, n)))
        self.rows = sorted(self.row_set)
        self.changed = {r for r in changed if 0 <= r < n}
        self.mutable = set(heap_registers(regs))
        self.digits = len(str(n))   # of the highest register number
        types = [len(value_type(regs[i], constructor_types)) for i in self.rows[:2000]]
        self.type_width = min(_TYPE_WIDTH, max(types, default=4))
        self.moved: set[int] = set()   # the registers whose rows came or went at the update

    def update(self, regs: list, changed: set[int], constructor_types) -> set[int]:
        """Take the new register file; returns the registers whose value is another object.
        `moved` says whose rows came or went."""
        n = len(regs)
        old = self.regs
        differ = set(compress(range(n), map(is_not, regs, old)))
        changed = {r for r in changed if 0 <= r < n}
        self.moved = set()
        row_set = self.row_set
        for r in differ | changed | self.changed:
            shown = regs[r] is not None or r in changed or r < self.params
            if shown != (r in row_set):
                self.moved.add(r)
                if shown:
                    row_set.add(r)
                else:
                    row_set.discard(r)
        if len(self.moved) > 64:
            self.rows = sorted(row_set)
        else:
            rows = self.rows   # a few rows in place: sorting 20,000 rows per step costs a ms
            for r in self.moved:
                if r in row_set:
                    insort(rows, r)
                else:
                    del rows[bisect_left(rows, r)]
        width = self.type_width
        for r in differ:
            if regs[r] is not None and width < _TYPE_WIDTH:
                # the type column widens for a wider value, as a fresh layout would
                width = max(width, min(_TYPE_WIDTH, len(value_type(regs[r], constructor_types))))
        self.type_width = width
        self.mutable = (self.mutable - differ) | _mutable(regs, differ)
        self.regs = regs
        self.changed = changed
        return differ

    def row_index(self, r: int) -> int | None:
        i = bisect_left(self.rows, r)
        return i if i < len(self.rows) and self.rows[i] == r else None


def _mutable(regs: list, among) -> set[int]:
    """The registers among `among` holding ADT values, references or closures: those can
    reach a reference cell, whose contents change without the register changing."""
    return {r for r in among if is_heap_object(regs[r])}


__all__ = ["RegisterPane"]
