"""Snapshots of the quiz dialog (after one answer) and of View 1's misconception list."""
from __future__ import annotations

from conftest import make_app, press, settle, wait_for


def test_quiz_after_an_answer(snap_compare, tmp_path):
    async def run_before(pilot):
        app = pilot.app
        await settle(app, pilot)
        await press(app, pilot, "Q", "2", "enter", "3")
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_misconceptions_list(snap_compare, tmp_path):
    async def run_before(pilot):
        app = pilot.app
        await settle(app, pilot)
        await press(app, pilot, "1", "M", "down", "down")
        await wait_for(pilot, lambda: "never happens" in str(
            app.screen.query_one("#mis-text").render()), "the evidence")
        await pilot.pause()
    app = make_app("programs/sum_up.relay", ["2"], config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
