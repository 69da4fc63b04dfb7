"""The screen's partial repaints (`rvmdbg.tui.compositor.RowCompositor`) leave the terminal
showing exactly what a full render of the screen shows, key after key: every update the app
sends is applied to a model of the terminal's cells and compared with a fresh full render."""
from __future__ import annotations

import pytest
from rich.cells import cell_len
from rich.segment import ControlType

from rvmdbg.tui.compositor import RowCompositor

from conftest import press, screen_of, settle


class Terminal:
    """The cells (text, style) a terminal holds after the app's updates."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[(" ", None)] * width for _ in range(height)]

    def apply(self, renderable, console) -> None:
        x = y = 0
        for segment in renderable.__rich_console__(console, console.options):
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]
                continue
            if segment.text == "\n":
                continue   # every run of text is placed by a move first
            x = self._write(x, y, segment.text, segment.style)

    def _write(self, x: int, y: int, text: str, style) -> int:
        row = self.cells[y]
        for ch in text:
            if x < self.width:
                row[x] = (ch, _plain(style))
            x += cell_len(ch)
        return x

    @classmethod
    def of_strips(cls, strips, width: int, height: int) -> "Terminal":
        term = cls(width, height)
        for y, strip in enumerate(strips[:height]):
            x = 0
            for segment in strip:
                if not segment.control:
                    x = term._write(x, y, segment.text, segment.style)
        return term

    def diff(self, other: "Terminal") -> list[str]:
        out = []
        for y, (a, b) in enumerate(zip(self.cells, other.cells)):
            if a != b:
                text_a = "".join(c for c, _ in a)
                text_b = "".join(c for c, _ in b)
                first = next(x for x, (ca, cb) in enumerate(zip(a, b)) if ca != cb)
                out.append(f"row {y}:\n  shown: {text_a!r}\n  full:  {text_b!r}"
                           if text_a != text_b else
                           f"row {y}: same text, other styles from column {first}: "
                           f"{a[first][1]} shown, {b[first][1]} in full")
        return out


def _plain(style):
    """What a style shows (its meta, click handlers and offsets, differs between renders)."""
    if style is None:
        return None
    return (style.color, style.bgcolor, style.bold, style.italic, style.underline,
            style.reverse, style.dim, style.strike)


async def _check_keys(app, size, keys) -> int:
    width, height = size
    async with app.run_test(size=size) as pilot:
        term = Terminal(width, height)
        original = app._display
        updates = []

        def display(screen, renderable):
            if renderable is not None and not app._batch_count:
                updates.append(renderable)
            return original(screen, renderable)

        app._display = display
        await settle(app, pilot)
        screen = screen_of(app)
        assert isinstance(screen._compositor, RowCompositor)
        screen.refresh()   # one full frame first, as a terminal gets when the app starts
        await pilot.pause()
        partial = 0
        for key in keys:
            await press(app, pilot, key)
            for update in updates:
                term.apply(update, app.console)
                partial += type(update).__name__ == "ChopsUpdate"
            updates.clear()
            full = Terminal.of_strips(screen._compositor.render_strips(), width, height)
            problems = term.diff(full)
            assert not problems, f"after {key!r}:\n" + "\n".join(problems[:5])
    return partial


KEYS = ["s", "s", "s", "n", "s", "s", "S", "S", "N", "u", "d", "down", "down", "tab", "s",
        "o", "s", "o", "f", "pagedown", "s", "c"]


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_the_terminal_shows_what_a_full_render_shows(app_factory, size):
    app = app_factory("programs/fib.relay")
    partial = await _check_keys(app, size, KEYS)
    assert partial >= len(KEYS) // 2   # the keys were repainted in part, the case under test


async def test_the_heap_and_lists_repaint_in_part_as_well(app_factory):
    app = app_factory("programs/list_ops.relay")
    await _check_keys(app, (140, 40), ["s"] * 12 + ["tab", "tab", "tab", "enter", "S", "S", "n"])


def _long_program(tmp_path, lets: int = 120):
    """A @main longer than the listing (so it scrolls and has a scrollbar) calling a short
    @inc (which has none), as bench_tui.py's program, small."""
    from rvmdbg.tui.program import load_program
    lines = ['#[version = "0.0.5"]', "// args: 0", "def @inc(%x: int32) -> int32 {", "  %x + 1",
             "}", "def @main(%x0: int32) -> int32 {"]
    for i in range(1, lets + 1):
        cond = f"if (%x{i - 1} < 100000) {{ @inc(%x{i - 1}) }} else {{ %x{i - 1} }}"
        lines.append(f"  let %x{i} = {cond if i % 10 == 0 else f'@inc(%x{i - 1})'};")
    lines += [f"  %x{lets}", "}", ""]
    path = tmp_path / "long.relay"
    path.write_text("\n".join(lines))
    return load_program(str(path))


