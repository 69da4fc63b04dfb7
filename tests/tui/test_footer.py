"""The footer (rvmdbg.tui.footer.KeyFooter): it shows the focused pane's keys, follows a focus
change that changes them, and is not rebuilt when the screen's bindings are refreshed without
a change in what it shows (a rebuild styles a widget per key: at startup it was a quarter of
the time to the first frame)."""
from __future__ import annotations

from textual.widgets._footer import FooterKey

from conftest import screen_of, settle
from rvmdbg.tui.footer import KeyFooter

FIB = "programs/fib.relay"


def footer_keys(app) -> list[FooterKey]:
    return list(app.screen.query_one(KeyFooter).query(FooterKey))


async def test_the_footer_follows_the_focused_pane(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        screen.action_focus_pane("breakpoints")
        await settle(app, pilot)
        actions = {key.action for key in footer_keys(app)}
        assert any("delete" in action for action in actions), actions
        screen.action_focus_pane("registers")
        await settle(app, pilot)
        actions = {key.action for key in footer_keys(app)}
        assert not any("delete" in action for action in actions), actions
        assert any("watch" in action for action in actions), actions


async def test_a_refresh_that_changes_no_key_keeps_the_footer_as_it_is(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        before = footer_keys(app)
        assert before
        app.screen.refresh_bindings()
        await settle(app, pilot)
        after = footer_keys(app)
        assert [id(k) for k in after] == [id(k) for k in before]
