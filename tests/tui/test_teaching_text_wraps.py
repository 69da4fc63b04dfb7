"""Teaching text at 80x24 wraps instead of being cut with "…" (issue 28): the
fetch-decode-execute strip (`p`), the swap? answer on the status line (`m`, then Down) and
the console's lines, in English and Chinese, at 80x24 and 160x48."""
from __future__ import annotations

import pytest
from conftest import press, screen_of, settle
from rich.cells import cell_len
from test_console import type_command

from rvmdbg.tui.command_output import CommandOutput

SIZES = [(80, 24), (160, 48)]


@pytest.fixture(params=["en", "zh"])
def language(request):
    if request.param == "zh":
        request.getfixturevalue("chinese")
    return request.param


def _flat(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("size", SIZES)
async def test_the_phase_strip_wraps(app_factory, size, language):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s", "p")
        strip = screen_of(app).query_one("CycleStrip")
        shown = str(strip.render())
        assert "…" not in shown
        width = strip.content_region.width
        assert all(cell_len(line) <= width for line in shown.split("\n"))
        for _phase, line, _state in strip.rows:
            assert _flat(line) in _flat(shown), line
        assert strip.region.height - 1 >= len(shown.split("\n"))   # all of it on screen


@pytest.mark.parametrize("size", SIZES)
async def test_the_swap_answer_is_whole_on_the_status_line(app_factory, size, language):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "m", "down")
        status = screen_of(app).status
        message = status.message
        assert message and "swap?" in message
        shown = str(status.render())
        assert "…" not in shown.split("\n", 1)[1]
        assert _flat(message) in _flat(shown)
        assert status.region.height >= len(shown.split("\n"))   # the line grew to hold it
        width = status.content_region.width
        assert all(cell_len(line) <= width for line in shown.split("\n")[1:])


@pytest.mark.parametrize("size", SIZES)
async def test_console_lines_fold_instead_of_being_cut(app_factory, size, language):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, "swap? @fib:3 4")   # an 83-column reason
        output = screen_of(app).console.output
        raw = output.lines
        shown = list(super(CommandOutput, output).lines)
        width = output.scrollable_content_region.width
        if language == "en" and size[0] == 80:   # the case: a line wider than the pane
            assert any(cell_len(line) > width for line in raw), raw
        assert all(cell_len(line) <= width for line in shown)
        assert _flat("".join(shown)) == _flat("".join(raw))   # nothing lost
