"""The ONNX names in the debugger (issue 26 item 4), on the Python API (the ONNX program kind
is not yet reachable from `rvmdbg debug`): `break NODE` stops at that node's kernel, `print
TENSOR` prints a tensor by its ONNX name, stop lines name the node."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvmdbg.debug import DebugSession  # noqa: E402
from rvmdbg.debug.commands import CommandInterpreter  # noqa: E402
from rvmdbg.debug.names import Fixed, Param, Produced  # noqa: E402
from rvmdbg.onnx import import_model, networks  # noqa: E402
from rvmdbg.onnx.debug_names import name_table  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402


def _model():
    x = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("prob", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.full((2, 1, 3, 3), 0.5, "float32"), "W")
    nodes = [helper.make_node("Conv", ["input.1", "W"], ["conv1_out"], pads=[1, 1, 1, 1],
                              name="Conv_12"),
             helper.make_node("MaxPool", ["conv1_out"], ["pool"], kernel_shape=[2, 2],
                              strides=[2, 2], name="Pool_13"),
             helper.make_node("Softmax", ["pool"], ["prob"], axis=1)]  # unnamed: Softmax_0
    graph = helper.make_graph(nodes, "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _session(model, feeds):
    imp = import_model(model)
    exe = compile_module(check_module(imp.module))
    table = name_table(model, imp)
    s = DebugSession(exe, [feeds[n] for n in imp.inputs], names=table)
    return imp, table, s, CommandInterpreter(s)


def test_the_table_names_nodes_by_line_and_tensors_by_their_producer():
    model = _model()
    imp, table, _s, _ci = _session(model, {"input.1": np.ones((1, 1, 4, 4), "float32")})
    assert table.places == imp.nodes
    assert set(table.places) == {"Conv_12", "Pool_13", "Softmax_0"}
    assert table.values["input.1"] == Param(0)
    assert table.values["conv1_out"] == Produced(imp.nodes["Conv_12"], 0)
    assert isinstance(table.values["W"], Fixed)
    # the listing line of each node starts with its name
    lines = imp.node_lines.splitlines()
    for name, line in table.places.items():
        assert lines[line - 1].startswith(name)


def test_break_on_a_node_print_a_tensor_and_the_stop_line_names_the_node():
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    _imp, _t, _s, ci = _session(_model(), {"input.1": x})
    assert "breakpoint 1 at Conv_12 (" in ci.execute("break Conv_12")
    stop = ci.execute("continue")
    assert "[Conv_12]" in stop and "invoke_packed" in stop
    assert "not computed yet" in ci.execute("print conv1_out")
    ci.execute("next")
    out = ci.execute("print conv1_out[0, 0, 1, 1]")
    assert out.startswith("conv1_out ($") and "22.5" in out  # 0.5 * (0+1+2+4+5+6+8+9+10)
    assert ci.execute("print W[0, 0, 0, 0]").startswith("W[0, 0, 0, 0] = 0.5")
    assert "breakpoint 2 at Softmax_0" in ci.execute("break Softmax_0")
    assert "[Softmax_0]" in ci.execute("continue")


def test_squeezenet_break_on_a_node_then_continue_stops_there():
    net = next(n for n in networks.networks() if n.name == "light/squeezenet")
    model, feeds, _expected = networks.load(net)
    _imp, table, s, ci = _session(model, feeds)
    out = ci.execute("break n12")
    assert out.startswith("breakpoint 1 at n12 (squeezenet_old.onnx:")
    stop = ci.execute("continue")
    assert "(breakpoint 1)" in stop and "invoke_packed" in stop
    nodes = stop.split("[", 2)[2].split("]")[0].split(", ")
    # the kernel's nodes: n12 and the ones fused with it
    assert "n12" in nodes and all(node in table.places for node in nodes), nodes


def test_rvmdbg_debug_batch_on_an_onnx_file_takes_its_names(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    import onnx
    path = tmp_path / "model.onnx"
    onnx.save(_model(), str(path))
    np.save(tmp_path / "x.npy", np.arange(16, dtype="float32").reshape(1, 1, 4, 4))
    cmds = tmp_path / "cmds.txt"
    cmds.write_text("break Conv_12\ncontinue\nnext\nprint conv1_out[0, 0, 1, 1]\n"
                    "print nothing_here\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "debug", str(path),
                           f"@{tmp_path / 'x.npy'}", "--batch", str(cmds)],
                          capture_output=True, text=True, timeout=120, cwd=root)
    out = proc.stdout
    assert "breakpoint 1 at Conv_12 (" in out, (out, proc.stderr)
    assert "[Conv_12]: invoke_packed" in out and "(breakpoint 1)" in out
    assert "conv1_out ($" in out and "22.5" in out
    # a name the table lacks is the usual register error, and batch mode says one failed
    assert "expected a register like $3, got 'nothing_here'" in out
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


def _traced_kernel_lines(tmp_path, model, x) -> list:
    """`rvmdbg trace` on `model` saved to a file, with `x` as its input: the invoke_packed
    lines."""
    import subprocess
    import sys
    from pathlib import Path
    import onnx
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    np.save(tmp_path / "x.npy", x)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "trace", str(path),
                           f"@{tmp_path / 'x.npy'}"],
                          capture_output=True, text=True, timeout=120, cwd=root)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if "invoke_packed" in line]


def test_rvmdbg_trace_on_an_onnx_file_names_each_lines_node(tmp_path):
    kernels = _traced_kernel_lines(tmp_path, _model(), np.ones((1, 1, 4, 4), "float32"))
    assert kernels and all(" [" in line.split(":")[0] for line in kernels), kernels
    assert any("[Conv_12]: invoke_packed" in line for line in kernels)
    assert any("[Softmax_0]: invoke_packed" in line for line in kernels)


def test_rvmdbg_graph_on_an_onnx_file_shows_each_kernels_node(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    import onnx
    path = tmp_path / "model.onnx"
    onnx.save(_model(), str(path))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "graph", str(path)],
                          capture_output=True, text=True, timeout=120, cwd=root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any("tvm_op fused_nn_conv2d(0, 1) [Conv_12] ->" in line for line in lines), lines
    assert any("[Pool_13]" in line for line in lines) and any("[Softmax_0]" in line
                                                               for line in lines)


def _fused_model():
    """Conv (with a bias) then Relu then MaxPool: Relay's fusion makes one kernel of the
    first two nodes' calls (conv2d, bias_add, relu) and one of the pool."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.full((2, 1, 3, 3), 0.5, "float32"), "W")
    b = numpy_helper.from_array(np.array([1.0, -1.0], "float32"), "B")
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1],
                              name="Conv_12"),
             helper.make_node("Relu", ["c"], ["r"], name="Relu_13"),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                              name="Pool_14")]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, b]),
                             opset_imports=[helper.make_opsetid("", 13)])


