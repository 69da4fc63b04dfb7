"""A monkey at the keyboard: a seeded run of random keys (every binding of the screen,
its panes and the views, plus typing into the command line and the search bar) must leave the
screen running, whatever state the keys reach. Brief by default; `pytest -m fuzz` runs long."""
from __future__ import annotations

import random

import pytest

from conftest import settle

KEYS = ["s", "n", "f", "c", "S", "N", "F", "C", "u", "d", "b", "t", "w", "tab", "shift+tab",
        "up", "down", "pageup", "pagedown", "home", "end", "left", "right", "enter", "space",
        "x", "e", "i", "o", "1", "2", "3", "0", "escape", "v", "question_mark",
        "left_square_bracket", "right_square_bracket", "full_stop", "g", "colon", "slash", "j",
        "k", "m", "ctrl+r", "h", "l", "comma", "backspace"]


async def _monkey(app_factory, seed: int, presses: int) -> None:
    rng = random.Random(seed)
    app = app_factory("programs/list_ops.relay")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for _ in range(presses):
            await pilot.press(rng.choice(KEYS))
            if rng.random() < 0.1:
                await settle(app, pilot)
        await settle(app, pilot)
        assert app.is_running and app.session is not None, seed
        assert app.return_code is None, seed


async def test_random_keys_never_stop_the_screen(app_factory):
    """The suite's run: the same 60 keys every time (the first 60 of the earlier 120)."""
    await _monkey(app_factory, 20261129, 60)


@pytest.mark.fuzz
async def test_random_keys_never_stop_the_screen_long(app_factory):
    """`-m fuzz`: 1,500 keys from a new seed each run (the seed is in a failure's message)."""
    await _monkey(app_factory, random.SystemRandom().randrange(1 << 32), 1500)
