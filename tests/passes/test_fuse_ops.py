"""FuseOps: operator chains become typed primitive functions, one kernel call per group."""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import (f32, load, nodes, op_calls_outside_primitives, primitive_functions, run,
                          same)

from rvmdbg.passes.fold_constant import fold_constant
from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.relay.ast import Call, Constant, Function, OpRef
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.parser import parse_expr
from rvmdbg.relay.printer import print_expr
from rvmdbg.relay.typecheck import check_module
from rvmdbg.relay.types import TensorType


def fuse(text: str):
    mod = load(text)
    return mod, check_module(fuse_ops(mod))


def groups(mod) -> list:
    """Each primitive function's operator names, in the order print_expr shows them."""
    out = []
    for prim in primitive_functions(mod):
        out.append(sorted(n.op.name for n in nodes(prim.body)
                          if isinstance(n, Call) and isinstance(n.op, OpRef)))
    return sorted(out)


def assert_kernels_standalone(mod) -> None:
    """Every primitive function is typed and its text parses back to the same function."""
    for prim in primitive_functions(mod):
        assert all(p.type_annotation is not None for p in prim.params)
        assert prim.ret_type is not None
        back = parse_expr(print_expr(prim))
        assert structural_equal(prim, back), print_expr(prim)


def test_chain_becomes_one_primitive_called_once():
    mod, out = fuse("def @main(%x: float32) -> float32 { add(multiply(%x, 2f), 1f) }")
    body = out.functions["main"].body
    assert isinstance(body, Call) and isinstance(body.op, Function) and body.op.is_primitive
    assert len(body.args) == 1 and body.args[0] is out.functions["main"].params[0]
    assert groups(out) == [["add", "multiply"]]
    prim = body.op
    assert prim.params[0].type_annotation == TensorType((), "float32")
    assert body.span == mod.functions["main"].body.span
    assert print_expr(prim) == (
        "fn (%p0: float32, Primitive=1) -> float32 {\n  add(multiply(%p0, 2f), 1f)\n}")
    assert_kernels_standalone(out)
    assert same(run(out, f32(3)), f32(7))


MLP = """
def @main(%x: Tensor[(1, 8), float32], %w1: Tensor[(4, 8), float32], %b1: Tensor[(4,), float32],
          %w2: Tensor[(3, 4), float32], %b2: Tensor[(3,), float32]) -> Tensor[(1, 3), float32] {
  %0 = nn.dense(%x, %w1, units=4);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2, units=3);
  %4 = nn.bias_add(%3, %b2);
  nn.softmax(%4)
}"""


def test_dense_takes_the_elementwise_ops_after_it():
    mod, out = fuse(MLP)
    assert groups(out) == [["nn.bias_add", "nn.dense"], ["nn.bias_add", "nn.dense", "nn.relu"],
                           ["nn.softmax"]]
    assert_kernels_standalone(out)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32")
            for s in ((1, 8), (4, 8), (4,), (3, 4), (3,))]
    assert same(run(out, *args), run(mod, *args))


def test_dense_takes_its_elementwise_ops_before_an_injective_op_claims_them():
    # TVM fuses an out_elemwise_fusable op with the elemwise ops after it first: dense+add,
    # then reshape+exp (a consumer-first grouping made add+reshape+exp and left dense alone)
    mod, out = fuse("""
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32], %b: Tensor[(8), float32]) {
  %0 = nn.dense(%x, %w, units=8);
  %1 = add(%0, %b);
  exp(reshape(%1, newshape=[2, 16]))
}""")
    assert groups(out) == [["add", "nn.dense"], ["exp", "reshape"]]
    assert_kernels_standalone(out)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in ((4, 8), (8, 8), (8,))]
    assert same(run(out, *args), run(mod, *args))


def test_softmax_takes_the_add_after_it_before_a_reshape_claims_it():
    # softmax is out_elemwise_fusable too: softmax+add, then reshape+exp, as TVM's phase 0
    mod, out = fuse("""
def @main(%x: Tensor[(4, 8), float32], %b: Tensor[(8), float32]) {
  %0 = nn.softmax(%x);
  %1 = add(%0, %b);
  exp(reshape(%1, newshape=[2, 16]))
}""")
    assert groups(out) == [["add", "nn.softmax"], ["exp", "reshape"]]
    assert_kernels_standalone(out)
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s).astype("float32") for s in ((4, 8), (8,))]
    assert same(run(out, *args), run(mod, *args))


@pytest.mark.parametrize("expr, expected", [
    ("sum(exp(%x))", [["exp", "sum"]]),                       # elemwise into a reduction
    ("exp(sum(%x))", [["exp"], ["sum"]]),                     # a reduction never takes ops after
    ("sum(reshape(%x, newshape=[6]))", [["reshape"], ["sum"]]),  # injective not into reduce
    ("sum(sum(%x, axis=[1]))", [["sum"], ["sum"]]),           # one anchor per group
    ("shape_of(exp(%x))", [["exp"], ["shape_of"]]),           # opaque stands alone
    ("exp(reshape(transpose(%x), newshape=[6]))", [["exp", "reshape", "transpose"]]),
])
def test_fusion_rules(expr, expected):
    mod, out = fuse(f"def @main(%x: Tensor[(2, 3), float32]) {{ {expr} }}")
    assert groups(out) == expected
    assert not op_calls_outside_primitives(out)
    assert_kernels_standalone(out)
    x = np.arange(6, dtype="float32").reshape(2, 3) / 4
    assert same(run(out, x), run(mod, x))


