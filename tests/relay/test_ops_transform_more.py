"""Tests of the transform operators TVM's transformers and converted models use:
strided_slice, tile, repeat, layout_transform, collapse_sum_like, broadcast_to_like,
reshape_like, contrib_reverse_reshape, annotation.stop_fusion, arange and one_hot.

Each kernel is checked against a reference written here (Python slicing, direct loops over
the output's indices, TVM's documented examples), on static and `?` shapes; bad attributes
give an error naming the operator and the attribute, located and exit 2 through `check`.
"""
from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from op_cases import check_kernel_case, check_type_case
from rvmdbg.relay.ops import OPS, KernelError, OpAttrError, OpTypeError, infer_shape
from rvmdbg.relay.types import TensorType

from op_cases import A, T, rel, run

ROOT = Path(__file__).resolve().parents[2]


X34 = np.arange(12, dtype=np.float32).reshape(3, 4)

TYPE_CASES = [
    ("strided_slice", [T((4, 6))], {"begin": [1, 0], "end": [3, 6], "strides": [1, 2]},
     "Tensor[(2, 3), float32]"),
    ("strided_slice", [T((4, 6))], {"begin": [1], "end": [3]}, "Tensor[(2, 6), float32]"),
    ("strided_slice", [T((4, 6))], {"begin": [-1], "end": [-5], "strides": [-1]},
     "Tensor[(4, 6), float32]"),
    ("strided_slice", [T((None, 6))], {"begin": [0, 1], "end": [1, 5]},
     "Tensor[(?, 4), float32]"),
    ("strided_slice", [T((2, 8, 3))], {"begin": [2], "end": [4], "strides": [1],
                                       "axes": [1]}, "Tensor[(2, 2, 3), float32]"),
    ("strided_slice", [T((2, 8))], {"begin": [0, 5], "end": [-1, 2],
                                    "slice_mode": "size"}, "Tensor[(2, 2), float32]"),
    ("tile", [T((2, 3))], {"reps": [2, 1]}, "Tensor[(4, 3), float32]"),
    ("tile", [T((None, 3))], {"reps": [2, 1, 2]}, "Tensor[(2, ?, 6), float32]"),
    ("repeat", [T((2, None))], {"repeats": 3, "axis": 0}, "Tensor[(6, ?), float32]"),
    ("repeat", [T((2, 3), "int32")], {"repeats": 2, "axis": -1}, "Tensor[(2, 6), int32]"),
    ("layout_transform", [T((1, 8, 5, 5))], {"src_layout": "NCHW", "dst_layout": "NCHW4c"},
     "Tensor[(1, 2, 5, 5, 4), float32]"),
    ("layout_transform", [T((None, 3, 4, 5))], {"src_layout": "NCHW", "dst_layout": "NHWC"},
     "Tensor[(?, 4, 5, 3), float32]"),
    ("layout_transform", [T((1, 2, 5, 5, 4))], {"src_layout": "NCHW4c",
                                                "dst_layout": "NCHW8c"},
     "Tensor[(1, 1, 5, 5, 8), float32]"),
    ("collapse_sum_like", [T((2, 3, 4)), T((3, 1))], {}, "Tensor[(3, 1), float32]"),
    ("broadcast_to_like", [T((3, 1)), T((2, 3, None))], {}, "Tensor[(2, 3, ?), float32]"),
    ("reshape_like", [T((1, 2, 3, 4)), T((6, 2, 2, 3))], {"lhs_begin": 1, "rhs_end": 3},
     "Tensor[(1, 6, 2, 2), float32]"),
    ("reshape_like", [T((2, 3)), T((3, 2), "int32")], {}, "Tensor[(3, 2), float32]"),
    ("contrib_reverse_reshape", [T((10, 5, 4))], {"newshape": [-1, 0]},
     "Tensor[(50, 4), float32]"),
    ("contrib_reverse_reshape", [T((None, 5, 4))], {"newshape": [-1, 0]},
     "Tensor[(?, 4), float32]"),
    # TVM 0.6's name: ReshapeRel with ReshapeAttrs.reverse (left to right without it)
    ("_contrib_reverse_reshape", [T((10, 5, 4))], {"newshape": [-1, 0], "reverse": True},
     "Tensor[(50, 4), float32]"),
    ("_contrib_reverse_reshape", [T((10, 5, 4))], {"newshape": [-1, 0]},
     "Tensor[(40, 5), float32]"),
    ("annotation.stop_fusion", [T((None, 2), "int8")], {}, "Tensor[(?, 2), int8]"),
    ("arange", [T(()), T(()), T(())], {"start": 1.0, "stop": 5.0, "step": 1.5},
     "Tensor[(3,), float32]"),
    ("arange", [T((), "int32")] * 3, {"start": 0, "stop": 10, "step": 3, "dtype": "int32"},
     "Tensor[(4,), int32]"),
    ("one_hot", [T((None, 2), "int32"), T(()), T(())], {"depth": 3},
     "Tensor[(?, 2, 3), float32]"),
    ("one_hot", [T((4,), "int64"), T((), "int32"), T((), "int32")],
     {"depth": 5, "axis": 0, "dtype": "int32"}, "Tensor[(5, 4), int32]"),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPE_CASES)])
