"""Tests of the reference interpreter: every construct, errors with their spans, limits, deep
recursion that must never crash, and every program of tests/program_cases.py."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rvmdbg.args import parse_program_args
from rvmdbg.limits import Limits
from rvmdbg.relay import interpreter as interp_module
from rvmdbg.relay.ast import Call, Constant, Function, GlobalVar, If, Let, Module, OpRef, Var
from rvmdbg.relay.interpreter import Closure, Interpreter, InterpreterError
from rvmdbg.relay.loader import load_file, load_module, program_default_args
from rvmdbg.relay.typecheck import check_module
from rvmdbg.relay.types import scalar
from rvmdbg.values import ADTValue, RefCell, format_value, to_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from program_cases import CASES, FAILING_CASES, PROGRAMS_DIR, matches  # noqa: E402

HEADER = '#[version = "0.0.5"]\n'


def i32(v) -> np.ndarray:
    return np.array(v, dtype=np.int32)


def f32(v) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def load(body: str, prelude: bool = True) -> Module:
    return check_module(load_module(HEADER + body.lstrip("\n"), "<test>", prelude=prelude))


def run(body: str, *args, entry: str = "main", limits: Limits | None = None,
        prelude: bool = True):
    return Interpreter(load(body, prelude), limits).run(entry, list(args))


def py(v):
    """A value as plain Python, for readable assertions."""
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    if isinstance(v, ADTValue):
        fields = tuple(py(f) for f in v.fields)
        return fields if v.con is None else (v.con, *fields)
    if isinstance(v, RefCell):
        return ("ref", py(v.value))
    return v


# ---------------------------------------------------------------------------- an AST by hand

def test_hand_built_ast_without_parser_or_type_checker():
    x = Var("x", scalar("int32"))
    y = Var("y")
    body = Let(y, Call(OpRef("add"), [x, Constant(i32(1))]),
               If(Call(OpRef("less"), [y, Constant(i32(10))]), y, Constant(i32(0))))
    mod = Module()
    mod.functions["main"] = Function([x], body)
    assert py(Interpreter(mod).run("main", [i32(4)])) == 5
    assert py(Interpreter(mod).run("main", [i32(40)])) == 0


def test_hand_built_global_call_and_global_as_value():
    a = Var("a")
    mod = Module()
    mod.functions["inc"] = Function([a], Call(OpRef("add"), [a, Constant(i32(1))]))
    mod.functions["main"] = Function([], Call(GlobalVar("inc"), [Constant(i32(41))]))
    mod.functions["get"] = Function([], GlobalVar("inc"))
    interp = Interpreter(mod)
    assert py(interp.run()) == 42
    clo = interp.run("get")
    assert isinstance(clo, Closure) and clo.name == "inc"
    assert py(interp.call(clo, [i32(1)])) == 2


# ---------------------------------------------------------------------------- scalars and control

def test_constants_of_every_dtype():
    v = run("def @main() { (7, 5i64, 2.5f, True, -1, 3f64) }")
    assert [f.dtype.name for f in v.fields] == ["int32", "int64", "float32", "bool", "int32",
                                                "float64"]
    assert py(v) == (7, 5, 2.5, True, -1, 3.0)


def test_if_let_and_sequencing():
    src = """
def @main(%n: int32) -> int32 {
  let %a = %n * 2;
  let %b = if (%a > 10) { %a - 10 } else { %a + 10 };
  %b; %b + 1
}"""
    assert py(run(src, i32(3))) == 17
    assert py(run(src, i32(8))) == 7


def test_integer_division_truncates_toward_zero():
    assert py(run("def @main(%a: int32, %b: int32) { %a / %b }", i32(-7), i32(2))) == -3


def test_global_recursion():
    src = """
def @fact(%n: int32) -> int32 {
  if (%n <= 1) { 1 } else { %n * @fact(%n - 1) }
}
def @main(%n: int32) -> int32 { @fact(%n) }"""
    assert py(run(src, i32(10))) == 3628800


def test_mutual_recursion():
    src = """
def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }
def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }
def @main(%n: int32) -> (bool, bool) { (@even(%n), @odd(%n)) }"""
    assert py(run(src, i32(7))) == (False, True)


# ---------------------------------------------------------------------------- closures

def test_closures_capture_and_curry():
    src = """
def @adder(%n: int32) -> fn (int32) -> int32 { fn (%x: int32) -> int32 { %x + %n } }
def @main(%k: int32) -> (int32, int32) {
  let %add3 = @adder(3);
  let %add10 = @adder(10);
  let %mul = fn (%a: int32) { fn (%b: int32) { %a * %b } };
  (%add3(%k) + %add10(%k), %mul(%k)(%k + 1))
}"""
    assert py(run(src, i32(4))) == (21, 20)


def test_local_recursive_closure_sees_itself():
    src = """