# groups TVM's GraphPartitioner makes (traced by hand through graph_partitioner.cc, v0.14)
@pytest.mark.parametrize("body, expected", [
    # conv2d + bias_add + relu stays one kernel when a reduction follows
    ("mean(nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b)), axis=[2, 3])",
     [["mean"], ["nn.bias_add", "nn.conv2d", "nn.relu"]]),
    # dense takes the elemwise ops after it; the reshape and transpose after those are one more
    ("transpose(reshape(tanh(add(nn.dense(%m, %v), %c)), newshape=[2, 2, 2]), axes=[1, 0, 2])",
     [["add", "nn.dense", "tanh"], ["reshape", "transpose"]]),
    # a pool takes the elemwise chain; the broadcast expand_dims goes into the sum
    ("sum(expand_dims(exp(nn.relu(nn.max_pool2d(%x, pool_size=[2, 2]))), axis=0), axis=[1])",
     [["exp", "nn.max_pool2d", "nn.relu"], ["expand_dims", "sum"]]),
    # a diamond: both uses of exp lead to the add
    ("add(negative(exp(%m)), sqrt(exp(%m)))", [["add", "exp", "exp", "negative", "sqrt"]]),
])
def test_tvms_groups(body, expected):
    mod, out = fuse("def @main(%x: Tensor[(1, 3, 4, 4), float32], %w: Tensor[(2, 3, 3, 3), "
                    "float32], %b: Tensor[(2), float32], %m: Tensor[(2, 4), float32], "
                    "%v: Tensor[(4, 4), float32], %c: Tensor[(4), float32]) { " + body + " }")
    assert groups(out) == expected
    assert_kernels_standalone(out)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32")
            for s in ((1, 3, 4, 4), (2, 3, 3, 3), (2,), (2, 4), (4, 4), (4,))]
    assert same(run(out, *args), run(mod, *args))


def test_a_shared_producer_joins_the_add_both_uses_reach():
    mod, out = fuse("""
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %0 = exp(%x);
  add(negative(%0), sqrt(%0))
}""")
    assert groups(out) == [["add", "exp", "negative", "sqrt"]]
    x = f32([0.5, 1.0, 1.5, 2.0])
    assert same(run(out, x), run(mod, x))


def test_producer_with_two_consumers_is_not_fused():
    mod, out = fuse("""
def @main(%x: float32) -> (float32, float32) {
  %0 = exp(%x);
  (%0 + 1f, %0 * 2f)
}""")
    assert groups(out) == [["add"], ["exp"], ["multiply"]]
    # the shared producer's kernel call is one node used by both consumers
    calls = [n for n in nodes(out.functions["main"])
             if isinstance(n, Call) and isinstance(n.op, Function)]
    assert len(calls) == 3
    assert same(run(out, f32(0.5)), run(mod, f32(0.5)))


def test_same_consumer_twice_still_fuses():
    mod, out = fuse("def @main(%x: float32) -> float32 { %0 = exp(%x); %0 * %0 }")
    assert groups(out) == [["exp", "multiply"]]
    assert_kernels_standalone(out)
    assert same(run(out, f32(0.5)), run(mod, f32(0.5)))


def test_tuple_glue_and_tuple_results():
    mod, out = fuse("""
def @main(%a: Tensor[(2,), float32], %b: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %0 = concatenate((exp(%a), %b), axis=0);
  %1 = split(%0 * 2f, indices_or_sections=2);
  %1.0 + %1.1
}""")
    # TVM: the tuple joins concatenate, exp joins the tuple (phase 2), and split's two
    # projections lead to the add, which takes it all
    assert groups(out) == [["add", "concatenate", "exp", "multiply", "split"]]
    assert not op_calls_outside_primitives(out)
    assert_kernels_standalone(out)
    a, b = f32([0.5, 1.0]), f32([2.0, 3.0])
    assert same(run(out, a, b), run(mod, a, b))


def test_tensor_constants_become_parameters_scalars_stay_inline():
    mod = load("""
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %x * ones(shape=[2], dtype="float32") + 1f
}""")
    out = check_module(fuse_ops(check_module(fold_constant(mod))))
    (prim,) = primitive_functions(out)
    assert len(prim.params) == 2
    assert any(isinstance(n, Constant) and n.data.ndim == 0 for n in nodes(prim.body))
    call = out.functions["main"].body
    assert isinstance(call.args[1], Constant) and call.args[1].data.shape == (2,)
    assert_kernels_standalone(out)
    x = f32([1.0, 2.0])
    assert same(run(out, x), run(mod, x))


def test_ops_in_every_scope_end_up_in_primitives():
    mod, out = fuse("""
def @main(%x: int32, %o: Option[int32]) -> int32 {
  let %f = fn (%y: int32) -> int32 { %y * 2 + 1 };
  let %m = (match (%o) { Some(%v) => %v - 1, None => 0 });
  if (%x > 0) { %f(%x) + %m } else { %m * 3 }
}""")
    assert not op_calls_outside_primitives(out)
    assert_kernels_standalone(out)


def test_dynamic_shapes_print_and_parse_in_kernels():
    mod, out = fuse("""
def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] { exp(%x) * 2f + %x }
""")
    (prim,) = primitive_functions(out)
    assert str(prim.params[0].type_annotation) == "Tensor[(?, 3), float32]"
    assert_kernels_standalone(out)
    x = np.ones((4, 3), "float32")
    assert same(run(out, x), run(mod, x))
