"""Breakpoints by kernel on the screen (issue 28, item 16): typed on the command line, shown
in the breakpoint pane by the name typed (and the kernel it names), stopping at the kernel's
`invoke_packed`."""
from __future__ import annotations

from rvmdbg.tui.breakpoints import BreakpointPane

from conftest import press, screen_of, settle

CNN = "programs/cnn.relay"
KEYS = {" ": "space", ":": "colon", "_": "underscore"}


async def type_command(app, pilot, line: str) -> None:
    """Type a command line (the command line stays open after Enter)."""
    opened = screen_of(app).console.command_line.has_focus
    await press(app, pilot, *([] if opened else ["colon"]), *[KEYS.get(c, c) for c in line])
    await press(app, pilot, "enter")


async def test_break_on_a_kernel_stops_at_its_invoke_packed(app_factory):
    app = app_factory(CNN)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        session = app.session
        await type_command(app, pilot, "break kernel:conv2d")
        await type_command(app, pilot, "break fused_nn_max_pool2d")
        rows = screen.query_one("#breakpoints", BreakpointPane).rows
        assert [(r.number, r.where) for r in rows] == [
            (1, "kernel:conv2d"), (2, "fused_nn_max_pool2d (vm_mod_fused_nn_max_pool2d)")]
        await type_command(app, pilot, "continue")
        assert screen.status.stop_text.endswith("(breakpoint 1)")
        fi, pc = session.location()
        ins = session.exe.functions[fi].instructions[pc]
        assert ins.name == "InvokePacked"
        assert "conv2d" in session.exe.kernel_names()[ins.packed_index]
        await type_command(app, pilot, "continue")
        assert screen.status.stop_text.endswith("(breakpoint 2)")
        fi, pc = session.location()
        ins = session.exe.functions[fi].instructions[pc]
        assert session.exe.kernel_names()[ins.packed_index] == "vm_mod_fused_nn_max_pool2d"
