"""A scrollable pane of drawn rows: the one widget every teaching view draws into.

The engine (`rvmdbg.views`) draws rows of `(text, role)` pieces; this pane colours each role
with the component class `rows--ROLE` and can lay extra highlights over column ranges
(`overlays`: a selection, the expression an instruction came from). It uses the Line API:
only the rows on screen are rendered, each cached until its content or overlays change, and
scrolling never animates. An optional cursor row is kept in view.
"""
from __future__ import annotations

from rich.cells import cell_len

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rvmdbg.tui.line_pane import overlay_segments
from rvmdbg.i18n import N_

ROLES = (
    "plain", "header", "current", "visited", "dim", "taken", "next", "failed", "pending",
    "done", "binding", "root", "node", "shared", "ref", "leaf", "tree", "axis", "plot",
    "series0", "series1", "series2", "series3", "write", "live", "free", "select", "exact",
    "made", "inside", "changed", "added", "kernel", "alloc", "free-op", "call", "return",
    "control", "data", "error", "ok", "title", "key", "cursor",
)


class RowsPane(ScrollView, can_focus=True):
    """Rows of (text, role) pieces with optional overlays, a gutter and a cursor row."""

    COMPONENT_CLASSES = {f"rows--{r}" for r in ROLES}

    DEFAULT_CSS = """
    RowsPane { height: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    RowsPane:focus { border: round $accent; }
    RowsPane > .rows--plain { }
    RowsPane > .rows--header { text-style: bold; }
    RowsPane > .rows--title { text-style: bold; color: $accent; }
    RowsPane > .rows--key { color: $text-muted; }
    RowsPane > .rows--current { background: $warning 35%; text-style: bold; }
    RowsPane > .rows--cursor { background: $accent 25%; }
    RowsPane > .rows--visited { color: $text; }
    RowsPane > .rows--dim { color: $text-disabled; }
    RowsPane > .rows--taken { color: $success; text-style: bold; }
    RowsPane > .rows--next { color: $warning; text-style: bold; }
    RowsPane > .rows--failed { color: $error; }
    RowsPane > .rows--pending { color: $text-disabled; }
    RowsPane > .rows--done { color: $text-muted; }
    RowsPane > .rows--binding { color: $secondary-lighten-2; }
    RowsPane > .rows--root { color: $primary-lighten-2; text-style: bold; }
    RowsPane > .rows--node { text-style: bold; }
    RowsPane > .rows--shared { color: $warning; }
    RowsPane > .rows--ref { color: $secondary-lighten-2; text-style: italic; }
    RowsPane > .rows--leaf { }
    RowsPane > .rows--tree { color: $text-muted; }
    RowsPane > .rows--axis { color: $text-muted; }
    RowsPane > .rows--plot { }
    RowsPane > .rows--series0 { color: $primary-lighten-2; }
    RowsPane > .rows--series1 { color: $warning; }
    RowsPane > .rows--series2 { color: $success; }
    RowsPane > .rows--series3 { color: $error; }
    RowsPane > .rows--write { color: $warning; }
    RowsPane > .rows--live { color: $primary-lighten-2; }
    RowsPane > .rows--free { color: $text-disabled; }
    RowsPane > .rows--select { background: $accent 40%; }
    RowsPane > .rows--exact { background: $success 35%; }
    RowsPane > .rows--made { background: $warning 25%; }
    RowsPane > .rows--inside { text-style: underline; }
    RowsPane > .rows--changed { color: $warning; }
    RowsPane > .rows--added { color: $success; }
    RowsPane > .rows--kernel { color: $success; }
    RowsPane > .rows--alloc { color: $warning; }
    RowsPane > .rows--free-op { color: $text-muted; }
    RowsPane > .rows--call { color: $primary-lighten-2; }
    RowsPane > .rows--return { color: $primary-lighten-2; }
    RowsPane > .rows--control { color: $secondary-lighten-2; }
    RowsPane > .rows--data { }
    RowsPane > .rows--error { color: $error; text-style: bold; }
    RowsPane > .rows--ok { color: $success; text-style: bold; }
    """

    BINDINGS = [
        Binding("pageup", "page(-1)", N_("Page up"), show=False),
        Binding("pagedown", "page(1)", N_("Page down"), show=False),
        Binding("home", "scroll_home", N_("Top"), show=False),
        Binding("end", "scroll_end", N_("Bottom"), show=False),
    ]

    class Clicked(Message):
        """A row was clicked (content row and column, gutter excluded)."""

        def __init__(self, pane: "RowsPane", row: int, col: int) -> None:
            super().__init__()
            self.pane = pane
            self.row = row
            self.col = col

    def __init__(self, title: str = "", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list = []
        self.row_gutter: list | None = None
        self.row_overlays: dict = {}
        self.cursor_row: int | None = None
        self._strip_cache: LRUCache = LRUCache(2048)
        self._role_styles: dict = {}
        self._gutter_width = 0
        self.border_title = title

    # ---- content ----

    def set_rows(self, rows: list, gutter: list | None = None) -> None:
        """New content: rows of pieces; `gutter` one piece list per row (or None)."""
        self.rows = rows
        self.row_gutter = gutter
        self._gutter_width = max((sum(cell_len(t) for t, _ in g) for g in gutter), default=0) \
            if gutter else 0
        # cells, not characters: a Chinese character takes two
        width = max((sum(cell_len(t) for t, _ in r) for r in rows), default=0) + self._gutter_width
        self._strip_cache.clear()
        self.virtual_size = Size(max(width, 1), len(rows))
        self.refresh()

    def set_lines(self, lines: list, role: str = "plain", gutter: list | None = None) -> None:
        self.set_rows([[(line, role)] for line in lines], gutter)

    def set_overlays(self, overlays: dict) -> None:
        """row -> [(start col, end col, role)] laid over the row's pieces."""
        self.row_overlays = overlays
        self._strip_cache.clear()
        self.refresh()

    def set_cursor(self, row: int | None, center: bool = False) -> None:
        old = self.cursor_row
        self.cursor_row = row
        self._strip_cache.clear()
        if row is not None:
            self.scroll_to_row(row, center=center or old is None)
        self.refresh()

    def row_text(self, row: int) -> str:
        return "".join(t for t, _ in self.rows[row]) if 0 <= row < len(self.rows) else ""

    def text(self) -> str:
        """Every row as plain text (tests)."""
        return "\n".join(self.row_text(r).rstrip() for r in range(len(self.rows)))

    # ---- styles ----

    def role_style(self, role: str) -> Style:
        style = self._role_styles.get(role)
        if style is None:
            name = f"rows--{role}"
            if name not in self.COMPONENT_CLASSES:
                style = Style()
            else:
                style = self.get_component_rich_style(name, partial=True)
                if style.bgcolor is not None:  # blend translucent backgrounds onto ours
                    style += Style(bgcolor=self.get_component_rich_style(name).bgcolor)
            self._role_styles[role] = style
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._role_styles = {}
        self._strip_cache.clear()

    # ---- rendering ----

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.size.width
        base = self.rich_style
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, base)
        cursor = index == self.cursor_row
        key = (index, cursor)
        strip = self._strip_cache.get(key)
        if strip is None:
            strip = Strip(self._segments(index, cursor))
            self._strip_cache[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _segments(self, index: int, cursor: bool) -> list:
        base = self.rich_style
        out = []
        if self.row_gutter is not None:
            g = self.row_gutter[index] if index < len(self.row_gutter) else []
            used = 0
            for text, role in g:
                out.append(Segment(text, base + self.role_style(role)))
                used += cell_len(text)
            if used < self._gutter_width:
                out.append(Segment(" " * (self._gutter_width - used), base))
        pieces = self.rows[index]
        marks = [(s, e, self.role_style(r)) for s, e, r in self.row_overlays.get(index, ())]
        col = 0
        line_style = base + self.role_style("cursor") if cursor else base
        for text, role in pieces:
            style = line_style + self.role_style(role)
            if not marks:
                out.append(Segment(text, style))
                col += len(text)
                continue
            overlay_segments(text, col, style, marks, out)
            col += len(text)
        return out

    # ---- scrolling ----

    def scroll_to_row(self, row: int, center: bool = False) -> None:
        """Bring a row into view without animation (centred when far away or asked), once
        the layout after the latest `set_lines` is done: scrolling before it would be clamped
        to the previous content's height."""
        first_request = getattr(self, "_pending_scroll", None) is None
        self._pending_scroll = (row, center)
        if self.size.height and first_request:
            self.call_after_refresh(self._apply_pending_scroll)

    def _apply_pending_scroll(self) -> None:
        pending = getattr(self, "_pending_scroll", None)
        if pending is None or not self.size.height:
            return
        self._pending_scroll = None
        row, center = pending
        top = self.scroll_offset.y
        y = self._placed_top(row, center, top)
        if y is not None:
            self.scroll_to(y=y, animate=False, immediate=True)
        # remembered so that a resize before the user scrolls (the layout settling) places
        # the row again from the same start: where it lands depends on the final height, not
        # on whether the request came before or after the last resize
        self._placed = (row, center, top, self.scroll_offset.y)

    def _placed_top(self, row: int, center: bool, top: int) -> int | None:
        """The top row that brings `row` into view from `top` (None: it is in view already)."""
        height = self.scrollable_content_region.height or self.size.height or 1
        if top <= row < top + height and not center:
            return None
        if center or not (top - height <= row < top + 2 * height):
            return max(0, row - height // 2)
        return row if row < top else row - height + 1

    def on_resize(self, event) -> None:
        if getattr(self, "_pending_scroll", None) is not None:
            self.call_after_refresh(self._apply_pending_scroll)
            return
        placed = getattr(self, "_placed", None)
        # where the placement left it, or as near as the new height lets it be: not scrolled
        # since, so the row is placed again for this height
        if placed is not None and self.scroll_offset.y == min(placed[3], self.max_scroll_y):
            self.scroll_to(y=placed[2], animate=False, immediate=True)
            self._pending_scroll = placed[:2]
            self.call_after_refresh(self._apply_pending_scroll)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=max(0, self.scroll_offset.y + direction * height), animate=False,
                       immediate=True)

    def action_scroll_home(self) -> None:
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_scroll_end(self) -> None:
        self.scroll_to(y=max(0, len(self.rows) - 1), animate=False, immediate=True)

    def on_click(self, event) -> None:
        row = event.y + self.scroll_offset.y
        col = event.x + self.scroll_offset.x - self._gutter_width
        if 0 <= row < len(self.rows):
            self.post_message(self.Clicked(self, row, col))


def region_overlays(region: tuple, lines: list, role: str, into: dict | None = None) -> dict:
    """Overlays covering a (line, col, end_line, end_col) region of plain lines."""
    out = {} if into is None else into
    l0, c0, l1, c1 = region
    for line in range(max(0, l0), min(l1, len(lines) - 1) + 1):
        text = lines[line]
        start = c0 if line == l0 else len(text) - len(text.lstrip())
        end = c1 if line == l1 else max(len(lines[line]), start + 1)
        if end > start:
            out.setdefault(line, []).append((start, end, role))
    return out


__all__ = ["RowsPane", "region_overlays", "ROLES"]
