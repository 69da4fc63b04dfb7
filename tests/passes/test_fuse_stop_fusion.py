"""FuseOps and annotation.stop_fusion: no group crosses it, and it is gone afterwards (TVM
replaces it by its argument once the groups are made); the result keeps its value."""
from __future__ import annotations

from pass_helpers import f32, load, nodes, primitive_functions, run, same

from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.relay.ast import Call, OpRef
from rvmdbg.relay.typecheck import check_module


def _groups(mod) -> list:
    return sorted(sorted(n.op.name for n in nodes(p.body)
                         if isinstance(n, Call) and isinstance(n.op, OpRef))
                  for p in primitive_functions(mod))


def test_stop_fusion_splits_a_chain_and_disappears():
    text = """def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
      %0 = exp(%x);
      %1 = annotation.stop_fusion(%0);
      %2 = multiply(%1, 2f);
      add(%2, 1f)
    }"""
    mod = load(text)
    out = check_module(fuse_ops(mod))
    assert _groups(out) == [["add", "multiply"], ["exp"]]
    names = {n.op.name for n in nodes(out.functions["main"])
             if isinstance(n, Call) and isinstance(n.op, OpRef)}
    assert "annotation.stop_fusion" not in names
    x = f32([[0, 1, 2], [-1, 0.5, 3]])
    assert same(run(out, x), run(mod, x))


def test_without_stop_fusion_the_chain_is_one_kernel():
    mod = load("""def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
      add(multiply(exp(%x), 2f), 1f)
    }""")
    assert _groups(check_module(fuse_ops(mod))) == [["add", "exp", "multiply"]]
