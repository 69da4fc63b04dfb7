"""Snapshots of the three teaching views (pytest-textual-snapshot), at 80x24 and 140x40.

No timing reaches the screen: view 2 is shown with fixed measurements (`fixed_measurements`).
Scenes: view 1 at FuseOps with the addition selected while the VM runs its kernel; view 2 on a
static program (both executors, the memory plan, the cost model) and on a dynamic one (the
refusal); view 3 inside a match of the binary search tree, and in ASCII. The SVGs live in
`__snapshots__/`; after a deliberate change, look at them and accept with `--snapshot-update`.
Snapshot tests are plain `def`s: `snap_compare` runs its own event loop.
"""
from __future__ import annotations

import pytest
from views_support import demo_app, settle

SIZES = [(80, 24), (140, 40)]
LIST = "tests/examples/list_length.relay"


def _keys(*keys):
    async def run_before(pilot):
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
    return run_before


def _flow_scene():
    async def run_before(pilot):
        await settle(pilot)
        s = pilot.app.session
        while s.current_instruction().name != "InvokePacked":
            await pilot.press("s")
        for _ in range(6):                       # Source -> ... -> FuseOps
            await pilot.press("right")
        await settle(pilot)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_flow_at_fuse_ops(snap_compare, size):
    assert snap_compare(demo_app(LIST, "flow"), terminal_size=size, run_before=_flow_scene())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_executors_static(snap_compare, size):
    app = demo_app("programs/mlp.relay", "executors", steps=4, measured=True)
    assert snap_compare(app, terminal_size=size, run_before=_keys())


def test_executors_dynamic(snap_compare):
    app = demo_app(LIST, "executors", steps=6, measured=True)
    assert snap_compare(app, terminal_size=(140, 40), run_before=_keys("c", "c"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_control_flow_in_a_match(snap_compare, size):
    app = demo_app("programs/bst.relay", "control", steps=40)
    assert snap_compare(app, terminal_size=size, run_before=_keys())


def test_control_flow_ascii(snap_compare):
    app = demo_app(LIST, "control", steps=8, ascii_only=True)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_keys())
