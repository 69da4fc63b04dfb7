"""The VM's ideas on the debugger screen, pressed through Pilot: swap? (`m` marks an
instruction, the cursor names another), the registers in TVM's numbering or reused (`r`), and
the fetch-decode-execute strip (`p`, then `s` one phase at a time), with snapshots of each."""
from __future__ import annotations

import pytest

from rvmdbg.tui.help_screen import HelpScreen

from conftest import make_app, press, screen_of, set_scene, settle

SUM_UP = "programs/sum_up.relay"


async def _at_sum_up(app, pilot):
    """Stepped into @sum_up (pc 0), the listing focused."""
    await settle(app, pilot)
    await press(app, pilot, "s")
    screen_of(app).listing.focus()
    await settle(app, pilot)


# ---------------------------------------------------------------- swap?

async def test_m_marks_and_the_cursor_gets_a_verdict(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await _at_sum_up(app, pilot)
        scr = screen_of(app)
        listing = scr.listing
        await press(app, pilot, "down", "down", "m")          # mark pc 2
        assert listing.swap_mark == 2 and listing.swap is None
        assert "pc 2 marked" in scr.status.message
        await press(app, pilot, "down")                       # pc 3 reads $3 which pc 2 writes
        v = listing.swap
        assert v is not None and not v.ok
        assert ("RAW", 3) in {(r.kind, r.register) for r in v.reasons}
        assert "may not: read after write of $3" in scr.status.message
        # the forbidding dependence is drawn: an arrow from pc 2 to pc 3, noted on pc 3
        assert listing._swap_layout is not None
        assert any(e.src == 2 and e.dst == 3 for e in listing._swap_layout.edges)
        assert any("RAW $3" in n for n in listing._swap_notes[3])
        text = "".join(seg.text for seg in listing.render_full_line(3, "")[0])
        assert "RAW $3 from pc 2" in text


async def test_a_legal_swap_and_clearing_the_mark(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await _at_sum_up(app, pilot)
        scr = screen_of(app)
        listing = scr.listing
        listing.set_cursor(24)
        await press(app, pilot, "m", "down")                  # kill $4, kill $2: independent
        assert listing.swap.ok
        assert "may swap" in scr.status.message
        text = "".join(seg.text for seg in listing.render_full_line(25, "")[0])
        assert "may swap with pc 24" in text
        await press(app, pilot, "up", "m")                    # m on the mark clears it
        assert listing.swap_mark is None and listing.swap is None
        await press(app, pilot, "m", "escape")                # and so does Esc
        assert listing.swap_mark is None


async def test_swap_mark_is_rebindable_and_in_the_help(app_factory, tmp_path):
    keys = tmp_path / "keys.conf"
    keys.write_text("swap-mark = x\n")
    from rvmdbg.tui.keymap import load_keymap
    app = app_factory(SUM_UP, ["3"], keymap=load_keymap(keys))
    async with app.run_test(size=(140, 40)) as pilot:
        await _at_sum_up(app, pilot)
        await press(app, pilot, "x")
        assert screen_of(app).listing.swap_mark == 0
        await press(app, pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = dict(app.screen.rows())
        assert "swap?" in rows.get("x", "")


async def test_swap_command_on_the_command_line(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await _at_sum_up(app, pilot)
        scr = screen_of(app)
        scr.run_command("swap? 5 7")
        await settle(app, pilot)
        assert "pc 6 is a jump (if)" in scr.console.output.text()


def _swap_scene():
    async def run_before(pilot):
        app = pilot.app
        await _at_sum_up(app, pilot)
        await set_scene(app, pilot, (), ["down", "down", "m", "down", "down", "down", "down"])
    return run_before


def test_swap_snapshot(snap_compare, tmp_path):
    app = make_app(SUM_UP, ["3"], config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=(140, 40), run_before=_swap_scene())


# ---------------------------------------------------------------- fetch, decode, execute

def _strip(app, strip_id="cycle"):
    return app.screen.query_one(f"#{strip_id}")


async def test_p_shows_the_strip_and_s_turns_the_loop_one_phase_at_a_time(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await _at_sum_up(app, pilot)                          # @sum_up pc 0, step 1
        strip = _strip(app)
        assert not strip.display
        await press(app, pilot, "p")
        assert strip.display
        assert [state for _, _, state in strip.rows] == ["next", "later", "later"]
        await press(app, pilot, "s")                          # fetch: no step yet
        assert app.session.step_count == 1
        phase, text, state = strip.rows[0]
        assert state == "done" and "opcode 11, fields [0 0 1]" in text  # load_const $1 Const[0]
        assert "load_const $1 Const[0] 0" in text
        await press(app, pilot, "s")                          # decode: the dispatch table
        assert app.session.step_count == 1
        assert "HANDLERS[11] = _load_const (LoadConst) -> handler load_const" in strip.rows[1][1]
        assert strip.rows[2][2] == "next"
        await press(app, pilot, "s")                          # execute: the VM steps once
        assert app.session.step_count == 2
        assert app.session.location()[1] == 1
        assert "writes $1 = 1i64; next pc 1" in strip.rows[2][1]
        assert screen_of(app).listing.pc == 1                 # the panes followed the step
        for _ in range(3):                                    # alloc_storage reads $1
            await press(app, pilot, "s")
        assert "reads: $1 = 1i64" in strip.rows[1][1]
        assert "opcode 16" in strip.rows[0][1]
        await press(app, pilot, "p", "s")                     # hidden: s steps whole again
        assert app.session.step_count == 4


async def test_the_strip_names_jumps_calls_and_returns(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "p", "s", "s", "s")           # @main's invoke
        assert "call: a new frame for @sum_up" in _strip(app).rows[2][1]
        assert "writes @sum_up $0 = 3" in _strip(app).rows[2][1]
        for _ in range(7 * 3):                                # pcs 0..6: through the if
            await press(app, pilot, "s")
        assert "jump to pc 10" in _strip(app).rows[2][1]
        await press(app, pilot, "S")                          # another motion: a fresh start
        assert [state for _, _, state in _strip(app).rows] == ["next", "later", "later"]


async def test_the_strip_in_view_1(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "1")
        for _ in range(100):
            if app.screen.query("#flow-cycle"):
                break
            await pilot.pause()
        await press(app, pilot, "p", "s", "s")
        strip = _strip(app, "flow-cycle")
        assert strip.display and app.session.step_count == 0
        assert "HANDLERS[2] = _invoke (Invoke)" in strip.rows[1][1]
        await press(app, pilot, "s")
        assert app.session.step_count == 1
        assert "call: a new frame for @sum_up" in strip.rows[2][1]
        await press(app, pilot, "0")                          # the debugger followed
        assert screen_of(app).listing.pc == 0 and app.session.location()[0] == 0


def test_cycle_snapshot(snap_compare, tmp_path):
    app = make_app(SUM_UP, ["3"], config_dir=str(tmp_path / "config"))

    async def run_before(pilot):
        await set_scene(pilot.app, pilot, ["@sum_up:6"], ["c", "p", "s", "s"])
    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)


# ---------------------------------------------------------------- registers reused

async def test_r_switches_the_numbering_at_the_same_step(app_factory):
    app = app_factory(SUM_UP, ["3"])
    async with app.run_test(size=(140, 40)) as pilot:
        await set_scene(app, pilot, ["@sum_up:6"], ["c", "c"])
        scr = screen_of(app)
        tvm_session = app.session
        listing = scr.listing
        registers = app.screen.query_one("#registers")
        assert "if $4 $5 1 4" in listing.line_text(6)
        await press(app, pilot, "r")
        assert scr.numbering == "reused" and app.session is not tvm_session
        assert app.session.step_count == 20 and app.session.location() == (0, 6)
        # the listing, its live ranges, the registers pane and the stack all renamed
        assert "if $2 $3 1 4" in listing.line_text(6)
        assert listing.listing.live is not None and listing.listing.live_columns == 6
        row = "".join(seg.text for seg in listing.render_full_line(0, "")[0])
        assert "┬" in row
        assert "17" in listing.border_subtitle and "6 reused" in listing.border_subtitle
        assert "(reused: 6 of 17)" in registers.border_title
        assert len(registers.registers) == 6
        assert "if $2 $3 1 4" in app.screen.query_one("#stack").line_text(0)
        assert "reused numbering at step 20" in scr.status.message
        await press(app, pilot, "s", "s")                     # stepping works reused
        assert app.session.step_count == 22 and app.session.location() == (0, 11)
        await press(app, pilot, "r")                          # and back, at the same step
        assert app.session is tvm_session and scr.numbering == "tvm"
        assert tvm_session.step_count == 22 and tvm_session.location() == (0, 11)
        assert listing.listing.live is None and "if $4 $5 1 4" in listing.line_text(6)
        assert len(registers.registers) == 17
        await press(app, pilot, "c")                          # the breakpoint is still there
        assert app.session.location() == (0, 6)


def test_reused_snapshot(snap_compare, tmp_path):
    app = make_app(SUM_UP, ["3"], config_dir=str(tmp_path / "config"))

    async def run_before(pilot):
        await set_scene(pilot.app, pilot, ["@sum_up:6"], ["c", "c", "r"])
    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)