def test_type_relation(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


KERNEL_CASES = [
    ("strided_slice", [X34], {"begin": [0, 1], "end": [2, 4], "strides": [1, 1]},
     X34[0:2, 1:4]),
    ("strided_slice", [X34], {"begin": [2, -1], "end": [-4, -5], "strides": [-1, -2]},
     X34[2::-1, 3::-2]),
    ("strided_slice", [X34], {"begin": [1], "end": [2], "axes": [1]}, X34[:, 1:2]),
    ("strided_slice", [X34], {"begin": [1, 1], "end": [-1, 2], "slice_mode": "size"},
     X34[1:, 1:3]),
    ("tile", [A([[1, 2]], "int32")], {"reps": [2, 2]}, A([[1, 2, 1, 2], [1, 2, 1, 2]], "int32")),
    ("repeat", [A([[1, 2], [3, 4]])], {"repeats": 2, "axis": 1},
     A([[1, 1, 2, 2], [3, 3, 4, 4]])),
    ("layout_transform", [np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1)],
     {"src_layout": "NCHW", "dst_layout": "NCHW4c"},
     np.arange(8, dtype=np.float32).reshape(1, 2, 1, 1, 4)),
    ("collapse_sum_like", [np.ones((2, 3, 4), np.float32), np.zeros((3, 1), np.float32)], {},
     np.full((3, 1), 8, np.float32)),
    ("broadcast_to_like", [A([[1], [2]]), np.zeros((2, 2, 3), np.float32)], {},
     A([[[1, 1, 1], [2, 2, 2]]] * 2)),
    ("reshape_like", [np.arange(6, dtype=np.int32), np.zeros((2, 3), np.float32)], {},
     np.arange(6, dtype=np.int32).reshape(2, 3)),
    ("contrib_reverse_reshape", [np.arange(24, dtype=np.float32).reshape(2, 3, 4)],
     {"newshape": [-1, 0]}, np.arange(24, dtype=np.float32).reshape(6, 4)),
    ("_contrib_reverse_reshape", [np.arange(24, dtype=np.int8).reshape(2, 3, 4)],
     {"newshape": [-1, 0], "reverse": True}, np.arange(24, dtype=np.int8).reshape(6, 4)),
    ("annotation.stop_fusion", [A([1.5, 2.5])], {}, A([1.5, 2.5])),
    # the type checker copies constant bounds into the attributes, as TVM's ArangeAttrs hold
    ("arange", [A(1.0), A(5.0), A(1.5)], {"start": 1.0, "stop": 5.0, "step": 1.5},
     A([1.0, 2.5, 4.0])),
    ("arange", [A(10, "int32"), A(0, "int32"), A(-3, "int32")],
     {"start": 10, "stop": 0, "step": -3, "dtype": "int32"}, A([10, 7, 4, 1], "int32")),
    ("one_hot", [A([0, 2, -1, 5], "int32"), A(1.0), A(0.0)], {"depth": 3},
     A([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])),
]


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_kernel(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_names_patterns_and_defaults():
    patterns = {"strided_slice": "injective", "tile": "broadcast", "repeat": "broadcast",
                "layout_transform": "injective", "collapse_sum_like": "comm_reduce",
                "broadcast_to_like": "broadcast", "reshape_like": "injective",
                "contrib_reverse_reshape": "injective", "_contrib_reverse_reshape": "injective",
                "annotation.stop_fusion": "opaque",
                "arange": "opaque", "one_hot": "out_elemwise_fusable"}
    assert {n: OPS[n].pattern for n in patterns} == patterns
    specs = OPS["strided_slice"].attr_specs
    assert (specs["strides"].default, specs["slice_mode"].default, specs["axes"].default) == \
        (None, "end", None)
    assert specs["begin"].required and specs["end"].required
    assert OPS["arange"].attr_specs["dtype"].default == "float32"
    one_hot = OPS["one_hot"].attr_specs
    assert (one_hot["depth"].default, one_hot["axis"].default) == (1, -1)
    like = OPS["reshape_like"].attr_specs
    assert [like[a].default for a in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")] == \
        [0, None, 0, None]


# ---------------------------------------------------------------------------------------------
# strided_slice against Python's slicing (which clamps as topi does wherever TVM accepts the
# range; TVM rejects a range running against its stride)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 6), st.integers(-9, 9), st.integers(-9, 9),
       st.integers(-4, 4).filter(lambda s: s != 0))
def test_strided_slice_matches_python_slicing(dim, b, e, s):
    x = np.arange(dim * 2, dtype=np.int32).reshape(dim, 2)
    start, stop, _ = slice(b, e, s).indices(dim)
    attrs = {"begin": [b], "end": [e], "strides": [s]}
    if (s > 0 and stop < start) or (s < 0 and stop > start):
        with pytest.raises(OpTypeError, match="^strided_slice: begin .* select nothing"):
            rel("strided_slice", T((dim, 2), "int32"), **attrs)
        with pytest.raises(KernelError):
            run("strided_slice", x, **attrs)
        return
    expected = [list(row) for row in x.tolist()[b:e:s]]
    out = run("strided_slice", x, **attrs)
    assert out.tolist() == expected and out.shape == (len(expected), 2)
    assert rel("strided_slice", T((dim, 2), "int32"), **attrs) == T(out.shape, "int32")
    assert rel("strided_slice", T((None, 2), "int32"), **attrs) == T((None, 2), "int32")
    assert infer_shape("strided_slice", [(dim, 2)], ["int32"], attrs) == [out.shape]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(-8, 8), st.integers(-1, 7))
