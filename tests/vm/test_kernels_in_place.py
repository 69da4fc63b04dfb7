"""A fused kernel computes an elementwise operator into its first operand when that operand is
an intermediate at its last use that nothing else sees (`rvmdbg.relay.ops.IN_PLACE`): the
values are those of the operators run one by one, inputs and constants are never written, and
an intermediate a live view still refers to is left alone."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.relay.ops import core
from rvmdbg.vm.kernels import compile_kernel, parse_primitive


@pytest.fixture
def spy(monkeypatch):
    """The in-place kernels, each call counted."""
    calls: list = []
    for name, fn in list(core.IN_PLACE.items()):
        def counted(args, attrs, fn=fn, name=name):
            calls.append(name)
            return fn(args, attrs)
        monkeypatch.setitem(core.IN_PLACE, name, counted)
    return calls


@pytest.fixture
def viewing_reshape(monkeypatch):
    """reshape returning a NumPy view of its operand (no kernel here does today), so a
    kernel's intermediates can share memory."""
    from rvmdbg.relay.ops import get_op
    monkeypatch.setattr(get_op("reshape"), "kernel",
                        lambda args, attrs: args[0].reshape(attrs["newshape"]))


def kernel(text: str):
    return compile_kernel(parse_primitive(text))


CHAIN = """fn (%x: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(3, 4, 3, 3), float32],
    %b: Tensor[(3), float32], %s: Tensor[(3, 1, 1), float32], Primitive=1)
    -> Tensor[(1, 3, 5, 5), float32] {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=3, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = multiply(%1, %s);
  %3 = add(%2, %s);
  nn.relu(%3)
}"""


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_a_conv_chain_in_place_equals_the_operators_one_by_one(seed):
    from rvmdbg.relay.ops import get_op
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 4, 5, 5)).astype("float32")
    w = rng.standard_normal((3, 4, 3, 3)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    s = rng.standard_normal((3, 1, 1)).astype("float32")
    kept = [a.copy() for a in (x, w, b, s)]
    got = kernel(CHAIN)([x, w, b, s])
    op = lambda name, *args, **attrs: get_op(name).kernel(list(args), attrs)  # noqa: E731
    conv = op("nn.conv2d", x, w, padding=[1, 1, 1, 1], channels=3, kernel_size=[3, 3])
    want = op("nn.relu", op("add", op("multiply", op("nn.bias_add", conv, b), s), s))
    assert np.array_equal(got, want)
    for a, k in zip((x, w, b, s), kept):
        assert np.array_equal(a, k)               # inputs are never written


def test_the_chain_does_run_in_place(spy):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32")
            for s in ((1, 4, 5, 5), (3, 4, 3, 3), (3,), (3, 1, 1))]
    kernel(CHAIN)(args)
    # the relu's operand is large enough for the bit path only from 2,048 values; it still
    # runs through the in-place entry, which falls back to a fresh array for so few
    assert spy == ["nn.bias_add", "multiply", "add", "nn.relu"]


def test_an_intermediate_a_live_view_refers_to_is_not_written(spy, viewing_reshape):
    # %1 views %0's memory: writing %0 + 1 into %0 would change %1 before the last add
    k = kernel("""fn (%x: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(6), float32] {
  %0 = multiply(%x, 2f);
  %1 = reshape(%0, newshape=[-1]);
  %2 = add(%0, 1f);
  %3 = reshape(%2, newshape=[-1]);
  add(%1, %3)
}""")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    got = k([x])
    assert np.array_equal(got, (x * 2 + (x * 2 + 1)).reshape(-1))
    # the first add was refused (%1 was alive); the last writes into %1, the view of %0's
    # memory, which nothing else refers to by then
    assert spy == ["add"]
    assert np.array_equal(x, np.arange(6, dtype="float32").reshape(2, 3))


def test_inputs_and_constants_are_never_operands_in_place(spy):
    k = kernel("""fn (%x: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
  %0 = add(%x, 1f);
  nn.relu(%0)
}""")
    x = np.array([-1, 0, 1, 2], dtype="float32")
    assert np.array_equal(k([x]), [0, 1, 2, 3])
    assert np.array_equal(x, [-1, 0, 1, 2])
    assert spy == ["nn.relu"]           # add's first operand is the input: a fresh array


def test_integers_and_used_twice_keep_fresh_arrays(spy):
    kernel("""fn (%x: Tensor[(4), int32], Primitive=1) -> Tensor[(4), int32] {
  %0 = add(%x, 1);
  add(%0, 2)
}""")([np.arange(4, dtype="int32")])
    kernel("""fn (%x: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
  %0 = add(%x, 1f);
  add(%0, %0)
}""")([np.arange(4, dtype="float32")])
    assert spy == []


def test_a_view_whose_memory_another_live_view_shares_is_not_written(spy, viewing_reshape):
    # %1 and %2 both view %0's memory: adding into %1 would change %2 before the last add
    k = kernel("""fn (%x: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(6), float32] {
  %0 = multiply(%x, 2f);
  %1 = reshape(%0, newshape=[-1]);
  %2 = reshape(%0, newshape=[-1]);
  %3 = add(%1, 1f);
  add(%3, %2)
}""")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    assert np.array_equal(k([x]), (x * 2 + 1 + x * 2).reshape(-1))
    assert spy == ["add"]                 # the last one, into %3 (a fresh array)
