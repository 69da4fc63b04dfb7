"""One ONNX node run by `onnx.reference.ReferenceEvaluator`: the oracle the operator families'
tests compare their kernels with where the ONNX operator and the Relay operator agree."""
from __future__ import annotations

import numpy as np
import pytest


def onnx_node(op_type: str, inputs: list, n_outputs: int = 1, opset: int = 18, **attrs):
    """The outputs of one ONNX `op_type` node on the arrays `inputs` (skips without onnx)."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [f"x{i}" for i in range(len(inputs))]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    result = ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))
    return [np.asarray(r) for r in result]
