"""View 1 on screen: walking the stages, selecting expressions, following execution."""
from __future__ import annotations

from views_support import demo_app, settle

from rvmdbg.tui.views.flow import FlowScreen, FlowView

LIST = "tests/examples/list_length.relay"


def _view(app) -> FlowView:
    return app.screen.query_one(FlowView)


async def test_opens_on_the_source_at_the_current_instruction():
    app = demo_app(LIST)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, FlowScreen)
        view = _view(app)
        assert view.stage.name == "Source"
        assert view.origin == app.session.current_span()
        assert "selected: Call @length" in str(app.screen.query_one("#flow-selection").render())
        current = app.screen.query_one("#flow-current")
        line = view.stage.items[view.selected].region[0]
        assert "@length(%xs)" in current.row_text(line)
        assert any(r == "select" for marks in current.row_overlays.values() for *_, r in marks)


async def test_walking_the_stages_keeps_the_expression():
    app = demo_app(LIST)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        origin = view.origin
        seen = []
        for _ in range(len(view.model) - 2):
            await pilot.press("right")
            seen.append(view.stage.name)
            assert view.origin == origin
            if view.selected is not None:
                assert view.stage.items[view.selected].origin == origin
        assert seen[-1] == "Bytecode"
        # the bytecode stage selects the invoke the expression became
        item = view.stage.items[view.selected]
        assert item.location == (app.session.exe.func_index("main"), 0)
        await pilot.press("left")
        assert view.stage.name == "MemoryPlan"
        await pilot.press("right", "right", "right")   # past Execution, round to Source
        assert view.stage.name == "Source"


async def test_next_pane_and_bytecode_show_what_the_selection_became():
    app = demo_app(LIST, steps=5)    # in @length, at the recursive call
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        assert app.session.current_instruction().name == "Invoke"
        await pilot.press("e")
        assert view.origin == app.session.current_span()
        await pilot.press("o")          # out to the addition around the call
        assert view.stage.items[view.selected].label == "Call add"
        for _ in range(view.model.index_of("FuseOps")):
            await pilot.press("right")
        nxt = app.screen.query_one("#flow-next")
        marked = {r for marks in nxt.row_overlays.values() for *_, r in marks}
        assert "exact" in marked
        bytecode = app.screen.query_one("#flow-bytecode")
        assert bytecode.border_title.startswith("bytecode: 6 instructions")
        follow = app.screen.query_one("#flow-follow").text()
        assert "FuseOps" in follow and "Call primitive fn" in follow


async def test_stepping_follows_execution_back_to_the_source():
    app = demo_app(LIST)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        s = app.session
        while s.current_instruction().name != "InvokePacked":
            await pilot.press("s")
        assert view.origin == s.current_span()
        label = view.stage.items[view.selected]
        assert view.stage.lines[label.region[0]][label.region[1]:label.region[3]] == \
            "1 + @length(%rest)"
        gutter = app.screen.query_one("#flow-bytecode").row_gutter
        assert sum(1 for g in gutter if g and g[0][0] == "▶") == 1
        before = s.step_count
        await pilot.press("S")
        assert s.step_count == before - 1


async def test_keys_move_through_lines_and_expressions():
    app = demo_app(LIST, args=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        assert "not started" in app.screen.query_one("#flow-follow").text() or view.selected == 0
        first = view.selected
        await pilot.press("down")
        line1 = view.stage.items[view.selected].region[0]
        await pilot.press("down")
        assert view.stage.items[view.selected].region[0] > line1
        await pilot.press("full_stop")
        await pilot.press("comma")
        await pilot.press("up", "up", "up", "up")
        assert view.selected == first


async def test_clicking_the_next_stage_moves_to_it():
    app = demo_app(LIST)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        nxt = app.screen.query_one("#flow-next")
        await pilot.click(nxt, offset=(6, 3))
        assert view.stage.name == "AST"
        assert view.selected is not None


async def test_ascii_mode_draws_no_unicode_symbols():
    app = demo_app(LIST, ascii_only=True, steps=3)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        strip = str(app.screen.query_one("#flow-stages").render())
        assert "->" in strip and "→" not in strip
        gutter = app.screen.query_one("#flow-bytecode").row_gutter
        assert any(g and g[0][0] == ">" for g in gutter)
