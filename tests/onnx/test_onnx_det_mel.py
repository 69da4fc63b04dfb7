"""Det by the Leibniz expansion (against NumPy's determinant, which ONNX's reference uses) and
MelWeightMatrix computed at import (against ONNX's reference evaluator), with their refusals."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.onnx.errors import OnnxImportError  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402


def _det_model(shape):
    node = helper.make_node("Det", ["x"], ["y"], name="Det_7")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _run(model, args):
    exe = compile_module(check_module(import_model(model).module))
    return np.asarray(VirtualMachine(exe).invoke("main", args))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), lead=st.lists(st.integers(1, 3), max_size=2), seed=st.integers(0, 99))
def test_det_is_numpys_determinant(n, lead, seed):
    x = np.random.default_rng(seed).standard_normal((*lead, n, n)).astype("float32")
    got = _run(_det_model(x.shape), [x])
    want = np.linalg.det(x.astype(np.float64))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_det_of_a_large_matrix_is_refused_at_its_node():
    with pytest.raises(OnnxImportError) as err:
        import_model(_det_model((5, 5)))
    text = str(err.value)
    assert "Det_7  Det  [x] -> [y]" in text and "5 x 5" in text and "4 x 4" in text


def _mel_model(bins, length, rate, low, high):
    names = ["bins", "length", "rate", "low", "high"]
    values = [np.array(bins, "int32"), np.array(length, "int32"), np.array(rate, "int32"),
              np.array(low, "float32"), np.array(high, "float32")]
    node = helper.make_node("MelWeightMatrix", names, ["y"], name="Mel_2")
    graph = helper.make_graph([node], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in zip(names, values)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("bins,length,rate,low,high", [
    (8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 7600.0), (4, 9, 1000, 100.0, 450.0)])
def test_mel_weight_matrix_agrees_with_onnx_reference(bins, length, rate, low, high):
    model = _mel_model(bins, length, rate, low, high)
    (want,) = ReferenceEvaluator(model).run(None, {})
    got = _run(model, [])
    assert got.shape == want.shape == (length // 2 + 1, bins)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_mel_weight_matrix_past_nyquist_is_refused():
    with pytest.raises(OnnxImportError) as err:
        import_model(_mel_model(8, 16, 8192, 0.0, 9000.0))
    assert "Mel_2" in str(err.value) and "spectrogram bins" in str(err.value)
