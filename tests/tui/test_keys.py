"""Every key of the screen, pressed through Textual's Pilot, does what the help says."""
from __future__ import annotations

import pytest

from rvmdbg.tui.breakpoints import BreakpointPane
from rvmdbg.tui.command_line import CommandLine
from rvmdbg.tui.command_output import CommandOutput
from rvmdbg.tui.goto_modal import GotoStepModal
from rvmdbg.tui.heap import HeapTree
from rvmdbg.tui.help_screen import HelpScreen
from rvmdbg.tui.listing import BytecodeListing
from rvmdbg.tui.registers import RegisterPane
from rvmdbg.tui.screen import DebuggerScreen
from rvmdbg.tui.search_bar import SearchBar
from rvmdbg.tui.source_view import SourceView
from rvmdbg.tui.stack import CallStackPane

from conftest import press, screen_of, settle

SUM_UP = "programs/sum_up.relay"


async def focus(app, pilot, pane_id):
    """Focus a pane the way a tab click does (digits open the teaching views now)."""
    screen_of(app).action_focus_pane(pane_id)
    await settle(app, pilot)


# ---------------------------------------------------------------- moving execution

@pytest.mark.parametrize("keys, steps", [
    (["s"], 1), (["f11"], 1), (["s", "s", "s", "S"], 2),
])
async def test_step_keys(app_factory, keys, steps):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, *keys)
        assert app.session.step_count == steps


@pytest.mark.parametrize("key", ["n", "f10"])
async def test_next_steps_over_a_call(app_factory, key):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, key)        # over @main's invoke of @sum_up: to its ret
        assert app.session.location() == (1, 1)
        assert app.session.step_count > 10
        assert len(app.session.frames()) == 1


async def test_next_over_a_plain_instruction_is_one_step_at_once(app_factory):
    """`n` on an instruction that is not a call steps it without the worker thread: the
    screen shows the stop before the action returns (a call still goes to the worker)."""
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s")                     # into @sum_up: pc 0, not a call
        screen = screen_of(app)
        assert not app.session.current_instruction().is_call
        before = app.session.step_count
        screen.action_next()
        assert not screen.running and app.session.step_count == before + 1
        while not app.session.current_instruction().is_call:
            await press(app, pilot, "n")
        depth, (fi, pc) = len(app.session.frames()), app.session.location()
        screen.action_next()                             # a call: run by the worker
        assert screen.running
        await settle(app, pilot)
        assert not screen.running
        assert len(app.session.frames()) == depth and app.session.location() == (fi, pc + 1)


@pytest.mark.parametrize("key", ["f", "shift+f11"])
async def test_finish_returns_to_the_caller(app_factory, key):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s", key)
        assert app.session.location() == (1, 1)
        assert len(app.session.frames()) == 1


@pytest.mark.parametrize("key, back", [("c", "C"), ("f5", "shift+f5")])
async def test_continue_and_reverse_continue(app_factory, key, back):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.session.breakpoints.add("@sum_up:15")
        await press(app, pilot, key)
        assert app.session.location() == (0, 15)
        first = app.session.step_count
        await press(app, pilot, key)
        assert app.session.step_count > first
        await press(app, pilot, back)
        assert app.session.step_count == first


async def test_reverse_next_and_reverse_finish(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "n")
        assert app.session.location() == (1, 1)
        await press(app, pilot, "N")
        assert app.session.step_count == 0
        await press(app, pilot, "s", "s", "s", "F")
        assert app.session.step_count == 0 and app.session.location() == (1, 0)


async def test_reverse_at_the_start_says_so_and_stays(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "S")
        assert app.session.step_count == 0
        assert "start of history" in screen_of(app).status.stop_text


