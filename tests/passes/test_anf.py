"""ToANormalForm: every operand atomic, evaluation order and sharing preserved."""
from __future__ import annotations

import numpy as np
from pass_helpers import ATOMS, i32, load, nodes, run, same

from rvmdbg.passes.anf import is_atomic, to_a_normal_form
from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.relay.ast import (Call, Function, GlobalVar, If, Let, Match, RefCreate, RefRead,
                              RefWrite, Tuple, TupleGetItem)
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import ADTValue


def anf(text: str):
    mod = load(text)
    return mod, check_module(to_a_normal_form(mod))


def operands(n) -> list:
    if isinstance(n, Call):
        return [n.op, *n.args]
    if isinstance(n, Tuple):
        return list(n.fields)
    if isinstance(n, TupleGetItem):
        return [n.tuple_value]
    if isinstance(n, If):
        return [n.cond]
    if isinstance(n, Match):
        return [n.data]
    if isinstance(n, RefCreate):
        return [n.value]
    if isinstance(n, RefRead):
        return [n.ref]
    if isinstance(n, RefWrite):
        return [n.ref, n.value]
    return []


def assert_anf(mod) -> None:
    for fn in mod.functions.values():
        seen, stack = set(), [fn]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, Function) and n.is_primitive:
                continue  # kernels stay expression trees
            for o in operands(n):
                assert is_atomic(o), f"non-atomic operand {type(o).__name__}"
            if isinstance(n, Let):
                stack.extend([n.value, n.body])
            elif isinstance(n, Function):
                stack.append(n.body)
            elif isinstance(n, If):
                stack.extend([n.true_branch, n.false_branch])
            elif isinstance(n, Match):
                stack.extend(c.rhs for c in n.clauses)


BUMP = """
def @bump(%r: ref(int32)) -> int32 {
  ref_write(%r, ref_read(%r) + 1);
  ref_read(%r)
}
"""


def global_calls(e, name: str) -> int:
    """Calls of the global `name` reachable from expression e."""
    return sum(1 for n in nodes(e)
               if isinstance(n, Call) and isinstance(n.op, GlobalVar) and n.op.name == name)


def test_every_operand_is_atomic():
    mod, out = anf("""
def @f(%x: int32) -> int32 { %x }
def @main(%x: int32, %o: Option[int32]) -> (int32, int32, Option[int32]) {
  let %r = ref(%x * 2 + 1);
  ref_write(%r, ref_read(%r) + @f(%x - 1));
  let %m = (match (%o) { Some(%v) => %v * 3, None => @f(ref_read(%r)) });
  (if (%x + 1 > 2) { @f(%x) + 1 } else { (%x, %m).1 }, (fn (%y: int32) -> int32 { %y + %x })(4),
   Some(@f(%m)))
}""")
    assert_anf(out)
    for x, o in ((i32(3), ADTValue(1, "None", ())), (i32(0), ADTValue(0, "Some", (i32(5),)))):
        assert same(run(out, x, o), run(mod, x, o))


def test_shared_node_is_evaluated_once():
    mod, out = anf(BUMP + """
def @main() -> (int32, int32) {
  let %r = ref(0);
  %0 = @bump(%r);
  (%0 + %0, ref_read(%r))
}""")
    assert global_calls(out.functions["main"], "bump") == 1
    result = run(out)
    assert same(result.fields[0], i32(2)) and same(result.fields[1], i32(1))


def test_evaluation_order_is_left_to_right():
    mod, out = anf(BUMP + """
def @main() -> (int32, int32, int32) {
  let %r = ref(0);
  (@bump(%r), @bump(%r) * 10, @bump(%r) * 100)
}""")
    result = run(out)
    assert [int(f) for f in result.fields] == [1, 20, 300]
    assert same(result, run(mod))


def test_node_used_in_one_branch_stays_in_that_branch():
    mod, out = anf(BUMP + """
def @main(%c: bool) -> int32 {
  let %r = ref(0);
  %0 = @bump(%r);
  %1 = if (%c) { %0 + %0 } else { 0 };
  %1 + ref_read(%r)
}""")
    ifs = [n for n in nodes(out.functions["main"]) if isinstance(n, If)]
    assert len(ifs) == 1
    assert global_calls(ifs[0].true_branch, "bump") == 1
    assert global_calls(out.functions["main"], "bump") == 1
    assert int(run(out, np.array(False))) == 0
    assert int(run(out, np.array(True))) == 3


def test_node_used_in_both_branches_is_bound_before_the_if():
    mod, out = anf(BUMP + """
def @main(%c: bool) -> int32 {
  let %r = ref(0);
  %0 = @bump(%r);
  if (%c) { %0 } else { %0 + 10 }
}""")
    ifs = [n for n in nodes(out.functions["main"]) if isinstance(n, If)]
    assert global_calls(ifs[0], "bump") == 0
    assert global_calls(out.functions["main"], "bump") == 1
    assert int(run(out, np.array(True))) == 1
    assert int(run(out, np.array(False))) == 11


def test_let_values_keep_their_names_and_nested_lets_flatten():
    mod, out = anf("""
def @main(%x: int32) -> int32 {
  let %y = %x + 1;
  (let %v = %y * 2; %v + 3) * 4
}""")
    names = [n.var.name for n in nodes(out.functions["main"]) if isinstance(n, Let)]
    assert names[:2] == ["y", "v"]
    body = out.functions["main"].body
    assert isinstance(body, Let) and isinstance(body.body, Let)  # one flat chain
    assert same(run(out, i32(2)), i32(36))


def test_primitive_function_bodies_are_not_converted():
    mod = load("def @main(%x: float32) -> float32 { exp(%x * 2f + 1f) }")
    out = check_module(to_a_normal_form(check_module(fuse_ops(mod))))
    body = out.functions["main"].body
    assert isinstance(body, Let)
    prim = body.value.op
    assert isinstance(prim, Function) and prim.is_primitive
    assert isinstance(prim.body, Call) and not isinstance(prim.body.args[0], ATOMS)
    assert_anf(out)
