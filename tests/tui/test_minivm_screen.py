"""The toy MiniVM on the debugger screen (issue 17, part 4): `rvmdbg demo.mvm` opens the same
screen as a Relay program, through the same debugger protocol: listing with pc and jump
arrows, registers named r0, r1, ... with changes marked, dependency arrows, stepping both
ways, breakpoints, and the stop of a program whose state repeats."""
from __future__ import annotations

import pytest

from rvmdbg.tui.listing import BytecodeListing
from rvmdbg.tui.registers import RegisterPane

from conftest import make_app, press, screen_of, set_scene, settle

DEMO = "programs/demo.mvm"
SPIN = "programs/demo_spin.mvm"


async def test_opens_on_the_same_screen(app_factory):
    app = app_factory(DEMO)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert screen.status.stop_text.startswith("[step 0] @main pc=0: LD r1 3")
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.texts == ["LD r1 3", "LD r2 2", "CH r1 5", "SUB r1 r2 r0", "JM 6",
                                         "ADD r1 r2 r0", "HL"]
        assert listing.listing.jump_targets == {2: (5,), 4: (6,)}   # the jump arrows
        registers = screen.query_one("#registers", RegisterPane)
        assert registers.line_text(0).startswith("r0 int 0")
        assert screen.query("#source")   # the .mvm text beside the listing


async def test_steps_forward_and_back_with_changes_and_dependencies(app_factory):
    app = app_factory(DEMO)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        listing = screen.query_one("#listing", BytecodeListing)
        registers = screen.query_one("#registers", RegisterPane)
        await press(app, pilot, "s")
        assert registers.changed == {1} and registers.registers[1] == 3
        await press(app, pilot, "s", "s")       # CH r1 5 jumps: r1 >= 0
        assert listing.pc == 5 and app.session.step_count == 3
        # ADD reads r1 and r2: arrows from the LDs that wrote them, and it writes r0
        assert {(d.register, d.writer_pc, d.writer_step) for d in listing._dep_reads} == \
            {(1, 0, 0), (2, 1, 1)}
        assert listing._dep_writes == (0,)
        assert registers.reads == {1, 2} and registers.writes == {0}
        await press(app, pilot, "s")
        assert registers.changed == {0} and registers.registers[0] == 5
        await press(app, pilot, "S", "S")       # back in time, through the jump
        assert listing.pc == 2 and app.session.step_count == 2
        assert registers.registers[0] == 0


async def test_breakpoint_from_the_listing(app_factory):
    app = app_factory(DEMO)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        listing = screen.query_one("#listing", BytecodeListing)
        listing.focus()
        await press(app, pilot, *["down"] * 5, "b", "c")
        assert screen.status.stop_text.endswith("(breakpoint 1)") and listing.pc == 5
        await press(app, pilot, "c")
        assert screen.status.stop_text.startswith("[step 5] @main: halted: r0=5 r1=3 r2=2")
        await press(app, pilot, "C")              # reverse continue: back to the hit
        assert listing.pc == 5 and app.session.step_count == 3


async def test_a_repeated_state_stops_with_a_message(app_factory):
    app = app_factory(SPIN)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await press(app, pilot, "c")
        assert "(repeated state)" in screen.status.stop_text
        assert screen.status.stop_kind == "error"
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.pc == 6 and "never halts" in listing.error_note
        await press(app, pilot, "S")              # and the history is still there
        assert app.session.step_count == 4


@pytest.mark.parametrize("path, keys", [(DEMO, ["c"]), (SPIN, ["c"])], ids=["demo", "spin"])
def test_snapshot(snap_compare, tmp_path, path, keys):
    async def run_before(pilot):
        await set_scene(pilot.app, pilot, ["@main:5"] if path == DEMO else [], keys)
    app = make_app(path, config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=(120, 30), run_before=run_before)
