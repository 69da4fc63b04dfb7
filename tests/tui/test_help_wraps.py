"""`?` at 80x24 and 160x48, in English and Chinese (issue 28): every description is whole,
wrapped to the dialog (Chinese between characters), never cut with an ellipsis."""
from __future__ import annotations

import pytest
from conftest import press, settle
from rich.cells import cell_len

from rvmdbg.tui.help_screen import HelpScreen
from rvmdbg.views.text import NO_LINE_START


@pytest.fixture(params=["en", "zh"])
def language(request):
    if request.param == "zh":
        request.getfixturevalue("chinese")
    return request.param


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_help_descriptions_wrap_whole(app_factory, size, language):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        static = app.screen.query_one("#help-keys")
        text = static.render()
        plain = str(text)
        assert "…" not in plain
        width = static.content_region.width
        lines = plain.split("\n")
        assert all(cell_len(line.rstrip()) <= width for line in lines)
        # what the Static shows is these lines, none folded again
        assert static.content_region.height == len(lines) or static.virtual_size.height >= len(lines)
        flat = "".join(plain.split())
        for keys, does in app.screen.entries():
            assert "".join(does.split()) in flat, does
        for line in lines:   # a description's own lines (indented) never open on punctuation
            body = line.strip()
            if line.startswith(" ") and body:
                assert body[0] not in NO_LINE_START, line
