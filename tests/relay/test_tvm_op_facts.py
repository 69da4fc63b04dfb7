"""The registry against TVM v0.14.0's own declarations (tvm_v014_op_facts.py): every operator of
issue 11 is registered, each operator TVM also has takes TVM's attribute names, an attribute with
a C++ default gets that default (TVM's printer omits it, so a printed call without it means that
value), and the fusion pattern is TVM's."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import OPS, REQUIRED, normalize_attrs
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine
from tests.relay.tvm_v014_op_facts import ATTRS, NULL, PATTERNS, REQ

# Issue 11's operator list, in its order (TVM spells reverse_reshape contrib_reverse_reshape)
ISSUE_11 = """
nn.conv1d nn.conv2d nn.conv2d_transpose nn.max_pool1d nn.max_pool2d nn.avg_pool1d nn.avg_pool2d
nn.global_avg_pool2d nn.global_max_pool2d nn.adaptive_avg_pool2d
nn.batch_norm nn.layer_norm nn.group_norm nn.instance_norm nn.l2_normalize nn.lrn nn.dropout
nn.prelu nn.pad nn.upsampling image.resize2d nn.matmul
erf fast_exp fast_tanh fast_erf strided_slice gather gather_nd one_hot arange tile repeat cumsum
topk argsort sort variance std logsumexp layout_transform collapse_sum_like broadcast_to_like
reshape_like contrib_reverse_reshape annotation.stop_fusion
dyn.reshape dyn.broadcast_to dyn.strided_slice dyn.zeros dyn.ones dyn.full dyn.tile
qnn.quantize qnn.dequantize qnn.requantize qnn.conv2d qnn.dense qnn.add qnn.mul qnn.concatenate
""".split()

# (op, attribute) pairs that differ from TVM's struct on purpose
TVM_ONLY = {
    ("sort", "dtype"): "ArgsortAttrs is shared with argsort; sort never sets it, so it is never "
                       "printed",
    ("broadcast_to", "dtype"): "InitOpAttrs is shared with zeros/ones; broadcast_to never sets it",
}
RVMDBG_ONLY = {
    ("nn.pad", "pad_value"): "TVM before 0.8 printed the pad value as an attribute",
    ("image.resize2d", "scales"): "ONNX Resize's scale factors (coordinates map by them)",
    ("image.resize2d", "antialias"): "ONNX Resize's antialias filter when downsampling",
    ("vision.roi_align", "aligned"): "ONNX RoiAlign's half_pixel coordinates",
}
# an rvmdbg default that means the same as TVM's
SAME_MEANING = {
    ("nn.adaptive_avg_pool2d", "output_size"): (None, []),  # both: the input's size
}


def test_every_issue_11_operator_is_registered():
    missing = [name for name in ISSUE_11 if name not in OPS]
    assert not missing


@pytest.mark.parametrize("name", sorted(set(ATTRS) & set(OPS)))
def test_attribute_names_and_defaults_are_tvms(name):
    struct, fields = ATTRS[name]
    op = OPS[name]
    names = set(op.attr_names)
    assert {f for f in fields if (name, f) not in TVM_ONLY} <= names, struct
    assert {f for f in names - set(fields)} <= {f for (o, f) in RVMDBG_ONLY if o == name}, struct
    for field, default in fields.items():
        spec = op.attr_specs.get(field)
        if spec is None or default in (REQ, NULL):
            continue  # always printed, or null: rvmdbg may default it as TVM's Python API does
        if (name, field) in SAME_MEANING:
            assert (spec.default, default) == SAME_MEANING[name, field]
            continue
        assert spec.default is not REQUIRED, f"{name}.{field}: TVM's default is {default!r}"
        assert spec.default == default, f"{name}.{field}: rvmdbg {spec.default!r}, TVM {default!r}"


@pytest.mark.parametrize("name", sorted(set(PATTERNS) & set(OPS)))
def test_fusion_pattern_is_tvms(name):
    assert OPS[name].pattern == PATTERNS[name]


# TVM registers no pattern for these (SimplifyInference rewrites them before FuseOps), which
# FuseOps would take as opaque
NO_TVM_PATTERN = ("nn.layer_norm", "nn.group_norm", "nn.instance_norm", "nn.l2_normalize")


def test_the_facts_cover_issue_11():
    # std and logsumexp are Python helpers in TVM (docs/differences.md), not operators
    uncovered = [n for n in ISSUE_11 if n not in PATTERNS
                 and n not in NO_TVM_PATTERN + ("std", "logsumexp")]
    assert not uncovered
    assert all(OPS[n].pattern == "opaque" for n in NO_TVM_PATTERN)


def test_printed_calls_without_the_attribute_mean_tvms_default():
    # TVM prints nn.batch_matmul(x, y) for transpose_b=False: x @ y per batch
    mod = load_module('#[version = "0.0.5"]\n'
                      "def @main(%x: Tensor[(1, 1, 2), float32], %y: Tensor[(1, 2, 3), float32]) {\n"
                      "  nn.batch_matmul(%x, %y)\n}\n", "<test>")
    x = np.array([[[1, 2]]], "float32")
    y = np.arange(6, dtype="float32").reshape(1, 2, 3)
    got = VirtualMachine(compile_module(mod)).invoke("main", [x, y])
    np.testing.assert_array_equal(got, x @ y)
    # nn.leaky_relu(x) is alpha=0.25
    leaky = OPS["nn.leaky_relu"].kernel([np.array([-4.0, 2.0], "float32")],
                                        normalize_attrs("nn.leaky_relu", {}))
    assert leaky.tolist() == [-1.0, 2.0]
    # qnn.concatenate(...) is axis=0
    assert normalize_attrs("qnn.concatenate", {})["axis"] == 0
