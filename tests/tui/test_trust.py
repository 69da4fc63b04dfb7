"""Regression tests for the screen defects of issue 12 ("a screen a user can trust"), each
reproduced as it was reported: the source pane follows the pc into the prelude, every stop
scrolls the pc into view, `e` appends to the condition, change marks only for what the last
motion wrote, keys in one burst all handled in order."""
from __future__ import annotations

from textual import events

from rvmdbg.tui.breakpoints import BreakpointPane
from rvmdbg.tui.command_line import CommandLine
from rvmdbg.tui.registers import RegisterPane

from conftest import press, screen_of, settle, wait_for


async def command(app, pilot, line: str) -> None:
    await pilot.press("colon")
    screen_of(app).query_one("#command", CommandLine).value = line
    await pilot.press("enter")
    await settle(app, pilot)
    await press(app, pilot, "escape")


def pc_row_visible(pane, index: int) -> bool:
    top = pane.scroll_offset.y
    return top <= index < top + pane.scrollable_content_region.height


# 4. the source pane follows the pc into any file (the prelude) and says which
async def test_the_source_pane_follows_the_pc_into_the_prelude(app_factory):
    app = app_factory("programs/quicksort.relay")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await command(app, pilot, "break @filter")
        await press(app, pilot, "c", *["s"] * 8)
        screen = screen_of(app)
        source = screen.source
        span = app.program.exe.span_at(*app.session.location())
        assert span.file.endswith("prelude.relay")
        assert source.file == span.file and source.current == span.line
        assert "prelude.relay" in source.border_title
        assert pc_row_visible(source, span.line - 1)
        assert source.breakpoint_lines == {}  # the program's line marks are not the prelude's
        # back in the program's own function: its own file again
        await command(app, pilot, "goto 0")
        assert source.shows_program and "quicksort.relay" in source.border_title


# 5. every stop scrolls the pc into view, also the first stop in another function
async def test_the_first_stop_in_another_function_shows_the_pc(app_factory):
    app = app_factory("programs/bst.relay")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await command(app, pilot, "break @insert:30")
        await press(app, pilot, "c")
        listing = screen_of(app).listing
        assert app.session.location()[1] == 30 and listing.pc == 30
        await wait_for(pilot, lambda: pc_row_visible(listing, 30), "the pc row in view")


# 6. `e` on a breakpoint: the cursor after `condition N `, typing adds to it
async def test_e_puts_the_cursor_after_the_prefilled_condition(app_factory):
    app = app_factory("programs/sum_up.relay", ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        app.session.breakpoints.add("@sum_up:15")
        screen.refresh_breakpoints()
        screen.action_focus_pane("breakpoints")
        await press(app, pilot, "e")
        await press(app, pilot, *"$0", "space", *"==", "space", "1", "enter")
        assert [b.condition for b in app.session.breakpoints] == ["$0 == 1"]
        assert screen.query_one("#breakpoints", BreakpointPane).rows[0].condition == "$0 == 1"


# 7. change marks: only the registers the last motion wrote, also after a replay
async def test_only_registers_the_last_motion_wrote_are_marked(app_factory):
    app = app_factory("programs/fib.relay")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        registers = screen_of(app).query_one("#registers", RegisterPane)
        await press(app, pilot, *["s"] * 7)
        assert app.session.step_count == 7 and registers.changed == {5}
        await press(app, pilot, "s", "s")
        assert registers.changed == {7}
        await press(app, pilot, "S")  # back to step 8: $7 is undone
        assert app.session.step_count == 8 and 2 not in registers.changed


# 12. keys arriving in one burst are all handled, in order
async def test_keys_in_one_burst_are_all_handled_in_order(app_factory):
    keys = ["s", "n", "n", "f", "S", "n"]
    app = app_factory("programs/sum_up.relay", ["4"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for key in keys:
            await press(app, pilot, key)
        one_by_one = app.session.step_count
    app = app_factory("programs/sum_up.relay", ["4"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        for key in keys:  # posted together, as a paste or a slow link delivers them
            app.post_message(events.Key(key, key))
        await wait_for(pilot, lambda: not screen.running and not screen._waiting
                       and app.session.step_count == one_by_one, "all six keys")
        await pilot.press("tab")
        first = app.focused.id
        app.post_message(events.Key("tab", None))
        app.post_message(events.Key("tab", None))
        await settle(app, pilot)
        ids = screen.pane_ids()
        assert app.focused.id == ids[(ids.index(first) + 2) % len(ids)]


# 17. messages on screen: help rows whole where there is room, the form's reason whole
async def test_help_rows_are_whole_when_there_is_room(app_factory):
    from rvmdbg.tui.help_screen import COMMANDS_HELP, HelpScreen
    app = app_factory("programs/fib.relay")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        import io
        from rich.console import Console
        width = app.screen.query_one("#help-keys").content_region.width
        console = Console(width=width, file=io.StringIO(), record=True)
        console.print(app.screen._table())
        rows = console.export_text().splitlines()
        for syntax, does in COMMANDS_HELP:
            assert any(syntax in row and row.rstrip().endswith(does) for row in rows)


async def test_the_arguments_form_shows_the_whole_reason(app_factory):
    from rvmdbg.tui.args_modal import ArgumentsModal
    app = app_factory("programs/sum_up.relay", ["Cons(1, Nil)"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsModal), "the form")
        error = app.screen.query_one("#args-error")
        await wait_for(pilot, lambda: str(error.render()).strip(), "the reason")
        reason = str(error.render())
        assert len(reason) > error.size.width  # it needs more than one line, and gets them
        assert error.size.height >= -(-len(reason) // error.size.width)