def test_a_fused_kernel_is_named_by_every_node_it_came_from():
    from rvmdbg.graph.lower import lower_to_graph
    from rvmdbg.graph.report import graph_report
    model = _fused_model()
    imp = import_model(model)
    mod = check_module(imp.module)
    names = name_table(model, imp)
    graph = lower_to_graph(mod, "main")
    kernels = [graph.nodes[k] if isinstance(k, int) else k for k in graph.kernel_nodes]
    by_line = names.line_names()
    assert [[by_line[line] for line in k.source_lines()] for k in kernels] == [
        ["Conv_12", "Relu_13"], ["Pool_14"]]
    text = graph_report(mod, names=names)
    assert "tvm_op fused_nn_conv2d_nn_bias_add_nn_relu(0, 1, 2) [Conv_12, Relu_13] ->" in text
    assert "tvm_op fused_nn_max_pool2d(3) [Pool_14] ->" in text


def test_stop_and_trace_lines_name_every_node_fused_into_the_kernel(tmp_path):
    """The VM's call of a fused kernel names each node fused into it, as the graph does:
    a stop at `break Conv_12` and the trace line say `[Conv_12, Relu_13]`; the pool's call
    only its own node; `break Relu_13` (a node with no kernel of its own) is refused
    clearly and `print r` says where its value went."""
    model = _fused_model()
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    _imp, _t, _s, ci = _session(model, {"x": x})
    ci.execute("break Conv_12")
    stop = ci.execute("continue")
    assert "[Conv_12, Relu_13]: invoke_packed" in stop, stop
    ci.execute("break Pool_14")
    assert "[Pool_14]: invoke_packed" in ci.execute("continue")
    kernels = _traced_kernel_lines(tmp_path, model, x)
    assert len(kernels) == 2, kernels
    assert "[Conv_12, Relu_13]: invoke_packed" in kernels[0]
    assert "[Pool_14]: invoke_packed" in kernels[1]
