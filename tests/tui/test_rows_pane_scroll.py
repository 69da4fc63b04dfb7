"""RowsPane.scroll_to_row: where a row lands depends on the pane's final height, not on
whether the request was placed before the layout's last resize (the 80x24 flow view's
snapshot came out either way before: a race)."""
from __future__ import annotations

from textual.app import App

from rvmdbg.tui.views.rows_pane import RowsPane

LINES = [f"line {i}" for i in range(40)]


class _Pane(App):
    def __init__(self, height: int):
        super().__init__()
        self.height = height

    def compose(self):
        pane = RowsPane("rows", id="pane")
        pane.styles.height = self.height
        yield pane


async def _top(first_height: int, final_height: int, user_scroll: int | None = None) -> int:
    app = _Pane(first_height)
    async with app.run_test(size=(40, 30)) as pilot:
        pane = app.query_one(RowsPane)
        pane.set_lines(LINES)
        await pilot.pause()
        pane.scroll_to_row(15)
        await pilot.pause()
        if user_scroll is not None:
            pane.scroll_to(y=user_scroll, animate=False, immediate=True)
        pane.styles.height = final_height
        await pilot.pause()
        await pilot.pause()
        assert pane.scroll_offset.y <= 15 < pane.scroll_offset.y + pane.size.height
        return pane.scroll_offset.y


async def test_a_row_placed_before_a_resize_lands_as_if_placed_after_it():
    assert await _top(8, 11) == await _top(11, 11)


async def test_a_pane_the_user_scrolled_keeps_its_place_on_a_resize():
    assert await _top(8, 11, user_scroll=13) == 13