def @main(%n: int32) -> int32 {
  let %loop = fn (%i: int32, %acc: int32) -> int32 {
    if (%i > %n) { %acc } else { %loop(%i + 1, %acc + %i) }
  };
  %loop(1, 0)
}"""
    assert py(run(src, i32(100))) == 5050


def test_closure_result_has_a_name():
    src = """
def @main() -> fn (int32) -> int32 {
  fn (%x: int32) -> int32 { %x }
}"""
    v = run(src)
    assert isinstance(v, Closure)
    assert v.name == "fn@3:3"
    assert to_json(v) == {"closure": "fn@3:3"}


def test_global_as_value_and_higher_order_calls():
    src = """
def @double(%x: int32) -> int32 { %x * 2 }
def @apply_twice(%f: fn (int32) -> int32, %x: int32) -> int32 { %f(%f(%x)) }
def @main(%x: int32) -> (int32, fn (int32) -> int32) { (@apply_twice(@double, %x), @double) }"""
    v = run(src, i32(5))
    assert py(v.fields[0]) == 20
    assert to_json(v.fields[1]) == {"closure": "double"}


def test_direct_call_of_a_function_literal():
    assert py(run("def @main() -> int32 { (fn (%x: int32) { %x + 1 })(41) }")) == 42


def test_primitive_function_behaves_like_a_function():
    src = """
def @main(%a: int32) -> int32 {
  %0 = fn (%p0: int32, %p1: int32, Primitive=1) -> int32 { add(%p0, %p1) };
  %0(%a, %a)
}"""
    assert py(run(src, i32(21))) == 42


# ---------------------------------------------------------------------------- ADTs and match

def test_constructors_and_nested_patterns():
    src = """
def @describe(%l: List[int32]) -> int32 {
  match (%l) {
    Cons(%a, Cons(%b, Cons(_, _))) => %a + %b + 1000,
    Cons(%a, Cons(%b, Nil)) => %a * %b,
    Cons(%a, Nil) => %a,
    Nil => -1,
  }
}
def @main() -> (int32, int32, int32, int32) {
  (@describe(Cons(1, Cons(2, Cons(3, Nil)))), @describe(Cons(6, Cons(7, Nil))),
   @describe(Cons(9, Nil)), @describe(Nil))
}"""
    assert py(run(src)) == (1003, 42, 9, -1)


def test_tuple_and_wildcard_patterns():
    src = """
def @main(%x: int32) -> int32 {
  match ((%x, Some(%x + 1))) {
    (%a, Some(%b)) => %a * 10 + %b,
    (_, None) => -1,
  }
}"""
    assert py(run(src, i32(4))) == 45


def test_adt_values_and_constructor_tags():
    src = """
type Shape { Circle(float32), Rect(float32, float32), Dot }
def @main() -> (Shape, Shape, Shape) { (Circle(1f), Rect(2f, 3f), Dot) }"""
    v = run(src)
    assert [(f.tag, f.con, len(f.fields)) for f in v.fields] == [
        (0, "Circle", 1), (1, "Rect", 2), (2, "Dot", 0)]
    assert format_value(v) == "(Circle(1f), Rect(2f, 3f), Dot)"


def test_constructor_used_as_function_value():
    src = """
def @main() -> List[Option[int32]] { @map(Some, Cons(1, Cons(2, Nil))) }"""
    assert py(run(src)) == ("Cons", ("Some", 1), ("Cons", ("Some", 2), ("Nil",)))


def test_polymorphic_functions_at_several_types():
    src = """
def @id[A](%x: A) -> A { %x }
def @main() -> (int32, float32, List[bool]) { (@id(1), @id(2f), @id(Cons(True, Nil))) }"""
    assert py(run(src)) == (1, 2.0, ("Cons", True, ("Nil",)))


def test_prelude_functions_run():
    src = """
def @main() -> (int32, List[int32]) {
  let %l = Cons(1, Cons(2, Cons(3, Nil)));
  (@foldl(fn (%a: int32, %b: int32) { %a + %b }, 0, %l), @rev(%l))
}"""
    assert py(run(src)) == (6, ("Cons", 3, ("Cons", 2, ("Cons", 1, ("Nil",)))))


def test_match_question_failure_is_located():
    src = """
def @head(%l: List[int32]) -> int32 {
  match? (%l) {
    Cons(%x, _) => %x,
  }
}
def @main() -> int32 { @head(Nil) }"""
    with pytest.raises(InterpreterError) as info:
        run(src)
    e = info.value
    assert e.message == "match? found no matching clause for Nil"
    assert e.function == "head"
    assert (e.span.line, e.span.col) == (3, 3)
    text = e.format()
    assert text.startswith("<test>:3:3: error: match? found no matching clause for Nil (in @head)")
    assert "match? (%l) {" in text
    assert "called from @main at <test>:7:24" in text


def test_match_failure_shows_the_value():
    src = """
