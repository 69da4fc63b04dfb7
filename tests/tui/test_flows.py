"""The debugger screen driven by keys through Textual's Pilot: the main flows of issue #5.

Set a breakpoint with `b`, continue to it, step in, finish, reverse step back across a call,
reverse continue, interrupt a long run, stop at a failing instruction.
"""
from __future__ import annotations

from rvmdbg.tui.breakpoints import BreakpointPane
from rvmdbg.tui.listing import BytecodeListing
from rvmdbg.tui.registers import RegisterPane
from rvmdbg.tui.stack import CallStackPane

from conftest import press, screen_of, settle, wait_for

SUM_UP = "programs/sum_up.relay"
SPIN = "tests/tui/programs/spin.relay"   # runs for minutes unless interrupted
RECURSIVE_CALL = 15   # @sum_up pc 15: invoke $12 VMFunc[0]($11)


async def test_start_shows_the_entry_and_its_first_instruction(app_factory):
    app = app_factory(SUM_UP)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert app.session is not None
        assert screen.status.stop_text.startswith("[step 0] @main pc=0: invoke $1 VMFunc[0]($0)")
        assert "step 0 of 0" in screen.status.history_text
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.name == "main" and listing.pc == 0
        registers = screen.query_one("#registers", RegisterPane)
        assert registers.rows == [0] and int(registers.registers[0]) == 100


async def test_breakpoint_continue_step_in_finish_and_back(app_factory):
    app = app_factory(SUM_UP)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        session = app.session
        listing = screen.query_one("#listing", BytecodeListing)

        # step into @sum_up, put the cursor on the recursive call and set a breakpoint
        await press(app, pilot, "s")
        assert listing.listing.name == "sum_up" and listing.pc == 0
        listing.focus()
        await press(app, pilot, *["down"] * RECURSIVE_CALL)
        assert listing.cursor == RECURSIVE_CALL
        await press(app, pilot, "b")
        bps = list(session.breakpoints)
        assert [b.locations for b in bps] == [frozenset({(0, RECURSIVE_CALL)})]
        assert listing.breakpoints == {RECURSIVE_CALL: "on"}
        rows = screen.query_one("#breakpoints", BreakpointPane).rows
        assert [(r.number, r.where) for r in rows] == [(1, "@sum_up:15")]

        # continue to it
        await press(app, pilot, "c")
        assert session.location() == (0, RECURSIVE_CALL)
        assert screen.status.stop_text.endswith("(breakpoint 1)")
        first_hit = session.step_count
        depth = len(session.frames())
        assert depth == 2

        # step in: a new frame of @sum_up at pc 0
        await press(app, pilot, "s")
        assert len(session.frames()) == depth + 1 and session.location() == (0, 0)
        stack = screen.query_one("#stack", CallStackPane)
        assert len(stack.frames) == depth + 1

        # disable the breakpoint from its pane, then finish: back in the caller after the call
        screen.action_focus_pane("breakpoints")
        await press(app, pilot, "space")
        assert not list(session.breakpoints)[0].enabled
        await press(app, pilot, "f")
        assert len(session.frames()) == depth
        assert session.location() == (0, RECURSIVE_CALL + 1)
        assert listing.pc == RECURSIVE_CALL + 1

        # reverse step goes back into the callee (its ret), reverse finish back to the call
        await press(app, pilot, "S")
        assert len(session.frames()) == depth + 1
        assert type(session.current_instruction()).__name__ == "Ret"
        await press(app, pilot, "F")
        assert len(session.frames()) == depth
        assert session.location() == (0, RECURSIVE_CALL)

        # forward again over the call with next, and reverse next back across it
        await press(app, pilot, "n")
        assert session.location() == (0, RECURSIVE_CALL + 1) and len(session.frames()) == depth
        await press(app, pilot, "N")
        assert session.location() == (0, RECURSIVE_CALL) and len(session.frames()) == depth

        # re-enable, run on to a later hit, then reverse continue comes back to the first one
        await press(app, pilot, "space", "c", "c")
        assert session.step_count > first_hit
        await press(app, pilot, "C")
        assert screen.status.stop_text.endswith("(breakpoint 1)")
        await press(app, pilot, "C")
        assert session.step_count == first_hit
        assert screen.status.stop_text.endswith("(breakpoint 1)")


async def test_interrupt_a_long_run_with_escape(app_factory):
    app = app_factory(SPIN)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await pilot.press("c")
        await wait_for(pilot, lambda: app.session.step_count > 1000, "the run to get going")
        assert screen.running
        assert "Esc or Ctrl+C interrupts" in screen.status.running_text
        await pilot.press("escape")
        await settle(app, pilot)
        assert not screen.running
        assert screen.status.stop_text.endswith("(interrupted)")
        assert app.session.step_count > 1000
        # the screen is live again: a step works
        before = app.session.step_count
        await press(app, pilot, "s")
        assert app.session.step_count == before + 1


async def test_ctrl_c_interrupts_too(app_factory):
    app = app_factory(SPIN)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.session.step_count > 1000, "the run to get going")
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        assert not screen.running
        assert screen.status.stop_text.endswith("(interrupted)")


async def test_progress_is_shown_while_running(app_factory):
    app = app_factory(SPIN)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await pilot.press("c")
        await wait_for(pilot, lambda: "steps/s" in screen.status.running_text, "progress")
        await pilot.press("escape")
        await settle(app, pilot)


async def test_a_failing_program_stops_at_the_failing_instruction(app_factory):
    app = app_factory("tests/tui/programs/empty_head.relay")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "c")
        screen = screen_of(app)
        session = app.session
        assert session.error is not None
        assert screen.status.stop_kind == "error"
        assert "match? found no matching clause" in screen.status.message
        assert screen.status.stop_text.endswith("(error)")
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.name == "head"
        assert listing.pc_kind == "error" and "no matching clause" in listing.error_note
        assert listing.listing.texts[listing.pc] == "fatal"
        source = screen.source
        assert source.current_kind == "error" and source.current == 6
        # the screen stays usable: going back works
        await press(app, pilot, "S")
        assert session.error is None
        assert screen.status.stop_kind == "stop"


async def test_finishing_shows_the_result(app_factory):
    app = app_factory(SUM_UP, ["4"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "c")
        screen = screen_of(app)
        assert app.session.finished
        assert screen.status.stop_kind == "finished"
        assert "returned 10" in screen.status.stop_text
        assert "finished: result = 10" in screen.query_one("#registers", RegisterPane).message
        # and back from the end
        await press(app, pilot, "S")
        assert not app.session.finished
