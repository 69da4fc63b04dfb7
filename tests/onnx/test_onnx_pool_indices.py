"""MaxPool's Indices output and MaxUnpool (TVM's converter made no Indices and misplaced
MaxUnpool's values under a larger output_shape) against onnx's reference evaluator, on
batches of several channels, with pads, strides, dilations and both storage orders."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.values import ADTValue  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def _both(nodes, inputs, outputs, feeds, opset=12):
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    exe = compile_module(check_module(import_model(model).module))
    out = VirtualMachine(exe).invoke("main", [feeds[i.name] for i in inputs])
    got = [np.asarray(o) for o in out.fields] if isinstance(out, ADTValue) else [np.asarray(out)]
    return got, ReferenceEvaluator(model).run(None, feeds)


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("kw", [dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]),
                                dict(kernel_shape=[2, 2], dilations=[2, 1]),
                                dict(kernel_shape=[2, 2], strides=[2, 2])])
def test_maxpool_indices_match_onnx(storage_order, kw):
    rng = np.random.default_rng(2)
    x = rng.integers(-5, 5, (2, 3, 6, 5)).astype("float32")  # ties: the first largest wins
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], storage_order=storage_order, **kw)
    got, want = _both([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                       helper.make_tensor_value_info("i", TensorProto.INT64, None)], {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].tolist() == want[1].tolist()


def test_maxunpool_pads_to_a_larger_output_shape():
    # indices over the inferred (1, 2, 4, 4); output_shape (1, 2, 5, 6) pads at the ends
    y = np.arange(1, 9, dtype="float32").reshape(1, 2, 2, 2)
    idx = np.array([[[[0, 3], [9, 14]], [[16 + 5, 16 + 7], [16 + 8, 16 + 15]]]], "int64")
    shape = np.array([1, 2, 5, 6], "int64")
    unpool = helper.make_node("MaxUnpool", ["y", "i", "s"], ["z"], kernel_shape=[2, 2],
                              strides=[2, 2])
    const = helper.make_node("Constant", [], ["s"],
                             value=helper.make_tensor("s", TensorProto.INT64, [4], shape))
    got, want = _both([const, unpool],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape),
                       helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape)],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                      {"y": y, "i": idx})
    np.testing.assert_array_equal(got[0], want[0])
    assert got[0].shape == (1, 2, 5, 6) and got[0][0, 0, 0, 3] == 2 and got[0][0, 1, 3, 3] == 8
