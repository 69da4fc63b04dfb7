"""Values on the screen come from the one formatter: a float32 scalar at float32 precision in
the registers pane (issue 12, defect 8), a big tensor with its statistics, and `print $N[...]`
on the command line."""
from __future__ import annotations

from rvmdbg.tui.command_line import CommandLine
from rvmdbg.tui.command_output import CommandOutput
from rvmdbg.tui.registers import RegisterPane
from rvmdbg.values import tensor_stats

import numpy as np

from conftest import settle

PROGRAM = "tests/tui/programs/tensors.relay"


async def test_registers_and_print_use_the_dtypes_precision_and_statistics(app_factory):
    app = app_factory(PROGRAM)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        pane = screen.query_one("#registers", RegisterPane)
        assert pane.line_text(0) == "$0 float32 0.1f"
        # step until the 40x40 tensor is written
        vm_regs = None
        for _ in range(40):
            await pilot.press("s")
            await settle(app, pilot)
            regs = pane.registers
            big = [r for r, v in enumerate(regs) if isinstance(v, np.ndarray) and v.size == 1600]
            if big:
                vm_regs = regs
                break
        assert vm_regs is not None
        r = big[0]
        row = pane.rows.index(r)
        text = pane.line_text(row)
        assert text.startswith(f"${r} float32[40, 40] [0.") and tensor_stats(vm_regs[r]) in text
        await pilot.press("colon")
        assert app.focused is screen.query_one("#command", CommandLine)
        await pilot.press(*f"print ${r}[0, 1:3]", "enter")
        await settle(app, pilot)
        out = "\n".join(screen.query_one("#output", CommandOutput).lines)
        assert f"(rvmdbg) print ${r}[0, 1:3]" in out
        assert f"${r}[0, 1:3] = [0.1, 0.1] (float32)" in out or \
            f"${r}[0, 1:3] = [0.2, 0.2] (float32)" in out


async def test_the_source_pane_shows_metadata_references_as_written(app_factory):
    from rvmdbg.tui.source_view import SourceView
    app = app_factory("tests/tui/programs/weights.relay")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        source = app.screen.query_one("#source", SourceView)
        lines = [source.line_text(i) for i in range(len(source.lines))]
        assert any("nn.dense(%x, meta[relay.Constant][0] /* ty=Tensor[(3, 2), float32] */"
                   in line for line in lines)
        assert lines[-1].strip().endswith("#[metadata]")  # the JSON itself is not shown
        assert not any("b64ndarrays" in line for line in lines)
        await pilot.press("c")
        await settle(app, pilot)
        assert "returned [[1.2, 2.8, 4.4]] (float32)" in app.screen.status.stop_text


async def test_a_value_that_contains_itself_shows_as_a_cycle_in_every_pane(app_factory):
    from rvmdbg.tui.heap import HeapTree
    app = app_factory("tests/tui/programs/cyclic_ref.relay")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for _ in range(4):                         # to `ret $2`: the node is in its own cell
            await pilot.press("s")
            await settle(app, pilot)
        pane = app.screen.query_one("#registers", RegisterPane)
        row = pane.rows.index(2)
        assert "N(ref(N(<cycle>)))" in pane.line_text(row)
        heap = app.screen.query_one("#heap", HeapTree)
        for node in list(heap.root.children):      # expanding a cycle ends (lazily, a level
            node.expand_all()                      # at a time as the user opens it)
        await settle(app, pilot)
        text = heap.text()
        # the cell is one shared node, shown once with its summary, however deep it is opened
        assert "$2 N tag 1 : Node  N(ref(N(<cycle>)))" in text
        assert "[0] ref  ↺ shared #1" in text and len(text.splitlines()) < 10
        await pilot.press("s")                     # the result, shown as the heap's root
        await settle(app, pilot)
        assert app.session.finished
        assert "<cycle>" in str(app.screen.query_one("#status").render())
