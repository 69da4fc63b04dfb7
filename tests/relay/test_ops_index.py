"""Tests of the indexing, sorting and scan operators (ops/index.py): gather, gather_nd,
cumsum, sort, argsort, topk. References are direct loops and Python's `sorted` (stable, with
each value's index as the tie-break TVM's stable sorts give)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from op_cases import check_kernel_case, check_type_case
from rvmdbg.relay.ops import OPS, KernelError, OpAttrError, OpTypeError, infer_shape
from rvmdbg.relay.types import TensorType, TupleType

from op_cases import A, T, rel, run


TYPE_CASES = [
    ("gather", [T((3, 4)), T((3, 2), "int32")], {"axis": 1}, "Tensor[(3, 2), float32]"),
    ("gather", [T((None, 4)), T((5, None), "int64")], {"axis": 0},
     "Tensor[(5, 4), float32]"),
    ("gather_nd", [T((3, 4, 5)), T((2, 6), "int32")], {}, "Tensor[(6, 5), float32]"),
    ("gather_nd", [T((3, 4, 5)), T((1, 3, 2), "int32")], {"batch_dims": 1},
     "Tensor[(3, 2, 5), float32]"),
    ("gather_nd", [T((None, 4)), T((None, 7), "int32")], {"index_rank": 2},
     "Tensor[(7,), float32]"),
    ("cumsum", [T((2, None))], {"axis": 1}, "Tensor[(2, ?), float32]"),
    ("cumsum", [T((2, 3), "int32")], {"dtype": "int64"}, "Tensor[(6,), int64]"),
    ("cumprod", [T((2, None))], {"axis": 1}, "Tensor[(2, ?), float32]"),
    ("sort", [T((None, 3))], {}, "Tensor[(?, 3), float32]"),
    ("argsort", [T((2, 3))], {"axis": 0}, "Tensor[(2, 3), int32]"),
    ("argsort", [T((4,), "int8")], {"dtype": "int64"}, "Tensor[(4,), int64]"),
    ("topk", [T((2, 5))], {"k": 2},
     "(Tensor[(2, 2), float32], Tensor[(2, 2), int32])"),
    ("topk", [T((None, 5))], {"k": 0, "ret_type": "values", "axis": 0},
     "Tensor[(?, 5), float32]"),
    ("topk", [T((4, 5))], {"k": 3, "ret_type": "indices", "axis": 0, "dtype": "int64"},
     "Tensor[(3, 5), int64]"),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPE_CASES)])
def test_type_relation(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


KERNEL_CASES = [
    ("gather", [A([[1, 2], [3, 4]]), A([[0, 0], [1, 0]], "int32")], {"axis": 1},
     A([[1, 1], [4, 3]])),
    ("gather_nd", [A([[1, 2], [3, 4]]), A([[1, 0], [0, 1]], "int32")], {}, A([3, 2])),
    ("gather_nd", [A([[1, 2], [3, 4]]), A([[1]], "int64")], {}, A([[3, 4]])),
    ("cumsum", [A([[1, 2, 3], [4, 5, 6]], "int32")], {}, A([1, 3, 6, 10, 15, 21], "int32")),
    ("cumprod", [A([[1, 2, 3], [4, 5, 6]], "int32")], {}, A([1, 2, 6, 24, 120, 720], "int32")),
    ("cumsum", [A([[1, 2, 3], [4, 5, 6]])], {"axis": 1, "exclusive": True},
     A([[0, 1, 3], [0, 4, 9]])),
    ("sort", [A([[3, 1, 2], [0, 5, -1]])], {}, A([[1, 2, 3], [-1, 0, 5]])),
    ("argsort", [A([3, 1, 3, 2])], {"is_ascend": False}, A([0, 2, 3, 1], "int32")),
    ("topk", [A([1, 4, 4, 2])], {"k": 2}, (A([4, 4]), A([1, 2], "int32"))),
    ("topk", [A([[1, 4], [3, 2]], "int32")], {"k": 1, "axis": 0, "ret_type": "values",
                                              "is_ascend": True}, A([[1, 2]], "int32")),
]


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_kernel(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_names_patterns_and_defaults():
    patterns = {"gather": "injective", "gather_nd": "injective", "cumsum": "opaque",
                "sort": "opaque", "argsort": "opaque", "topk": "opaque"}
    assert {n: OPS[n].pattern for n in patterns} == patterns
    topk = OPS["topk"].attr_specs
    assert [topk[a].default for a in ("k", "axis", "ret_type", "is_ascend", "dtype")] == \
        [1, -1, "both", False, "int32"]
    argsort = OPS["argsort"].attr_specs
    assert [argsort[a].default for a in ("axis", "is_ascend", "dtype")] == [-1, True, "int32"]
    cumsum = OPS["cumsum"].attr_specs
    assert [cumsum[a].default for a in ("axis", "dtype", "exclusive")] == [None, None, False]
    assert OPS["gather_nd"].attr_specs["batch_dims"].default == 0


# ---------------------------------------------------------------------------------------------
# gather and gather_nd against loops


def _shapes(min_dims=1, max_dims=3):
    return st.lists(st.integers(1, 3), min_size=min_dims, max_size=max_dims)


@settings(max_examples=50, deadline=None)
@given(_shapes(), st.data())
def test_gather_matches_loops(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    ishape = list(shape)
    ishape[ax] = data.draw(st.integers(1, 4))
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    n = int(np.prod(ishape))
    idx = np.array(data.draw(st.lists(st.integers(0, shape[ax] - 1), min_size=n, max_size=n)),
                   np.int32).reshape(ishape)
    out = run("gather", x, idx, axis=axis)
    for pos in itertools.product(*map(range, ishape)):
        src = list(pos)
        src[ax] = idx[pos]
        assert out[pos] == x[tuple(src)]
    assert rel("gather", T(shape), T(ishape, "int32"), axis=axis) == T(ishape)


@settings(max_examples=50, deadline=None)
@given(_shapes(1, 3), st.integers(0, 1), _shapes(0, 2), st.data())
def test_gather_nd_matches_loops(shape, batch_dims, ytail, data):
    batch_dims = min(batch_dims, len(shape) - 1)
    m = data.draw(st.integers(1, len(shape) - batch_dims))
    y = list(shape[:batch_dims]) + ytail
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    idx = np.zeros([m] + y, np.int64)
    for i in range(m):
        n = int(np.prod(y))
        idx[i] = np.array(data.draw(st.lists(st.integers(0, shape[batch_dims + i] - 1),
                                             min_size=n, max_size=n)), np.int64).reshape(y)
    out = run("gather_nd", x, idx, batch_dims=batch_dims)
    assert out.shape == tuple(y) + tuple(shape[m + batch_dims:])
    for pos in itertools.product(*map(range, out.shape)):
        ypos, rest = pos[:len(y)], pos[len(y):]
        src = ypos[:batch_dims] + tuple(int(idx[(i,) + ypos]) for i in range(m)) + rest
        assert out[pos] == x[src]
    assert rel("gather_nd", T(shape, "int32"), T(idx.shape, "int64"),
               batch_dims=batch_dims) == T(out.shape, "int32")


def test_gather_errors():
    with pytest.raises(OpTypeError, match="gather: indices .* must have the rank of data"):
        rel("gather", T((3, 4)), T((3,), "int32"), axis=0)
    with pytest.raises(OpTypeError, match="gather: indices must be a signed integer tensor"):
        rel("gather", T((3, 4)), T((3, 4)), axis=0)
    with pytest.raises(OpTypeError, match="gather: axis 2 is out of range"):
        rel("gather", T((3, 4)), T((3, 4), "int32"), axis=2)
    with pytest.raises(OpAttrError, match="gather: missing required attribute 'axis'"):
        rel("gather", T((3, 4)), T((3, 4), "int32"))
    with pytest.raises(KernelError, match="gather: index 4 is out of range for axis 1 of size 4"):
        run("gather", A([[1, 2, 3, 4]]), A([[4]], "int32"), axis=1)
    with pytest.raises(KernelError, match="gather: indices .* differ on axis 0; only axis 1"):
        infer_shape("gather", [(2, 4), (3, 1)], ["float32", "int32"], {"axis": 1})


def test_gather_nd_errors():
    with pytest.raises(OpTypeError, match="gather_nd: indices index 3 axes"):
        rel("gather_nd", T((3, 4)), T((3, 2), "int32"))
    with pytest.raises(OpTypeError, match="gather_nd: the first axis of indices .* give "
                                          "attribute 'index_rank'"):
        rel("gather_nd", T((3, 4)), T((None, 2), "int32"))
    with pytest.raises(OpTypeError, match="gather_nd: attribute 'index_rank' 1 differs"):
        rel("gather_nd", T((3, 4)), T((2, 2), "int32"), index_rank=1)
    with pytest.raises(OpTypeError, match="gather_nd: batch axis 0 differs"):
        rel("gather_nd", T((3, 4)), T((1, 2), "int32"), batch_dims=1)
    with pytest.raises(KernelError, match="gather_nd: index -1 is out of range for axis 0"):
        run("gather_nd", A([1, 2]), A([[-1]], "int32"))


# ---------------------------------------------------------------------------------------------
# cumsum against a running loop


@settings(max_examples=50, deadline=None)
@given(_shapes(1, 3), st.booleans(), st.data())
def test_cumsum_matches_a_running_sum(shape, exclusive, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    x = np.array(data.draw(st.lists(st.integers(-50, 50), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), np.int32).reshape(shape)
    out = run("cumsum", x, axis=axis, exclusive=exclusive, dtype="int64")
    assert out.dtype == np.int64
    flat = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    got = out if axis is None else np.moveaxis(out, axis, -1)
    for lead in itertools.product(*map(range, flat.shape[:-1])):
        total = 0
        for k in range(flat.shape[-1]):
            if not exclusive:
                total += int(flat[lead + (k,)])
            assert got[lead + (k,)] == total
            if exclusive:
                total += int(flat[lead + (k,)])


def test_cumsum_keeps_the_dtype_and_wraps():
    out = run("cumsum", A([2**31 - 1, 1], "int32"))
    assert out.dtype == np.int32 and out.tolist() == [2**31 - 1, -2**31]
    # TVM's ScanopRel takes bool too: 1-bit sums wrap, a running xor
    assert rel("cumsum", T((2,), "bool")) == T((2,), "bool")
    assert run("cumsum", A([True, True], "bool")).tolist() == [True, False]
    # ScanopRel does not check the axis; topi's scan refuses it when it lowers
    assert rel("cumsum", T((2,)), axis=1) == T((2,))
    with pytest.raises(KernelError, match="cumsum: TVM's kernel cannot use axis 1 of a 1-d"):
        run("cumsum", A([1, 2], "int32"), axis=1)
    with pytest.raises(OpTypeError, match="cumsum: a 0-d tensor has no dimension 0"):
        rel("cumsum", T(()))


# ---------------------------------------------------------------------------------------------
# sort, argsort, topk against Python's stable sort


def _order(values, ascend):
    """Stable order: ties keep index order, in both directions (TVM's std::stable_sort)."""
    return sorted(range(len(values)), key=lambda i: (values[i] if ascend else -values[i], i))


@settings(max_examples=60, deadline=None)
@given(_shapes(1, 3), st.booleans(), st.data())
def test_sorts_match_pythons_stable_sort(shape, ascend, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = int(np.prod(shape))
    x = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)),
                 np.float32).reshape(shape)
    k = data.draw(st.integers(0, shape[axis]))
    srt = run("sort", x, axis=axis, is_ascend=ascend)
    arg = run("argsort", x, axis=axis, is_ascend=ascend)
    values, indices = run("topk", x, k=k, axis=axis, is_ascend=ascend)
    moved = [np.moveaxis(a, axis, -1) for a in (x, srt, arg, values, indices)]
    xs, srt_m, arg_m, val_m, idx_m = moved
    for lead in itertools.product(*map(range, xs.shape[:-1])):
        row = xs[lead].tolist()
        order = _order(row, ascend)
        assert arg_m[lead].tolist() == order
        assert srt_m[lead].tolist() == [row[i] for i in order]
        kept = order[:k] if k >= 1 else order
        assert idx_m[lead].tolist() == kept
        assert val_m[lead].tolist() == [row[i] for i in kept]
    assert arg.dtype == np.int32 and indices.dtype == np.int32 and values.dtype == np.float32


