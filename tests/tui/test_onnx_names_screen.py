"""The screen on an imported ONNX model (issue 26 item 4): the source pane shows the node
listing, `break Conv_12` then `continue` stops at that node's kernel with the node named in
the stop line, and `print conv1_out` prints the tensor by its ONNX name. The program is built
as the ONNX program kind hands it over (its Debuggable fields and name table), on the Python
API, until that kind is reachable from the command line."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from conftest import press, screen_of, settle  # noqa: E402
from test_console import console_text, type_command  # noqa: E402


def _onnx_program():
    from onnx import TensorProto, helper, numpy_helper

    from rvmdbg.onnx import import_model
    from rvmdbg.onnx.debug_names import name_table
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.tui.program import DebugProgram
    from rvmdbg.vm.compiler import compile_module
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    w = numpy_helper.from_array(np.full((2, 1, 3, 3), 0.5, "float32"), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["conv1_out"], pads=[1, 1, 1, 1],
                              name="Conv_12"),
             helper.make_node("ArgMax", ["conv1_out"], ["y"], axis=1, name="ArgMax_13")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    imp = import_model(model)
    mod = check_module(imp.module)
    prog = DebugProgram("model.onnx", "model.onnx", compile_module(mod), mod,
                        imp.node_lines, mod.source.name if mod.source else "model.onnx",
                        None)
    prog.names = name_table(model, imp)
    return prog


async def test_break_on_an_onnx_node_and_print_a_tensor_by_name(tmp_path):
    from rvmdbg.tui.app import DebuggerApp
    x = "@" + str(tmp_path / "x.npy")
    np.save(tmp_path / "x.npy", np.ones((1, 1, 4, 4), "float32"))
    app = DebuggerApp(_onnx_program(), [x], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert app.session is not None and app.session.names is not None
        for line in ("break Conv_12", "continue", "next", "print conv1_out[0, 0, 1, 1]"):
            await type_command(app, pilot, line)
            await press(app, pilot, "escape")
        lines = console_text(app)
        assert any(line.startswith("(rvmdbg) break Conv_12") for line in lines)
        assert any("breakpoint 1 at Conv_12 (" in line for line in lines), lines
        assert any("[Conv_12]" in line and "(breakpoint 1)" in line for line in lines), lines
        assert any(line.startswith("conv1_out ($") and "4.5" in line for line in lines), lines
        # the breakpoints pane names the node the breakpoint was set on
        from rvmdbg.tui.stops import breakpoint_rows
        rows = breakpoint_rows(app.session, app.session.exe)
        assert [r.where for r in rows] == [
            f"Conv_12: line {app.session.names.places['Conv_12']}"], rows
        # the source pane holds the node listing
        assert "Conv_12  Conv" in app.program.source_text
        assert screen_of(app) is not None


async def test_b_on_a_node_line_breaks_at_that_nodes_kernel(tmp_path):
    """The source pane of an ONNX program is the node listing: `b` on a node's line sets a
    line breakpoint there, and `c` stops at the kernel made from that node."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.program import load_program
    from rvmdbg.tui.source_view import SourceView
    from rvmdbg.vm.bytecode import InvokePacked
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    w = numpy_helper.from_array(np.full((2, 1, 3, 3), 0.5, "float32"), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["conv1_out"], pads=[1, 1, 1, 1],
                              name="Conv_12"),
             helper.make_node("ArgMax", ["conv1_out"], ["y"], axis=1, name="ArgMax_13")]
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(path))
    np.save(tmp_path / "x.npy", np.ones((1, 1, 4, 4), "float32"))
    program = load_program(str(path))
    lines = program.source_text.split("\n")
    for name in ("Conv_12", "ArgMax_13"):
        app = DebuggerApp(program, ["@" + str(tmp_path / "x.npy")],
                          config_dir=str(tmp_path / "config"))
        line = next(i for i, text in enumerate(lines, 1) if text.startswith(name + " "))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            screen = screen_of(app)
            source = screen.query_one("#source", SourceView)
            source.focus()
            await settle(app, pilot)
            assert app.focused is source and source.shows_program
            source.set_cursor(line - 1)
            await press(app, pilot, "b")
            assert [b.line for b in app.session.breakpoints] == [line]
            await press(app, pilot, "c")
            fi, pc = app.session.location()
            ins = program.exe.functions[fi].instructions[pc]
            assert isinstance(ins, InvokePacked), ins
            assert source.current == line
            # the breakpoint is the node's, as `break NAME` makes it
            assert [b.spec for b in app.session.breakpoints] == [name]
            await press(app, pilot, "b")  # b again on the line: removed
            assert list(app.session.breakpoints) == []


async def test_break_on_a_resnet50_node_then_continue_stops_at_its_kernel(tmp_path):
    """`rvmdbg light_resnet50.onnx` (the onnx package's model-zoo ResNet-50, whose nodes are
    named n0, n1, ...): `break n39` (a 3x3 Conv of stage 3) in the console, then `c`, stops
    at that node's kernel call, and the stop line names the node."""
    import os

    import onnx

    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.program import load_program
    from rvmdbg.vm.bytecode import InvokePacked
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        "light_resnet50.onnx")
    if not os.path.exists(path):
        pytest.skip("this onnx package ships no light_resnet50.onnx")
    program = load_program(path)
    listing = program.source_text.split("\n")
    line = next(i for i, text in enumerate(listing, 1) if text.startswith("n39 "))
    assert listing[line - 1].startswith("n39  Conv  [r38, gpu_0/res3_0_branch2b_w_0]")
    np.save(tmp_path / "x.npy",
            np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32"))
    app = DebuggerApp(program, ["@" + str(tmp_path / "x.npy")],
                      config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, "break n39")
        await press(app, pilot, "escape", "c")
        session = app.session
        fi, pc = session.location()
        ins = program.exe.functions[fi].instructions[pc]
        assert isinstance(ins, InvokePacked), ins
        # the Conv, its BatchNormalization and Relu are one kernel (SimplifyInference and
        # FuseOps): its call is where the Conv's line is entered
        assert line in program.exe.fused_lines[(fi, pc)]
        assert session.step_count > 100   # the nodes before it ran
        stop = screen_of(app).status.stop_text
        assert "[n39, n40, n41]" in stop and "(breakpoint 1)" in stop, stop
        assert any("breakpoint 1 at n39 (" in text for text in console_text(app))
