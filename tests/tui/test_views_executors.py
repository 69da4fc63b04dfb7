"""View 2 on screen: the two executors side by side, measurements and the cost model."""
from __future__ import annotations

from views_support import demo_app, settle

from rvmdbg.tui.views.executors import ExecutorsScreen, ExecutorsView

MLP = "programs/mlp.relay"
LIST = "tests/examples/list_length.relay"


def _view(app) -> ExecutorsView:
    return app.screen.query_one(ExecutorsView)


async def test_static_program_side_by_side():
    app = demo_app(MLP, "executors", steps=2)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ExecutorsScreen)
        view = _view(app)
        c = view.comparison
        summary = str(app.screen.query_one("#exec-summary").render())
        assert "results agree" in summary and f"VM {c.stream_total} dispatches" in summary
        stream = app.screen.query_one("#exec-stream")
        assert len(stream.rows) == c.stream_total
        # the instruction the debugger is about to run is marked
        marked = [i for i, g in enumerate(stream.row_gutter) if g and g[0][0] == "▶"]
        assert marked == [2]
        graph = app.screen.query_one("#exec-graph").text()
        assert "reuses node 5's block" in graph and "fused_nn_softmax" in graph
        assert "pool: 7 blocks, 264 bytes" in graph
        measured = app.screen.query_one("#exec-measure").text()
        assert "press m to measure" in measured
        assert "not measured yet" in app.screen.query_one("#exec-cost").text()


async def test_given_measurements_the_verdict_and_the_cost_model():
    app = demo_app(MLP, "executors", measured=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        measured = app.screen.query_one("#exec-measure").text()
        assert "52us" in measured and "31us (60%)" in measured and "1.05us" in measured
        # like with like: the same kernel calls, memory with the inputs on both sides
        assert "kernel calls     3" in measured
        assert "288 B = 236+24+28" in measured and "264 B = 236+0+28" in measured
        # the verdict follows from the figures above it: the VM's dispatch is cheaper, the
        # graph executor's run is cheaper because it makes fewer dispatches
        flat = " ".join(measured.split())
        assert "per dispatch (time outside kernels / dispatches): the VM costs less, " \
               "1.05us against 2us" in flat
        assert "per run (time outside kernels): the graph executor costs less, 6us against " \
               "21us, because it makes 3 dispatches to the VM's 20" in flat
        assert "the VM costs less up to 80 runs" in flat
        assert "Why TVM's own figures differ" in flat and "C++" in flat
        cost = app.screen.query_one("#exec-cost")
        text = " ".join(cost.text().split())
        assert "workload: this program at its own size, 1 to 8 runs (its inputs have fixed " \
               "shapes)" in text
        assert "VM: 900us compile + n x 1.05us per dispatch" in text
        assert "graph: 2.1ms compile + n x 2us per dispatch" in text
        # the crossover is said once, by the measured figures: the model predicts per run
        assert "predicts: per run (time outside kernels): the graph executor costs less" in text
        assert "up to 80 runs" not in text
        assert "runs of the program at its own size" in text
        await pilot.press("c")                # braille -> blocks
        assert "█" in cost.text() or "▀" in cost.text() or "▄" in cost.text()
        await pilot.press("c")                # -> ASCII
        assert "* VM measured" in cost.text()


async def test_the_cost_model_scales_a_list_program():
    app = demo_app(LIST, "executors", measured=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        text = " ".join(app.screen.query_one("#exec-cost").text().split())
        assert "the length of %xs scaled from 1 to 12 (it is 3 on screen)" in text
        assert "length of %xs (log)" in text and "graph" not in text.split("VM:")[1][:60]


async def test_dynamic_program_shows_the_refusal_next_to_the_vm():
    app = demo_app(LIST, "executors")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        graph = app.screen.query_one("#exec-graph").text()
        assert "refuses this program" in graph
        assert "`match` at tests/examples/list_length.relay:9:3" in graph
        assert "match (%xs) {" in graph and "^" in graph
        summary = str(app.screen.query_one("#exec-summary").render())
        assert "dynamic program" in summary and "54 dispatches" in summary


async def test_stream_cursor_follows_steps_and_keys():
    app = demo_app(LIST, "executors")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = _view(app)
        await pilot.press("s", "s", "s")
        assert view.cursor == 3
        await pilot.press("down", "down")
        assert app.screen.query_one("#exec-stream").cursor_row == 5
        await pilot.press("pageup")
        assert view.cursor == 0


async def test_measuring_in_the_background():
    app = demo_app(MLP, "executors")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        ctx = app.teaching_context
        assert set(ctx.measurements) == {"VM", "graph"}
        assert ctx.cost_workload.fixed
        assert {s.executor for s in ctx.cost_samples} == {"VM", "graph"}
        assert ctx.measurements["VM"].dispatches == view_dispatches(app)
        assert "per dispatch" in app.screen.query_one("#exec-measure").text()
        assert "compile + n x" in app.screen.query_one("#exec-cost").text()


def view_dispatches(app) -> int:
    return _view(app).comparison.stream_total
