"""Tests of the normalisation operators against their formulas written here: nn.batch_norm (its
3-tuple, axis, center, scale), nn.layer_norm, nn.group_norm, nn.instance_norm,
nn.l2_normalize, nn.lrn; type relations with `?` dims and errors naming the attribute."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import OPS, OpTypeError, infer_shape
from rvmdbg.relay.types import TensorType, TupleType

from op_cases import T, rel, run


RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def per_axis(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


# ---------------------------------------------------------------------------------------------
# batch_norm


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data(),
       center=st.booleans(), scale=st.booleans())
def test_batch_norm_formula(shape, data, center, scale):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(*shape)
    c = shape[axis]
    gamma, beta, mean = rand(c), rand(c), rand(c)
    var = np.abs(rand(c)) + np.float32(0.1)
    out, m, v = run("nn.batch_norm", x, gamma, beta, mean, var, axis=axis, epsilon=1e-3,
                    center=center, scale=scale)
    a = axis % len(shape)
    want = (x.astype(np.float64) - per_axis(mean, a, x.ndim)) / np.sqrt(
        per_axis(var, a, x.ndim).astype(np.float64) + 1e-3)
    if scale:
        want = want * per_axis(gamma, a, x.ndim)
    if center:
        want = want + per_axis(beta, a, x.ndim)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m, mean)
    np.testing.assert_array_equal(v, var)
    assert out.dtype == np.float32 and m is not mean  # fresh outputs


def test_batch_norm_returns_tvms_tuple_type():
    vec = T((8,))
    assert rel("nn.batch_norm", T((None, 8, 4, 4)), vec, vec, vec, vec) == TupleType(
        (T((None, 8, 4, 4)), vec, vec))
    assert rel("nn.batch_norm", T((2, None)), T((5,)), T((5,)), T((5,)), T((5,)),
               axis=-1) == TupleType((T((2, None)), T((5,)), T((5,))))
    assert infer_shape("nn.batch_norm", [(3, 8, 2, 2)] + [(8,)] * 4, ["float32"] * 5, {}) == [
        (3, 8, 2, 2), (8,), (8,)]
    defaults = {a.name: a.default for a in OPS["nn.batch_norm"].attrs}
    assert defaults == {"axis": 1, "epsilon": 1e-5, "center": True, "scale": True}
    assert OPS["nn.batch_norm"].pattern == "out_elemwise_fusable"


@pytest.mark.parametrize("types, attrs, words", [
    (((1, 8, 4, 4), (4,), (8,), (8,), (8,)), {}, ["gamma", "'axis'"]),
    (((1, 8, 4, 4), (8,), (8,), (8,), (8,)), {"axis": 4}, ["'axis'", "out of range"]),
    (((1, 8, 4, 4), (8, 1), (8,), (8,), (8,)), {}, ["gamma must be 1-d"]),
])
def test_batch_norm_errors(types, attrs, words):
    with pytest.raises(OpTypeError) as e:
        rel("nn.batch_norm", *(T(s) for s in types), **attrs)
    assert e.value.message.startswith("nn.batch_norm")
    for w in words:
        assert w in e.value.message


def test_batch_norm_of_integers_checks_as_in_tvm_and_has_no_kernel():
    # BatchNormRel takes any dtype; TVM's SimplifyInference then needs an integer sqrt
    from rvmdbg.relay.ops import KernelError
    vec = T((2,), "int32")
    assert rel("nn.batch_norm", T((1, 2), "int32"), vec, vec, vec, vec).fields[0] == \
        T((1, 2), "int32")
    v = np.ones(2, "int32")
    with pytest.raises(KernelError, match="nn.batch_norm: TVM has no int32 kernel"):
        OPS["nn.batch_norm"].kernel([np.ones((1, 2), "int32"), v, v, v, v], {})


# ---------------------------------------------------------------------------------------------
# layer, group, instance norm


def normalise(x, axes, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_layer_norm(axis):
    x = rand(2, 3, 5)
    c = x.shape[axis]
    g, b = rand(c), rand(c)
    got = run("nn.layer_norm", x, g, b, axis=axis, epsilon=1e-5)
    a = axis % 3
    want = normalise(x, (a,), 1e-5) * per_axis(g, a, 3) + per_axis(b, a, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    no_affine = run("nn.layer_norm", x, g, b, axis=axis, center=False, scale=False)
    np.testing.assert_allclose(no_affine, normalise(x, (a,), 1e-5), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(groups):
    x = rand(2, 4, 3, 3)
    g, b = rand(4), rand(4)
    got = run("nn.group_norm", x, g, b, num_groups=groups)
    split = x.reshape(2, groups, 4 // groups, 3, 3)
    want = normalise(split, (2, 3, 4), 1e-5).reshape(x.shape)
    want = want * per_axis(g, 1, 4) + per_axis(b, 1, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_instance_norm():
    x = rand(2, 3, 4, 5)
    g, b = rand(3), rand(3)
    got = run("nn.instance_norm", x, g, b)
    want = normalise(x, (2, 3), 1e-5) * per_axis(g, 1, 4) + per_axis(b, 1, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    nhwc = run("nn.instance_norm", x.transpose(0, 2, 3, 1), g, b, axis=3)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), want, rtol=1e-4, atol=1e-4)


def test_affine_norm_relations_and_errors():
    assert rel("nn.layer_norm", T((None, 7)), T((7,)), T((7,))) == T((None, 7))
    assert rel("nn.group_norm", T((1, 6, None)), T((6,)), T((6,)), num_groups=3) == \
        T((1, 6, None))
    with pytest.raises(OpTypeError, match="'num_groups'"):
        rel("nn.group_norm", T((1, 6, 2)), T((6,)), T((6,)), num_groups=4)
    with pytest.raises(OpTypeError, match="'num_groups'"):
        rel("nn.group_norm", T((1, 6, 2)), T((6,)), T((6,)))  # TVM's default 0
    with pytest.raises(OpTypeError, match="gamma"):
        rel("nn.layer_norm", T((2, 7)), T((6,)), T((7,)))
    with pytest.raises(OpTypeError, match="rank >= 3"):
        rel("nn.instance_norm", T((2, 7)), T((7,)), T((7,)))
    assert OPS["nn.layer_norm"].attr_specs["axis"].default == -1


# ---------------------------------------------------------------------------------------------
# l2_normalize, lrn


def test_l2_normalize():
    x = rand(2, 3, 4)
    got = run("nn.l2_normalize", x, eps=1e-6, axis=[1, 2])
    ssq = (x.astype(np.float64) ** 2).sum(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, x / np.sqrt(np.maximum(ssq, 1e-6)), rtol=1e-5)
    tiny = np.full((1, 2), 1e-4, dtype="float32")
    np.testing.assert_allclose(run("nn.l2_normalize", tiny, eps=1.0, axis=[1]), tiny)
    with pytest.raises(OpTypeError, match="'axis'"):
        rel("nn.l2_normalize", T((2, 3)), eps=1e-6, axis=[2])


@pytest.mark.parametrize("axis, size", [(1, 3), (1, 5), (3, 3)])
def test_lrn(axis, size):
    x = rand(2, 6, 3, 4) if axis == 1 else rand(2, 3, 4, 6)
    got = run("nn.lrn", x, size=size, axis=axis, alpha=0.01, beta=0.5, bias=1.5)
    xd = x.astype(np.float64)
    want = np.empty_like(xd)
    n = x.shape[axis]
    for c in range(n):
        lo, hi = max(0, c - size // 2), min(n, c + size // 2 + 1)
        window = np.take(xd, range(lo, hi), axis=axis)
        sq = (window ** 2).sum(axis=axis)
        val = np.take(xd, c, axis=axis) / (1.5 + 0.01 * sq / size) ** 0.5
        index = [slice(None)] * 4
        index[axis] = c
        want[tuple(index)] = val
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(OpTypeError, match="'size'"):
        rel("nn.lrn", T((1, 4, 2, 2)), size=4)
    with pytest.raises(OpTypeError, match="'axis'"):
        rel("nn.lrn", T((1, 4, 2, 2)), axis=2)
