"""The VM's ideas on the debugger screen, pressed through Pilot: swap? (`m` marks an
instruction, the cursor names another), with snapshots of each."""
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