def @main() -> int32 {
  match? (Cons(1, Cons(2, Nil))) { Nil => 0 }
}"""
    with pytest.raises(InterpreterError, match=r"no matching clause for Cons\(1, Cons\(2, Nil\)\)"):
        run(src)


# ---------------------------------------------------------------------------- tuples and refs

def test_tuples_and_projection():
    src = """
def @main(%a: int32) -> (int32, (), (int32,)) {
  let %t = (%a, (%a * 2, 5f));
  ((%t.1).0 + %t.0, (), (%a,))
}"""
    v = run(src, i32(3))
    assert py(v) == (9, (), (3,))


def test_references():
    src = """
def @main(%n: int32) -> (int32, ref(int32), ()) {
  let %r = ref(%n);
  let %u = ref_write(%r, ref_read(%r) * 10);
  (ref_read(%r), %r, %u)
}"""
    v = run(src, i32(4))
    assert py(v) == (40, ("ref", 40), ())
    assert isinstance(v.fields[1], RefCell)
    assert to_json(v.fields[1]) == {"ref": {"dtype": "int32", "shape": [], "data": 40}}


def test_closure_keeps_its_reference_cell():
    src = """
def @main() -> (int32, int32) {
  let %c = ref(0);
  let %tick = fn () -> int32 { ref_write(%c, ref_read(%c) + 1); ref_read(%c) };
  let %a = %tick();
  let %b = %tick();
  (%a, %b)
}"""
    assert py(run(src)) == (1, 2)


# ---------------------------------------------------------------------------- graph bindings

def test_shared_graph_node_is_evaluated_once():
    src = """
def @main() -> int32 {
  let %r = ref(0);
  %0 = ref_write(%r, ref_read(%r) + 1);
  let %t = (%0, %0, %0);
  ref_read(%r)
}"""
    assert py(run(src)) == 1


def test_deep_dag_of_shared_nodes_is_linear():
    lines = ["def @main(%x: float32) -> float32 {", "  %0 = add(%x, %x);"]
    for i in range(1, 60):
        lines.append(f"  %{i} = add(%{i - 1}, %{i - 1});")
    lines.append("  %59\n}")
    start = time.perf_counter()
    v = run("\n".join(lines), f32(1.0))
    assert time.perf_counter() - start < 5  # 2**60 evaluations without sharing
    assert float(v) == pytest.approx(2.0 ** 60)


# ---------------------------------------------------------------------------- operators

def test_tensor_operators_and_attributes():
    src = """
def @main(%x: Tensor[(2, 3), float32]) -> (Tensor[(3, 2), float32], Tensor[(3,), float32]) {
  %0 = transpose(%x, axes=[1, 0]);
  (%0, sum(%x, axis=[0]))
}"""
    x = f32([[1, 2, 3], [4, 5, 6]])
    v = run(src, x)
    assert v.fields[0].tolist() == [[1, 4], [2, 5], [3, 6]]
    assert v.fields[1].tolist() == [5, 7, 9]
    assert v.fields[1].dtype == np.float32


def test_tuple_argument_and_tuple_result_of_operators():
    src = """
def @main(%a: Tensor[(2,), int32], %b: Tensor[(3,), int32]) {
  %0 = concatenate((%a, %b), axis=0);
  %1 = split(%0, indices_or_sections=[1, 3], axis=0);
  (%0, %1)
}"""
    v = run(src, i32([1, 2]), i32([3, 4, 5]))
    assert v.fields[0].tolist() == [1, 2, 3, 4, 5]
    parts = v.fields[1]
    assert isinstance(parts, ADTValue) and parts.con is None
    assert [p.tolist() for p in parts.fields] == [[1], [2, 3], [4, 5]]


def test_kernel_error_is_located_at_the_call():
    src = """
def @main(%a: int32, %b: int32) -> int32 {
  divide(%a, %b)
}"""
    with pytest.raises(InterpreterError) as info:
        run(src, i32(1), i32(0))
    e = info.value
    assert e.message.startswith("divide: ")
    assert e.function == "main"
    assert (e.span.line, e.span.col) == (3, 3)
    assert "<test>:3:3: error: divide:" in e.format()


def test_dynamic_shape_mismatch_is_a_kernel_error():
    src = """
def @main(%a: Tensor[(?,), float32], %b: Tensor[(?,), float32]) { add(%a, %b) }"""
    with pytest.raises(InterpreterError, match="add"):
        run(src, f32([1, 2]), f32([1, 2, 3]))


# ---------------------------------------------------------------------------- limits

def test_step_limit():
    src = """
