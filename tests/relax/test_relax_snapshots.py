"""Snapshots of the screen on a Relax VM program (pytest-textual-snapshot) at 160x48 and
80x24: @fact stopped at its `multiply` Call two frames deep, the listing in TVM's `as_text()`
layout with the pc, the If's and Goto's jump arrows and the dependency marks, the registers
holding TVM tensors, the stack, and the constant pool with the Call's constants marked. After
a deliberate change, look at the new SVGs and accept them with `--snapshot-update`."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")
pytest.importorskip("textual")
pytest.importorskip("pytest_textual_snapshot")

from tests.relax import programs  # noqa: E402

SIZES = [(160, 48), (80, 24)]


def _tui_helpers():
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "tui" / "conftest.py"
    spec = importlib.util.spec_from_file_location("tui_helpers_for_relax_snapshots", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_tui = _tui_helpers()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fact_at_multiply(snap_compare, tmp_path, size):
    path = tmp_path / "fact.relax.py"
    path.write_text(programs.source("fact"))
    app = _tui.make_app(str(path), ["3"], config_dir=str(tmp_path / "config"))

    async def run_before(pilot):
        await _tui.set_scene(pilot.app, pilot, ["multiply"], ["c"])
    assert snap_compare(app, terminal_size=size, run_before=run_before)
