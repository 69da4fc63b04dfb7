"""View 2's graph on an imported ONNX model (issue 26 item 4): each kernel row names the ONNX
nodes it came from, a fused kernel every one of them (`[Conv_12, Relu_13]`), as `rvmdbg graph`
does. A Pilot test reads the pane's rows; a snapshot shows the view at 140x40."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from views_support import fixed_measurements, settle  # noqa: E402


def _onnx_context(folder):
    """View 2's context on model.onnx (Conv with a bias, Relu, MaxPool) written in `folder`
    and opened by its relative name (the screen shows no temporary path)."""
    import os

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from rvmdbg.debug import DebugSession
    from rvmdbg.tui.program import load_program
    from rvmdbg.views.context import ViewContext
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.full((2, 1, 3, 3), 0.5, "float32"), "W")
    b = numpy_helper.from_array(np.array([1.0, -1.0], "float32"), "B")
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1],
                              name="Conv_12"),
             helper.make_node("Relu", ["c"], ["r"], name="Relu_13"),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                              name="Pool_14")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, b]),
                              opset_imports=[helper.make_opsetid("", 13)])
    here = os.getcwd()
    os.chdir(folder)
    try:
        onnx.save(model, "model.onnx")
        program = load_program("model.onnx")
    finally:
        os.chdir(here)
    ctx = ViewContext.from_program(program)
    ctx.session = DebugSession(program.exe, [np.arange(16, dtype="float32").reshape(1, 1, 4, 4)])
    fixed_measurements(ctx)
    return ctx


def _graph_rows(app) -> list[str]:
    from rvmdbg.tui.views.rows_pane import RowsPane
    pane = app.screen.query_one("#exec-graph", RowsPane)
    return ["".join(text for text, _style in row) for row in pane.rows]


async def test_view_2_names_each_kernels_onnx_nodes(tmp_path):
    from rvmdbg.tui.views.demo import ViewsDemoApp
    app = ViewsDemoApp(_onnx_context(tmp_path), "executors")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        rows = _graph_rows(app)
        conv = [r for r in rows if "fused_nn_conv2d" in r]
        pool = [r for r in rows if "fused_nn_max_pool2d" in r]
        assert len(conv) == 1 and conv[0].rstrip().endswith("[Conv_12, Relu_13]"), rows
        assert len(pool) == 1 and "[Pool_14]" in pool[0], rows
        assert not any("[" in r for r in rows if " null " in r)


def test_view_2_on_an_onnx_model_snapshot(snap_compare, tmp_path):
    from rvmdbg.tui.views.demo import ViewsDemoApp
    app = ViewsDemoApp(_onnx_context(tmp_path), "executors")

    async def run_before(pilot):
        await settle(pilot)
    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)