def _render_from_nothing(screen):
    """The screen rendered with every widget's kept lines and rows forgotten."""
    from rvmdbg.tui.line_pane import LinePane
    for widget in screen.walk_children():
        if isinstance(widget, LinePane):
            widget.forget_rows()
        widget._styles_cache.clear()
        for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):
            if bar is not None:
                bar.refresh()   # its lines are drawn again
                getattr(bar._styles_cache, "rows", {}).clear()
                bar._bar_key = None
    return screen._compositor.render_strips()


STALE_KEYS = ["s", "s", "s", "s", "s", "s", "s", "s", "s", "n", "right_square_bracket",
              "left_square_bracket", "full_stop", "pagedown", "right", "left", "S", "S", "S",
              "r", "s", "s", "r", "tab", "s", "tab", "resize", "s", "ctrl+r", "s"]


async def test_kept_rows_show_what_a_render_from_nothing_shows(tmp_path):
    """The lines and finished rows the panes keep (`LinePane`'s caches) never go stale:
    after a call into another function and back, the previous and next function, paging
    and scrolling sideways, the register numbering both ways, focus moves, a resize and a
    restart, the screen is what it is when every cache is dropped first."""
    from rvmdbg.tui.app import DebuggerApp
    app = DebuggerApp(_long_program(tmp_path), [], config_dir=str(tmp_path / "config"))
    size = (110, 36)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        for key in STALE_KEYS:
            if key == "resize":
                size = (100, 32)
                await pilot.resize_terminal(*size)
                await settle(app, pilot)
            else:
                await press(app, pilot, key)
            kept = Terminal.of_strips(screen._compositor.render_strips(), *size)
            fresh = Terminal.of_strips(_render_from_nothing(screen), *size)
            problems = kept.diff(fresh)
            assert not problems, f"after {key!r}:\n" + "\n".join(problems[:5])
        assert screen.listing.func_index is not None


@pytest.mark.parametrize("ascii_only", [False, True])
async def test_the_panes_scrollbar_draws_what_textuals_draws(tmp_path, ascii_only):
    """`PaneScrollBar` (rows from the bar's segments, kept by segment) draws each row cell
    for cell as Textual's ScrollBar does, wherever the thumb is and under the mouse."""
    from textual.scrollbar import ScrollBar
    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.line_pane import PaneScrollBar
    app = DebuggerApp(_long_program(tmp_path), [], config_dir=str(tmp_path / "config"),
                      ascii_only=ascii_only)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(app, pilot)
        listing = screen_of(app).listing
        bar = listing.vertical_scrollbar
        assert isinstance(bar, PaneScrollBar) and bar.display
        for k in range(12):
            listing.scroll_to(y=k * 37 % listing.max_scroll_y, animate=False, immediate=True)
            bar.mouse_over = k % 3 == 1
            await pilot.pause()
            ours = [list(bar.render_line(y)) for y in range(bar.size.height)]
            bar.refresh()
            textuals = [list(ScrollBar.render_line(bar, y)) for y in range(bar.size.height)]
            assert ours == textuals, f"thumb at {bar.position}"