def test_strided_slice_size_mode(dim, b, size):
    x = np.arange(dim, dtype=np.float32)
    first = min(max(b + dim if b < 0 else b, 0), dim)
    expected = x.tolist()[first:] if size < 0 else x.tolist()[first:first + size]
    out = run("strided_slice", x, begin=[b], end=[size], strides=[5], slice_mode="size")
    assert out.tolist() == expected  # strides are ignored in "size" mode


def test_strided_slice_errors_name_the_attribute():
    with pytest.raises(OpTypeError, match="strided_slice: attribute 'begin' .* more than the 2"):
        rel("strided_slice", T((2, 3)), begin=[0, 0, 0], end=[1])
    with pytest.raises(OpTypeError, match="strided_slice: attribute 'strides' .* 0 stride"):
        rel("strided_slice", T((2, 3)), begin=[0], end=[1], strides=[0])
    with pytest.raises(OpTypeError, match="strided_slice: attributes 'axes'"):
        rel("strided_slice", T((2, 3)), begin=[0], end=[1, 2], axes=[0])
    with pytest.raises(OpTypeError, match="strided_slice: axes 2 is out of range"):
        rel("strided_slice", T((2, 3)), begin=[0], end=[1], strides=[1], axes=[2])
    with pytest.raises(OpAttrError, match="strided_slice: attribute 'slice_mode' must be one"):
        rel("strided_slice", T((2, 3)), begin=[0], end=[1], slice_mode="middle")
    with pytest.raises(OpAttrError, match="strided_slice: missing required attribute 'end'"):
        rel("strided_slice", T((2, 3)), begin=[0])


def test_strided_slice_on_a_question_dim_is_checked_at_run_time():
    attrs = {"begin": [3], "end": [1]}
    assert rel("strided_slice", T((None,)), **attrs) == T((None,))
    with pytest.raises(KernelError, match="strided_slice: begin 3 and end 1 select nothing"):
        infer_shape("strided_slice", [(5,)], ["float32"], attrs)