def @spin(%n: int32) -> int32 { if (%n == 0) { 0 } else { @spin(%n - 1) } }
def @main() -> int32 { @spin(100000) }"""
    with pytest.raises(InterpreterError) as info:
        run(src, limits=Limits(max_steps=1000))
    assert info.value.limit == "max_steps"
    assert "step limit 1000 exceeded (raise with --max-steps)" in info.value.message


def test_byte_limit_on_a_static_result():
    src = 'def @main() { zeros(shape=[1000, 1000], dtype="float32") }'
    with pytest.raises(InterpreterError) as info:
        run(src, limits=Limits(max_bytes=1_000_000))
    assert info.value.limit == "max_bytes"
    assert "--max-bytes" in info.value.message
    assert run(src).shape == (1000, 1000)


def test_interrupt_stops_a_running_program():
    src = """
def @spin(%n: int32) -> int32 { if (%n == 0) { 0 } else { @spin(%n - 1) } }
def @main() -> int32 { @spin(150000) }"""
    interp = Interpreter(load(src), Limits(max_steps=10 ** 12))
    timer = threading.Timer(0.05, interp.interrupt)
    timer.start()
    try:
        with pytest.raises(InterpreterError, match="interrupted"):
            # repeated so the interrupt lands inside a run even on a fast machine
            for _ in range(1000):
                interp.run()
                interp._interrupted = False
    finally:
        timer.cancel()


SUM_UP = PROGRAMS_DIR / "sum_up.relay"


def _int32_sum(n: int) -> int:
    return int(np.array(n * (n + 1) // 2 % 2 ** 32, dtype=np.uint32).astype(np.int32))


def test_sum_up_100000_deep_runs():
    mod = check_module(load_file(SUM_UP))
    assert int(Interpreter(mod).run("main", [i32(100000)])) == _int32_sum(100000)


def test_sum_up_1000000_deep_stops_at_the_depth_limit():
    mod = check_module(load_file(SUM_UP))
    with pytest.raises(InterpreterError) as info:
        Interpreter(mod).run("main", [i32(1000000)])
    e = info.value
    assert e.limit == "max_depth"
    assert e.message == "call depth limit 200000 exceeded (raise with --max-depth)"
    text = e.format()
    assert "sum_up.relay:9:10: error: call depth limit" in text
    assert "(199998 times)" in text and len(text.splitlines()) < 10


def test_small_stack_gives_a_limit_error_not_a_crash(monkeypatch):
    # a stack far too small for --max-depth: Python's recursion limit must trip cleanly
    monkeypatch.setattr(interp_module, "_STACK_SIZES", (16 << 20,))
    mod = check_module(load_file(SUM_UP))
    with pytest.raises(InterpreterError) as info:
        Interpreter(mod, Limits(max_depth=10 ** 7)).run("main", [i32(1000000)])
    assert info.value.limit == "max_depth"
    assert "ran out of stack" in info.value.message
    assert "sum_up.relay:9:10: error: call depth limit exceeded" in info.value.format()


def test_recursion_limit_is_restored():
    before = sys.getrecursionlimit()
    run("def @main() -> int32 { 1 }")
    assert sys.getrecursionlimit() == before


def test_wrong_entry_and_argument_count():
    with pytest.raises(InterpreterError, match="no function @nope"):
        run("def @main() -> int32 { 1 }", entry="nope")
    with pytest.raises(InterpreterError, match="takes 1 argument"):
        run("def @main(%x: int32) -> int32 { %x }")


def test_interpreter_is_reusable():
    interp = Interpreter(load("def @main(%x: int32) -> int32 { %x * %x }"))
    assert [int(interp.run("main", [i32(k)])) for k in range(4)] == [0, 1, 4, 9]


# ---------------------------------------------------------------------------- the example programs

def _program_args(mod, path: Path, args):
    texts = args if args is not None else program_default_args(path.read_text()) or []
    return parse_program_args(mod, "main", texts)


@pytest.mark.parametrize("file,args,expected", CASES,
                         ids=[f"{c[0]}:{' '.join(c[1] or ['defaults'])[:40]}" for c in CASES])
def test_program_cases(file, args, expected):
    path = PROGRAMS_DIR / file
    mod = check_module(load_file(path))
    value = Interpreter(mod).run("main", _program_args(mod, path, args))
    assert matches(expected, to_json(value)), to_json(value)


@pytest.mark.parametrize("file,args,function", FAILING_CASES)
def test_failing_program_cases(file, args, function):
    path = PROGRAMS_DIR / file
    mod = check_module(load_file(path))
    with pytest.raises(InterpreterError) as info:
        Interpreter(mod).run("main", _program_args(mod, path, args))
    assert info.value.function == function
    assert "match? found no matching clause" in info.value.format(mod.source)
