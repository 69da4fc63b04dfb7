"""`P` in the screen (issue 30): the kernel table of the run so far in the console, profiling
on from the first press; then a step over a kernel says its time and `n`/`f` the time they
covered, through Textual's Pilot."""
from __future__ import annotations

from conftest import press, screen_of, settle

CNN = "programs/cnn.relay"


def console_text(app) -> list[str]:
    return list(screen_of(app).console.output.lines)


async def test_p_shows_the_profile_and_stops_say_kernel_times(app_factory):
    app = app_factory(CNN)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert screen.session.profile is None          # off until asked for
        await press(app, pilot, "P")
        lines = console_text(app)
        assert any("profiling is on from step 0" in line for line in lines)
        assert screen.console.shown and screen.session.profile is not None
        await press(app, pilot, "s", "s", "s", "s", "s")   # pc 4 is the first kernel call
        await settle(app, pilot)
        lines = console_text(app)
        assert any("kernel vm_mod_fused_" in line and " took " in line and " us" in line
                   for line in lines)
        await press(app, pilot, "n")
        await settle(app, pilot)
        assert "took " in console_text(app)[-1]
        await press(app, pilot, "c")
        await settle(app, pilot)
        await press(app, pilot, "P")
        text = "\n".join(console_text(app))
        assert "Kernel calls of the run so far" in text and "conv2d" in text and "Sum" in text
