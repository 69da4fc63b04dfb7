"""Integer cases ONNX defines and TVM refused, checked on values chosen to tell a correct
result from a plausible wrong one: TopK on uint64 values above 2**63 (an int64 cast would
reorder them) and on uint16/uint32, BitCast of bool to uint8, Unique along an axis (TVM's
unique took a 1-d tensor) against onnx's reference evaluator."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.values import ADTValue  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def _run(node, inputs, outputs, feeds, opset, initializer=()):
    graph = helper.make_graph([node], "g", inputs, outputs, initializer=list(initializer))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    exe = compile_module(check_module(import_model(model).module))
    out = VirtualMachine(exe).invoke("main", feeds)
    return [np.asarray(o) for o in out.fields] if isinstance(out, ADTValue) else [np.asarray(out)]


@pytest.mark.parametrize("dtype,onnx_type", [("uint64", TensorProto.UINT64),
                                             ("uint32", TensorProto.UINT32),
                                             ("uint16", TensorProto.UINT16)])
@pytest.mark.parametrize("largest", [1, 0])
def test_topk_unsigned_keeps_the_unsigned_order(dtype, onnx_type, largest):
    top = np.iinfo(dtype).max
    x = np.array([[5, top, top // 2 + 3, 0, top - 1, 7]], dtype)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)
    vals, idx = _run(node, [helper.make_tensor_value_info("x", onnx_type, [1, 6])],
                     [helper.make_tensor_value_info("v", onnx_type, [1, 3]),
                      helper.make_tensor_value_info("i", TensorProto.INT64, [1, 3])],
                     [x], 11, [helper.make_tensor("k", TensorProto.INT64, [1], [3])])
    order = np.argsort(-x[0].astype(object) if largest else x[0].astype(object), kind="stable")
    assert vals.dtype == np.dtype(dtype)
    assert idx[0].tolist() == order[:3].tolist()
    assert vals[0].tolist() == x[0][order[:3]].tolist()


def test_bitcast_bool_to_uint8_is_the_byte():
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.UINT8)
    (y,) = _run(node, [helper.make_tensor_value_info("x", TensorProto.BOOL, [4])],
                [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])],
                [np.array([True, False, True, True])], 26)
    assert y.dtype == np.uint8 and y.tolist() == [1, 0, 1, 1]


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_along_an_axis_matches_onnx(sorted_, axis):
    from onnx.reference import ReferenceEvaluator
    x = np.array([[3, 1, 3, 0], [2, 2, 2, 2], [3, 1, 3, 0], [-1, 5, -1, 7]], "int64")
    node = helper.make_node("Unique", ["x"], ["y", "i", "inv", "n"], axis=axis, sorted=sorted_)
    outs = [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in "y i inv n".split()]
    inp = [helper.make_tensor_value_info("x", TensorProto.INT64, [4, 4])]
    got = _run(node, inp, outs, [x], 11)
    model = helper.make_model(helper.make_graph([node], "g", inp, outs),
                              opset_imports=[helper.make_opsetid("", 11)])
    want = ReferenceEvaluator(model).run(None, {"x": x})
    for a, b in zip(got[1:], want[1:]):
        assert a.tolist() == np.asarray(b).tolist()
    # Y: the slices at the first indices along the axis (onnx 1.23's evaluator takes along
    # axis 0 when sorted=0, which the spec does not say)
    assert got[0].tolist() == np.take(x, want[1], axis=axis).tolist()
