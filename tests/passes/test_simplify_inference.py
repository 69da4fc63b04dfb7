"""SimplifyInference: `batch_norm(...).0` becomes TVM's multiply and add by a per-channel scale
and shift, `dropout(...).0` its data; the VM running the rewritten program agrees bit for bit
with the interpreter running batch_norm's kernel, and the rewrite is placed as TVM's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pass_helpers import load, run

from rvmdbg.passes.pipeline import default_pipeline
from rvmdbg.passes.simplify_inference import simplify_inference
from rvmdbg.relay.ast import Call, Constant, OpRef, walk
from rvmdbg.relay.printer import print_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine


def _bn(shape, axis: int = 1, flags: str = "", dtype: str = "float32", result: str = "%0.0"):
    c = shape[axis]
    vec = f"Tensor[({c}), {dtype}]"
    ret = f"Tensor[({', '.join(map(str, shape))}), {dtype}]"
    return f"""def @main(%x: {ret}, %g: {vec}, %b: {vec}, %m: {vec}, %v: {vec}) -> {ret} {{
  %0 = nn.batch_norm(%x, %g, %b, %m, %v, axis={axis}{flags});
  {result}
}}
"""


def _ops(mod) -> list:
    return [e.op.name for e in walk(mod.functions["main"].body)
            if isinstance(e, Call) and isinstance(e.op, OpRef)]


def _args(shape, axis, dtype, seed):
    rng = np.random.default_rng(seed)
    c = shape[axis]
    x = rng.standard_normal(shape).astype(dtype)
    g, b, m = (rng.standard_normal(c).astype(dtype) for _ in range(3))
    v = (np.abs(rng.standard_normal(c)) + 0.01).astype(dtype)
    return [x, g, b, m, v]


def test_batch_norm_becomes_tvms_multiply_and_add():
    out = simplify_inference(load(_bn((1, 3, 4, 4))))
    ops = _ops(out)
    assert "nn.batch_norm" not in ops
    # BatchNormToInferUnpack's operators: eps added, sqrt, 1/x, times gamma, -mean times scale,
    # plus beta, both expanded to (C, 1, 1), then data * scale + shift
    assert sorted(ops) == sorted(["add", "sqrt", "divide", "multiply", "negative", "multiply",
                                  "add", "expand_dims", "expand_dims", "multiply", "add"])
    text = print_module(out)
    assert "expand_dims(" in text and "num_newaxis=2" in text


@pytest.mark.parametrize("shape, axis, flags, expands", [
    ((2, 5), 1, "", 0),                        # the last axis: nothing to expand
    ((2, 3, 4), -1, "", 0),
    ((2, 3, 4), 1, ", center=False", 2),      # no beta: the shift is -mean * scale
    ((2, 3, 4), 1, ", scale=False", 2),       # no gamma
    ((1, 2, 3, 4, 5), 2, ", epsilon=0.001f", 2),
])
def test_axes_and_flags_as_tvm(shape, axis, flags, expands):
    mod = load(_bn(shape, axis, flags))
    out = simplify_inference(mod)
    ops = _ops(out)
    assert ops.count("expand_dims") == expands
    assert ("nn.batch_norm" in ops) is False
    if "center=False" in flags:
        assert ops.count("add") == 2              # eps, then data * scale + shift
    if "scale=False" in flags:
        assert ops.count("multiply") == 2         # -mean * scale, data * scale
    args = _args(shape, axis, "float32", 3)
    got = VirtualMachine(compile_module(mod)).invoke("main", args)
    np.testing.assert_array_equal(got, run(mod, *args))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), dtype=st.sampled_from(["float32", "float64"]),
       shape=st.sampled_from([(1, 4, 3, 3), (2, 3), (2, 6, 5), (1, 2, 3, 2, 2)]),
       axis_pick=st.integers(0, 3))
def test_vm_equals_the_batch_norm_kernel_bit_for_bit(seed, dtype, shape, axis_pick):
    axis = axis_pick % len(shape)
    mod = load(_bn(shape, axis, dtype=dtype))
    args = _args(shape, axis, dtype, seed)
    got = VirtualMachine(compile_module(mod)).invoke("main", args)
    np.testing.assert_array_equal(got, run(mod, *args))      # the interpreter: the kernel


def test_a_batch_norm_whose_statistics_are_used_stays_for_them():
    text = _bn((1, 2, 3, 3), result="%1 = add(%0.1, %0.2);\n  add(%0.0, sum(%1))")
    out = simplify_inference(load(text))
    ops = _ops(out)
    assert ops.count("nn.batch_norm") == 1 and "sqrt" in ops
    mod = load(text)
    args = _args((1, 2, 3, 3), 1, "float32", 5)
    np.testing.assert_array_equal(VirtualMachine(compile_module(mod)).invoke("main", args),
                                  run(mod, *args))


def test_integers_keep_their_batch_norm():
    out = simplify_inference(load(_bn((1, 2, 2), dtype="int32")))
    assert _ops(out) == ["nn.batch_norm"]


def test_dropout_passes_its_data_through():
    mod = load("""def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = nn.dropout(%x, rate=0.5f);
  nn.relu(%0.0)
}
""")
    out = simplify_inference(mod)
    assert _ops(out) == ["nn.relu"]


def test_the_data_ops_carry_the_batch_norms_span_and_the_statistics_theirs():
    def spans(mod):
        bn = [e for e in walk(mod.functions["main"].body)
              if isinstance(e, Call) and getattr(e.op, "name", "") == "nn.batch_norm"]
        body = simplify_inference(mod).functions["main"].body
        assert body.op.name == "add" and body.span == bn[0].span and body.span is not None
        assert body.args[0].op.name == "multiply" and body.args[0].span == bn[0].span
        stats = body.args[1]                       # expand_dims(shift)
        made = [e for e in walk(stats) if isinstance(e, Call)
                or isinstance(e, Constant) and e.data.ndim == 0]   # not the statistics
        return bn[0].span, {e.span for e in made}

    # statistics given at run time: scale and shift are a kernel of the batch_norm's line
    span, seen = spans(load(_bn((1, 3, 2, 2))))
    assert seen == {span}
    # constant statistics (a model's): folded into constants of no line
    from rvmdbg.relay.metadata import metadata_text
    vecs = [np.ones(3, "float32")] * 4
    text = f"""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 2, 2), float32]) -> Tensor[(1, 3, 2, 2), float32] {{
  %0 = nn.batch_norm(%x, {", ".join(f"meta[relay.Constant][{i}]" for i in range(4))});
  %0.0
}}
#[metadata]
{metadata_text(vecs)}
"""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    span, seen = spans(check_module(load_module(text, "bn.relay")))
    assert seen == {None}


def test_it_runs_where_tvm_runs_it_and_constant_statistics_fold_into_the_conv_kernel():
    from rvmdbg.relay.metadata import metadata_text
    names = default_pipeline().names()
    assert names[:3] == ["RemoveUnusedFunctions", "SimplifyInference", "EtaExpand"]
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((4, 2, 3, 3)).astype("float32")]
    weights += [rng.standard_normal(4).astype("float32") for _ in range(3)]
    weights += [(np.abs(rng.standard_normal(4)) + 0.1).astype("float32")]
    meta = [f"meta[relay.Constant][{i}]" for i in range(5)]
    text = f"""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 5, 5), float32]) -> Tensor[(1, 4, 5, 5), float32] {{
  %0 = nn.conv2d(%x, {meta[0]}, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.batch_norm(%0, {meta[1]}, {meta[2]}, {meta[3]}, {meta[4]});
  nn.relu(%1.0)
}}
#[metadata]
{metadata_text(weights)}
"""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    mod = check_module(load_module(text, "bn.relay"))
    exe = compile_module(mod)
    assert exe.kernel_names() == ["vm_mod_fused_nn_conv2d_multiply_add_nn_relu"]
    x = rng.standard_normal((1, 2, 5, 5)).astype("float32")
    np.testing.assert_array_equal(VirtualMachine(exe).invoke("main", [x]), run(mod, x))


def test_primitive_functions_are_left_as_they_are():
    mod = load("""def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32]) -> Tensor[(1, 2), float32] {
  %0 = fn (%p: Tensor[(1, 2), float32], %q: Tensor[(2), float32], Primitive=1) -> Tensor[(1, 2), float32] {
    %1 = nn.batch_norm(%p, %q, %q, %q, %q);
    %1.0
  };
  %0(%x, %g)
}
""")
    assert print_module(simplify_inference(mod)) == print_module(mod)
