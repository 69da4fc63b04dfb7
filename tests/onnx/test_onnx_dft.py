"""DFT through Relay's dft, against ONNX's reference evaluator: real and complex inputs, each
axis, dft_length cropping and zero-padding, one-sided forward (rfft) and inverse (irfft, odd
and even lengths), opset 17's axis attribute and opset 20's axis input."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def _model(shape, opset, length=None, axis=None, **attrs):
    inits, names = [], ["x"]
    if length is not None or (opset >= 20 and axis is not None):
        names.append("n" if length is not None else "")
        if length is not None:
            inits.append(numpy_helper.from_array(np.array(length, "int64"), "n"))
    if opset >= 20 and axis is not None:
        names.append("axis")
        inits.append(numpy_helper.from_array(np.array(axis, "int64"), "axis"))
    elif axis is not None:
        attrs["axis"] = axis
    node = helper.make_node("DFT", names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


CASES = [
    # shape, opset, dft_length, axis, attributes
    ((2, 8, 1), 17, None, 1, {}),
    ((2, 8, 2), 17, 5, 1, {}),                                   # cropped
    ((2, 5, 3, 2), 20, 8, 1, {}),                                # zero-padded
    ((2, 5, 6, 1), 20, None, 2, {"onesided": 1}),                # rfft along axis 2
    ((3, 6, 2), 17, None, 1, {"inverse": 1}),
    ((2, 5, 2), 20, None, 1, {"inverse": 1, "onesided": 1}),     # irfft to 8
    ((2, 5, 2), 20, 9, 1, {"inverse": 1, "onesided": 1}),        # irfft to an odd 9
    ((2, 5, 2), 17, 4, 1, {"inverse": 1, "onesided": 1}),        # irfft from a cropped half
    ((4, 3, 2), 20, None, None, {}),                             # opset 20's default axis -2
]


@pytest.mark.parametrize("shape,opset,length,axis,attrs", CASES)
def test_dft_agrees_with_onnx_reference(shape, opset, length, axis, attrs):
    model = _model(shape, opset, length, axis, **attrs)
    x = np.random.default_rng(7).standard_normal(shape).astype("float32")
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    imp = import_model(model)
    got = VirtualMachine(compile_module(check_module(imp.module))).invoke("main", [x])
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