def test_topk_errors_and_return_types():
    with pytest.raises(OpTypeError, match="topk: attribute 'k' 6 exceeds the size 5 of axis 1"):
        rel("topk", T((2, 5)), k=6)
    with pytest.raises(OpAttrError, match="topk: attribute 'ret_type' must be one of"):
        rel("topk", T((2, 5)), ret_type="all")
    # TopKRel takes any index dtype; TVM's run-time topk has float32/float64 indices too
    assert rel("topk", T((2, 5)), dtype="float32", ret_type="indices") == T((2, 1), "float32")
    with pytest.raises(KernelError, match='Unsupported output dtype: int16'):
        run("topk", np.zeros((2, 5), np.float32), dtype="int16")
    with pytest.raises(KernelError, match="topk: k 6 exceeds the size 5 of axis 1"):
        run("topk", np.zeros((2, 5), np.float32), k=6)
    assert infer_shape("topk", [(3, 7)], ["float32"], {"k": 2}) == [(3, 2), (3, 2)]
    assert isinstance(rel("topk", T((3, 7)), k=2), TupleType)
    # SortRel and ArgsortRel check no axis; the run-time function's read is undefined
    assert rel("sort", T(())) == T(())
    assert rel("argsort", T((2,)), axis=3) == T((2,), "int32")
    with pytest.raises(KernelError, match="sort: TVM's kernel cannot use axis -1 of a 0-d"):
        run("sort", np.array(1.0, np.float32))
    with pytest.raises(KernelError, match="argsort: TVM's kernel cannot use axis 3 of a 1-d"):
        run("argsort", np.zeros(2, np.float32), axis=3)
    with pytest.raises(OpTypeError, match="topk: needs a tensor of rank >= 1"):
        rel("topk", T(()))


