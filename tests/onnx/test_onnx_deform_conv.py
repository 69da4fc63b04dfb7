"""DeformConv (image.grid_sample per offset group and kernel position, one einsum per group)
against ONNX's reference evaluator: groups, offset groups, strides, dilations, uneven pads,
a mask and a bias, a batch of two, offsets that carry points off the image's edges."""
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
    # channels, out channels, kernel, group, offset_group, strides, dilations, pads, mask, bias
    (1, 1, (2, 2), 1, 1, [1, 1], [1, 1], [0, 0, 0, 0], False, False),
    (4, 6, (3, 3), 2, 2, [1, 1], [1, 1], [1, 1, 1, 1], True, True),
    (2, 2, (2, 3), 1, 2, [2, 1], [1, 2], [1, 0, 0, 2], False, True),
    (3, 3, (3, 2), 3, 1, [1, 2], [2, 1], [2, 1, 1, 0], True, False),
]


def _out(size, k, s, d, before, after):
    return (size + before + after - (d * (k - 1) + 1)) // s + 1


@pytest.mark.parametrize("ch,oc,kernel,group,og,strides,dilations,pads,with_mask,with_bias",
                         CASES)
def test_deform_conv_agrees_with_onnx_reference(ch, oc, kernel, group, og, strides, dilations,
                                                pads, with_mask, with_bias):
    rng = np.random.default_rng(9)
    h, w = 6, 5
    oh = _out(h, kernel[0], strides[0], dilations[0], pads[0], pads[2])
    ow = _out(w, kernel[1], strides[1], dilations[1], pads[1], pads[3])
    taps = kernel[0] * kernel[1]
    feeds = {"X": rng.standard_normal((2, ch, h, w)).astype("float32"),
             "W": rng.standard_normal((oc, ch // group, *kernel)).astype("float32"),
             # up to 1.5 pixels: some points land off the image, some between it and outside
             "offset": rng.uniform(-1.5, 1.5, (2, og * taps * 2, oh, ow)).astype("float32")}
    names = ["X", "W", "offset", "", ""]
    if with_bias:
        feeds["B"] = rng.standard_normal(oc).astype("float32")
        names[3] = "B"
    if with_mask:
        feeds["mask"] = rng.random((2, og * taps, oh, ow)).astype("float32")
        names[4] = "mask"
    while names[-1] == "":
        names.pop()
    node = helper.make_node("DeformConv", names, ["y"], kernel_shape=list(kernel), group=group,
                            offset_group=og, strides=strides, dilations=dilations, pads=pads)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
         for k, v in feeds.items() if k != "W"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(feeds["W"], "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    imp = import_model(model)
    got = VirtualMachine(compile_module(check_module(imp.module))).invoke(
        "main", [feeds[n] for n in imp.inputs])
    got = np.asarray(got)
    assert got.shape == want.shape == (2, oc, oh, ow)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
