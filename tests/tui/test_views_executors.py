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


async def test_given_measurements_and_the_cost_model():
    app = demo_app(MLP, "executors", measured=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        measured = app.screen.query_one("#exec-measure").text()
        assert "52us" in measured and "31us (60%)" in measured and "1.05us" in measured
        cost = app.screen.query_one("#exec-cost")
        text = cost.text()
        assert "VM: 2ms compile + n x" in text and "graph: 3.1ms compile" in text
        assert "pays off after" in text and "vector elements (log)" in text
        await pilot.press("c")                # braille -> blocks
        assert "█" in cost.text() or "▀" in cost.text() or "▄" in cost.text()
        await pilot.press("c")                # -> ASCII
        assert "* VM measured" in cost.text()
        await pilot.press("w")                # the list workload
        assert "list length (log)" in cost.text()
        assert "graph" not in cost.text().split("\n")[0]


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


async def test_measuring_in_the_background(monkeypatch):
    from rvmdbg.views import costmodel
    small = {name: costmodel.Workload(w.name, w.description, w.size_label, w.text, w.args,
                                      w.sizes[:2], w.static)
             for name, w in costmodel.WORKLOADS.items()}
    monkeypatch.setattr(costmodel, "WORKLOADS", small)
    import rvmdbg.tui.views.executors as ex
    monkeypatch.setattr(ex, "WORKLOADS", small)
    app = demo_app(MLP, "executors")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        ctx = app.teaching_context
        assert set(ctx.measurements) == {"VM", "graph"}
        assert len(ctx.cost_samples["chain"]) == 4
        assert "per dispatch" in app.screen.query_one("#exec-measure").text()
        assert "compile + n x" in app.screen.query_one("#exec-cost").text()
