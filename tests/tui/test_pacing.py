"""When the screen's own process pays for collections: with `freeze_heap` (the command line's
screen) the cyclic collector's full collections wait for the keys to pause, and the
collector's settings are given back when the app ends."""
from __future__ import annotations

import gc
import time

from rvmdbg.tui.app import GC_IDLE_SECONDS

from conftest import make_app, settle


async def test_full_collections_wait_for_a_pause_and_the_settings_come_back(tmp_path):
    before = gc.get_threshold()
    app = make_app("programs/fib.relay", config_dir=str(tmp_path / "config"), freeze_heap=True)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] == 1 << 30
            await pilot.press("s")
            await settle(app, pilot)
            screen = app.debugger
            assert screen.last_paint > app._collected_at   # painted since: one is owed
            screen.last_paint = time.monotonic()            # a key just painted: not yet
            app._collect_when_idle()
            assert app._collected_at < screen.last_paint
            screen.last_paint -= 2 * GC_IDLE_SECONDS        # the keys paused: now
            app._collect_when_idle()
            assert app._collected_at > screen.last_paint
        assert gc.get_threshold() == before
    finally:
        gc.unfreeze()   # what the app froze goes back to the collector for the other tests
        gc.set_threshold(*before)


async def test_the_collection_check_is_quiet_while_the_app_closes(tmp_path):
    """The idle collection's timer can fire as the app closes, with no screen left: it
    returns (it raised IndexError out of the app's exit)."""
    before = gc.get_threshold()
    app = make_app("programs/fib.relay", config_dir=str(tmp_path / "config"), freeze_heap=True)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            stack = app._screen_stacks[app._current_mode]
            saved = list(stack)
            stack.clear()
            app._collect_when_idle()   # no screen: nothing to do, no error
            stack.extend(saved)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
