"""The Relax VM on the debugger screen: the constant-pool pane marks the constants the pc's
Call reads, `b` on a Call line and `break NAME` on the command line stop at the call, a
register's TVM tensor prints as rvmdbg prints tensors (`print $3[0, :4]`), the stack pane
shows a VM function's frames, and the three teaching views say what they can for this
machine: View 1 the TVMScript beside the bytecode and the two VMs' compiles of one model,
View 2 that it does not apply, View 3 the control-flow graph (in English and in Chinese)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")
pytest.importorskip("textual")


def _tui_helpers():
    """tests/tui/conftest.py's helpers (loaded by path: `conftest` names the suite's own)."""
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "tui" / "conftest.py"
    spec = importlib.util.spec_from_file_location("tui_helpers_for_relax_panes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_tui = _tui_helpers()
make_app, press, screen_of, settle = _tui.make_app, _tui.press, _tui.screen_of, _tui.settle

from tests.relax import programs  # noqa: E402

KEYS = {" ": "space", ":": "colon", "_": "underscore", ".": "full_stop", "$": "dollar_sign",
        "[": "left_square_bracket", "]": "right_square_bracket", ",": "comma"}
MATMUL_ARGS = ["[[1, 2, 3, 4], [0, 1, 0, 1], [2, 2, 2, 2]]",
               "[[1, 0, 0, 0, 1], [0, 1, 0, 0, 1], [0, 0, 1, 0, 1], [0, 0, 0, 1, 1]]"]


def program_file(tmp_path, name):
    path = tmp_path / f"{name}.relax.py"
    path.write_text(programs.source(name))
    return str(path)


async def type_command(app, pilot, line: str) -> None:
    opened = screen_of(app).console.command_line.has_focus
    await press(app, pilot, *([] if opened else ["colon"]), *[KEYS.get(c, c) for c in line])
    await press(app, pilot, "enter")
    await settle(app, pilot)


async def test_constant_pool_pane_marks_what_the_call_reads(tmp_path):
    from rvmdbg.tui.constants import ConstantPane
    app = make_app(program_file(tmp_path, "matmul_relu"), MATMUL_ARGS,
                   config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        pane = screen.query_one("#constants", ConstantPane)
        assert pane.border_title == "Constants (8)"
        assert pane.line_text(0) == "c[0] dtype float32"
        assert pane.line_text(6) == "c[6] R.shape([3, 5])"
        assert pane.used == {0, 1}               # check_tensor_info in: %0, i2, c[0], c[1]
        await press(app, pilot, *["s"] * 5)      # alloc_tensor in: %2, i0, c[6], c[0]
        assert pane.used == {6, 0}
        screen.action_focus_pane("constants")
        await settle(app, pilot)
        assert screen.focused is pane


async def test_b_on_a_call_line_and_break_by_name(tmp_path):
    from rvmdbg.tui.breakpoints import BreakpointPane
    app = make_app(program_file(tmp_path, "matmul_relu"), MATMUL_ARGS,
                   config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        screen.listing.focus()
        await settle(app, pilot)
        screen.listing.set_cursor(screen.listing.listing.texts.index(
            "call  relu             in: %3, %5       dst: %void"))
        await press(app, pilot, "b")
        await type_command(app, pilot, "break matmul")
        await press(app, pilot, "escape")
        rows = screen.query_one("#breakpoints", BreakpointPane).rows
        assert [r.where for r in rows] == ["@main:10", "matmul"]
        await press(app, pilot, "c")
        assert screen.status.stop_text.startswith("[step 6] @main pc=6: call  matmul")
        await press(app, pilot, "c")
        assert screen.status.stop_text.startswith("[step 10] @main pc=10: call  relu")
        await type_command(app, pilot, "print $3[0, :4]")
        assert "%3[0, :4] = [1., 2., 3., 4.] (float32)" in screen.console.output.text()


async def test_registers_and_stack_of_a_vm_function_call(tmp_path):
    from rvmdbg.tui.registers import RegisterPane
    from rvmdbg.tui.stack import CallStackPane
    app = make_app(program_file(tmp_path, "fact"), ["3"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = screen_of(app)
        await type_command(app, pilot, "break multiply")
        await press(app, pilot, "escape", "c")
        stack = screen.query_one("#stack", CallStackPane)
        assert stack.border_title == "Stack (3)"
        assert stack.line_text(0).startswith("#0 @fact pc=16 call  multiply")
        assert stack.line_text(2).startswith("#2 @main pc=1 call  fact")
        regs = screen.query_one("#registers", RegisterPane)
        assert regs.line_text(0).startswith("%0 Tensor 2i64")


async def _views(app, pilot):
    from rvmdbg.tui.views.flow import FlowView
    screen = screen_of(app)
    await press(app, pilot, "1")
    await app.workers.wait_for_complete()
    await settle(app, pilot)
    flow = app.screen.query_one(FlowView)
    names = flow.model.names
    first = app.screen.query_one("#flow-current").text()
    await press(app, pilot, *["right"] * (len(names) - 2))   # to the Relay VM's compile
    await settle(app, pilot)
    await press(app, pilot, "2")
    await settle(app, pilot)
    summary2 = str(app.screen.query_one("#exec-summary").render())
    stream2 = app.screen.query_one("#exec-stream").text()
    await press(app, pilot, "3")
    await settle(app, pilot)
    match = app.screen.query_one("#cfg-match").text()
    await press(app, pilot, "0")
    await settle(app, pilot)
    assert app.screen is screen
    return names, flow, summary2 + "\n" + stream2, match, first


async def test_views_say_what_they_can(tmp_path):
    from rvmdbg.relax.compare import relax_side
    app = make_app(program_file(tmp_path, "fact"), ["3"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        names, flow, summary2, match, first = await _views(app, pilot)
        assert names == ["TVMScript", "Bytecode", "Execution", "Same model: Relay VM",
                         "Same model: Relax VM"]
        script = flow.model.stage(0)
        assert "@I.ir_module" in "\n".join(script.lines)
        relay, relax = flow.model.stage(3), flow.model.stage(4)
        assert relay.lines[0] == "rvmdbg's Relay VM: 5 of its 21 opcodes"
        assert "alloc_storage                    call vm.builtin.alloc_storage" in relay.lines
        assert relax.lines[0] == "TVM's Relax VM: 2 of its 4 instructions"
        assert relax.lines[2:2 + len(relax_side().lines)] == relax_side().lines
        assert "# from tvm.script import ir as I" in first     # beside "next: Bytecode"
        assert "does not apply to TVM's Relax VM" in summary2
        assert "@fact: 22 instructions; calls 3 kernels (less, subtract, multiply)" in \
            " ".join(summary2.split())
        assert "TVM's Relax VM has no match" in " ".join(match.split())


async def test_views_in_chinese(chinese, tmp_path):
    app = make_app(program_file(tmp_path, "fact"), ["3"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        names, flow, summary2, _match, _first = await _views(app, pilot)
        assert "不适用" in summary2
    assert chinese == set(), sorted(chinese)


async def test_closures_and_shape_tuples_in_the_registers_pane(tmp_path):
    from rvmdbg.tui.registers import RegisterPane
    import numpy as np

    def fmt(a):
        return np.array2string(a, separator=", ", threshold=10 ** 6).replace("\n", "")
    for name, spec, reg, text in (("closure", "vm.builtin.invoke_closure", 2,
                                   "closure @main_inner"),
                                  ("symbolic", "vm.builtin.alloc_storage", 3, "Shape")):
        app = make_app(program_file(tmp_path, name), [fmt(a) for a in programs.inputs(name)],
                       config_dir=str(tmp_path / "config"))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            await type_command(app, pilot, f"break {spec}")
            await press(app, pilot, "escape", "c")
            regs = screen_of(app).query_one("#registers", RegisterPane)
            line = regs.line_text(reg)
            assert line.startswith(f"%{reg}") and text in line, line
