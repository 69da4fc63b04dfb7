"""EtaExpand: constructors, globals and operators used as values become fn wrappers."""
from __future__ import annotations

from pass_helpers import f32, i32, load, module_nodes, run, same

from rvmdbg.passes.eta_expand import eta_expand
from rvmdbg.relay.ast import Call, ConstructorRef, Function, GlobalVar, OpRef
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import ADTValue


def callees(mod) -> set:
    return {id(n.op) for n in module_nodes(mod) if isinstance(n, Call)}


def values_of(mod, kind) -> list:
    """Nodes of the given kind that are not the callee of a call."""
    ops = callees(mod)
    return [n for n in module_nodes(mod) if isinstance(n, kind) and id(n) not in ops]


def int_list(*xs):
    out = ADTValue(1, "Nil", ())
    for x in reversed(xs):
        out = ADTValue(0, "Cons", (i32(x), out))
    return out


CONSTRUCTOR_VALUE = """
def @main(%l: List[int32]) -> List[Option[int32]] {
  @map(Some, %l)
}
"""


def test_constructor_value_becomes_wrapper():
    mod = load(CONSTRUCTOR_VALUE)
    assert values_of(mod, ConstructorRef)
    out = check_module(eta_expand(mod))
    assert not values_of(out, ConstructorRef)
    call = out.functions["main"].body
    wrapper = call.args[0]
    assert isinstance(wrapper, Function) and len(wrapper.params) == 1
    assert isinstance(wrapper.body, Call) and isinstance(wrapper.body.op, ConstructorRef)
    assert wrapper.body.args == wrapper.params
    assert wrapper.span == mod.functions["main"].body.args[0].span
    assert same(run(out, int_list(1, 2)), run(mod, int_list(1, 2)))


def test_operator_values_become_wrappers_and_global_values_stay_as_in_tvm():
    mod = load("""
def @double(%x: int32) -> int32 { %x * 2 }
def @main(%l: List[int32]) -> (List[int32], int32) {
  (@map(@double, %l), @foldl(@plus, 0, %l))
}
def @plus(%a: int32, %b: int32) -> int32 { %a + %b }
""")
    before = values_of(mod, GlobalVar)
    assert before
    out = check_module(eta_expand(mod))
    # TVM's VM runs EtaExpand with expand_global_var=False: @double and @plus stay values
    assert sorted(g.name for g in values_of(out, GlobalVar)) == ["double", "plus"]
    assert not values_of(out, OpRef)
    assert same(run(out, int_list(3, 4)), run(mod, int_list(3, 4)))


def test_polymorphic_context_and_nullary_constructors_kept():
    mod = load("""
def @wrap[A](%l: List[A]) -> List[Option[A]] { @map(Some, %l) }
def @main(%l: List[int32]) -> (List[Option[int32]], Option[int32]) { (@wrap(%l), None) }
""")
    out = check_module(eta_expand(mod))
    assert not values_of(out, ConstructorRef)
    # None stays a call of the nullary constructor
    tup = out.functions["main"].body
    assert isinstance(tup.fields[1], Call) and tup.fields[1].args == []
    assert same(run(out, int_list(5)), run(mod, int_list(5)))


def test_calls_are_left_alone():
    mod = load("""
def @main(%x: float32) -> Option[float32] { Some(exp(%x)) }
""")
    out = eta_expand(mod)
    assert out.functions["main"] is mod.functions["main"]
    assert same(run(out, f32(0.5)), run(mod, f32(0.5)))
