"""The base of the screen's list-like panes: a Line API `ScrollView` with a line cursor.

Only the lines on screen are rendered, each once per state: a subclass says what a line's
state is (`line_state`) and how to draw it (`render_full_line`); strips are kept in an
`LRUCache` keyed by (line, cursor, state), so moving the cursor or the pc repaints two lines
and scrolling a 20,000-line listing renders only what comes into view. Scrolling never
animates.

The finished rows (with the pane's border, padding and colour filters, which Textual redoes
for every row it repaints) are kept too, by the same key plus the horizontal scroll and the
pane's size and colours (`_RowMemo`): a row that comes back into view, after a scroll, a
switch of function and back, or a repaint of the whole pane, costs a lookup. The vertical
scrollbar (`PaneScrollBar`) keeps its rows the same way.
"""
from __future__ import annotations

from typing import Callable, Hashable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.color import Color
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual._styles_cache import StylesCache
from textual.widget import Widget

from rvmdbg.tui.glyphs import UNICODE, Glyphs
from rvmdbg.i18n import N_, _


class AsciiScrollBarRender(ScrollBarRender):
    """Scrollbars without the eighth-block characters: the thumb is a coloured blank."""

    VERTICAL_BARS = [" "] * 8
    HORIZONTAL_BARS = [" "] * 8


def use_ascii_scrollbars(widget) -> None:
    """Give a scrolling widget ASCII-only scrollbars (for `--ascii`)."""
    widget.vertical_scrollbar.renderer = AsciiScrollBarRender
    widget.horizontal_scrollbar.renderer = AsciiScrollBarRender


def ascii_scrollbars_under(screen) -> None:
    """ASCII scrollbars for every scrolling widget of `screen` when its app draws in ASCII
    (teaching views, the help, the quiz: every screen follows the glyph choice)."""
    if not getattr(screen.app, "ascii_only", False):
        return
    from textual.containers import ScrollableContainer
    from textual.scroll_view import ScrollView
    for widget in screen.query("*"):
        if isinstance(widget, (ScrollView, ScrollableContainer)):
            use_ascii_scrollbars(widget)


def set_title(widget, title: str) -> None:
    """Set a pane's border title unless it already reads so (setting one repaints the whole
    pane, which the steps that keep a pane's title should not pay)."""
    if widget.border_title != title:
        widget.border_title = title


def overlay_segments(text: str, pos: int, style: Style, marks, segs: list) -> None:
    """Append `text` (which starts at column `pos` of its line) to `segs`, cut where the
    overlays `marks` ((start, end, extra style) in line columns) begin or end, each piece in
    `style` plus the extra styles of the overlays covering it."""
    cuts = {0, len(text)}
    for start, end, _ in marks:
        for c in (start - pos, end - pos):
            if 0 < c < len(text):
                cuts.add(c)
    edges = sorted(cuts)
    for a, b in zip(edges, edges[1:]):
        s = style
        for start, end, extra in marks:
            if start <= pos + a < end:
                s = s + extra
        segs.append(Segment(text[a:b], s))


class _RowMemo(StylesCache):
    """Textual's per-widget styles cache, keeping also each finished content row by what it
    shows (`row_key(y)`: a `LinePane`'s line key and horizontal scroll, a scrollbar's segment)
    and the widget's size and colours. Textual's own cache is by screen row and is dropped
    at every scroll or whole-widget repaint; this one is dropped when the widget's content
    or styles change (`LinePane.forget_rows`, called by `notify_style_update`)."""

    def __init__(self, row_key: Callable[[int], Hashable]) -> None:
        super().__init__()
        self.row_key = row_key
        self.rows: LRUCache[tuple, Strip] = LRUCache(2048)

    def render_line(self, styles, y, size, content_size, padding, base_background, background,
                    render_content_line, *rest) -> Strip:
        top = styles.gutter.top
        if top <= y < top + content_size.height:
            key = (self.row_key(y - top), size, content_size, padding, base_background,
                   background, rest[-3])   # rest[-3]: opacity
            strip = self.rows.get(key)
            if strip is None:
                strip = self.rows[key] = super().render_line(
                    styles, y, size, content_size, padding, base_background, background,
                    render_content_line, *rest)
            return strip
        return super().render_line(styles, y, size, content_size, padding, base_background,
                                   background, render_content_line, *rest)


