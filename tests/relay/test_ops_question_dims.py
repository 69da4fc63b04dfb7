"""Issue 11's operators on `?` dimensions: for one representative call of each, turning any input
dimension (or all of them) into `?` still type-checks, and gives the static result with some
dimensions `?` (never a different known size, rank or dtype); the run-time shape function on
the concrete shapes gives the static result back."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpTypeError, infer_shape, infer_type, shape_data_inputs
from rvmdbg.relay.types import TensorType, TupleType
from tests.relay.test_tvm_op_facts import ISSUE_11


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


I8, I32, I64 = "int8", "int32", "int64"
S = T(())            # a float32 scalar
SI = T((), I32)      # an int32 scalar (zero points)

# op -> (argument types, attributes): a call TVM's relation accepts
CASES = {
    "nn.conv1d": ([T((1, 4, 9)), T((6, 2, 3))], {"groups": 2, "padding": [1, 2], "strides": [2]}),
    "nn.conv2d": ([T((1, 7, 6, 4)), T((3, 2, 2, 6))],
                  {"data_layout": "NHWC", "kernel_layout": "HWIO", "groups": 2,
                   "padding": [1, 0, 2, 1], "dilation": [2, 1], "out_dtype": "float64"}),
    "nn.conv2d_transpose": ([T((1, 2, 4, 3)), T((2, 3, 3, 2))],
                            {"strides": [2, 2], "padding": [1, 0, 0, 1],
                             "output_padding": [1, 1]}),
    "nn.max_pool1d": ([T((1, 2, 9))], {"pool_size": [2], "strides": [3], "ceil_mode": True}),
    "nn.max_pool2d": ([T((1, 2, 7, 6))], {"pool_size": [3, 3], "strides": [2, 2],
                                          "padding": [1], "dilation": [1, 2]}),
    "nn.avg_pool1d": ([T((1, 2, 9))], {"pool_size": [3], "padding": [1, 2],
                                       "count_include_pad": True}),
    "nn.avg_pool2d": ([T((1, 7, 6, 2))], {"pool_size": [3, 2], "strides": [2, 2],
                                          "layout": "NHWC", "ceil_mode": True}),
    "nn.global_avg_pool2d": ([T((1, 3, 5, 4))], {}),
    "nn.global_max_pool2d": ([T((1, 5, 4, 3))], {"layout": "NHWC"}),
    "nn.adaptive_avg_pool2d": ([T((1, 3, 7, 5))], {"output_size": [3, 2]}),
    "nn.batch_norm": ([T((2, 3, 4)), T((3,)), T((3,)), T((3,)), T((3,))], {}),
    "nn.layer_norm": ([T((2, 5)), T((5,)), T((5,))], {}),
    "nn.group_norm": ([T((2, 4, 3)), T((4,)), T((4,))], {"num_groups": 2}),
    "nn.instance_norm": ([T((2, 3, 4)), T((3,)), T((3,))], {}),
    "nn.l2_normalize": ([T((2, 3))], {"eps": 1e-6, "axis": [1]}),
    "nn.lrn": ([T((1, 4, 3, 3))], {"size": 3}),
    "nn.dropout": ([T((2, 3))], {"rate": 0.25}),
    "nn.prelu": ([T((1, 3, 2, 2)), T((3,))], {}),
    "nn.pad": ([T((2, 3)), S], {"pad_width": [[1, 2], [0, 1]], "pad_mode": "edge"}),
    "nn.upsampling": ([T((1, 2, 3, 4))], {"scale_h": 2.0, "scale_w": 1.5}),
    "image.resize2d": ([T((1, 5, 4, 2))], {"size": [7, 3], "layout": "NHWC"}),
    "nn.matmul": ([T((2, 3)), T((4, 3))], {"transpose_b": True}),
    "erf": ([T((2, 3))], {}),
    "fast_exp": ([T((4,))], {}),
    "fast_tanh": ([T((2, 2))], {}),
    "fast_erf": ([T((3,))], {}),
    "strided_slice": ([T((4, 5, 6))], {"begin": [4, 0], "end": [1, 1], "strides": [-1, 1],
                                       "axes": [1, 0]}),
    "gather": ([T((3, 4)), T((3, 2), I32)], {"axis": 1}),
    "gather_nd": ([T((3, 4)), T((2, 5), I32)], {}),
    "one_hot": ([T((4,), I32), S, S], {"depth": 3, "axis": 0, "dtype": "float32"}),
    "arange": ([S, S, S], {"start": 0.0, "stop": 5.0, "step": 0.5}),
    "tile": ([T((2, 3))], {"reps": [2, 1, 2]}),
    "repeat": ([T((2, 3))], {"repeats": 3, "axis": 1}),
    "cumsum": ([T((2, 3))], {"axis": 1, "exclusive": True}),
    "topk": ([T((2, 5))], {"k": 2}),
    "argsort": ([T((2, 5))], {"axis": 0}),
    "sort": ([T((2, 5))], {}),
    "variance": ([T((2, 3)), T((2, 1))], {"axis": [1]}),
    "std": ([T((2, 3)), T((1, 3))], {"axis": [0], "keepdims": True}),
    "logsumexp": ([T((2, 3))], {"axis": [1]}),
    "layout_transform": ([T((1, 8, 2, 2))], {"src_layout": "NCHW", "dst_layout": "NCHW4c"}),
    "collapse_sum_like": ([T((2, 3, 4)), T((3, 1))], {}),
    "broadcast_to_like": ([T((3, 1)), T((2, 3, 4))], {}),
    "reshape_like": ([T((2, 6)), T((3, 4))], {}),
    "contrib_reverse_reshape": ([T((10, 5, 4))], {"newshape": [-1, 0]}),
    "annotation.stop_fusion": ([T((2, 3))], {}),
    "dyn.reshape": ([T((2, 6)), T((3,), I64)], {}),
    "dyn.broadcast_to": ([T((3, 1)), T((3,), I64)], {}),
    "dyn.strided_slice": ([T((4, 5)), T((2,), I64), T((2,), I64), T((2,), I64)], {}),
    "dyn.zeros": ([T((2,), I64)], {"dtype": "float32"}),
    "dyn.ones": ([T((3,), I64)], {"dtype": "int8"}),
    "dyn.full": ([T((), I32), T((2,), I64)], {}),
    "dyn.tile": ([T((2, 3)), T((2,), I64)], {}),
    "qnn.quantize": ([T((2, 3)), S, SI], {"out_dtype": "uint8"}),
    "qnn.dequantize": ([T((2, 3), I8), S, SI], {}),
    "qnn.requantize": ([T((2, 3), I32), S, SI, S, SI], {"rounding": "TONEAREST"}),
    "qnn.conv2d": ([T((1, 3, 5, 5), I8), T((4, 3, 3, 3), I8), SI, SI, S, S],
                   {"kernel_size": [3, 3], "channels": 4, "padding": [1, 1]}),
    "qnn.dense": ([T((2, 3), I8), T((4, 3), I8), SI, SI, S, S], {"units": 4}),
    "qnn.add": ([T((2, 3), I8), T((3,), I8), S, SI, S, SI, S, SI], {}),
    "qnn.mul": ([T((2, 1), "uint8"), T((2, 3), "uint8"), S, SI, S, SI, S, SI], {}),
    "qnn.concatenate": ([TupleType((T((2, 3), I8), T((1, 3), I8))), TupleType((S, S)),
                         TupleType((SI, SI)), S, SI], {"axis": 0}),
}


# dims TVM's relations need known, as rvmdbg's do: a dyn shape argument's length is the output's
# rank ("must have static rank"); gather_nd's first indices axis unless index_rank is given
KNOWN = {
    "dyn.reshape": {(1, 0, 0)}, "dyn.broadcast_to": {(1, 0, 0)}, "dyn.zeros": {(0, 0, 0)},
    "dyn.ones": {(0, 0, 0)}, "dyn.full": {(1, 0, 0)}, "dyn.tile": {(1, 0, 0)},
    "dyn.strided_slice": {(1, 0, 0), (2, 0, 0), (3, 0, 0)}, "gather_nd": {(1, 0, 0)},
}


def _tensors(t):
    return list(t.fields) if isinstance(t, TupleType) else [t]


def _with_unknown(args, which, keep=frozenset()):
    """`args` with the dims `which` ((arg, field, dim) triples, or "all" but `keep`) made `?`."""
    out = []
    for i, a in enumerate(args):
        fields = []
        for f, t in enumerate(_tensors(a)):
            def unknown(d, i=i, f=f):
                return (i, f, d) not in keep if which == "all" else (i, f, d) in which
            shape = tuple(None if unknown(d) else s for d, s in enumerate(t.shape))
            fields.append(TensorType(shape, t.dtype))
        out.append(TupleType(tuple(fields)) if isinstance(a, TupleType) else fields[0])
    return out


def _fits(loose, static) -> bool:
    """Is `loose` the static type with some dims `?`?"""
    a, b = _tensors(loose), _tensors(static)
    return len(a) == len(b) and all(
        x.dtype == y.dtype and len(x.shape) == len(y.shape)
        and all(p is None or p == q for p, q in zip(x.shape, y.shape)) for x, y in zip(a, b))


def test_every_issue_11_operator_has_a_case():
    assert sorted(CASES) == sorted(ISSUE_11)


@pytest.mark.parametrize("name", sorted(CASES))
def test_question_dims_keep_the_static_result(name):
    # and the dims that must stay known are refused as `?`, naming the operator
    for dim in KNOWN.get(name, ()):
        with pytest.raises(OpTypeError, match=name):
            infer_type(name, _with_unknown(CASES[name][0], {dim}), CASES[name][1])
    args, attrs = CASES[name]
    static = infer_type(name, args, attrs)
    keep = KNOWN.get(name, set())
    dims = [(i, f, d) for i, a in enumerate(args) for f, t in enumerate(_tensors(a))
            for d in range(len(t.shape)) if (i, f, d) not in keep]
    for which in [{dim} for dim in dims] + ["all"]:
        loose = infer_type(name, _with_unknown(args, which, keep), attrs)
        assert _fits(loose, static), (which, loose, static)


@pytest.mark.parametrize("name", sorted(n for n in CASES if not OPS[n].data_dependent))
def test_the_run_time_shape_function_gives_the_static_shapes(name):
    args, attrs = CASES[name]
    static = _tensors(infer_type(name, args, attrs))
    inputs = [[f.shape for f in a.fields] if isinstance(a, TupleType) else a.shape
              for a in args]
    dtypes = [[f.dtype for f in a.fields] if isinstance(a, TupleType) else a.dtype
              for a in args]
    assert not any(shape_data_inputs(name, len(args)))
    assert infer_shape(name, inputs, dtypes, attrs) == [t.shape for t in static]


def test_data_dependent_shape_functions_read_the_values():
    # dyn.* (and arange) size their outputs from input values at run time, as TVM's
    x = np.zeros((2, 6), "float32")
    assert infer_shape("dyn.reshape", [x.shape, np.array([3, -1, 2])], ["float32", "int64"],
                       {}) == [(3, 2, 2)]
    assert infer_shape("dyn.tile", [x, np.array([2, 1])], ["float32", "int64"],
                       {}) == [(4, 6)]
    assert infer_shape("dyn.strided_slice",
                       [x.shape, np.array([0, 1]), np.array([2, 6]), np.array([1, 2])],
                       ["float32", "int64", "int64", "int64"], {}) == [(2, 3)]