# ---------------------------------------------------------------------------------------------
# tile, repeat: direct loops over the output


def _tile_reference(x, reps):
    n = max(x.ndim, len(reps))
    xs = x.reshape((1,) * (n - x.ndim) + x.shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    out = np.empty(tuple(d * r for d, r in zip(xs.shape, reps)), x.dtype)
    for idx in itertools.product(*map(range, out.shape)):
        out[idx] = xs[tuple(i % d for i, d in zip(idx, xs.shape))]
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=1, max_size=3))
def test_tile_matches_loops(shape, reps):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    out = run("tile", x, reps=reps)
    np.testing.assert_array_equal(out, _tile_reference(x, reps))
    assert rel("tile", T(x.shape, "int32"), reps=reps) == T(out.shape, "int32")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_repeat_matches_loops(shape, repeats, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = run("repeat", x, repeats=repeats, axis=axis)
    ax = axis % x.ndim
    for idx in itertools.product(*map(range, out.shape)):
        src = list(idx)
        src[ax] //= repeats
        assert out[idx] == x[tuple(src)]
    assert rel("repeat", T(shape), repeats=repeats, axis=axis) == T(out.shape)


def test_tile_and_repeat_errors():
    with pytest.raises(OpTypeError, match="tile: attribute 'reps' \\[2, 0\\] must be positive"):
        rel("tile", T((2, 3)), reps=[2, 0])
    with pytest.raises(OpTypeError, match="repeat: attribute 'repeats' must be >= 1"):
        rel("repeat", T((2, 3)), repeats=0, axis=0)
    with pytest.raises(OpTypeError, match="repeat: axis 2 is out of range"):
        rel("repeat", T((2, 3)), repeats=2, axis=2)


# ---------------------------------------------------------------------------------------------
# layout_transform: the index maps written out


def test_layout_transform_nchw_to_nchw4c_and_back():
    x = np.random.default_rng(0).standard_normal((2, 8, 3, 2)).astype(np.float32)
    out = run("layout_transform", x, src_layout="NCHW", dst_layout="NCHW4c")
    assert out.shape == (2, 2, 3, 2, 4)
    for n, co, h, w, ci in itertools.product(*map(range, out.shape)):
        assert out[n, co, h, w, ci] == x[n, co * 4 + ci, h, w]
    back = run("layout_transform", out, src_layout="NCHW4c", dst_layout="NCHW")
    np.testing.assert_array_equal(back, x)


def test_layout_transform_nchw_nhwc_and_split_to_split():
    x = np.random.default_rng(1).standard_normal((1, 3, 2, 4)).astype(np.float32)
    nhwc = run("layout_transform", x, src_layout="NCHW", dst_layout="NHWC")
    for n, h, w, c in itertools.product(*map(range, nhwc.shape)):
        assert nhwc[n, h, w, c] == x[n, c, h, w]
    np.testing.assert_array_equal(
        run("layout_transform", nhwc, src_layout="NHWC", dst_layout="NCHW"), x)
    y = np.random.default_rng(2).standard_normal((1, 4, 2, 2, 2)).astype(np.float32)  # NCHW2c
    z = run("layout_transform", y, src_layout="NCHW2c", dst_layout="NHWC4c")
    assert z.shape == (1, 2, 2, 2, 4)
    for n, h, w, co, ci in itertools.product(*map(range, z.shape)):
        c = co * 4 + ci
        assert z[n, h, w, co, ci] == y[n, c // 2, h, w, c % 2]


def test_layout_transform_errors():
    with pytest.raises(OpTypeError, match="layout_transform: axis C of size 6 does not split"):
        rel("layout_transform", T((1, 6, 2, 2)), src_layout="NCHW", dst_layout="NCHW4c")
    with pytest.raises(OpTypeError, match="layout_transform: attribute 'dst_layout' 'NC4'"):
        rel("layout_transform", T((1, 6)), src_layout="NC", dst_layout="NC4")
    with pytest.raises(OpTypeError, match="layout_transform: cannot transform layout NCHW to "
                                          "NCDHW"):
        rel("layout_transform", T((1, 6, 2, 2)), src_layout="NCHW", dst_layout="NCDHW")
    with pytest.raises(OpTypeError, match="src_layout NCHW has 4 axes but the input has rank 3"):
        rel("layout_transform", T((1, 6, 2)), src_layout="NCHW", dst_layout="NHWC")
    with pytest.raises(OpTypeError, match="sub-axis c without its axis C"):
        rel("layout_transform", T((1, 6, 2)), src_layout="NH4c", dst_layout="NH4c")


# ---------------------------------------------------------------------------------------------
# collapse_sum_like, broadcast_to_like, reshape_like, contrib_reverse_reshape


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_collapse_sum_like_inverts_broadcasting(shape, data):
    keep = data.draw(st.integers(0, len(shape)))
    target = [d if data.draw(st.booleans()) else 1 for d in shape[len(shape) - keep:]]
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    out = run("collapse_sum_like", x, np.zeros(target, np.int64))
    expected = np.zeros(target, np.int64)
    lead = len(shape) - len(target)
    for idx in itertools.product(*map(range, shape)):
        expected[tuple(0 if t == 1 else i for i, t in zip(idx[lead:], target))] += x[idx]
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.int64


def test_like_ops_errors():
    with pytest.raises(OpTypeError, match="collapse_sum_like: .* does not broadcast"):
        rel("collapse_sum_like", T((2, 3)), T((2,)))
    with pytest.raises(OpTypeError, match="broadcast_to_like: .* does not broadcast"):
        rel("broadcast_to_like", T((2, 3)), T((4, 2)))
    with pytest.raises(OpTypeError, match="broadcast_to_like: dtypes float32 and int32 differ"):
        rel("broadcast_to_like", T((2, 3)), T((2, 3), "int32"))
    with pytest.raises(OpTypeError, match=r"reshape_like: cannot reshape \(2, 3\) \(6 elements\)"
                                          r" to \(4,\)"):
        rel("reshape_like", T((2, 3)), T((4,)))
    with pytest.raises(OpTypeError, match="reshape_like: attributes 'rhs_begin' and 'rhs_end'"):
        rel("reshape_like", T((2, 3)), T((6,)), rhs_begin=1, rhs_end=0)
    with pytest.raises(KernelError, match="reshape_like: cannot reshape"):
        infer_shape("reshape_like", [(2, 3), (5,)], ["float32", "float32"], {})


@pytest.mark.parametrize("shape, newshape, expected", [
    ((10, 5, 4), [-1, 0], (50, 4)),   # TVM's documented example (reshape gives (40, 5))
    ((2, 3, 4), [0, -1], (3, 8)),     # the last 0 copies the last dimension
    ((2, 3, 4), [-3, 0], (6, 4)),     # -3 merges the first two of the remaining ones
    ((2, 3, 4), [-2, 4], (2, 3, 4)),  # -2 copies what is left, on the left
])
def test_reverse_reshape_reads_from_the_right(shape, newshape, expected):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = run("contrib_reverse_reshape", x, newshape=newshape)
    assert out.shape == expected
    np.testing.assert_array_equal(out.reshape(-1), x.reshape(-1))


# ---------------------------------------------------------------------------------------------
# arange, one_hot


@settings(max_examples=60, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-5, 5).filter(bool))
def test_arange_matches_a_loop(start, stop, step):
    expected, v = [], start
    while (step > 0 and v < stop) or (step < 0 and v > stop):
        expected.append(v)
        v += step
    args = [A(start, "int32"), A(stop, "int32"), A(step, "int32")]
    attrs = {"start": start, "stop": stop, "step": step, "dtype": "int32"}
    if not expected:
        with pytest.raises(OpTypeError, match="arange: .* give an empty range"):
            rel("arange", *[T((), "int32")] * 3, **attrs)
        return
    assert run("arange", *args, dtype="int32").tolist() == expected
    assert rel("arange", *[T((), "int32")] * 3, **attrs) == T((len(expected),), "int32")


def test_arange_with_run_time_bounds_has_a_data_dependent_shape_function():
    assert rel("arange", T(()), T(()), T(())) == T((None,))
    shape = infer_shape("arange", [A(0.0), A(7.0), A(1.5)], ["float32"] * 3, {})
    assert shape == [(5,)]
    # an empty range is an empty tensor at run time (TVM's shape function), a type error only
    # with constant bounds
    assert infer_shape("arange", [A(3.0), A(1.0), A(1.0)], ["float32"] * 3, {}) == [(0,)]
    assert run("arange", A(3.0), A(1.0), A(1.0)).shape == (0,)
    with pytest.raises(KernelError, match="arange: step must not be 0"):
        infer_shape("arange", [A(0.0), A(1.0), A(0.0)], ["float32"] * 3, {})
    with pytest.raises(OpTypeError, match=r"arange: stop must be a 0-d float32 tensor"):
        rel("arange", T(()), T((1,)), T(()), start=0, stop=1, step=1)
    with pytest.raises(OpTypeError, match="arange: step must not be 0"):
        rel("arange", T(()), T(()), T(()), start=0, stop=1, step=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(1, 4), st.data())
def test_one_hot_matches_loops(shape, depth, data):
    axis = data.draw(st.sampled_from([-1] + list(range(len(shape) + 1))))
    n = int(np.prod(shape))
    indices = np.array(data.draw(st.lists(st.integers(-1, depth), min_size=n, max_size=n)),
                       np.int32).reshape(shape)
    out = run("one_hot", indices, A(5, "int32"), A(-1, "int32"), depth=depth, axis=axis,
              dtype="int64")
    ax = len(shape) if axis == -1 else axis
    assert out.dtype == np.int64
    for idx in itertools.product(*map(range, out.shape)):
        rest = idx[:ax] + idx[ax + 1:]
        assert out[idx] == (5 if indices[rest] == idx[ax] else -1)


def test_one_hot_errors():
    with pytest.raises(OpTypeError, match="one_hot: attribute 'depth' must be positive"):
        rel("one_hot", T((2,), "int32"), T(()), T(()), depth=0)
    with pytest.raises(OpTypeError, match="one_hot: attribute 'axis' 3 is out of range"):
        rel("one_hot", T((2,), "int32"), T(()), T(()), depth=2, axis=3)
    # OneHotRel checks no dtype of the indices (float indices compare as floats)
    assert rel("one_hot", T((2,)), T(()), T(()), depth=2) == T((2, 2))
    with pytest.raises(OpTypeError, match="one_hot: on_value must be a 0-d tensor"):
        rel("one_hot", T((2,), "int32"), T((1,)), T(()), depth=2)


# ---------------------------------------------------------------------------------------------
# Through the front end: located errors and exit 2; arange folded from its constants


def _check(tmp_path, body: str, params: str = "%x: Tensor[(4, 6), float32]"):
    path = tmp_path / "p.relay"
    path.write_text(f'#[version = "0.0.5"]\ndef @main({params}) {{\n  {body}\n}}\n')
    return subprocess.run([sys.executable, "-m", "rvmdbg", "check", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("body, message", [
    ("strided_slice(%x, begin=[0, 1], end=[2], strides=[1, 1, 1])",
     "strided_slice: attribute 'strides' [1, 1, 1] has 3 values"),
    ('strided_slice(%x, begin=[0], end=[2], slice_mode="middle")',
     "strided_slice: attribute 'slice_mode' must be one of"),
    ("tile(%x, reps=[0])", "tile: attribute 'reps' [0] must be positive"),
    ('layout_transform(%x, src_layout="NCHW", dst_layout="NHWC")',
     "layout_transform: src_layout NCHW has 4 axes but the input has rank 2"),
    ("arange(0f, %x, 1f)", "arange: stop must be a 0-d float32 tensor"),
])
def test_check_reports_located_errors(tmp_path, body, message):
    proc = _check(tmp_path, body)
    assert proc.returncode == 2, proc.stderr
    assert f"p.relay:3:3: error: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_arange_in_a_program_takes_its_bounds_from_constants(tmp_path):
    proc = _check(tmp_path, 'arange(2, 11, 3, dtype="int32")', "")
    assert proc.returncode == 0, proc.stderr
    assert "Tensor[(3,), int32]" in proc.stdout
    proc = _check(tmp_path, 'arange(0f, %s, 1f)', "%s: float32")
    assert proc.returncode == 0, proc.stderr
    assert "Tensor[(?,), float32]" in proc.stdout