class PaneScrollBar(ScrollBar):
    """A pane's vertical scrollbar drawn a row at a time from the bar's segments, its
    finished rows kept by segment (`_RowMemo`). Textual's renders the whole bar through Rich
    and styles every row again whenever the thumb moves (a scroll, a switch of function):
    here only the rows that changed cost anything. What it draws is Textual's, cell for cell."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._bar_key: tuple | None = None
        self._bar_rows: list[Segment] = []
        self._styles_cache = _RowMemo(self.row_key)

    def bar_rows(self) -> list[Segment]:
        """One segment per row, styled as Textual's render shows it (the widget's own
        style under the bar's)."""
        bar = self.render()
        width, height = self.size
        base = self.visual_style.rich_style
        key = (width, height, bar.virtual_size, bar.window_size, bar.position, bar.style, base,
               type(bar))
        if key != self._bar_key:
            style = bar.style
            segments = bar.render_bar(
                size=height, virtual_size=bar.virtual_size, window_size=bar.window_size,
                position=bar.position, thickness=width, vertical=True,
                back_color=style.bgcolor or Color.parse("#555555"),
                bar_color=style.color or Color.parse("bright_magenta")).segments
            self._bar_rows = [Segment(s.text, base + s.style) for s in segments]
            self._bar_key = key
        return self._bar_rows

    def row_key(self, y: int) -> Segment | None:
        rows = self.bar_rows()
        return rows[y] if 0 <= y < len(rows) else None

    def render_line(self, y: int) -> Strip:
        segment = self.row_key(y)
        if segment is None:
            return Strip.blank(self.size.width, self.visual_style.rich_style)
        return Strip([segment], self.size.width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles_cache.rows.clear()


class LinePane(ScrollView, can_focus=True):
    """A focusable pane of lines with a cursor, cached rendering and text search."""

    COMPONENT_CLASSES = {"pane--cursor", "pane--cursor-blurred", "pane--dim"}

    BINDINGS = [
        Binding("up", "cursor(-1)", N_("Up"), show=False, tooltip=N_("Cursor up")),
        Binding("down", "cursor(1)", N_("Down"), show=False, tooltip=N_("Cursor down")),
        Binding("pageup", "page(-1)", N_("Page up"), show=False, tooltip=N_("A page up")),
        Binding("pagedown", "page(1)", N_("Page down"), show=False, tooltip=N_("A page down")),
        Binding("home", "cursor_to(0)", N_("First line"), show=False, tooltip=N_("First line")),
        Binding("end", "cursor_to(-1)", N_("Last line"), show=False, tooltip=N_("Last line")),
        Binding("Y", "screen.copy_pane", N_("Copy"), show=False,
                tooltip=N_("Copy the pane's whole text to the clipboard (OSC 52)"), id="copy"),
        Binding("left", "scroll_columns(-8)", N_("Scroll left"), show=False,
                tooltip=N_("Scroll left (in the source: move the cursor column)")),
        Binding("right", "scroll_columns(8)", N_("Scroll right"), show=False,
                tooltip=N_("Scroll right (in the source: move the cursor column)")),
    ]

    cursor: reactive[int] = reactive(0, repaint=False, init=False)

    # Human name of the pane (status messages, the help screen, the narrow-mode tabs).
    title = N_("pane")

    class CursorMoved(Message):
        """The user moved a pane's cursor (not sent for moves the screen makes itself)."""

        def __init__(self, pane: "LinePane", index: int) -> None:
            super().__init__()
            self.pane = pane
            self.index = index

    def __init__(self, *, glyphs: Glyphs = UNICODE, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.glyphs = glyphs
        self.line_count = 0
        self._strips: LRUCache[tuple, tuple[Strip, Style]] = LRUCache(1024)
        self._styles: dict[tuple[str, ...], Style] = {}
        self._base_style: Style | None = None
        self._quiet = False
        self._styles_cache = _RowMemo(self.row_key)
        self.border_title = _(self.title)

    def on_mount(self) -> None:
        if self.glyphs is not UNICODE:
            use_ascii_scrollbars(self)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The vertical scrollbar, a `PaneScrollBar` (made as Textual makes its own)."""
        if self._vertical_scrollbar is None:
            bar = self._vertical_scrollbar = PaneScrollBar(
                vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    # ------------------------------------------------------------ content size

    def set_lines(self, count: int, width: int, clear: bool = True) -> None:
        """Declare the content: `count` lines at most `width` cells wide. `clear` drops the
        cached lines and repaints (new content); without it only the size is updated."""
        self.line_count = count
        self.set_virtual_size(Size(max(width, 1), count))
        if self.cursor >= count:
            self.set_cursor(max(0, count - 1), quiet=True)
        if clear:
            self.forget_rows()
            self.refresh()

    def set_virtual_size(self, size: Size) -> None:
        """Resize the scrollable content without laying out the screen: the pane's own size
        does not depend on it, and a layout repaints every pane (Textual's `virtual_size`
        asks for one). The scrollbars follow; showing or hiding one still lays out."""
        if size == self.virtual_size:
            return
        if not self.is_mounted or not self.container_size:
            self.virtual_size = size
            return
        self.set_reactive(Widget.virtual_size, size)
        self._scroll_update(size)

    def invalidate(self) -> None:
        """Forget every rendered line (state the keys do not capture changed)."""
        self.forget_rows()
        self.refresh()

    def forget_rows(self) -> None:
        """Drop the rendered lines and the finished rows."""
        self._strips.clear()
        self._styles_cache.rows.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.forget_rows()
        self._styles = {}
        self._base_style = None

    @property
    def base_style(self) -> Style:
        """The pane's own Rich style (`rich_style` walks the ancestors: kept until the
        styles change)."""
        style = self._base_style
        if style is None:
            style = self._base_style = self.rich_style
        return style

    def line_base(self, prefix: str, marked_kind: str | None, linked: bool, cursor: str) -> Style:
        """A line's base style: the marked line (pc or current; `marked_kind` "error",
        "caller", or "" for the plain mark) and linked lines coloured from the pane's
        `PREFIX--...` components, then the cursor; on the marked line the cursor only
        reverses the gutter, so the mark's colour stays."""
        st = self.style
        if marked_kind is not None:
            line_bg = st(f"{prefix}--error" if marked_kind == "error" else
                         f"{prefix}--caller" if marked_kind == "caller" else self.MARK_COMPONENT)
        elif linked:
            line_bg = st(f"{prefix}--linked")
        else:
            line_bg = Style()
        base = self.base_style + line_bg
        if cursor and marked_kind is None:
            base = base + self.cursor_style(cursor)
        return base

    def breakpoint_segment(self, state: str, base: Style, on: str, off: str) -> Segment:
        """The breakpoint gutter cell: "on", "off" (disabled), "cond" (conditional) or ""."""
        if not state:
            return Segment(" ", base)
        g = self.glyphs
        mark = {"on": g.breakpoint, "off": g.breakpoint_disabled,
                "cond": g.breakpoint_conditional}[state]
        return Segment(mark, base + self.style(off if state == "off" else on))

    # ------------------------------------------------------------ what subclasses provide

    def line_state(self, index: int) -> tuple:
        """Everything besides the cursor that changes how line `index` looks."""
        return ()

    def render_full_line(self, index: int, cursor: str) -> tuple[list[Segment], Style]:
        """Line `index` unclipped, and the style to fill the rest of the row with.
        `cursor` is "" (no cursor), "focused" or "blurred"."""
        raise NotImplementedError

    def line_text(self, index: int) -> str:
        """The plain text of a line, for search."""
        return ""

    # ------------------------------------------------------------ rendering

    def cursor_style(self, cursor: str) -> Style:
        if cursor == "focused":
            return self.style("pane--cursor")
        if cursor == "blurred":
            return self.style("pane--cursor-blurred")
        return Style()

    @property
    def has_rows(self) -> bool:
        """False while the pane only shows a message (no cursor is drawn then)."""
        return self.line_count > 0

    def _line_key(self, index: int) -> tuple | None:
        """(line, cursor, state) of content line `index`; None past the end."""
        if index >= self.line_count or index < 0:
            return None
        cursor = ""
        if index == self.cursor and self.has_rows:
            cursor = "focused" if self.has_focus else "blurred"
        return (index, cursor, self.line_state(index))

    def row_key(self, y: int) -> tuple:
        """What row `y` of the pane shows: its line's key and the horizontal scroll."""
        scroll_x, scroll_y = self.scroll_offset
        return (self._line_key(y + scroll_y), scroll_x)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        key = self._line_key(y + scroll_y)
        if key is None:
            return Strip.blank(width, self.base_style)
        cached = self._strips.get(key)
        if cached is None:
            segments, fill = self.render_full_line(key[0], key[1])
            cached = (Strip(segments), fill)
            self._strips[key] = cached
        strip, fill = cached
        return strip.crop_extend(scroll_x, scroll_x + width, fill)

    def refresh_content_line(self, index: int | None) -> None:
        if index is not None and 0 <= index < self.line_count:
            self.refresh_line(index)

    def refresh_content_lines(self, start: int, end: int) -> None:
        """Repaint content lines start..end (inclusive) where they are on screen."""
        top = self.scroll_offset.y
        lo = max(start, top)
        hi = min(end, top + self.size.height - 1, self.line_count - 1)
        if lo <= hi:
            self.refresh_lines(lo, hi - lo + 1)

    # ------------------------------------------------------------ cursor

    def set_cursor(self, index: int, quiet: bool = False, center: bool = False,
                   ahead: bool = False) -> None:
        """Move the cursor; `quiet` moves made by the screen itself send no CursorMoved.
        `ahead`: scroll as `scroll_to_line` does for execution moving on."""
        if self.line_count == 0:
            return
        index = max(0, min(index, self.line_count - 1))
        self._quiet = quiet
        try:
            if index == self.cursor:
                self.scroll_to_line(index, center, ahead)
            else:
                self._center_next = center
                self._ahead_next = ahead
                self.cursor = index
        finally:
            self._quiet = False

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_content_line(old)
        self.refresh_content_line(new)
        self.scroll_to_line(new, getattr(self, "_center_next", False),
                            getattr(self, "_ahead_next", False))
        self._center_next = self._ahead_next = False
        if not self._quiet:
            self.post_message(self.CursorMoved(self, new))

    def scroll_to_line(self, index: int, center: bool = False, ahead: bool = False) -> None:
        """Bring a line into view without animation, keeping a few lines of context around
        it (centred when asked, or when it is more than a page away).

        `ahead` (the pc or the current line following execution): a line that leaves the
        view at the bottom is brought a third of the pane down from the top, so the lines it
        is heading for are in view and the pane scrolls once every two thirds of a page
        instead of at every step (a scroll repaints the whole pane)."""
        height = self.scrollable_content_region.height or self.size.height
        if height <= 0:
            return
        margin = min(3, max(0, (height - 1) // 4))
        top = self.scroll_offset.y
        if not center and top + margin <= index < top + height - margin:
            return
        lead = max(margin, height // 3) if ahead else margin
        if center or index < top - height or index >= top + 2 * height:
            y = index - height // 2
        elif index < top + margin:
            y = index - margin
        else:
            y = index - lead if ahead else index - height + 1 + margin
        y = max(0, min(y, self.line_count - height))
        if y != top:
            self.scroll_to(y=y, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self.set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.set_cursor(self.cursor + direction * height)

    def action_cursor_to(self, index: int) -> None:
        self.set_cursor(index if index >= 0 else self.line_count - 1)

    def action_scroll_columns(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + delta), animate=False, immediate=True)

    def on_click(self, event) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < self.line_count:
            self.set_cursor(index)

    def on_focus(self) -> None:
        self.refresh_content_line(self.cursor)

    def on_blur(self) -> None:
        self.refresh_content_line(self.cursor)

    # ------------------------------------------------------------ search

    def search(self, text: str, start: int | None = None) -> int | None:
        """The first line at or after `start` (wrapping) whose text contains `text`
        (case-insensitive); moves the cursor there."""
        if not text or self.line_count == 0:
            return None
        needle = text.lower()
        first = self.cursor + 1 if start is None else start
        n = self.line_count
        for k in range(n):
            i = (first + k) % n
            if needle in self.line_text(i).lower():
                self.set_cursor(i, center=True)
                return i
        return None

    # ------------------------------------------------------------ helpers for subclasses

    def style(self, *names: str) -> Style:
        """The combined style of component classes: only what each class sets, with a
        translucent background (`$accent 30%`) already blended onto the pane's."""
        cached = self._styles.get(names)
        if cached is None:
            cached = Style()
            for name in names:
                part = self.get_component_rich_style(name, partial=True)
                if part.bgcolor is not None:
                    full = self.get_component_rich_style(name)
                    part = part + Style(bgcolor=full.bgcolor)
                cached += part
            self._styles[names] = cached
        return cached

    def visible_range(self) -> tuple[int, int]:
        top = self.scroll_offset.y
        return top, top + self.size.height - 1

    def region_for(self, index: int) -> Region:
        return Region(0, index, self.virtual_size.width, 1)


__all__ = ["LinePane", "PaneScrollBar"]
