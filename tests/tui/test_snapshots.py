"""Snapshots of the screen (pytest-textual-snapshot) at 80x24 and 140x40.

Scenes: the start, a breakpoint stop with jump and dependency arrows, an ADT-heavy program
with the heap open, and a stop at a failing instruction. The SVGs live in `__snapshots__/`;
after a deliberate change, look at the new ones and accept them with `--snapshot-update`.
Snapshot tests are plain `def`s: `snap_compare` runs its own event loop.
"""
from __future__ import annotations

import pytest

from conftest import make_app, set_scene, settle

SIZES = [(80, 24), (140, 40)]


def _app(tmp_path, path, args=None):
    return make_app(path, args, config_dir=str(tmp_path / "config"))


def _scene(breakpoints=(), keys=()):
    async def run_before(pilot):
        await set_scene(pilot.app, pilot, breakpoints, keys)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_start(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path, "programs/sum_up.relay"), terminal_size=size,
                        run_before=_scene())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_breakpoint_with_arrows(snap_compare, tmp_path, size):
    # third time @insert compares %x with %v: jumps around, two reads with their writers
    assert snap_compare(_app(tmp_path, "programs/bst.relay"), terminal_size=size,
                        run_before=_scene(["@insert:18"], ["c", "c", "c"]))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_heap_open(snap_compare, tmp_path, size):
    # @in_order on the finished tree, its root and left subtree expanded in the heap pane
    # (Tab from the listing: registers, stack, heap)
    assert snap_compare(_app(tmp_path, "programs/bst.relay"), terminal_size=size,
                        run_before=_scene(["@in_order"], ["c", "tab", "tab", "tab", "space", "down", "space"]))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_error_stop(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path, "tests/tui/programs/empty_head.relay"), terminal_size=size,
                        run_before=_scene([], ["c"]))


def _console_scene():
    """The console open: stops the keys made, a display at each, a search's count, and the
    command line completing a function name."""
    async def run_before(pilot):
        app = pilot.app
        await settle(app, pilot)
        keys = ["colon", *"display $0", "enter", "escape", "s", "s", "n", "s",
                "colon", *"search invoke", "enter", *"break @f", "tab"]
        for key in keys:
            await pilot.press(key)
            await settle(app, pilot)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_console(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path, "programs/fib.relay", ["6"]), terminal_size=size,
                        run_before=_console_scene())
