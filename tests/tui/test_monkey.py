"""A monkey at the keyboard: a long seeded run of random keys (every binding of the screen,
its panes and the views, plus typing into the command line and the search bar) must leave the
screen running, whatever state the keys reach."""
from __future__ import annotations

import random

from conftest import settle

KEYS = ["s", "n", "f", "c", "S", "N", "F", "C", "u", "d", "b", "t", "w", "tab", "shift+tab",
        "up", "down", "pageup", "pagedown", "home", "end", "left", "right", "enter", "space",
        "x", "e", "i", "o", "1", "2", "3", "0", "escape", "v", "question_mark",
        "left_square_bracket", "right_square_bracket", "full_stop", "g", "colon", "slash", "j",
        "k", "m", "ctrl+r", "h", "l", "comma", "backspace"]


async def test_random_keys_never_stop_the_screen(app_factory):
    rng = random.Random(20261129)
    app = app_factory("programs/list_ops.relay")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for _ in range(120):
            await pilot.press(rng.choice(KEYS))
            if rng.random() < 0.1:
                await settle(app, pilot)
        await settle(app, pilot)
        assert app.is_running and app.session is not None
        assert app.return_code is None
