"""A Relax program on the debugger screen: it opens on the Relax VM's listing (TVM's
`as_text()` lines), the untyped ARG the screen passes takes the entry's declared dtype, and
stepping forward and back moves the pc and the call stack."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")
pytest.importorskip("textual")

def _tui_helpers():
    """tests/tui/conftest.py's helpers (loaded by path: `conftest` names the suite's own)."""
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "tui" / "conftest.py"
    spec = importlib.util.spec_from_file_location("tui_helpers_for_relax", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_tui = _tui_helpers()
make_app, press, screen_of, settle = _tui.make_app, _tui.press, _tui.screen_of, _tui.settle

from tests.relax import programs  # noqa: E402


async def test_opens_steps_and_steps_back(tmp_path):
    from rvmdbg.tui.listing import BytecodeListing
    from rvmdbg.tui.registers import RegisterPane
    path = tmp_path / "fact.relax.py"
    path.write_text(programs.source("fact"))
    app = make_app(str(path), ["4"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        assert screen.status.stop_text.startswith(
            "[step 0] @main pc=0: call  vm.builtin.check_tensor_info")
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.texts[1] == "call  fact             in: %0           dst: %1"
        registers = screen.query_one("#registers", RegisterPane)
        assert registers.line_text(0).startswith("%0 Tensor 4i64")
        await press(app, pilot, "s", "s", "s")
        assert app.session.step_count == 3 and "@fact pc=1" in screen.status.stop_text
        assert len(app.session.vm.frames) == 2
        await press(app, pilot, "S")   # step back
        assert app.session.step_count == 2 and len(app.session.vm.frames) == 2
