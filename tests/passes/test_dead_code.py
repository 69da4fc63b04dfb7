"""DeadCodeElimination: unused pure let bindings go, effects and globals stay."""
from __future__ import annotations

from pass_helpers import i32, load, nodes, run, same

from rvmdbg.passes.dead_code import dead_code_elimination, is_pure
from rvmdbg.relay.ast import Let, Var
from rvmdbg.relay.printer import print_expr
from rvmdbg.relay.typecheck import check_module


def dce(text: str):
    mod = load(text)
    return mod, check_module(dead_code_elimination(mod))


def let_names(mod, fn="main") -> list:
    return [n.var.name for n in nodes(mod.functions[fn]) if isinstance(n, Let)]


def test_unused_pure_bindings_go_in_cascade():
    mod, out = dce("""
def @main(%x: int32) -> int32 {
  let %a = %x * 2;
  let %b = (%a, %a + 1);
  let %c = %b.1;
  let %d = fn (%y: int32) -> int32 { %y + %c };
  let %e = Some(%x);
  %x
}""")
    assert let_names(out) == []
    assert isinstance(out.functions["main"].body, Var)
    assert same(run(out, i32(3)), i32(3))


def test_effects_and_calls_stay():
    mod, out = dce("""
def @f(%x: int32) -> int32 { %x }
def @main(%x: int32) -> int32 {
  let %r = ref(0);
  let %w = ref_write(%r, %x);
  let %c = @f(%x);
  let %k = fn (%y: int32) -> int32 { %y };
  let %kc = %k(1);
  let %m = (match? (Some(%x)) { Some(%v) => %v });
  let %unused = %x + 1;
  ref_read(%r)
}""")
    assert let_names(out) == ["r", "w", "c", "k", "kc", "m"]
    assert same(run(out, i32(7)), run(mod, i32(7)))


def test_used_bindings_and_sequencing_with_effects_stay():
    mod, out = dce("""
def @main(%x: int32) -> int32 {
  let %r = ref(%x);
  ref_write(%r, ref_read(%r) + 1);
  1 + 2;
  let %a = ref_read(%r);
  %a * 2
}""")
    # `1 + 2;` is pure and unused: it goes; the ref_write sequence stays
    assert let_names(out) == ["r", "_", "a"]
    assert same(run(out, i32(4)), i32(10))


def test_unused_recursive_function_goes():
    mod, out = dce("""
def @main(%x: int32) -> int32 {
  let %loop = fn (%i: int32) -> int32 { %loop(%i + 1) };
  %x
}""")
    assert let_names(out) == []


def test_every_global_is_kept():
    mod, out = dce("""
def @never_called(%x: int32) -> int32 { let %a = %x; 0 }
def @main(%x: int32) -> int32 { %x }
""")
    assert set(out.functions) == set(mod.functions)
    assert print_expr(out.functions["never_called"].body) == "0"


def test_closure_allocation_of_lifted_global_is_pure():
    mod, out = dce("""
def @g(%a: int32, Closure=1) -> fn (int32) -> int32 { fn (%x: int32) -> int32 { %x + %a } }
def @h(%a: int32) -> int32 { %a }
def @main() -> int32 {
  let %c = @g(1);
  let %d = @h(1);
  5
}""")
    assert let_names(out) == ["d"]
    body = mod.functions["main"].body
    assert is_pure(body.value, mod)
    assert not is_pure(body.body.value, mod)


def test_stateful_dialect_calls_stay_as_in_tvm():
    # TVM's test_impure_op: memory.kill is TOpIsStateful, so its binding and the storage it
    # reads stay; an unused alloc_storage alone (not stateful) goes
    _, out = dce("""
def @main() {
  let %x = memory.alloc_storage(1024i64, 64i64);
  let %_ = memory.kill(%x);
  let %unused = memory.alloc_storage(8i64, 64i64);
  0
}""")
    assert let_names(out) == ["x", "_"]
