"""Tests of the dynamic-shape operators (rvmdbg/relay/ops/dyn.py): type relations (`?` dims,
rank from the shape argument's static length), attributes, kernels against formulas written
here, and the data-dependent shape functions against the kernels' results."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import (OPS, KernelError, OpAttrError, OpTypeError, infer_shape,
                              shape_data_inputs)
from rvmdbg.relay.types import TensorType

from op_cases import T, rel

DYN_OPS = ["dyn.reshape", "dyn.broadcast_to", "dyn.strided_slice", "dyn.zeros", "dyn.ones",
           "dyn.full", "dyn.tile"]


def run(name, *args, **attrs):
    return OPS[name].kernel([np.asarray(a) for a in args], attrs)


def i64(*values):
    return np.array(values, dtype="int64")


def shape_func(name, args, **attrs):
    """The op's run-time shape function given what the VM gives it: values where the op
    declares it reads them, shapes elsewhere."""
    flags = shape_data_inputs(name)
    inputs = [np.asarray(a) if f else np.asarray(a).shape for a, f in zip(args, flags)]
    dtypes = [str(np.asarray(a).dtype) for a in args]
    return infer_shape(name, inputs, dtypes, attrs)


# ---------------------------------------------------------------------------- registry

def test_registered_with_tvm_patterns_and_data_dependence():
    patterns = {"dyn.reshape": "injective", "dyn.broadcast_to": "broadcast",
                "dyn.strided_slice": "injective", "dyn.zeros": "elemwise",
                "dyn.ones": "elemwise", "dyn.full": "elemwise", "dyn.tile": "injective"}
    for name, pattern in patterns.items():
        assert OPS[name].pattern == pattern
        assert OPS[name].data_dependent
    # TVM's TShapeDataDependent flags
    assert shape_data_inputs("dyn.reshape") == (False, True)
    assert shape_data_inputs("dyn.strided_slice") == (False, True, True, True)
    assert shape_data_inputs("dyn.zeros") == (True,)
    assert shape_data_inputs("dyn.full") == (True, True)
    assert shape_data_inputs("add", 2) == (False, False)
    assert not OPS["reshape"].data_dependent


# ---------------------------------------------------------------------------- type relations

def test_rank_comes_from_the_shape_arguments_static_length():
    assert rel("dyn.reshape", T((2, 6)), T((3,), "int64")) == T((None, None, None))
    assert rel("dyn.zeros", T((2,), "int64"), dtype="int8") == T((None, None), "int8")
    assert rel("dyn.ones", T((0,), "int32")) == T((), "float32")
    assert rel("dyn.full", T((), "int32"), T((3,), "int64")) == T((None,) * 3, "int32")
    assert rel("dyn.full", T((), "int32"), T((1,), "int64"), dtype="float16") == \
        T((None,), "float16")
    assert rel("dyn.broadcast_to", T((1, 3)), T((3,), "int64")) == T((None,) * 3)
    assert rel("dyn.tile", T((2, 3)), T((1,), "int64")) == T((None, None))
    assert rel("dyn.tile", T((2,)), T((3,), "int64")) == T((None,) * 3)
    # only the leading len(begin) axes change
    assert rel("dyn.strided_slice", T((4, 5, 6)), T((2,), "int64"), T((2,), "int64"),
               T((2,), "int64")) == T((None, None, 6))


@pytest.mark.parametrize("call, message", [
    (lambda: rel("dyn.reshape", T((2, 6)), T((None,), "int64")), "static length"),
    (lambda: rel("dyn.reshape", T((2, 6)), T((2,), "float32")), "1-d integer tensor"),
    (lambda: rel("dyn.zeros", T((2, 2), "int64")), "1-d integer tensor"),
    (lambda: rel("dyn.full", T((2,), "int32"), T((1,), "int64")), "scalar"),
    (lambda: rel("dyn.broadcast_to", T((2, 3, 4)), T((2,), "int64")), "rank 2"),
    (lambda: rel("dyn.strided_slice", T((4,)), T((2,), "int64"), T((2,), "int64"),
                 T((2,), "int64")), "only 1 axes"),
    (lambda: rel("dyn.strided_slice", T((4, 4)), T((2,), "int64"), T((1,), "int64"),
                 T((2,), "int64")), "same length"),
])
def test_bad_arguments_are_type_errors(call, message):
    with pytest.raises(OpTypeError, match=message):
        call()


def test_bad_attributes_name_the_attribute():
    with pytest.raises(OpAttrError) as e:
        rel("dyn.zeros", T((2,), "int64"), dtype="float7")
    assert e.value.attr_name == "dtype"
    with pytest.raises(OpAttrError) as e:
        rel("dyn.strided_slice", T((4,)), T((1,), "int64"), T((1,), "int64"),
            T((1,), "int64"), slice_mode="middle")
    assert e.value.attr_name == "slice_mode"
    with pytest.raises(OpAttrError, match="valid attributes"):
        rel("dyn.reshape", T((4,)), T((1,), "int64"), allow_zero=True)


# ---------------------------------------------------------------------------- kernels

def test_reshape_special_values():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    for newshape, expected in [((4, 0, 2), (4, 3, 2)), ((6, 1, -1), (6, 1, 4)),
                               ((-3, 4), (6, 4)), ((0, -3), (2, 12)), ((-1,), (24,))]:
        out = run("dyn.reshape", x, i64(*newshape))
        assert out.shape == expected and np.array_equal(out.ravel(), x.ravel())
        assert shape_func("dyn.reshape", [x, i64(*newshape)]) == [expected]
    out = run("dyn.reshape", np.zeros((0, 3), "int32"), i64(0, 3), allowzero=True)
    assert out.shape == (0, 3)


@pytest.mark.parametrize("newshape, message", [
    ((5, 5), "cannot reshape"), ((-2,), "not valid in dyn.reshape"),
    ((-4, 2, 3, 4), "not valid in dyn.reshape"), ((-1, -1, 6), "more than one -1")])
def test_reshape_bad_values_fail_at_run_time(newshape, message):
    x = np.zeros((2, 3, 4), "float32")
    with pytest.raises(KernelError, match=message):
        run("dyn.reshape", x, i64(*newshape))
    with pytest.raises(KernelError, match=message):
        shape_func("dyn.reshape", [x, i64(*newshape)])


def test_init_ops():
    z = run("dyn.zeros", i64(2, 3), dtype="int8")
    assert z.dtype == np.int8 and z.shape == (2, 3) and not z.any()
    o = run("dyn.ones", np.array([4], "int32"))
    assert o.dtype == np.float32 and np.array_equal(o, np.ones(4))
    f = run("dyn.full", np.array(7, "int32"), i64(2, 2))
    assert f.dtype == np.int32 and np.array_equal(f, np.full((2, 2), 7))
    f = run("dyn.full", np.array(2.5, "float32"), i64(3), dtype="float64")
    assert f.dtype == np.float64 and np.array_equal(f, [2.5, 2.5, 2.5])
    assert shape_func("dyn.full", [np.array(1.0, "float32"), i64(5, 0)]) == [(5, 0)]
    with pytest.raises(KernelError, match="negative size -1"):
        run("dyn.ones", i64(2, -1))


def test_broadcast_to():
    x = np.arange(3, dtype="int32").reshape(1, 3)
    out = run("dyn.broadcast_to", x, i64(2, 2, 3))
    assert out.shape == (2, 2, 3) and np.array_equal(out[1, 1], [0, 1, 2])
    assert shape_func("dyn.broadcast_to", [x, i64(4, 3)]) == [(4, 3)]
    with pytest.raises(KernelError, match="cannot broadcast"):
        run("dyn.broadcast_to", x, i64(2, 4))


def test_tile_pads_the_shorter_of_shape_and_reps():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for reps in [(2, 2), (3,), (2, 1, 2)]:
        out = run("dyn.tile", x, i64(*reps))
        assert np.array_equal(out, np.tile(x, reps))
        assert shape_func("dyn.tile", [x, i64(*reps)]) == [out.shape]
    with pytest.raises(KernelError, match="must be positive"):
        run("dyn.tile", x, i64(0, 2))


def test_strided_slice_end_and_size_modes():
    x = np.arange(20, dtype="float32").reshape(4, 5)
    out = run("dyn.strided_slice", x, i64(1, 0), i64(3, 5), i64(1, 2))
    assert np.array_equal(out, x[1:3, 0:5:2])
    # negative stride, negative begin, end past the axis (clamped)
    out = run("dyn.strided_slice", x, i64(-1), i64(-5), i64(-1))
    assert np.array_equal(out, x[-1:-5:-1])
    out = run("dyn.strided_slice", x, i64(1), i64(100), i64(1))
    assert np.array_equal(out, x[1:])
    # size mode: end is a length from begin, -1 to the end; strides are ignored
    out = run("dyn.strided_slice", x, i64(1, 2), i64(2, -1), i64(5, 5), slice_mode="size")
    assert np.array_equal(out, x[1:3, 2:])
    assert shape_func("dyn.strided_slice", [x, i64(1, 2), i64(2, -1), i64(5, 5)],
                      slice_mode="size") == [(2, 3)]
    with pytest.raises(KernelError, match="0 stride"):
        run("dyn.strided_slice", x, i64(0), i64(1), i64(0))
    # an inverted range is refused, as TVM and the static strided_slice do
    with pytest.raises(KernelError, match="select nothing"):
        run("dyn.strided_slice", x, i64(3), i64(1), i64(1))
    # begin, end and strides shorter than the rank slice the leading axes
    static = run("strided_slice", x, begin=[1], end=[3], strides=[1])
    assert np.array_equal(run("dyn.strided_slice", x, i64(1), i64(3), i64(1)), static)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.data())
def test_shape_functions_agree_with_kernels(shape, data):
    """The shape function the VM runs before allocating gives the shape the kernel makes."""
    x = np.ones(shape, "float32")
    cases = [
        ("dyn.zeros", [i64(*shape)]),
        ("dyn.full", [np.array(3, "int8"), i64(*shape)]),
        ("dyn.tile", [x, i64(*data.draw(st.lists(st.integers(1, 3), max_size=3)))]),
        ("dyn.broadcast_to", [x, i64(*([2] + shape))]),
        ("dyn.reshape", [x, i64(-1)]),
    ]
    k = data.draw(st.integers(0, len(shape)))
    bounds = [data.draw(st.tuples(st.integers(-5, 5), st.integers(-5, 5),
                                  st.sampled_from([-2, -1, 1, 2]))) for _ in range(k)]
    for name, args in cases:
        out = run(name, *args)
        assert shape_func(name, args) == [out.shape], name
    args = [x] + [i64(*[b[j] for b in bounds]) for j in range(3)]
    try:
        out = run("dyn.strided_slice", *args)
    except KernelError:  # an inverted range: the shape function refuses it too
        with pytest.raises(KernelError):
            shape_func("dyn.strided_slice", args)
        return
    assert shape_func("dyn.strided_slice", args) == [out.shape]
    assert np.array_equal(out, x[tuple(slice(b, e, s) for b, e, s in bounds)])
