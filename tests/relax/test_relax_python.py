"""`rvmdbg.tvm` from the user's own script: `session(ex, *inputs)` on an executable built with
`tvm.relax.build` is the DebugSession batch mode uses (steps, breakpoints by called name,
registers as TVM tensors, the batch commands), and `debug(ex, *inputs)` opens the screen on it
(driven here through its injectable runner with Textual's Pilot)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

from tests.relax import programs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built():
    """(IRModule, TVM's own executable) of the matmul program, as a user's script makes them."""
    from tvm import relax
    mod = tvm.script.from_source(programs.source("matmul_relu"))
    return mod, relax.build(mod, target="llvm")


def tvm_main(ex, *inputs):
    from tvm import relax
    vm = relax.VirtualMachine(ex, tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in inputs]).numpy()


def test_session_steps_to_tvms_result(built):
    import rvmdbg.tvm
    from rvmdbg.debug import CommandInterpreter, DebugSession
    mod, ex = built
    x, w = programs.inputs("matmul_relu")
    s = rvmdbg.tvm.session(ex, tvm.runtime.tensor(x), w)   # a TVM tensor or a NumPy array
    assert isinstance(s, DebugSession) and s.step_count == 0
    bp = s.breakpoints.add("matmul")
    ev = s.cont()
    assert ev.number == bp.id and ev.pc == 6
    s.step()
    out = CommandInterpreter(s).execute("print $3[0, :2]")
    want = (x @ w)[0, :2]
    assert out.startswith("%3[0, :2] = [") and "(float32)" in out
    # TVM's kernel, not NumPy's matmul: equal within float rounding
    np.testing.assert_allclose(s.frame().registers[3].numpy()[0, :2], want, rtol=1e-5)
    end = s.cont()
    assert end.reason == "finished"
    np.testing.assert_array_equal(s.result, tvm_main(ex, x, w))
    # the TVMScript text comes with the module, and the inputs take its dtypes
    s2 = rvmdbg.tvm.session(ex, x.astype(np.float64), w, mod=mod)
    assert "@I.ir_module" in s2.exe.source_text
    s2.cont()
    np.testing.assert_array_equal(s2.result, tvm_main(ex, x, w))


def test_session_refuses_what_is_not_an_executable(built):
    import rvmdbg.tvm
    mod, _ex = built
    with pytest.raises(rvmdbg.tvm.NotAnExecutable, match="tvm.relax.build"):
        rvmdbg.tvm.session(mod, np.zeros(3))


def test_importing_it_imports_neither_tvm_nor_textual():
    code = ("import sys, rvmdbg.tvm\n"
            "print('tvm' in sys.modules, 'textual' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.stdout.split() == ["False", "False"], proc.stderr


async def test_debug_opens_the_screen_on_the_scripts_executable(built, tmp_path):
    pytest.importorskip("textual")
    import rvmdbg.tvm
    from rvmdbg.tui.listing import BytecodeListing
    mod, ex = built
    x, w = programs.inputs("matmul_relu")
    app = rvmdbg.tvm.debug(ex, x, w, mod=mod, config_dir=str(tmp_path / "config"),
                           runner=lambda app: app, program_path=str(tmp_path / "script.py"))
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
        screen = app.screen_stack[0]
        assert app.session is not None and app.session.step_count == 0
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.listing.texts[6].startswith("call  matmul ")
        await pilot.press("c")   # no breakpoint: to the end
        for _ in range(10):
            await pilot.pause()
        assert app.session.finished
        np.testing.assert_array_equal(app.session.result, tvm_main(ex, x, w))
