"""Opening the teaching views over the debugger and moving between them (keys 1, 2, 3,
0 / Esc), in the demo app and in the real debugger (1, 2, 3 open them there, `v` reopens
the last one)."""
from __future__ import annotations

import pytest
from views_support import demo_app, settle

from rvmdbg.tui.views.base import TeachingScreen
from rvmdbg.tui.views.control_flow import ControlFlowScreen
from rvmdbg.tui.views.executors import ExecutorsScreen
from rvmdbg.tui.views.flow import FlowScreen, FlowView

LIST = "tests/examples/list_length.relay"


async def test_keys_switch_views_and_each_keeps_its_place():
    app = demo_app(LIST, view=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert not isinstance(app.screen, TeachingScreen)
        await pilot.press("1")
        assert isinstance(app.screen, FlowScreen)
        await pilot.press("right", "right")
        stage = app.screen.query_one(FlowView).stage_index
        await pilot.press("2")
        assert isinstance(app.screen, ExecutorsScreen)
        await pilot.press("3")
        assert isinstance(app.screen, ControlFlowScreen)
        assert len(app.screen_stack) == 2          # views replace each other over the base
        await pilot.press("1")
        assert app.screen.query_one(FlowView).stage_index == stage
        await pilot.press("0")
        assert not isinstance(app.screen, TeachingScreen)
        await pilot.press("3")
        await pilot.press("escape")
        assert not isinstance(app.screen, TeachingScreen)


async def test_steps_taken_in_one_view_show_in_the_others():
    app = demo_app(LIST, view="control")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("s", "s", "s", "s")
        assert app.session.step_count == 4
        await pilot.press("1")
        view = app.screen.query_one(FlowView)
        assert view.origin == app.session.current_span()
        await pilot.press("2")
        assert app.screen.query_one("#exec-stream").cursor_row == 4


async def test_in_the_debugger(app_factory):
    from rvmdbg.tui.screen import DebuggerScreen
    app = app_factory(LIST)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        debugger = app.screen
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("1")
        assert isinstance(app.screen, FlowScreen)
        # a step from the view goes through the debugger, whose panes follow
        await pilot.press("s", "s")
        await pilot.pause()
        assert app.session.step_count == 2
        assert debugger.status.stop_text.startswith("[step 2]")
        await pilot.press("3")
        assert isinstance(app.screen, ControlFlowScreen)
        assert "@length" in str(app.screen.query_one("#cfg-summary").render())
        await pilot.press("escape")
        assert app.screen is debugger
        assert debugger.session.step_count == 2
        await pilot.press("v")                       # reopens the last view
        assert isinstance(app.screen, ControlFlowScreen)
        await pilot.press("0")
        assert app.screen is debugger


@pytest.mark.parametrize("key, screen_class", [
    ("1", FlowScreen), ("2", ExecutorsScreen), ("3", ControlFlowScreen)])
@pytest.mark.parametrize("back", ["0", "escape"])
async def test_digit_opens_a_view_from_the_debugger_and_back_leaves_it_unchanged(
        app_factory, key, screen_class, back):
    from rvmdbg.tui.screen import DebuggerScreen
    app = app_factory(LIST)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        debugger = app.screen
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("s", "s", "s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        debugger.action_focus_pane("registers")
        await pilot.pause()
        before = (app.session.step_count, app.session.location(), debugger.status.stop_text)
        assert before[0] == 3
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, screen_class)
        assert len(app.screen_stack) == 2            # the debugger stays underneath
        await pilot.press(back)
        await pilot.pause()
        assert app.screen is debugger
        after = (app.session.step_count, app.session.location(), debugger.status.stop_text)
        assert after == before
        assert app.focused.id == "registers"          # the debugger is where it was


async def test_the_footer_shows_one_entry_for_the_views(app_factory):
    from textual.widgets import Footer
    app = app_factory(LIST)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        keys = [b.key_display or b.key for (_, b, enabled, _) in
                app.screen.active_bindings.values() if b.show]
        assert "1-3" in keys and "2" not in keys and "3" not in keys
        assert app.screen.query_one(Footer).display


async def test_ascii_mode_draws_only_ascii_in_every_view():
    from rvmdbg.tui.views.rows_pane import RowsPane
    from textual.widgets import Static
    app = demo_app("programs/bst.relay", view=None, steps=40, ascii_only=True, measured=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        for key in ("1", "2", "3"):
            await pilot.press(key)
            await settle(pilot)
            texts = [pane.text() for pane in app.screen.query(RowsPane)]
            texts += [str(w.render()) for w in app.screen.query(Static)]
            texts += ["".join(t for g in (pane.row_gutter or []) for t, _ in g)
                      for pane in app.screen.query(RowsPane)]
            bad = {c for t in texts for c in t if ord(c) > 126}
            assert not bad, f"view {key} draws {sorted(bad)} in ASCII mode"


async def test_an_executable_without_source():
    """A saved executable with no Relay text: only what the bytecode can show."""
    from rvmdbg.debug import DebugSession
    from rvmdbg.tui.views.demo import ViewsDemoApp
    from rvmdbg.views.context import ViewContext
    from views_support import context
    from view_helpers import int_list
    base = context(LIST, args=None)
    ctx = ViewContext(module=None, exe=base.exe, entry="main", name="saved.rvmx")
    ctx.session = DebugSession(base.exe, [int_list(1, 2)])
    for _ in range(3):
        ctx.session.step()
    app = ViewsDemoApp(ctx, view="flow")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(FlowView)
        assert view.model.names == ["Bytecode", "Execution"]
        await pilot.press("2")
        await settle(pilot)
        assert "needs the Relay program" in app.screen.query_one("#exec-graph").text()
        await pilot.press("3")
        await settle(pilot)
        match = app.screen.query_one("#cfg-match").text()
        assert "clause 2  ?" in match          # found from the bytecode alone
