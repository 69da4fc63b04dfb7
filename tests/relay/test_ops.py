"""Tests of the operator registry: attribute normalisation, type relations on static and `?`
shapes, kernels against hand-computed values, dtype preservation, run-time errors, the 0-d fast
path against the NumPy path, and the run-time shape function."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import (
    OPS, PATTERNS, SCALAR_FAST, Attrs, AttrSpec, KernelError, OpAttrError, OpDef, OpTypeError,
    get_op, infer_shape, normalize_attrs,
)
from rvmdbg.relay.types import TensorType, TupleType

from op_cases import A, T, check_kernel_case, check_type_case, covered, rel, run


def Tup(*fields):
    return TupleType(tuple(fields))


# ---------------------------------------------------------------------------------------------
# The registry

REQUIRED_OPS = """add subtract multiply divide power maximum minimum negative abs exp log sqrt tanh
sigmoid equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not
where cast copy zeros ones zeros_like ones_like full reshape transpose expand_dims squeeze
concatenate split take sum mean max min argmax argmin clip nn.dense nn.bias_add nn.relu
nn.softmax nn.log_softmax nn.batch_flatten nn.batch_matmul shape_of floor_divide mod floor_mod
floor ceil round sign stack""".split()


def test_required_ops_registered():
    missing = [n for n in REQUIRED_OPS if n not in OPS]
    assert missing == []
    assert get_op("add") is OPS["add"]
    assert get_op("no_such_op") is None


def test_opdefs_are_consistent():
    for name, op in OPS.items():
        assert isinstance(op, OpDef) and op.name == name
        assert op.pattern in PATTERNS
        assert op.elementwise == (op.pattern in ("elemwise", "broadcast"))
        assert all(isinstance(a, AttrSpec) for a in op.attrs)
        assert callable(op.type_rel) and callable(op.kernel)


def test_fusion_patterns_follow_tvm():
    assert OPS["add"].pattern == "broadcast"
    assert OPS["exp"].pattern == "elemwise"
    assert OPS["reshape"].pattern == "injective"
    assert OPS["sum"].pattern == "comm_reduce"
    assert OPS["argmax"].pattern == "comm_reduce"
    assert OPS["nn.dense"].pattern == "out_elemwise_fusable"
    assert OPS["nn.batch_matmul"].pattern == "out_elemwise_fusable"
    assert OPS["shape_of"].pattern == "opaque"
    assert OPS["add"].elementwise and not OPS["sum"].elementwise
    assert OPS["concatenate"].tuple_input and not OPS["add"].tuple_input


def test_tvm_attribute_defaults():
    a = normalize_attrs("argmax", {})
    assert dict(a) == {"axis": None, "keepdims": False, "exclude": False,
                       "select_last_index": False}
    assert dict(normalize_attrs("take", {})) == {"axis": None, "batch_dims": 0, "mode": "clip"}
    # TVM's C++ defaults, which its printer omits (not its Python API's transpose_b=True)
    assert normalize_attrs("nn.batch_matmul", {})["transpose_b"] is False
    assert normalize_attrs("nn.leaky_relu", {})["alpha"] == 0.25
    assert normalize_attrs("nn.bias_add", {})["axis"] == 1
    assert normalize_attrs("nn.softmax", {})["axis"] == -1
    assert normalize_attrs("expand_dims", {"axis": 0})["num_newaxis"] == 1
    assert normalize_attrs("split", {"indices_or_sections": 2})["axis"] == 0
    assert normalize_attrs("reshape", {"newshape": [1]})["allowzero"] is False


# ---------------------------------------------------------------------------------------------
# normalize_attrs


def test_normalize_converts_kinds():
    a = normalize_attrs(OPS["sum"], {"axis": 1, "keepdims": 1})
    assert a["axis"] == [1] and a["keepdims"] is True and a["exclude"] is False
    assert normalize_attrs("cast", {"dtype": "float"})["dtype"] == "float32"
    ios = normalize_attrs("split", {"indices_or_sections": (2, 4)})["indices_or_sections"]
    assert ios == [2, 4]
    assert normalize_attrs("split", {"indices_or_sections": 3})["indices_or_sections"] == 3
    assert normalize_attrs("clip", {"a_min": 0, "a_max": 2})["a_max"] == 2.0
    assert normalize_attrs("full", {"shape": [2], "dtype": ""})["dtype"] is None
    assert normalize_attrs("reshape", {"newshape": np.int64(4)})["newshape"] == [4]


def test_normalize_is_idempotent_and_marks_result():
    a = normalize_attrs("sum", {"axis": [0]})
    assert isinstance(a, Attrs) and a.op_name == "sum"
    assert normalize_attrs("sum", a) is a
    assert normalize_attrs("mean", a) is not a  # normalised for another op: redone


def test_unknown_attribute_lists_valid_names():
    with pytest.raises(OpAttrError) as ei:
        normalize_attrs("argmax", {"axes": [1]})
    msg = str(ei.value)
    assert "unknown attribute 'axes'" in msg and "did you mean 'axis'" in msg
    assert "axis, keepdims, exclude, select_last_index" in msg
    assert ei.value.attr_name == "axes"


def test_missing_required_attribute():
    with pytest.raises(OpAttrError) as ei:
        normalize_attrs("cast", {})
    assert "missing required attribute 'dtype'" in str(ei.value)
    assert ei.value.attr_name == "dtype"


def test_attribute_on_op_without_attributes():
    with pytest.raises(OpAttrError, match="add: takes no attributes, got 'axis'"):
        normalize_attrs("add", {"axis": 1})


@pytest.mark.parametrize("op, attrs, fragment", [
    ("reshape", {"newshape": "abc"}, "'newshape' must be a list of integers"),
    ("reshape", {"newshape": [1.5]}, "'newshape' must be a list of integers"),
    ("cast", {"dtype": "float128"}, "'dtype' must be a dtype name"),
    ("sum", {"keepdims": 2}, "'keepdims' must be True or False"),
    ("expand_dims", {"axis": True}, "'axis' must be an integer"),
    ("clip", {"a_min": "x", "a_max": 1}, "'a_min' must be a number"),
    ("take", {"mode": "nearest"}, "'mode' must be one of 'clip', 'wrap', 'fast'"),
])
def test_attribute_kind_errors(op, attrs, fragment):
    with pytest.raises(OpAttrError, match=fragment):
        normalize_attrs(op, attrs)


def test_type_rel_and_kernel_accept_plain_dicts():
    # both normalise on the fly: an int axis works like [axis]
    assert rel("sum", T((2, 3)), axis=1) == T((2,))
    np.testing.assert_array_equal(run("sum", A([[1, 2], [3, 4]], "int32"), axis=1),
                                  A([3, 7], "int32"))


def test_type_rel_checks_arity_and_argument_kinds():
    with pytest.raises(OpTypeError, match="add: expects 2 arguments, got 1"):
        rel("add", T(()))
    with pytest.raises(OpTypeError, match="argument 2 must be a tensor"):
        rel("add", T(()), Tup(T(())))
    with pytest.raises(OpTypeError, match="concatenate: expects a tuple of tensors"):
        rel("concatenate", T((2,)))


# ---------------------------------------------------------------------------------------------
# Type relations: static and `?` shapes

TYPE_CASES = [
    # elementwise and broadcasting
    ("add", [T((2, 3)), T((3,))], {}, "Tensor[(2, 3), float32]"),
    ("add", [T((None, 3)), T((1,))], {}, "Tensor[(?, 3), float32]"),
    ("add", [T((None, 1)), T((4,))], {}, "Tensor[(?, 4), float32]"),
    ("add", [T((None,)), T((None,))], {}, "Tensor[(?,), float32]"),
    ("subtract", [T((), "int32"), T((5,), "int32")], {}, "Tensor[(5,), int32]"),
    ("multiply", [T((2, 1, 3), "int64"), T((4, 1), "int64")], {}, "Tensor[(2, 4, 3), int64]"),
    ("divide", [T((), "int32"), T((), "int32")], {}, "int32"),
    ("floor_divide", [T((None,), "int32"), T((), "int32")], {}, "Tensor[(?,), int32]"),
    ("trunc_divide", [T((2,), "int32"), T((2,), "int32")], {}, "Tensor[(2,), int32]"),
    ("mod", [T((2,), "int32"), T((), "int32")], {}, "Tensor[(2,), int32]"),
    ("trunc_mod", [T((2,), "int32"), T((), "int32")], {}, "Tensor[(2,), int32]"),
    ("floor_mod", [T((None, 2)), T((2,))], {}, "Tensor[(?, 2), float32]"),
    ("power", [T((3,)), T(())], {}, "Tensor[(3,), float32]"),
    ("maximum", [T((None,), "bool"), T((3,), "bool")], {}, "Tensor[(3,), bool]"),
    ("minimum", [T((2,), "uint8"), T((2,), "uint8")], {}, "Tensor[(2,), uint8]"),
    ("equal", [T((2, 3), "int32"), T((), "int32")], {}, "Tensor[(2, 3), bool]"),
    ("not_equal", [T((None,)), T(())], {}, "Tensor[(?,), bool]"),
    ("less", [T(()), T(())], {}, "bool"),
    ("less_equal", [T((4,), "int64"), T((4,), "int64")], {}, "Tensor[(4,), bool]"),
    ("greater", [T((1,)), T((None,))], {}, "Tensor[(?,), bool]"),
    ("greater_equal", [T((2, 1)), T((1, 2))], {}, "Tensor[(2, 2), bool]"),
    ("logical_and", [T((None,), "bool"), T((), "bool")], {}, "Tensor[(?,), bool]"),
    ("logical_or", [T((2,), "bool"), T((2,), "bool")], {}, "Tensor[(2,), bool]"),
    ("logical_xor", [T((2,), "bool"), T((), "bool")], {}, "Tensor[(2,), bool]"),
    ("logical_not", [T((None, 2), "bool")], {}, "Tensor[(?, 2), bool]"),
    ("negative", [T((None,), "int32")], {}, "Tensor[(?,), int32]"),
    ("abs", [T((2,), "int8")], {}, "Tensor[(2,), int8]"),
    ("sign", [T(())], {}, "float32"),
    ("exp", [T((None,))], {}, "Tensor[(?,), float32]"),
    ("log", [T((2,), "float64")], {}, "Tensor[(2,), float64]"),
    ("log2", [T((2,))], {}, "Tensor[(2,), float32]"),
    ("log10", [T((2,))], {}, "Tensor[(2,), float32]"),
    ("sqrt", [T(())], {}, "float32"),
    ("rsqrt", [T((3,))], {}, "Tensor[(3,), float32]"),
    ("sin", [T((3,))], {}, "Tensor[(3,), float32]"),
    ("cos", [T((3,))], {}, "Tensor[(3,), float32]"),
    ("tan", [T((3,))], {}, "Tensor[(3,), float32]"),
    ("tanh", [T((None, 3), "float16")], {}, "Tensor[(?, 3), float16]"),
    ("sigmoid", [T((None,))], {}, "Tensor[(?,), float32]"),
    ("floor", [T((2,))], {}, "Tensor[(2,), float32]"),
    ("ceil", [T((2,), "int32")], {}, "Tensor[(2,), int32]"),
    ("trunc", [T((None,))], {}, "Tensor[(?,), float32]"),
    ("round", [T((2,))], {}, "Tensor[(2,), float32]"),
    ("isnan", [T((None,))], {}, "Tensor[(?,), bool]"),
    ("isinf", [T((2,))], {}, "Tensor[(2,), bool]"),
    ("isfinite", [T(())], {}, "bool"),
    ("nn.relu", [T((None, 4))], {}, "Tensor[(?, 4), float32]"),
    ("nn.leaky_relu", [T((2,))], {"alpha": 0.1}, "Tensor[(2,), float32]"),
    ("copy", [T((None, 2), "int32")], {}, "Tensor[(?, 2), int32]"),
    ("zeros_like", [T((None,), "int64")], {}, "Tensor[(?,), int64]"),
    ("ones_like", [T((2, 2), "bool")], {}, "Tensor[(2, 2), bool]"),
    ("full_like", [T((None, 2)), T(())], {}, "Tensor[(?, 2), float32]"),
    ("where", [T((2, 1), "bool"), T((3,)), T(())], {}, "Tensor[(2, 3), float32]"),
    ("where", [T((None,), "bool"), T((None,)), T((None,))], {}, "Tensor[(?,), float32]"),
    ("cast", [T((None, 2))], {"dtype": "int32"}, "Tensor[(?, 2), int32]"),
    ("cast_like", [T((2,), "int32"), T((), "float64")], {}, "Tensor[(2,), float64]"),
    ("clip", [T((None,), "int32")], {"a_min": 0, "a_max": 5}, "Tensor[(?,), int32]"),
    ("zeros", [], {"shape": [2, 3], "dtype": "int32"}, "Tensor[(2, 3), int32]"),
    ("ones", [], {"shape": [], "dtype": "float32"}, "float32"),
    ("full", [T((), "int32")], {"shape": [2]}, "Tensor[(2,), int32]"),
    ("full", [T((), "int32")], {"shape": [2], "dtype": "float32"}, "Tensor[(2,), float32]"),
    ("broadcast_to", [T((None, 1))], {"shape": [4, 3]}, "Tensor[(4, 3), float32]"),
    # shape changes
    ("reshape", [T((2, 3))], {"newshape": [6]}, "Tensor[(6,), float32]"),
    ("reshape", [T((2, 3, 4))], {"newshape": [0, -1]}, "Tensor[(2, 12), float32]"),
    ("reshape", [T((2, 3, 4))], {"newshape": [-2]}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", [T((2, 3, 4))], {"newshape": [2, -2]}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", [T((2, 3, 4))], {"newshape": [-3, 4]}, "Tensor[(6, 4), float32]"),
    ("reshape", [T((6, 4))], {"newshape": [-4, 2, -1, 4]}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", [T((None, 3))], {"newshape": [-1]}, "Tensor[(?,), float32]"),
    ("reshape", [T((None, 3))], {"newshape": [0, 3, 1]}, "Tensor[(?, 3, 1), float32]"),
    ("reshape", [T((None, 3, 2))], {"newshape": [0, -1]}, "Tensor[(?, ?), float32]"),
    ("reshape", [T((2, None))], {"newshape": [-3]}, "Tensor[(?,), float32]"),
    ("reshape", [T((1,))], {"newshape": []}, "float32"),
    ("reshape", [T((0, 3))], {"newshape": [3, 0], "allowzero": True}, "Tensor[(3, 0), float32]"),
    ("transpose", [T((2, 3, 4))], {}, "Tensor[(4, 3, 2), float32]"),
    ("transpose", [T((2, None, 4))], {"axes": [0, 2, 1]}, "Tensor[(2, 4, ?), float32]"),
    ("transpose", [T((2, 3))], {"axes": [-1, 0]}, "Tensor[(3, 2), float32]"),
    ("expand_dims", [T((2, 3))], {"axis": 1}, "Tensor[(2, 1, 3), float32]"),
    ("expand_dims", [T((None,))], {"axis": -1, "num_newaxis": 2}, "Tensor[(?, 1, 1), float32]"),
    ("expand_dims", [T(())], {"axis": 0}, "Tensor[(1,), float32]"),
    ("squeeze", [T((1, 3, 1))], {}, "Tensor[(3,), float32]"),
    ("squeeze", [T((1, None, 1))], {}, "Tensor[(?,), float32]"),
    ("squeeze", [T((1, None, 1))], {"axis": [1]}, "Tensor[(1, 1), float32]"),
    ("squeeze", [T((1, 3))], {"axis": 0}, "Tensor[(3,), float32]"),
    ("reverse", [T((None, 2))], {"axis": 1}, "Tensor[(?, 2), float32]"),
    ("concatenate", [Tup(T((2, 3)), T((4, 3)))], {}, "Tensor[(6, 3), float32]"),
    ("concatenate", [Tup(T((2, None)), T((2, 4)))], {"axis": 1}, "Tensor[(2, ?), float32]"),
    ("concatenate", [Tup(T((2, None)), T((3, 4)))], {}, "Tensor[(5, 4), float32]"),
    ("concatenate", [Tup(T((2,), "int32"))], {"axis": -1}, "Tensor[(2,), int32]"),
    ("stack", [Tup(T((2,)), T((2,)), T((2,)))], {}, "Tensor[(3, 2), float32]"),
    ("stack", [Tup(T((None,)), T((2,)))], {"axis": -1}, "Tensor[(2, 2), float32]"),
    ("split", [T((6, 2))], {"indices_or_sections": 3},
     "(Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32])"),
    ("split", [T((None, 2))], {"indices_or_sections": 2},
     "(Tensor[(?, 2), float32], Tensor[(?, 2), float32])"),
    ("split", [T((2, 6))], {"indices_or_sections": [1, 4], "axis": 1},
     "(Tensor[(2, 1), float32], Tensor[(2, 3), float32], Tensor[(2, 2), float32])"),
    ("split", [T((None,))], {"indices_or_sections": [2]},
     "(Tensor[(2,), float32], Tensor[(?,), float32])"),
    ("take", [T((5, 6)), T((2,), "int32")], {"axis": 1}, "Tensor[(5, 2), float32]"),
    ("take", [T((5, 6)), T((2, 3), "int64")], {}, "Tensor[(2, 3), float32]"),
    ("take", [T((None, 6)), T((), "int32")], {"axis": 0}, "Tensor[(6,), float32]"),
    ("take", [T((3, 5, 6)), T((3, 2), "int32")], {"axis": 2, "batch_dims": 1},
     "Tensor[(3, 5, 2), float32]"),
    ("shape_of", [T((None, 3))], {}, "Tensor[(2,), int32]"),
    ("shape_of", [T(())], {"dtype": "int64"}, "Tensor[(0,), int64]"),
    # reductions
    ("sum", [T((2, 3), "int32")], {}, "int32"),
    ("sum", [T((2, None, 4))], {"axis": [1]}, "Tensor[(2, 4), float32]"),
    ("sum", [T((2, 3, 4))], {"axis": [1], "exclude": True}, "Tensor[(3,), float32]"),
    ("mean", [T((2, 3, 4))], {"axis": [-1], "keepdims": True}, "Tensor[(2, 3, 1), float32]"),
    ("prod", [T((None, 3))], {"axis": 1}, "Tensor[(?,), float32]"),
    ("max", [T((1, 4))], {}, "float32"),
    ("min", [T((None, 4), "int32")], {"axis": [0, 1], "keepdims": True},
     "Tensor[(1, 1), int32]"),
    ("all", [T((2, 3), "bool")], {"axis": 0}, "Tensor[(3,), bool]"),
    ("any", [T((None,), "bool")], {}, "bool"),
    ("argmax", [T((1, 4))], {"axis": [1]}, "Tensor[(1,), int32]"),
    ("argmax", [T((None, 4), "int64")], {"axis": 1, "keepdims": True}, "Tensor[(?, 1), int32]"),
    ("argmin", [T((2, 3))], {}, "int32"),
    # dyn (more in test_ops_dyn.py)
    ("dyn.reshape", [T((2, 6)), T((3,), "int64")], {}, "Tensor[(?, ?, ?), float32]"),
    ("dyn.broadcast_to", [T((1, 3)), T((2,), "int64")], {}, "Tensor[(?, ?), float32]"),
    ("dyn.strided_slice", [T((4, 5)), T((1,), "int64"), T((1,), "int64"), T((1,), "int64")],
     {}, "Tensor[(?, 5), float32]"),
    ("dyn.zeros", [T((2,), "int64")], {"dtype": "int8"}, "Tensor[(?, ?), int8]"),
    ("dyn.ones", [T((1,), "int32")], {}, "Tensor[(?,), float32]"),
    ("dyn.full", [T((), "int32"), T((2,), "int64")], {}, "Tensor[(?, ?), int32]"),
    ("dyn.tile", [T((2, 3)), T((3,), "int64")], {}, "Tensor[(?, ?, ?), float32]"),
    # qnn (more in test_ops_qnn.py)
    ("qnn.quantize", [T((2, None)), T(()), T((), "int32")], {"out_dtype": "uint8"},
     "Tensor[(2, ?), uint8]"),
    ("qnn.dequantize", [T((2, 3), "int8"), T((3,)), T((3,), "int32")], {},
     "Tensor[(2, 3), float32]"),
    ("qnn.requantize", [T((4,), "int32"), T(()), T((), "int32"), T(()), T((), "int32")], {},
     "Tensor[(4,), int8]"),
    ("fixed_point_multiply", [T((2, None), "int32")], {"multiplier": 1 << 30, "shift": 1},
     "Tensor[(2, ?), int32]"),
    ("qnn.dense", [T((None, 3), "uint8"), T((2, 3), "int8"), T((), "int32"), T((), "int32"),
                   T(()), T((2,))], {}, "Tensor[(?, 2), int32]"),
    ("qnn.batch_matmul", [T((2, None, 3), "int8"), T((2, 4, 3), "int8"), T((), "int32"),
                          T((), "int32"), T(()), T(())], {}, "Tensor[(2, ?, 4), int32]"),
    ("dft", [T((2, None, 8)), T((2, None, 8))], {"inverse": True},
     "(Tensor[(2, ?, 8), float32], Tensor[(2, ?, 8), float32])"),
    ("stft", [T((2, 40)), T((16,))], {"n_fft": 16, "hop_length": 5, "win_length": 16},
     "Tensor[(2, 9, 5, 2), float32]"),
    ("qnn.add", [T((2, 1), "int8"), T((3,), "int8"), T(()), T((), "int32"), T(()),
                 T((), "int32"), T(()), T((), "int32")], {}, "Tensor[(2, 3), int8]"),
    ("qnn.mul", [T((3,), "uint8"), T((3,), "uint8"), T(()), T((), "int32"), T(()),
                 T((), "int32"), T(()), T((), "int32")], {}, "Tensor[(3,), uint8]"),
    ("qnn.conv2d", [T((1, 3, 5, 5), "uint8"), T((4, 3, 3, 3), "int8"), T((), "int32"),
                    T((), "int32"), T(()), T((4,))], {"padding": [1, 1]},
     "Tensor[(1, 4, 5, 5), int32]"),
    ("qnn.concatenate", [Tup(T((1, 2), "int8"), T((3, 2), "int8")), Tup(T(()), T(())),
                         Tup(T((), "int32"), T((), "int32")), T(()), T((), "int32")],
     {"axis": 0}, "Tensor[(4, 2), int8]"),
    # nn
    ("nn.dense", [T((1, 3)), T((4, 3))], {"units": 4}, "Tensor[(1, 4), float32]"),
    ("nn.dense", [T((None, 3)), T((4, None))], {}, "Tensor[(?, 4), float32]"),
    ("nn.dense", [T((2, 5, 3)), T((None, 3))], {"units": 7}, "Tensor[(2, 5, 7), float32]"),
    ("nn.dense", [T((2, 3), "int8"), T((4, 3), "int8")], {"out_dtype": "int32"},
     "Tensor[(2, 4), int32]"),
    ("nn.bias_add", [T((2, 3, 4)), T((3,))], {}, "Tensor[(2, 3, 4), float32]"),
    ("nn.bias_add", [T((2, None)), T((5,))], {"axis": -1}, "Tensor[(2, ?), float32]"),
    ("nn.softmax", [T((None, 4))], {}, "Tensor[(?, 4), float32]"),
    ("nn.log_softmax", [T((2, 4))], {"axis": 0}, "Tensor[(2, 4), float32]"),
    ("nn.batch_flatten", [T((2, 3, 4))], {}, "Tensor[(2, 12), float32]"),
    ("nn.batch_flatten", [T((None, 3, None))], {}, "Tensor[(?, ?), float32]"),
    ("nn.batch_matmul", [T((2, 3, 4)), T((2, 5, 4))], {"transpose_b": True},
     "Tensor[(2, 3, 5), float32]"),
    ("nn.batch_matmul", [T((2, 3, 4)), T((2, 4, 5))], {}, "Tensor[(2, 3, 5), float32]"),
    ("nn.batch_matmul", [T((1, 3, 4)), T((None, 4, 5))], {"transpose_b": False},
     "Tensor[(?, 3, 5), float32]"),
    ("nn.batch_matmul", [T((2, 4, 3)), T((1, 5, 4))], {"transpose_a": True, "transpose_b": True},
     "Tensor[(2, 3, 5), float32]"),
    # convolution, pooling, normalisation, resizing (more in test_ops_conv/pool/norm/image.py)
    ("nn.conv1d", [T((None, 4, 10)), T((8, 4, 3))], {"padding": [1]},
     "Tensor[(?, 8, 10), float32]"),
    ("nn.conv2d", [T((1, 3, 224, 224)), T((32, 3, 3, 3))],
     {"strides": [2, 2], "padding": [1, 1, 1, 1]}, "Tensor[(1, 32, 112, 112), float32]"),
    ("nn.conv2d", [T((1, 56, 56, 64)), T((3, 3, 64, 1))],
     {"groups": 64, "data_layout": "NHWC", "kernel_layout": "HWOI", "padding": [1, 1]},
     "Tensor[(1, 56, 56, 64), float32]"),
    ("nn.conv2d_transpose", [T((1, 8, 4, 4)), T((8, 3, 4, 4))],
     {"strides": [2, 2], "padding": [1, 1]}, "Tensor[(1, 3, 8, 8), float32]"),
    ("nn.max_pool1d", [T((1, 2, 9))], {"pool_size": [3], "strides": [2]},
     "Tensor[(1, 2, 4), float32]"),
    ("nn.max_pool2d", [T((None, 64, 112, 112))],
     {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1]},
     "Tensor[(?, 64, 56, 56), float32]"),
    ("nn.avg_pool1d", [T((1, 2, 9))], {"pool_size": [2], "ceil_mode": True, "strides": [2]},
     "Tensor[(1, 2, 5), float32]"),
    ("nn.avg_pool2d", [T((1, 2, 7, 7))], {"pool_size": [2, 2], "strides": [2, 2],
                                          "ceil_mode": True}, "Tensor[(1, 2, 4, 4), float32]"),
    ("nn.global_avg_pool2d", [T((1, 7, 7, 8))], {"layout": "NHWC"},
     "Tensor[(1, 1, 1, 8), float32]"),
    ("nn.global_max_pool2d", [T((None, 8, 7, 7))], {}, "Tensor[(?, 8, 1, 1), float32]"),
    ("nn.adaptive_avg_pool2d", [T((1, 8, 9, 9))], {"output_size": [3, 2]},
     "Tensor[(1, 8, 3, 2), float32]"),
    ("nn.batch_norm", [T((None, 4, 2, 2)), T((4,)), T((4,)), T((4,)), T((4,))], {},
     "(Tensor[(?, 4, 2, 2), float32], Tensor[(4,), float32], Tensor[(4,), float32])"),
    ("nn.layer_norm", [T((2, 5)), T((5,)), T((5,))], {}, "Tensor[(2, 5), float32]"),
    ("nn.group_norm", [T((2, 6, 3)), T((6,)), T((6,))], {"num_groups": 2},
     "Tensor[(2, 6, 3), float32]"),
    ("nn.instance_norm", [T((2, 6, 3)), T((6,)), T((6,))], {}, "Tensor[(2, 6, 3), float32]"),
    ("nn.l2_normalize", [T((2, None))], {"eps": 1e-6, "axis": [1]}, "Tensor[(2, ?), float32]"),
    ("nn.lrn", [T((1, 8, 2, 2))], {}, "Tensor[(1, 8, 2, 2), float32]"),
    ("nn.dropout", [T((2, 3))], {},
     "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])"),
    ("nn.prelu", [T((2, 3)), T((3,))], {}, "Tensor[(2, 3), float32]"),
    ("nn.pad", [T((2, 3)), T(())], {"pad_width": [[1, 0], [2, 2]]}, "Tensor[(3, 7), float32]"),
    ("nn.pad", [T((2, 3))], {"pad_width": [[1, 0], [2, 2]], "pad_value": 1.0},
     "Tensor[(3, 7), float32]"),
    ("nn.upsampling", [T((1, 2, 3, 3))], {"scale_h": 2.0, "scale_w": 2.0},
     "Tensor[(1, 2, 6, 6), float32]"),
    ("image.resize2d", [T((1, 2, 3, 3))], {"size": [5, 4]}, "Tensor[(1, 2, 5, 4), float32]"),
    ("nn.matmul", [T((2, 3)), T((3, 4))], {}, "Tensor[(2, 4), float32]"),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPE_CASES)])
def test_type_relation(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


def test_every_op_has_a_type_case():
    assert sorted(set(OPS) - covered("TYPE_CASES")) == []


# ---------------------------------------------------------------------------------------------
# Type errors

TYPE_ERRORS = [
    ("add", [T((2, 3)), T((4,))], {},
     "add: cannot broadcast Tensor[(2, 3), float32] with Tensor[(4,), float32]"),
    ("add", [T((), "int32"), T((), "float32")], {},
     "add: dtypes int32 and float32 differ; cast one, or write the literal in the other's dtype"),
    ("multiply", [T((), "int64"), T((), "int32")], {}, "dtypes int64 and int32 differ; cast one"),
    ("where", [T((2,), "bool"), T((2,), "int32"), T((2,))], {}, "where: dtypes int32 and float32"),
    ("where", [T((3,), "bool"), T((2,)), T((2,))], {}, "where: cannot broadcast"),
    ("reshape", [T((2, 3))], {"newshape": [4, -1]}, "6 is not a multiple of 4"),
    ("reshape", [T((2, 3))], {"newshape": [5]}, "cannot reshape (2, 3) (6 elements) to (5,)"),
    ("reshape", [T((2, 3))], {"newshape": [-1, -1]}, "more than one -1"),
    ("reshape", [T((2, 3))], {"newshape": [-5]}, "invalid value -5"),
    ("reshape", [T((2,))], {"newshape": [0, 0]}, "needs input dimension 1"),
    ("reshape", [T((6,))], {"newshape": [-4, 4, -1]}, "cannot split dimension 6 into 4 x 1"),
    ("reshape", [T((2, 3))], {"newshape": [0, 3], "allowzero": True},
     "cannot reshape (2, 3) (6 elements) to (0, 3) (0 elements)"),
    ("transpose", [T((2, 3))], {"axes": [0]}, "must list each of the 2 axes once"),
    ("transpose", [T((2, 3))], {"axes": [0, 0]}, "repeats an axis"),
    ("expand_dims", [T((2,))], {"axis": 3},
     "axis 3 is out of range for a 1-d tensor; valid: [-2, 1]"),
    ("squeeze", [T((2, 3))], {"axis": [0]}, "cannot squeeze axis 0 of Tensor[(2, 3), float32]"),
    ("concatenate", [Tup(T((2, 3)), T((2, 4)))], {}, "dimension 1 differs"),
    ("concatenate", [Tup(T((2,)), T((2,), "int32"))], {}, "all tensors need the same dtype"),
    ("concatenate", [Tup()], {}, "needs at least one tensor"),
    ("concatenate", [Tup(T(()), T(()))], {}, "cannot concatenate 0-d tensors"),
    ("stack", [Tup(T((2,)), T((3,)))], {}, "all tensors need the same shape"),
    ("split", [T((5,))], {"indices_or_sections": 2}, "cannot split axis 0 of size 5 into 2"),
    ("split", [T((5,))], {"indices_or_sections": [3, 2]}, "strictly ascending"),
    ("split", [T((5,))], {"indices_or_sections": [5]}, "out of range for axis 0 of size 5"),
    ("take", [T((5,)), T((2,))], {}, "take: indices must be an integer tensor"),
    ("take", [T((5,)), T((2,), "int32")], {"axis": 1}, "axis 1 is out of range"),
    ("sum", [T((2, 3))], {"axis": [2]}, "sum: axis 2 is out of range for a 2-d tensor"),
    ("argmax", [T((), "int32")], {}, "argmax: TVM's relation refuses a 0-d tensor"),
    ("mean", [T((2, 3))], {"axis": [0, -2]}, "repeats an axis"),
    ("full", [T((2,))], {"shape": [2]}, "the fill value must be a scalar"),
    ("zeros", [], {"shape": [2, -1]}, "negative dimension"),
    ("broadcast_to", [T((3,))], {"shape": [2, 2]}, "cannot broadcast"),
    ("nn.dense", [T((1, 3)), T((4, 2))], {}, "has 3 input features but weight"),
    ("nn.dense", [T((1, 3)), T((4, 3))], {"units": 5}, "units=5 but weight"),
    ("nn.dense", [T((1, 3)), T((3,))], {}, "weight must be 2-d"),
    ("nn.bias_add", [T((2, 3)), T((4,))], {}, "does not match axis 1"),
    ("nn.bias_add", [T((2, 3)), T((3, 1))], {}, "bias must be 1-d"),
    ("nn.softmax", [T((2,))], {"axis": 1}, "axis 1 is out of range"),
    ("nn.batch_matmul", [T((2, 3, 4)), T((3, 4, 5))], {}, "batch sizes differ"),
    ("nn.batch_matmul", [T((2, 3, 4)), T((2, 5, 3))], {}, "inner dimensions differ"),
    ("nn.batch_matmul", [T((2, 3, 4)), T((2, 4, 5))], {"transpose_b": True},
     "inner dimensions differ"),
    ("nn.batch_matmul", [T((3, 4)), T((2, 5, 4))], {}, "x must be 3-d"),
    ("nn.batch_flatten", [T(())], {}, "rank >= 1"),
]


@pytest.mark.parametrize("op, args, attrs, fragment", TYPE_ERRORS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPE_ERRORS)])
def test_type_errors(op, args, attrs, fragment):
    with pytest.raises(OpTypeError) as ei:
        OPS[op].type_rel(args, attrs)
    assert fragment in str(ei.value)
    assert str(ei.value).startswith(op + ":")


# ---------------------------------------------------------------------------------------------
# Kernels against hand-computed values

X23 = A([[1, 2, 3], [4, 5, 6]])
I23 = A([[1, -2, 3], [-4, 5, -6]], "int32")

KERNEL_CASES = [
    ("add", [A([1, 2], "int32"), A(10, "int32")], {}, A([11, 12], "int32")),
    ("add", [A(2.5), A(0.25)], {}, A(2.75)),
    ("subtract", [A([5, 1], "int64"), A([2, 3], "int64")], {}, A([3, -2], "int64")),
    ("multiply", [A([[1], [2]], "int32"), A([3, 4], "int32")], {}, A([[3, 4], [6, 8]], "int32")),
    ("divide", [A(-7, "int32"), A(2, "int32")], {}, A(-3, "int32")),
    ("divide", [A([-7, 7, -8, 1], "int32"), A([2, -2, 2, -3], "int32")], {},
     A([-3, -3, -4, 0], "int32")),
    ("divide", [A([1, 3]), A([4, 2])], {}, A([0.25, 1.5])),
    ("floor_divide", [A([-7, 7], "int32"), A(2, "int32")], {}, A([-4, 3], "int32")),
    ("floor_divide", [A([-7.0, 7.0]), A(2.0)], {}, A([-4.0, 3.0])),
    ("trunc_divide", [A([-7.0, 7.5]), A(2.0)], {}, A([-3.0, 3.0])),
    ("trunc_divide", [A(-7, "int32"), A(2, "int32")], {}, A(-3, "int32")),
    ("mod", [A([-7, 7], "int32"), A(3, "int32")], {}, A([-1, 1], "int32")),
    ("mod", [A(-7.5), A(2.0)], {}, A(-1.5)),
    ("trunc_mod", [A(-7, "int32"), A(3, "int32")], {}, A(-1, "int32")),
    ("floor_mod", [A([-7, 7], "int32"), A(3, "int32")], {}, A([2, 1], "int32")),
    ("floor_mod", [A(-7.5), A(2.0)], {}, A(0.5)),
    ("power", [A(2.0), A(0.5)], {}, A(np.float32(2.0) ** np.float32(0.5))),
    ("maximum", [A([1, 5], "int32"), A(3, "int32")], {}, A([3, 5], "int32")),
    ("minimum", [A([1.0, 5.0]), A(3.0)], {}, A([1.0, 3.0])),
    ("equal", [A([1, 2], "int32"), A(2, "int32")], {}, A([False, True], "bool")),
    ("not_equal", [A(1.0), A(1.0)], {}, A(False, "bool")),
    ("less", [A(1, "int32"), A(2, "int32")], {}, A(True, "bool")),
    ("less_equal", [A([1, 2, 3]), A(2.0)], {}, A([True, True, False], "bool")),
    ("greater", [A([1, 2, 3], "int64"), A(2, "int64")], {}, A([False, False, True], "bool")),
    ("greater_equal", [A(2, "uint8"), A(3, "uint8")], {}, A(False, "bool")),
    ("logical_and", [A([True, True], "bool"), A([True, False], "bool")], {},
     A([True, False], "bool")),
    ("logical_or", [A(False, "bool"), A(True, "bool")], {}, A(True, "bool")),
    ("logical_xor", [A([True, True], "bool"), A(True, "bool")], {}, A([False, False], "bool")),
    ("logical_not", [A([True, False], "bool")], {}, A([False, True], "bool")),
    ("negative", [A([1, -2], "int32")], {}, A([-1, 2], "int32")),
    ("negative", [A(1.5)], {}, A(-1.5)),
    ("abs", [A([-3, 4], "int8")], {}, A([3, 4], "int8")),
    ("sign", [A([-3.0, 0.0, 2.0])], {}, A([-1.0, 0.0, 1.0])),
    ("sign", [A(-5, "int32")], {}, A(-1, "int32")),
    ("exp", [A([0.0, 1.0])], {}, A([1.0, np.e])),
    ("log", [A([1.0, np.e])], {}, A([0.0, 1.0])),
    ("log2", [A(8.0)], {}, A(3.0)),
    ("log10", [A(100.0, "float64")], {}, A(2.0, "float64")),
    ("sqrt", [A([4.0, 9.0])], {}, A([2.0, 3.0])),
    ("rsqrt", [A(4.0)], {}, A(0.5)),
    ("sin", [A(0.0)], {}, A(0.0)),
    ("cos", [A(0.0)], {}, A(1.0)),
    ("tan", [A(0.0)], {}, A(0.0)),
    ("tanh", [A([0.0])], {}, A([0.0])),
    ("sigmoid", [A([0.0, 100.0, -100.0])], {}, A([0.5, 1.0, 0.0])),
    ("floor", [A([-1.5, 1.5])], {}, A([-2.0, 1.0])),
    ("ceil", [A([-1.5, 1.5])], {}, A([-1.0, 2.0])),
    ("ceil", [A(3, "int32")], {}, A(3, "int32")),
    ("trunc", [A([-1.5, 1.5])], {}, A([-1.0, 1.0])),
    ("round", [A([0.5, 1.5, 2.5, -2.5, 2.4])], {}, A([1.0, 2.0, 3.0, -3.0, 2.0])),
    ("round", [A(2.5)], {}, A(3.0)),
    ("isnan", [A([np.nan, 1.0])], {}, A([True, False], "bool")),
    ("isinf", [A([np.inf, 1.0])], {}, A([True, False], "bool")),
    ("isfinite", [A(3, "int32")], {}, A(True, "bool")),
    ("nn.relu", [A([-1.0, 2.0])], {}, A([0.0, 2.0])),
    ("nn.relu", [A(-3, "int32")], {}, A(0, "int32")),
    ("nn.leaky_relu", [A([-1.0, 2.0])], {"alpha": 0.5}, A([-0.5, 2.0])),
    ("copy", [A([1, 2], "int16")], {}, A([1, 2], "int16")),
    ("zeros_like", [A([1, 2], "int64")], {}, A([0, 0], "int64")),
    ("ones_like", [A([[1.5]])], {}, A([[1.0]])),
    ("full_like", [A([1, 2], "int32"), A(7, "int32")], {}, A([7, 7], "int32")),
    ("where", [A([True, False], "bool"), A([1, 2], "int32"), A(0, "int32")], {},
     A([1, 0], "int32")),
    ("where", [A(False, "bool"), A(1.0), A(2.0)], {}, A(2.0)),
    ("cast", [A([1.7, -1.7])], {"dtype": "int32"}, A([1, -1], "int32")),
    ("cast", [A(3, "int32")], {"dtype": "float32"}, A(3.0)),
    ("cast", [A([0, 2], "int32")], {"dtype": "bool"}, A([False, True], "bool")),
    ("cast_like", [A([1, 2], "int32"), A(0.0, "float64")], {}, A([1.0, 2.0], "float64")),
    ("clip", [A([1, 5, 9], "int32")], {"a_min": 2, "a_max": 7}, A([2, 5, 7], "int32")),
    ("clip", [A([-1.0, 0.5, 3.0])], {"a_min": 0.0, "a_max": 1.0}, A([0.0, 0.5, 1.0])),
    ("zeros", [], {"shape": [2], "dtype": "int32"}, A([0, 0], "int32")),
    ("ones", [], {"shape": [], "dtype": "float64"}, A(1.0, "float64")),
    ("full", [A(3, "int32")], {"shape": [2]}, A([3, 3], "int32")),
    ("full", [A(2.5)], {"shape": [1, 2], "dtype": "int32"}, A([[2, 2]], "int32")),
    ("broadcast_to", [A([[1], [2]], "int32")], {"shape": [2, 3]},
     A([[1, 1, 1], [2, 2, 2]], "int32")),
    ("reshape", [X23], {"newshape": [3, 2]}, A([[1, 2], [3, 4], [5, 6]])),
    ("reshape", [X23], {"newshape": [-1]}, A([1, 2, 3, 4, 5, 6])),
    ("reshape", [np.arange(24, dtype=np.int32).reshape(2, 3, 4)], {"newshape": [0, -3]},
     np.arange(24, dtype=np.int32).reshape(2, 12)),
    ("reshape", [A([7], "int32")], {"newshape": []}, A(7, "int32")),
    ("transpose", [X23], {}, A([[1, 4], [2, 5], [3, 6]])),
    ("transpose", [X23], {"axes": [1, 0]}, A([[1, 4], [2, 5], [3, 6]])),
    ("expand_dims", [A([1, 2], "int32")], {"axis": 0}, A([[1, 2]], "int32")),
    ("expand_dims", [A(5, "int32")], {"axis": 0, "num_newaxis": 2}, A([[5]], "int32")),
    ("squeeze", [A([[[1], [2]]], "int32")], {}, A([1, 2], "int32")),
    ("squeeze", [A([[1, 2]], "int32")], {"axis": [0]}, A([1, 2], "int32")),
    ("squeeze", [A([3], "int32")], {}, A(3, "int32")),
    ("reverse", [X23], {"axis": 1}, A([[3, 2, 1], [6, 5, 4]])),
    ("concatenate", [(A([1, 2], "int32"), A([3], "int32"))], {}, A([1, 2, 3], "int32")),
    ("concatenate", [(A([[1], [2]]), A([[3], [4]]))], {"axis": 1}, A([[1, 3], [2, 4]])),
    ("stack", [(A(1, "int32"), A(2, "int32"))], {}, A([1, 2], "int32")),
    ("stack", [(A([1, 2]), A([3, 4]))], {"axis": 1}, A([[1, 3], [2, 4]])),
    ("take", [A([10, 20, 30], "int32"), A([2, 0], "int32")], {}, A([30, 10], "int32")),
    ("take", [A([10, 20, 30], "int32"), A(7, "int32")], {}, A(30, "int32")),
    ("take", [A([10, 20, 30], "int32"), A([-1, 4], "int32")], {"mode": "wrap"},
     A([30, 20], "int32")),
    ("take", [X23, A([2], "int64")], {"axis": 1}, A([[3], [6]])),
    ("take", [X23, A([[0, 1], [2, 2]], "int32")], {"axis": 1, "batch_dims": 1},
     A([[1, 2], [6, 6]])),
    ("shape_of", [np.zeros((2, 3), np.float32)], {}, A([2, 3], "int32")),
    ("shape_of", [A(1.0)], {"dtype": "int64"}, np.zeros((0,), np.int64)),
    ("sum", [I23], {}, A(-3, "int32")),
    ("sum", [I23], {"axis": [1]}, A([2, -5], "int32")),
    ("sum", [A([2**31 - 1, 1], "int32")], {}, A(-2**31, "int32")),
    ("sum", [X23], {"axis": [0], "exclude": True, "keepdims": True}, A([[6], [15]])),
    ("mean", [X23], {"axis": [1]}, A([2.0, 5.0])),
    ("mean", [A([-7, 0], "int32")], {}, A(-3, "int32")),
    ("prod", [A([[1, 2], [3, 4]], "int32")], {"axis": 0}, A([3, 8], "int32")),
    ("max", [I23], {}, A(5, "int32")),
    ("max", [X23], {"axis": [1], "keepdims": True}, A([[3], [6]])),
    ("min", [I23], {"axis": 0}, A([-4, -2, -6], "int32")),
    ("all", [A([[True, False], [True, True]], "bool")], {"axis": 1}, A([False, True], "bool")),
    ("any", [A([False, False], "bool")], {}, A(False, "bool")),
    ("argmax", [A([[0.5, 2.0, 2.0]])], {"axis": [1]}, A([1], "int32")),
    ("argmax", [A([[0.5, 2.0, 2.0]])], {"axis": [1], "select_last_index": True}, A([2], "int32")),
    ("argmax", [A([[1, 9], [7, 3]], "int32")], {}, A(1, "int32")),
    ("argmax", [A([[1, 9], [7, 3]], "int32")], {"axis": 0, "keepdims": True},
     A([[1, 0]], "int32")),
    ("argmin", [A([[1, 9], [0, 3]], "int64")], {"axis": 1}, A([0, 0], "int32")),
    ("argmin", [A([3.0, 1.0, 1.0])], {"select_last_index": True}, A(2, "int32")),
    # dyn (more in test_ops_dyn.py)
    ("dyn.reshape", [A([1, 2, 3, 4]), A([2, -1], "int64")], {}, A([[1, 2], [3, 4]])),
    ("dyn.broadcast_to", [A([1, 2], "int32"), A([2, 2], "int64")], {},
     A([[1, 2], [1, 2]], "int32")),
    ("dyn.strided_slice", [A([1, 2, 3, 4]), A([3], "int64"), A([0], "int64"),
                           A([-2], "int64")], {}, A([4, 2])),
    ("dyn.zeros", [A([2], "int32")], {"dtype": "int8"}, A([0, 0], "int8")),
    ("dyn.ones", [A([1, 2], "int64")], {}, A([[1, 1]])),
    ("dyn.full", [A(5, "int32"), A([2], "int64")], {}, A([5, 5], "int32")),
    ("dyn.tile", [A([1, 2], "int32"), A([2], "int64")], {}, A([1, 2, 1, 2], "int32")),
    # qnn (more in test_ops_qnn.py)
    ("qnn.quantize", [A([0.3, -0.3, 0.5]), A(0.2), A(1, "int32")], {}, A([3, -1, 4], "int8")),
    ("qnn.dequantize", [A([3, 0], "uint8"), A(0.5), A(1, "int32")], {}, A([1.0, -0.5])),
    ("qnn.requantize", [A([5, -5], "int32"), A(1.0), A(0, "int32"), A(2.0), A(0, "int32")],
     {"rounding": "TONEAREST"}, A([3, -3], "int8")),
    # 1 << 30 with shift 0 is 0.5: halves round up (-2.5 -> -2, 2.5 -> 3)
    ("fixed_point_multiply", [A([-5, 5, 7], "int32")], {"multiplier": 1 << 30, "shift": 0},
     A([-2, 3, 4], "int32")),
    ("qnn.dense", [A([[1, 2]], "uint8"), A([[3, 4]], "int8"), A(1, "int32"), A(0, "int32"),
                   A(1.0), A(1.0)], {}, A([[4]], "int32")),
    ("qnn.batch_matmul", [A([[[1, 2]]], "uint8"), A([[[3, 4]]], "uint8"), A(1, "int32"),
                          A(2, "int32"), A(1.0), A(1.0)], {}, A([[[2]]], "int32")),
    # X[k] of (1, 2): 1 + 2 and 1 - 2; the imaginary parts 0 (sin(pi) rounds to -8.7e-8)
    ("dft", [A([1.0, 2.0]), A([0.0, 0.0])], {}, (A([3.0, -1.0]), A([0.0, 1.7484555e-07]))),
    # one frame of (1, 2) under the window (1, 1): X[0] = 3, X[1] = 1 - 2 (sin(pi) ~ 1.2e-16)
    ("stft", [A([1.0, 2.0]), A([1.0, 1.0])], {"n_fft": 2, "hop_length": 1, "win_length": 2},
     A([[[3.0, 0.0]], [[-1.0, 0.0]]])),
    ("qnn.add", [A([1, 2], "int8"), A([3, 4], "int8"), A(1.0), A(0, "int32"), A(1.0),
                 A(0, "int32"), A(1.0), A(0, "int32")], {}, A([4, 6], "int8")),
    ("qnn.mul", [A([1, 2], "int8"), A([3, 4], "int8"), A(1.0), A(0, "int32"), A(1.0),
                 A(0, "int32"), A(1.0), A(0, "int32")], {}, A([3, 8], "int8")),
    ("qnn.conv2d", [A([[[[1, 2], [3, 4]]]], "uint8"), A([[[[1, -1], [2, 0]]]], "int8"),
                    A(1, "int32"), A(0, "int32"), A(1.0), A(1.0)], {},
     A([[[[0 - 1 + 4]]]], "int32")),
    ("qnn.concatenate", [(A([1], "int8"), A([2], "int8")), (A(1.0), A(1.0)),
                         (A(0, "int32"), A(0, "int32")), A(1.0), A(0, "int32")], {"axis": 0},
     A([1, 2], "int8")),
    ("nn.dense", [A([[0.5, -1.0, 2.0]]),
                  A([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])], {"units": 4},
     A([[0.5, -1.0, 2.0, 1.5]])),
    ("nn.dense", [A([[1, 2]], "int8"), A([[100, 100]], "int8")], {"out_dtype": "int32"},
     A([[300]], "int32")),
    ("nn.bias_add", [A([[1, 2], [3, 4]], "int32"), A([10, 20], "int32")], {},
     A([[11, 22], [13, 24]], "int32")),
    ("nn.bias_add", [A([[1, 2], [3, 4]], "int32"), A([10, 20], "int32")], {"axis": 0},
     A([[11, 12], [23, 24]], "int32")),
    ("nn.softmax", [A([[0.0, 0.0], [0.0, np.log(3.0)]])], {}, A([[0.5, 0.5], [0.25, 0.75]])),
    ("nn.softmax", [A([[0.0, 0.0], [0.0, np.log(3.0)]])], {"axis": 0},
     A([[0.5, 0.25], [0.5, 0.75]])),
    ("nn.log_softmax", [A([0.0, 0.0])], {}, A([np.log(0.5), np.log(0.5)])),
    ("nn.batch_flatten", [np.arange(8, dtype=np.int32).reshape(2, 2, 2)], {},
     A([[0, 1, 2, 3], [4, 5, 6, 7]], "int32")),
    ("nn.batch_matmul", [A([[[1, 2]]]), A([[[3, 4], [5, 6]]])], {"transpose_b": True},
     A([[[11, 17]]])),
    ("nn.batch_matmul", [A([[[1, 2]]]), A([[[3, 4], [5, 6]]])], {}, A([[[13, 16]]])),
    ("nn.batch_matmul", [A([[[1, 2]], [[0, 1]]]), A([[[3], [4]]])], {"transpose_b": False},
     A([[[11]], [[4]]])),
    ("nn.batch_matmul", [A([[[1], [2]]]), A([[[3, 4], [5, 6]]])],
     {"transpose_a": True, "transpose_b": False}, A([[[13, 16]]])),
    # convolution, pooling, normalisation, resizing (more in test_ops_conv/pool/norm/image.py)
    ("nn.conv1d", [A([[[1, 2, 3]]]), A([[[1, 1]]])], {}, A([[[3, 5]]])),
    ("nn.conv2d", [A([[[[1, 2], [3, 4]]]]), A([[[[1, 1], [1, 0]]]])], {"padding": [0, 1]},
     A([[[[1, 6, 6]]]])),
    ("nn.conv2d_transpose", [A([[[[2]]]]), A([[[[1, 2], [3, 4]]]])], {},
     A([[[[2, 4], [6, 8]]]])),
    ("nn.max_pool1d", [A([[[1, 3, 2, 5]]])], {"pool_size": [2], "strides": [2]}, A([[[3, 5]]])),
    ("nn.max_pool2d", [A([[[[1, 2], [3, 4]]]])], {"pool_size": [2, 2]}, A([[[[4]]]])),
    ("nn.avg_pool1d", [A([[[1, 3, 2, 5]]])], {"pool_size": [2], "strides": [2]},
     A([[[2, 3.5]]])),
    ("nn.avg_pool2d", [A([[[[1, 2], [3, 4]]]])], {"pool_size": [2, 2], "padding": [0, 1],
                                                  "strides": [1, 2]}, A([[[[2, 3]]]])),
    ("nn.global_avg_pool2d", [A([[[[1, 2], [3, 4]]]])], {}, A([[[[2.5]]]])),
    ("nn.global_max_pool2d", [A([[[[1, 2], [3, 4]]]])], {}, A([[[[4]]]])),
    ("nn.adaptive_avg_pool2d", [A([[[[1, 2], [3, 4]]]])], {"output_size": [1, 2]},
     A([[[[2, 3]]]])),
    ("nn.layer_norm", [A([[1, 3]]), A([2, 1]), A([0, 1])], {"epsilon": 0.0}, A([[-2, 2]])),
    ("nn.group_norm", [A([[[1], [3]]]), A([1, 1]), A([0, 0])], {"num_groups": 1,
                                                               "epsilon": 0.0},
     A([[[-1], [1]]])),
    ("nn.instance_norm", [A([[[1, 3]]]), A([1]), A([0])], {"epsilon": 0.0}, A([[[-1, 1]]])),
    ("nn.l2_normalize", [A([[3, 4]])], {"eps": 1e-12, "axis": [1]}, A([[0.6, 0.8]])),
    ("nn.lrn", [A([[[[2]]]])], {"size": 1, "bias": 1.0, "alpha": 1.0, "beta": 1.0},
     A([[[[0.4]]]])),
    ("nn.prelu", [A([[-2, 3]]), A([0.5, 0.25])], {}, A([[-1, 3]])),
    ("nn.pad", [A([[1, 2]], "int32"), A(9, "int32")], {"pad_width": [[0, 0], [1, 0]]},
     A([[9, 1, 2]], "int32")),
    ("nn.upsampling", [A([[[[1, 2]]]])], {"scale_h": 1.0, "scale_w": 2.0},
     A([[[[1, 1, 2, 2]]]])),
    ("image.resize2d", [A([[[[1, 2]]]])], {"size": [1, 3],
                                           "coordinate_transformation_mode": "align_corners"},
     A([[[[1, 1.5, 2]]]])),
    ("nn.matmul", [A([[1, 2]]), A([[3], [4]])], {}, A([[11]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_kernel(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_every_op_has_a_kernel_case():
    # the tuple-returning kernels: split here, nn.batch_norm and nn.dropout in test_ops_norm.py
    # and test_ops_nn_layers.py
    assert sorted(set(OPS) - covered("KERNEL_CASES") - {"split", "nn.batch_norm",
                                                        "nn.dropout"}) == []


def test_split_kernel():
    x = np.arange(12, dtype=np.int32).reshape(2, 6)
    parts = run("split", x, indices_or_sections=[1, 4], axis=1)
    assert isinstance(parts, tuple) and len(parts) == 3
    assert [p.tolist() for p in parts] == [[[0], [6]], [[1, 2, 3], [7, 8, 9]], [[4, 5], [10, 11]]]
    assert all(p.dtype == np.int32 and not np.shares_memory(p, x) for p in parts)
    parts = run("split", np.arange(6.0, dtype=np.float32), indices_or_sections=3)
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    t = rel("split", T((6,)), indices_or_sections=3)
    assert t == Tup(*[T((2,))] * 3)


# ---------------------------------------------------------------------------------------------
# Integer semantics and dtype preservation


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64"])
def test_integer_divide_truncates_toward_zero(dt):
    a = A([-7, 7, -7, 7, -6, 0], dt)
    b = A([2, 2, -2, -2, 3, 5], dt)
    expected = A([-3, 3, 3, -3, -2, 0], dt)
    np.testing.assert_array_equal(run("divide", a, b), expected)
    for x, y, e in zip(a, b, expected):  # the 0-d fast path agrees
        r = run("divide", np.array(x), np.array(y))
        assert r.dtype == np.dtype(dt) and r == e
    assert int(run("divide", A(-7, "int32"), A(2, "int32"))) == -3


def test_integer_overflow_wraps_and_keeps_dtype():
    big = A(2**31 - 1, "int32")
    assert run("add", big, A(1, "int32")).dtype == np.int32
    assert int(run("add", big, A(1, "int32"))) == -2**31
    assert int(run("multiply", big, A(2, "int32"))) == -2
    assert int(run("negative", A(-2**31, "int32"))) == -2**31
    assert int(run("divide", A(-2**31, "int32"), A(-1, "int32"))) == -2**31
    assert int(run("subtract", A(0, "uint8"), A(1, "uint8"))) == 255


def test_float32_stays_float32():
    for name in ("add", "subtract", "multiply", "divide", "power", "maximum", "floor_mod"):
        assert run(name, A(1.5), A(2.0)).dtype == np.float32
        assert run(name, A([1.5]), A([2.0])).dtype == np.float32
    assert run("sum", A([1.0, 2.0])).dtype == np.float32
    assert run("mean", A([1, 2], "int32")).dtype == np.int32
    assert run("sigmoid", A(1.0, "float16")).dtype == np.float16
    assert run("divide", A(1.0, "float64"), A(3.0, "float64")) == A(1 / 3, "float64")


@pytest.mark.parametrize("op", ["divide", "floor_divide", "mod", "floor_mod", "trunc_divide",
                                "trunc_mod"])
def test_integer_division_by_zero_is_kernel_error(op):
    with pytest.raises(KernelError, match=f"^{op}: integer division by zero"):
        run(op, A(1, "int32"), A(0, "int32"))
    with pytest.raises(KernelError, match=f"^{op}: integer division by zero"):
        run(op, A([1, 2], "int64"), A([1, 0], "int64"))


def test_float_division_by_zero_is_silent_inf():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run("divide", A(1.0), A(0.0)) == np.inf
        assert np.isnan(run("divide", A([0.0]), A([0.0]))[0])
        assert np.isnan(run("log", A(-1.0)))
        assert run("exp", A([1000.0]))[0] == np.inf
        assert run("multiply", A(3e38), A(10.0)) == np.inf
        assert run("cast", A([np.nan, 1e20]), dtype="int32").dtype == np.int32
        assert run("sigmoid", A([-1000.0]))[0] == 0.0
        assert run("nn.softmax", A([[np.inf, 0.0]])).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Run-time errors (shapes known only at run time)


def test_runtime_broadcast_mismatch():
    t = rel("add", T((None,)), T((3,)))
    assert t == T((3,))
    with pytest.raises(KernelError, match=r"add: cannot broadcast shapes \(4,\) and \(3,\)"):
        run("add", A([1, 2, 3, 4]), A([1, 2, 3]))
    with pytest.raises(KernelError, match="less: cannot broadcast"):
        run("less", A([1, 2]), A([1, 2, 3]))


def test_runtime_shape_errors():
    with pytest.raises(KernelError, match="cannot reshape"):
        run("reshape", A([1, 2, 3]), newshape=[2, -1])
    with pytest.raises(KernelError, match="squeeze: cannot squeeze axis 0"):
        run("squeeze", A([1, 2]), axis=[0])
    with pytest.raises(KernelError, match="concatenate: shapes"):
        run("concatenate", (A([[1, 2]]), A([[1]])))
    with pytest.raises(KernelError, match="nn.dense"):
        run("nn.dense", A([[1, 2]]), A([[1, 2, 3]]))
    with pytest.raises(KernelError, match="split: cannot split axis 0 of size 5"):
        run("split", A([1, 2, 3, 4, 5]), indices_or_sections=2)
    # an empty reduction is the reducer's start value, as TVM's loop that never runs leaves it
    assert run("max", np.zeros((0,), np.float32)) == np.finfo(np.float32).min
    assert run("argmin", np.zeros((2, 0), np.int8), axis=[1]).tolist() == [-1, -1]


def test_take_modes():
    data = A([10, 20, 30], "int32")
    np.testing.assert_array_equal(run("take", data, A([-5, 1, 99], "int32")),
                                  A([10, 20, 30], "int32"))
    np.testing.assert_array_equal(run("take", data, A([-1, 3], "int32"), mode="wrap"),
                                  A([30, 10], "int32"))
    np.testing.assert_array_equal(run("take", data, A([2, 0], "int32"), mode="fast"),
                                  A([30, 10], "int32"))
    with pytest.raises(KernelError, match="index 3 is out of range for an axis of size 3"):
        run("take", data, A([0, 3], "int32"), mode="fast")
    with pytest.raises(KernelError, match="out of range"):
        run("take", data, A(-1, "int32"), mode="fast")


# ---------------------------------------------------------------------------------------------
# The 0-d fast path agrees with the NumPy path

_BINARY_FAST = ["add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod",
                "trunc_mod", "floor_mod", "power", "maximum", "minimum", "equal", "not_equal",
                "less", "less_equal", "greater", "greater_equal"]


def _both_paths(op, a, b):
    """(0-d result, the same computed through the array path) or the KernelError text."""
    def call(x, y):
        try:
            return OPS[op].kernel([x, y], {})
        except KernelError as e:
            return "error: " + e.message
    scalar = call(a, b)
    array = call(a.reshape(1), b.reshape(1))
    if isinstance(array, np.ndarray):
        array = array.reshape(())
    return scalar, array


def _same(x, y):
    if isinstance(x, str) or isinstance(y, str):
        return x == y
    if x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


@settings(max_examples=150, deadline=None)
@given(op=st.sampled_from(_BINARY_FAST), dt=st.sampled_from(["int8", "int32", "int64", "uint8"]),
       x=st.integers(-2**63, 2**64 - 1), y=st.integers(-2**63, 2**64 - 1))
def test_fast_path_matches_numpy_ints(op, dt, x, y):
    info = np.iinfo(dt)
    if op == "power":
        y = y % 70 - 5  # keep exponents modest; negative ones too
    a = np.array(x % (int(info.max) - int(info.min) + 1) + int(info.min), dtype=dt)
    b = np.array(y % (int(info.max) - int(info.min) + 1) + int(info.min), dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s, r = _both_paths(op, a, b)
    assert _same(s, r), (op, a, b, s, r)


_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32),
                    st.sampled_from([0.0, -0.0, 1.0, -1.0, 3e38, -3e38, 1e-45]))


@settings(max_examples=150, deadline=None)
@given(op=st.sampled_from(_BINARY_FAST), dt=st.sampled_from(["float32", "float64"]),
       x=_FLOATS, y=_FLOATS)
@example(op="power", dt="float32", x=11.0, y=-1.0)  # NumPy's 0-d power was 1 ulp off
def test_fast_path_matches_numpy_floats(op, dt, x, y):
    a, b = np.array(x, dtype=dt), np.array(y, dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s, r = _both_paths(op, a, b)
    assert _same(s, r), (op, a, b, s, r)


@pytest.mark.parametrize("op", ["negative", "abs", "sign", "floor", "round", "nn.relu",
                                "logical_not", "isnan", "exp", "copy"])
def test_unary_fast_path_matches_numpy(op):
    dt = "bool" if op == "logical_not" else ("float32" if op in ("exp", "round") else "int32")
    values = [True, False] if dt == "bool" else [0, 1, -1, 7, -2**31, 2**31 - 1]
    if dt == "float32":
        values = [0.0, -0.0, 1.5, -2.5, 1e30, float("nan"), float("inf")]
    for v in values:
        a = np.array(v, dtype=dt)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            s = OPS[op].kernel([a], {})
            r = OPS[op].kernel([a.reshape(1)], {}).reshape(())
        assert type(s) is np.ndarray and _same(s, r), (op, v, s, r)


def test_scalar_fast_table():
    assert SCALAR_FAST["add"](A(2, "int32"), A(3, "int32")) == A(5, "int32")
    assert SCALAR_FAST["less"](A(2.0), A(3.0)).dtype == np.bool_
    assert SCALAR_FAST["negative"](A(2, "int64")).dtype == np.int64
    for name, fn in SCALAR_FAST.items():
        assert OPS[name].scalar is fn


# ---------------------------------------------------------------------------------------------
# The run-time shape function


def test_infer_shape():
    assert infer_shape("add", [(2, 1), (3,)], ["float32", "float32"]) == [(2, 3)]
    assert infer_shape("reshape", [(4, 6)], ["int32"], {"newshape": [0, -1, 2]}) == [(4, 3, 2)]
    assert infer_shape("concatenate", [[(2, 3), (5, 3)]], [["float32", "float32"]]) == [(7, 3)]
    assert infer_shape("split", [(6, 2)], ["float32"], {"indices_or_sections": [1, 4]}) == \
        [(1, 2), (3, 2), (2, 2)]
    assert infer_shape("nn.dense", [(5, 3), (4, 3)], ["float32", "float32"]) == [(5, 4)]
    assert infer_shape("argmax", [(5, 3)], ["float32"], {"axis": 1}) == [(5,)]
    with pytest.raises(KernelError, match="cannot broadcast"):
        infer_shape("add", [(2,), (3,)], ["float32", "float32"])
    with pytest.raises(KernelError, match="cannot reshape"):
        infer_shape("reshape", [(5,)], ["float32"], {"newshape": [2, -1]})


# ---------------------------------------------------------------------------------------------
# OpDef built directly, and the ops of the shared examples chained together


def test_opdef_with_contract_signature():
    def rel(arg_types, attrs):
        return TensorType(arg_types[0].shape, "float32")

    def kernel(args, attrs):
        return (args[0] * attrs["scale"]).astype(np.float32)

    op = OpDef("test.scale", 1, [AttrSpec("scale", "float", 2.0)], rel, kernel, "elemwise")
    assert op.type_rel([T((2,), "float32")], {}) == T((2,))
    assert op.kernel([A([1.0, 2.0])], {}).tolist() == [2.0, 4.0]  # default filled in
    assert op.kernel([A([1.0])], {"scale": 3}).tolist() == [3.0]
    with pytest.raises(OpTypeError, match="test.scale: expects 1 argument, got 2"):
        op.type_rel([T(()), T(())], {})
    with pytest.raises(OpAttrError, match="valid attributes: scale"):
        op.type_rel([T(())], {"factor": 1.0})
    assert op.elementwise and "test.scale" not in OPS


def test_policy_example_chain():
    # examples/policy_argmax.relay: dense -> max -> less -> argmax -> squeeze -> cast
    state = A([[0.5, -1.0, 2.0]])
    w = A([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])
    scores = run("nn.dense", state, w, units=4)
    best = run("max", scores)
    assert best.shape == () and best.dtype == np.float32 and float(best) == 2.0
    assert not run("less", best, A(0.0))
    idx = run("argmax", scores, axis=[1])
    out = run("cast", run("squeeze", idx), dtype="int32")
    assert out.shape == () and out.dtype == np.int32 and int(out) == 2
    # and the types agree, step by step
    t = rel("nn.dense", T((1, 3)), T((4, 3)), units=4)
    assert rel("max", t) == T(())
    assert rel("squeeze", rel("argmax", t, axis=[1])) == T((), "int32")


def test_reshape_chain_example():
    x = A([[1, 2, 3], [4, 5, 6]])
    y = run("reshape", run("multiply", run("reshape", run("transpose", x, axes=[1, 0]),
                                           newshape=[6]), A(10.0)), newshape=[3, 2])
    assert y.tolist() == [[10.0, 40.0], [20.0, 50.0], [30.0, 60.0]] and y.dtype == np.float32
