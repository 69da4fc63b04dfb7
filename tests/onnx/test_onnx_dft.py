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


@pytest.mark.parametrize("window,frame_length,onesided", [
    (None, 16, 1), (np.hanning(16).astype("float32"), None, 1),
    (np.hamming(10).astype("float32"), 10, 0)])
def test_stft_agrees_with_onnx_reference(window, frame_length, onesided):
    inits = [numpy_helper.from_array(np.array(6, "int64"), "step")]
    names = ["signal", "step", "", ""]
    if window is not None:
        inits.append(numpy_helper.from_array(window, "window"))
        names[2] = "window"
    if frame_length is not None:
        inits.append(numpy_helper.from_array(np.array(frame_length, "int64"), "length"))
        names[3] = "length"
    node = helper.make_node("STFT", names, ["y"], onesided=onesided)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [2, 64, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(3).standard_normal((2, 64, 1)).astype("float32")
    (want,) = ReferenceEvaluator(model).run(None, {"signal": x})
    imp = import_model(model)
    got = np.asarray(VirtualMachine(compile_module(check_module(imp.module))).invoke("main", [x]))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_stft_of_a_complex_signal_is_refused_by_name():
    from rvmdbg.onnx.errors import OnnxImportError
    node = helper.make_node("STFT", ["signal", "step"], ["y"], name="Stft_3")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 32, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(4, "int64"), "step")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError) as err:
        import_model(model)
    text = str(err.value)   # the node's line of the listing, with a caret under it
    assert "Stft_3  STFT  [signal, step] -> [y]" in text and "^~~" in text
    assert "real signal" in text