# ---------------------------------------------------------------------------------------------
# cumprod (TVM's relay.cumprod: cumsum's attributes and ScanopRel) against a running loop


@settings(max_examples=50, deadline=None)
@given(_shapes(1, 3), st.booleans(), st.data())
def test_cumprod_matches_a_running_product(shape, exclusive, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    x = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), np.int32).reshape(shape)
    out = run("cumprod", x, axis=axis, exclusive=exclusive, dtype="int64")
    assert out.dtype == np.int64
    flat = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    got = out if axis is None else np.moveaxis(out, axis, -1)
    for lead in itertools.product(*map(range, flat.shape[:-1])):
        total = 1
        for k in range(flat.shape[-1]):
            if not exclusive:
                total *= int(flat[lead + (k,)])
            assert got[lead + (k,)] == total
            if exclusive:
                total *= int(flat[lead + (k,)])


def test_cumprod_types_bools_and_axis():
    assert rel("cumprod", T((2, 3), "int32"), dtype="int64") == T((6,), "int64")
    assert rel("cumprod", T((2, None)), axis=1) == T((2, None))
    assert OPS["cumprod"].pattern == "opaque"
    # 1-bit products: a running and
    assert run("cumprod", A([True, True, False, True], "bool")).tolist() == \
        [True, True, False, False]
    assert run("cumprod", A([2.0, 3.0, 4.0]), exclusive=True).tolist() == [1.0, 2.0, 6.0]
    with pytest.raises(KernelError, match="cumprod: TVM's kernel cannot use axis 1 of a 1-d"):
        run("cumprod", A([1, 2], "int32"), axis=1)
