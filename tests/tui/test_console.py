"""The console (issue 12): a scrollback of the whole session under the panes, with the
command line; focus, scrolling and resizing, the pager, history and reverse search, Tab
completion, displays, `list @f`, search across every function, copying a pane, logging,
and the footer showing the focused pane's own keys. Every new key and command is pressed
here through Textual's Pilot."""
from __future__ import annotations

import pytest

from rvmdbg.tui.command_output import CommandOutput

from conftest import press, screen_of, settle, wait_for

FIB = "programs/fib.relay"


async def type_command(app, pilot, line: str, enter: bool = True) -> None:
    await press(app, pilot, "colon", *[_key(c) for c in line])
    if enter:
        await press(app, pilot, "enter")


def _key(c: str) -> str:
    return {" ": "space", "$": "dollar_sign", "@": "at", ":": "colon", "/": "slash",
            "+": "plus", "-": "minus", ".": "full_stop", "=": "equals_sign",
            "_": "underscore"}.get(c, c)


def console_text(app) -> list[str]:
    return list(screen_of(app).console.output.lines)


async def test_the_console_keeps_the_whole_session_from_the_first_stop(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert not screen.console.shown  # it opens when asked, with everything so far
        await press(app, pilot, "s", "s", "n")
        await type_command(app, pilot, "info frame")
        lines = console_text(app)
        assert lines[0].startswith("(start) [step 0] @main pc=0")
        assert [line.split("]")[0] for line in lines[1:4]] == [
            "(step) [step 1", "(step) [step 2", "(next) [step 3"]
        assert "(rvmdbg) info frame" in lines and screen.console.shown
        # o hides and shows it again
        await press(app, pilot, "escape", "o")
        assert not screen.console.shown
        await press(app, pilot, "o")
        assert screen.console.shown


async def test_the_console_can_be_focused_scrolled_and_resized(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await type_command(app, pilot, "help")
        await press(app, pilot, "escape")
        output = screen.console.output
        # Tab reaches the console once it is shown
        for _ in range(len(screen.pane_ids())):
            if app.focused is output:
                break
            await press(app, pilot, "tab")
        assert app.focused is output
        height = output.size.height
        await press(app, pilot, "plus", "plus")
        assert output.size.height == height + 4
        await press(app, pilot, "minus")
        assert output.size.height == height + 2
        await press(app, pilot, "home")
        assert output.scroll_offset.y == 0
        await press(app, pilot, "end")
        assert output.scroll_offset.y == output.max_scroll_y > 0


async def test_long_output_is_paged_from_its_first_line(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s")
        output = screen_of(app).console.output
        await type_command(app, pilot, "info registers")
        top = output.scroll_offset.y
        assert output.lines[top] == "(rvmdbg) info registers"
        assert "more lines" in str(output.border_subtitle)
        await press(app, pilot, "escape")
        screen_of(app).action_focus_pane("output")
        await press(app, pilot, "end")
        assert not output.border_subtitle


async def test_history_and_reverse_search(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        box = screen_of(app).console.command_line
        for line in ("info frame", "deps", "info registers"):
            await type_command(app, pilot, line)
            await press(app, pilot, "escape")
        await press(app, pilot, "colon", "up")
        assert box.value == "info registers"
        await press(app, pilot, "up", "up")
        assert box.value == "info frame"
        await press(app, pilot, "down")
        assert box.value == "deps"
        box.value = ""
        await press(app, pilot, "i", "ctrl+r")
        assert box.value == "info registers"
        assert "reverse-i-search" in screen_of(app).status.message
        await press(app, pilot, "ctrl+r")
        assert box.value == "info frame"
        await press(app, pilot, "ctrl+r")
        assert "failing" in screen_of(app).status.message and box.value == "info frame"
        await press(app, pilot, "enter")
        assert console_text(app)[-1].startswith("  source:") or "(rvmdbg) info frame" in console_text(app)
        assert app.session.step_count == 0  # Ctrl+R here searched: it did not restart


async def test_tab_completes_commands_functions_and_registers(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        box = screen_of(app).console.command_line
        await press(app, pilot, "colon", *"brea", "tab")
        assert box.value == "break "
        await press(app, pilot, "at", "f", "tab")
        assert box.value == "break @fib "
        box.value = ""
        await press(app, pilot, "p", "space", "dollar_sign", "tab")
        assert box.value == "p $"  # $0 and $1 of @main: both shown in the console
        assert console_text(app)[-1] == "$0  $1"
        box.value = "d"
        box.cursor_position = 1
        await press(app, pilot, "tab")
        assert console_text(app)[-1] == "delete  deps  disable  display  down"


async def test_display_is_shown_at_every_stop_the_keys_make(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s")
        await type_command(app, pilot, "display $0")
        await press(app, pilot, "escape", "s", "s")
        lines = console_text(app)
        assert lines[-4:] == [lines[-4], "1: $0 = 10", lines[-2], "1: $0 = 10"]
        assert lines[-2].startswith("(step) [step 3]")
        await type_command(app, pilot, "undisplay 1")
        await press(app, pilot, "escape", "s")
        assert console_text(app)[-1].startswith("(step) [step 4]")


async def test_list_at_a_function_jumps_the_listing_there(app_factory):
    app = app_factory("programs/bst.relay")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = screen_of(app).listing
        exe = app.program.exe
        await type_command(app, pilot, "list @insert:12")
        assert listing.func_index == exe.func_index("insert") and listing.cursor == 12
        # @ in the listing opens the command line on `list @`, Tab completes the name
        await press(app, pilot, "escape")
        screen_of(app).action_focus_pane("listing")
        await press(app, pilot, "at")
        box = screen_of(app).console.command_line
        assert app.focused is box and box.value == "list @"
        await press(app, pilot, *"in_", "tab", "enter")
        assert listing.func_index == exe.func_index("in_order")


async def test_search_goes_through_every_function_with_a_count(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        listing = screen.listing
        screen.action_focus_pane("listing")
        await press(app, pilot, "slash", *"invoke", "enter")
        assert "match 1 of 7 in 2 functions" in screen.status.message
        first = (listing.func_index, listing.cursor)
        await press(app, pilot, "down")
        assert "match 2 of 7" in screen.status.message
        await press(app, pilot, "up")
        assert (listing.func_index, listing.cursor) == first
        await press(app, pilot, "up")  # before the first: the last, in @main
        assert "match 7 of 7" in screen.status.message
        assert listing.func_index == app.program.exe.func_index("main")


async def test_Y_copies_the_focused_pane(app_factory):
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        screen.action_focus_pane("listing")
        await press(app, pilot, "Y")
        fn = app.program.exe.functions[screen.listing.func_index]
        assert app.clipboard.count("\n") + 1 == len(fn.instructions)
        assert "copied" in screen.status.message and "OSC 52" in screen.status.message
        await press(app, pilot, "s", "o")
        screen.action_focus_pane("output")
        await press(app, pilot, "Y")
        assert app.clipboard == "\n".join(screen.console.output.lines)


async def test_set_logging_writes_what_the_console_shows(app_factory, tmp_path):
    log = tmp_path / "screen.log"
    app = app_factory(FIB)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen_of(app).console.command_line.value = ""
        await press(app, pilot, "colon")
        screen_of(app).console.command_line.value = f"set logging {log}"
        await press(app, pilot, "enter", "escape", "s", "n")
        text = log.read_text()
        assert f"(rvmdbg) set logging {log}" in text
        assert "(step) [step 1]" in text and "(next) [step 2]" in text


@pytest.mark.parametrize("pane, keys", [
    ("output", {"plus", "minus", "Y"}),
    ("registers", {"w", "enter"}),
    ("breakpoints", {"space", "x,delete", "enter", "e"}),
])
async def test_the_footer_shows_the_focused_panes_own_keys(app_factory, pane, keys):
    app = app_factory(FIB)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        screen.console.show()
        screen.action_focus_pane(pane)
        await settle(app, pilot)
        shown = {key for key, b in app.active_bindings.items() if b.binding.show
                 and b.node is app.focused}
        own = {key for b in type(app.focused).BINDINGS if b.show for key in b.key.split(",")}
        assert {k.split(",")[0] for k in keys} <= own <= shown
        # and they come first, before the screen's
        order = [b.node for b in app.active_bindings.values() if b.binding.show]
        assert order[0] is app.focused
