"""Under `--ascii` (TERM=linux, LANG=C) every screen follows the glyph choice: the teaching
views, the quiz, the help and the phases strip draw their frames in ASCII, not `╭─│╰`."""
from __future__ import annotations

import pytest
from conftest import make_app, press, settle

# box drawing, block elements and braille: what a Linux console's font lacks
_NOT_ASCII_ART = [(0x2500, 0x259F), (0x2800, 0x28FF)]


def screen_text(app) -> str:
    """The top screen's characters as drawn, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _box_chars(app) -> set:
    return {c for c in screen_text(app) if any(lo <= ord(c) <= hi for lo, hi in _NOT_ASCII_ART)}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_screen_draws_ascii_frames_under_ascii(tmp_path, size):
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path), ascii_only=True)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s", "p")          # the phases strip
        assert not _box_chars(app), "debugger"
        for key in ("1", "2", "3"):
            await press(app, pilot, key)
            await settle(app, pilot)
            assert not _box_chars(app), f"view {key}"
        await press(app, pilot, "Q")
        await settle(app, pilot)
        assert not _box_chars(app), "quiz"
        await press(app, pilot, "escape", "0")
        await settle(app, pilot)
        await press(app, pilot, "question_mark")
        assert not _box_chars(app), "help"


async def test_unicode_frames_remain_without_ascii(tmp_path):
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "1")
        await settle(app, pilot)
        assert "╭" in _box_chars(app)   # the test can see frames
