"""Col2Im as a grouped transposed convolution with one-hot weights, against ONNX's reference
evaluator: 1-d, 2-d and 3-d blocks, strides that leave a remainder (output_padding),
dilations and uneven pads."""
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

CASES = [
    # channels, image_shape, block_shape, strides, dilations, pads
    (2, [7], [3], [2], [1], [1, 0]),
    (1, [5, 5], [2, 2], [1, 1], [1, 1], [0, 0, 0, 0]),
    (3, [6, 7], [3, 2], [2, 3], [1, 1], [1, 0, 0, 2]),     # remainders on both dims
    (2, [8, 6], [2, 3], [1, 1], [2, 2], [1, 1, 1, 1]),
    (1, [4, 5, 3], [2, 2, 2], [1, 2, 1], [1, 1, 1], [0, 0, 0, 1, 0, 0]),
]


def _blocks(image, block, strides, dilations, pads):
    k = len(image)
    return [(image[d] + pads[d] + pads[d + k] - dilations[d] * (block[d] - 1) - 1)
            // strides[d] + 1 for d in range(k)]


@pytest.mark.parametrize("channels,image,block,strides,dilations,pads", CASES)
def test_col2im_agrees_with_onnx_reference(channels, image, block, strides, dilations, pads):
    rows = channels * int(np.prod(block))
    length = int(np.prod(_blocks(image, block, strides, dilations, pads)))
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=strides,
                            dilations=dilations, pads=pads)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, rows, length])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(image, "int64"), "image"),
         numpy_helper.from_array(np.array(block, "int64"), "block")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(5).standard_normal((2, rows, length)).astype("float32")
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    exe = compile_module(check_module(import_model(model).module))
    got = np.asarray(VirtualMachine(exe).invoke("main", [x]))
    assert got.shape == want.shape == (2, channels, *image)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
