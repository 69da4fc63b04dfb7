"""View 3 on screen: basic blocks with the path taken, the match decision tree, the heap."""
from __future__ import annotations

from views_support import demo_app, settle

from rvmdbg.tui.views.control_flow import ControlFlowScreen, ControlFlowView

LIST = "tests/examples/list_length.relay"
BST = "programs/bst.relay"


async def test_at_an_if_of_a_match():
    app = demo_app(LIST, "control", steps=3)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ControlFlowScreen)
        summary = str(app.screen.query_one("#cfg-summary").render())
        assert "@length" in summary and "pc 2: if $1 $2 1 11" in summary
        assert "goes true, to pc 3" in summary
        graph = app.screen.query_one("#cfg-graph")
        assert graph.row_text(graph.cursor_row).strip().endswith("2  if $1 $2 1 11")
        assert "B0  pc 0-2  entered 1x" in graph.text()
        match = app.screen.query_one("#cfg-match").text()
        assert "clause 1 (Cons(_, %rest)) matches" in match
        assert "bound: %rest = $3 = Cons(6, Cons(7, Nil))" in match
        heap = app.screen.query_one("#cfg-heap").text()
        assert "$0 → #0 Cons tag 0" in heap


async def test_the_path_and_frames():
    app = demo_app(BST, "control", steps=40)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(ControlFlowView)
        graph = app.screen.query_one("#cfg-graph")
        roles = {role for row in graph.rows for _, role in row}
        assert "taken" in roles and "visited" in roles
        depth = app.session.depth()
        await pilot.press("u")
        assert view.depth == depth - 1
        summary = str(app.screen.query_one("#cfg-summary").render())
        assert "waiting on the call at this pc" in summary
        await pilot.press("d", "d")
        assert view.depth == depth
        await pilot.press("s")                  # stepping returns to the innermost frame
        assert view.depth is None


async def test_not_in_a_match_shows_the_next_one():
    app = demo_app(LIST, "control", steps=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        match = app.screen.query_one("#cfg-match").text()
        assert "this function has no match" in match      # @main
        await pilot.press("s")
        match = app.screen.query_one("#cfg-match").text()
        assert "match at tests/examples/list_length.relay:9:3" in match


async def test_finished_program():
    app = demo_app(LIST, "control")
    app.session.cont()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert "finished" in str(app.screen.query_one("#cfg-summary").render())


async def test_tab_moves_between_panes():
    app = demo_app(LIST, "control", steps=3)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.focused.id == "cfg-graph"
        await pilot.press("tab")
        assert app.focused.id == "cfg-match"