async def test_goto_step_dialog(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GotoStepModal)
        await pilot.press("backspace", "x", "enter")   # empty (x is refused): stays open
        await pilot.pause()
        assert isinstance(app.screen, GotoStepModal)
        assert "not a step number" in str(app.screen.query_one("#goto-error").render())
        await pilot.press("2", "5", "enter")
        await settle(app, pilot)
        assert app.session.step_count == 25
        await pilot.press("g", "backspace", "7", "enter")
        await settle(app, pilot)
        assert app.session.step_count == 7
        await pilot.press("g", "escape")
        await settle(app, pilot)
        assert app.session.step_count == 7 and isinstance(app.screen, DebuggerScreen)


async def test_run_to_cursor_in_the_source_and_the_listing(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        # source line 9 (`%n + @sum_up(%n - 1)`) starts at pc 10 (computing `%n - 1`)
        await focus(app, pilot, "source")
        source = screen.query_one("#source", SourceView)
        assert app.focused is source
        source.set_cursor(8)
        await press(app, pilot, "t")
        assert app.session.location() == (0, 10)
        # pc 9 (the `goto` after `0`) runs only once the recursion reaches n = 0
        listing = screen.query_one("#listing", BytecodeListing)
        await focus(app, pilot, "listing")
        await press(app, pilot, "home", *["down"] * 9, "t")
        assert app.session.location() == (0, 9)
        assert len(app.session.frames()) == 5


# ---------------------------------------------------------------- breakpoints and watches

async def test_b_toggles_in_the_listing_and_the_source(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await focus(app, pilot, "listing")
        await press(app, pilot, "b")
        assert [b.spec for b in app.session.breakpoints] == ["@main:0"]
        await press(app, pilot, "b")
        assert list(app.session.breakpoints) == []
        await focus(app, pilot, "source")
        source = screen.query_one("#source", SourceView)
        source.set_cursor(8)     # line 9
        await press(app, pilot, "b")
        assert [b.line for b in app.session.breakpoints] == [9]
        assert source.breakpoint_lines == {9: "on"}
        await press(app, pilot, "c")
        assert app.session.location() == (0, 10)
        assert source.current == 9


async def test_breakpoint_pane_toggle_and_delete(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        app.session.breakpoints.add("@sum_up:15")
        app.session.breakpoints.add("@sum_up:26")
        screen.refresh_breakpoints()
        pane = screen.query_one("#breakpoints", BreakpointPane)
        await focus(app, pilot, "breakpoints")
        assert app.focused is pane and len(pane.rows) == 2
        await press(app, pilot, "space")
        assert [b.enabled for b in app.session.breakpoints] == [False, True]
        assert pane.rows[0].enabled is False
        await press(app, pilot, "enter")
        listing = screen.query_one("#listing", BytecodeListing)
        assert app.focused is listing and listing.listing.name == "sum_up" and listing.cursor == 15
        await focus(app, pilot, "breakpoints")
        await press(app, pilot, "down", "x")
        assert [b.spec for b in app.session.breakpoints] == ["@sum_up:15"]


async def test_breakpoint_pane_e_edits_the_condition(app_factory, tmp_path):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        app.session.breakpoints.add("@sum_up:15")
        screen.refresh_breakpoints()
        pane = screen.query_one("#breakpoints", BreakpointPane)
        await focus(app, pilot, "breakpoints")
        await press(app, pilot, "e")
        box = screen.query_one("#command", CommandLine)
        assert app.focused is box and box.value == "condition 1 "
        box.insert_text_at_cursor("$0 == 1")
        await pilot.press("enter")
        await settle(app, pilot)
        assert [b.condition for b in app.session.breakpoints] == ["$0 == 1"]
        assert pane.rows[0].condition == "$0 == 1"
        assert "stops if $0 == 1" in "\n".join(screen.query_one("#output", CommandOutput).lines)
        # the condition holds only in the last call (n = 1): continue stops there
        await press(app, pilot, "escape", "c")
        assert app.session.location() == (0, 15)
        assert int(app.session.frame().registers[0]) == 1
        # editing again starts from the condition; a bad one is refused and changes nothing
        await focus(app, pilot, "breakpoints")
        await press(app, pilot, "e")
        assert box.value == "condition 1 $0 == 1"
        box.insert_text_at_cursor(" ==")
        await pilot.press("enter")
        await settle(app, pilot)
        assert [b.condition for b in app.session.breakpoints] == ["$0 == 1"]
        assert "error" in "\n".join(screen.query_one("#output", CommandOutput).lines)
        # emptied: unconditional again
        await focus(app, pilot, "breakpoints")
        await press(app, pilot, "e")
        box.value = "condition 1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert [b.condition for b in app.session.breakpoints] == [None]


async def test_w_watches_the_register_under_the_cursor(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await press(app, pilot, "s")
        await focus(app, pilot, "registers")
        registers = screen.query_one("#registers", RegisterPane)
        assert app.focused is registers and registers.cursor_register() == 0
        await press(app, pilot, "w")
        assert [w.register for w in app.session.watches] == [0]
        rows = screen.query_one("#breakpoints", BreakpointPane).rows
        assert rows[0].kind == "watch"
        # in the listing, w watches what the instruction under the cursor writes
        await focus(app, pilot, "listing")
        await press(app, pilot, "down", "w")
        assert [w.register for w in app.session.watches] == [0, 2]


# ---------------------------------------------------------------- frames

async def test_u_and_d_move_along_the_stack(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        app.session.breakpoints.add("@sum_up:15")
        await press(app, pilot, "c", "s")      # three frames: main, sum_up(3), sum_up(2)
        assert len(screen.frames) == 3 and screen.selected_depth == 2
        registers = screen.query_one("#registers", RegisterPane)
        listing = screen.query_one("#listing", BytecodeListing)
        assert int(registers.registers[0]) == 2
        await press(app, pilot, "u")
        assert screen.selected_depth == 1 and int(registers.registers[0]) == 3
        assert listing.pc == 15 and listing.pc_kind == "caller"
        await press(app, pilot, "u")
        assert screen.selected_depth == 0 and listing.listing.name == "main"
        await press(app, pilot, "u")
        assert screen.selected_depth == 0
        assert "outermost" in screen.status.message
        await press(app, pilot, "d", "d")
        assert screen.selected_depth == 2 and listing.pc_kind == "top"
        # Enter in the stack pane selects the frame under the cursor
        stack = screen.query_one("#stack", CallStackPane)
        await focus(app, pilot, "stack")
        await press(app, pilot, "down", "down", "enter")
        assert app.focused is stack and screen.selected_depth == 0


# ---------------------------------------------------------------- command line, search, help

async def test_command_line_runs_commands(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await pilot.press("colon")
        box = screen.query_one("#command", CommandLine)
        assert app.focused is box and box.has_class("-shown")
        for text in ("break @sum_up:15", "continue", "info breakpoints"):
            await pilot.press(*text)
            await pilot.press("enter")
            await settle(app, pilot)
        assert app.session.location() == (0, 15)
        output = screen.query_one("#output", CommandOutput)
        text = "\n".join(output.lines)
        assert "(rvmdbg) break @sum_up:15" in text and "(rvmdbg) info breakpoints" in text
        assert screen.query_one("#breakpoints", BreakpointPane).rows[0].where == "@sum_up:15"
        # history: up brings back the last line
        await pilot.press("up")
        assert box.value == "info breakpoints"
        await pilot.press("escape")
        await pilot.pause()
        assert not box.has_class("-shown")
        await press(app, pilot, "o")
        assert not output.has_class("-shown")


async def test_search_in_the_focused_pane(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await press(app, pilot, "s")
        await focus(app, pilot, "listing")
        await press(app, pilot, "slash")
        bar = screen.query_one("#search", SearchBar)
        assert app.focused is bar and bar.has_class("-shown")
        await pilot.press(*"goto", "enter")
        await pilot.pause()
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.texts[listing.cursor].startswith("goto")
        await pilot.press(*"zzz", "enter")
        await pilot.pause()
        assert "no match" in screen.status.message
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is listing and not bar.has_class("-shown")


async def test_help_lists_every_key(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = {k for k, _ in app.screen.rows()}
        for key in ("s, F11", "S", "n, F10", "N", "f, Shift+F11", "F", "c, F5", "C, Shift+F5",
                    "g", "u", "d", "b", "w", "t", "i", ":", "/", "?", "q", "Tab", "Shift+Tab",
                    "Esc", "Ctrl+C", "Ctrl+R", "o", "1", "2", "3", "v", "[", "]", ".", "Space",
                    "x, Delete", "Enter", "Up", "PgDn", "Home", "Left"):
            assert key in keys, key
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen)


async def test_q_quits(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app._exit


# ---------------------------------------------------------------- focus and panes

async def test_tab_reaches_every_pane(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        seen = []
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
            seen.append(app.focused.id)
        assert sorted(seen) == ["breakpoints", "heap", "listing", "registers", "source", "stack"]
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.focused.id == seen[-2]


async def test_tab_reaches_every_pane_in_narrow_mode_and_switches_tabs(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert screen.has_class("-narrow")
        # the tab bars name the panes without digits: 1-3 open the teaching views
        for tabs_id in ("#code-tabs", "#state-tabs"):
            label = screen.query_one(tabs_id).render().plain
            assert not any(ch.isdigit() for ch in label), label
        assert app.focused.id == "listing"
        for pane_id in ("registers", "stack", "heap", "breakpoints", "source", "listing"):
            await press(app, pilot, "tab")
            pane = screen.query_one(f"#{pane_id}")
            assert app.focused is pane
            assert pane.display and not pane.has_class("-tab-hidden")
        # in a column only the chosen pane shows
        assert screen.query_one("#registers").has_class("-tab-hidden")
        assert not screen.query_one("#breakpoints").has_class("-tab-hidden")
        assert screen.query_one("#source").has_class("-tab-hidden")
        await press(app, pilot, "shift+tab")
        assert app.focused.id == "source" and not screen.query_one("#source").has_class("-tab-hidden")


async def test_listing_function_keys(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        listing = screen.query_one("#listing", BytecodeListing)
        await focus(app, pilot, "listing")
        await press(app, pilot, "left_square_bracket")
        assert listing.listing.name == "sum_up" and listing.pc is None
        await press(app, pilot, "right_square_bracket")
        assert listing.listing.name == "main" and listing.pc == 0
        await press(app, pilot, "left_square_bracket", "full_stop")
        assert listing.listing.name == "main" and listing.cursor == 0


async def test_i_shows_the_type_at_the_cursor(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        source = screen.query_one("#source", SourceView)
        await focus(app, pilot, "source")
        source.set_cursor(4)             # line 5: def @sum_up(%n: int32) -> int32 {
        await press(app, pilot, *["right"] * 13, "i")   # on %n
        assert screen.status.message.endswith("%n : int32")
        assert source.typed is not None and source.typed[0] == 5


async def test_enter_on_a_register_prints_it(app_factory):
    app = app_factory("programs/bst.relay")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await focus(app, pilot, "registers")
        await press(app, pilot, "enter")
        output = screen.query_one("#output", CommandOutput)
        assert output.has_class("-shown")
        assert any(line.startswith("$0 = Cons(5, Cons(3,") for line in output.lines)


async def test_restart_keeps_breakpoints(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.session.breakpoints.add("@sum_up:15")
        await press(app, pilot, "c", "s", "s")
        assert app.session.step_count > 10
        await press(app, pilot, "ctrl+r")
        assert app.session.step_count == 0
        assert len(list(app.session.breakpoints)) == 1


async def test_heap_pane_expands_lazily(app_factory):
    app = app_factory("programs/bst.relay")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await focus(app, pilot, "heap")
        heap = screen.query_one("#heap", HeapTree)
        assert app.focused is heap
        roots = heap.root.children
        assert roots and roots[0].label.plain.startswith("$0 Cons tag ")
        assert len(roots[0].children) == 0         # not expanded yet
        await press(app, pilot, "space")           # expand $0
        assert [c.label.plain.split()[0] for c in roots[0].children] == ["[0]", "[1]"]
        assert len(roots[0].children[1].children) == 0
