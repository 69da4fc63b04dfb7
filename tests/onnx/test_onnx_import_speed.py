"""The importer's work grows linearly with the network's depth: each node's result is folded
once, not re-walked by every later node (DenseNet-121 took 7 s to import when it was)."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from rvmdbg.onnx import import_model, importer  # noqa: E402


def _chain(depth: int):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info(f"t{depth}", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Abs" if i % 2 else "Neg", [f"t{i}" if i else "x"],
                              [f"t{i + 1}"], name=f"n{i}") for i in range(depth)]
    graph = helper.make_graph(nodes, "chain", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_folding_visits_each_expression_a_bounded_number_of_times(monkeypatch):
    counts = {}
    real = importer._fold

    def counting(e, memo):
        counts[id(e)] = counts.get(id(e), 0) + 1
        return real(e, memo)
    monkeypatch.setattr(importer, "_fold", counting)
    depth = 200
    imp = import_model(_chain(depth))
    # one visit per expression as it is made, one more as the next node's argument
    assert sum(counts.values()) <= 3 * depth, sum(counts.values())
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    x = np.arange(6, dtype="float32").reshape(2, 3) - 2
    out = VirtualMachine(compile_module(check_module(imp.module))).invoke("main", [x])
    assert np.array_equal(np.asarray(out), np.abs(x))  # Neg then Abs, 100 times


def test_a_node_of_constants_still_folds_after_earlier_nodes():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    c = helper.make_tensor("c", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="r"),
             helper.make_node("Neg", ["c"], ["nc"], name="nc"),
             helper.make_node("Add", ["r", "nc"], ["y"], name="add")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [c]),
                              opset_imports=[helper.make_opsetid("", 13)])
    imp = import_model(model)
    from rvmdbg.relay.ast import Constant
    folded = imp.tensors["nc"]
    assert type(folded) is Constant and np.array_equal(folded.data, [-1.0, -2.0, -3.0])
