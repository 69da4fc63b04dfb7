"""Chinese gaps of issue 28 item 10: the command line's placeholder is translated and its
footer writes keys as the help does (Tab, Esc, F11, Ctrl+R), not Textual's tab, esc, ^r."""
from __future__ import annotations

import pytest
from conftest import press, settle


def _bottom(app, rows: int) -> str:
    return "\n".join(s.text for s in app.screen._compositor.render_strips()[-rows:])


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_command_line_in_chinese(app_factory, size, chinese):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "colon")
        await pilot.pause()
        line = app.screen.query_one("CommandLine")
        assert str(line.placeholder).startswith("命令")
        footer = _bottom(app, 1)
        assert "Tab 补全" in footer and "Esc 关闭" in footer
        for raw in ("tab ", "esc ", "^r", "f11"):
            assert raw not in footer, footer
    assert chinese == set(), sorted(chinese)


async def test_the_footer_writes_keys_as_the_help_in_english(app_factory):
    app = app_factory("programs/fib.relay", ["4"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "colon")
        footer = _bottom(app, 1)
        assert "Ctrl+R" in footer and "Esc Close" in footer and "F11" in footer
