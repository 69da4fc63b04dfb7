"""Code generation: register conventions, TVM's if/match layout, kernels, source map, regalloc."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # program_cases

from rvmdbg.passes.pipeline import DEFAULT_PASSES, Pipeline
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops import KernelError
from rvmdbg.values import ADTValue, RefCell, make_tuple, values_equal
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.compiler import CompileError, compile_module, compile_stages, kernel_name
from rvmdbg.vm.executable import Kernel, check_executable
from rvmdbg.vm.kernels import KernelBuildError, build_kernel
from rvmdbg.vm.machine import VirtualMachine
from rvmdbg.vm.regalloc import (IMMEDIATE_OPERANDS, REGISTER_OPERANDS, rename_registers,
                                reuse_registers)

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("*.relay"))
HEADER = '#[version = "0.0.5"]\n'


def compile_text(text: str, **kw):
    return compile_module(load_module(HEADER + text, "test.relay"), **kw)


def run(exe, *args, entry="main"):
    return VirtualMachine(exe).invoke(entry, list(args))


def texts(exe, name: str) -> list:
    return [i.text() for i in exe.function(name).instructions]


def i32(v):
    return np.array(v, dtype="int32")


@pytest.fixture(scope="module")
def program_exes():
    return {p.name: compile_module(load_module(p.read_text(), p.name)) for p in PROGRAMS}


# ---------------------------------------------------------------- registers

def test_params_occupy_the_first_registers():
    exe = compile_text("""
def @f(%a: int32, %b: int32, %c: int32) -> (int32, int32) { (%c, %a) }
def @main() -> (int32, int32) { @f(1, 2, 3) }""")
    f = exe.function("f")
    assert f.params == ["a", "b", "c"]
    assert f.instructions[0] == bc.AllocADT(0, [2, 0], 3)
    assert f.register_file_size == 4


def test_closure_globals_take_captured_values_first(program_exes):
    exe = program_exes["closures.relay"]
    adder = exe.function("make_adder_lifted_0")
    assert adder.params == ["n", "x"]
    make_adder = exe.function("make_adder")
    # the lifted closure is allocated with its captured value, not invoked
    alloc = [i for i in make_adder.instructions if isinstance(i, bc.AllocClosure)]
    assert alloc and alloc[0].func_index == exe.func_index("make_adder_lifted_0")
    assert alloc[0].free_vars == (0,)
    kernel_call = next(i for i in adder.instructions if isinstance(i, bc.InvokePacked))
    assert set(kernel_call.inputs) == {0, 1}


def test_every_value_gets_a_fresh_register(program_exes):
    for name, exe in program_exes.items():
        for fn in exe.functions:
            written_by = {}
            for pc, instr in enumerate(fn.instructions):
                for r in instr.writes():
                    assert r >= len(fn.params), (name, fn.name, pc)
                    if isinstance(instr, (bc.Move, bc.KillRegister)) or (
                            isinstance(instr, bc.InvokePacked)
                            and not exe.kernels[instr.packed_index].builtin):
                        continue  # merge registers and kernel outputs are written again
                    assert r not in written_by, (name, fn.name, pc, written_by.get(r))
                    written_by[r] = pc
            used = {r for i in fn.instructions for r in i.registers()} | set(range(len(fn.params)))
            assert fn.register_file_size == max(used) + 1


# ---------------------------------------------------------------- control flow

def test_if_uses_tvms_layout_with_a_fresh_merge_register():
    exe = compile_text("""
def @main(%c: bool, %x: int32) -> (int32,) {
  if (%c) { (%x,) } else { (1,) }
}""")
    assert texts(exe, "main") == [
        "load_consti $2 1",
        "if $0 $2 1 4",
        "alloc_data $3 tag(0) [$1]",
        "move $4 $3",
        "goto 4",
        "load_const $5 Const[0] 0",
        "alloc_data $6 tag(0) [$5]",
        "move $4 $6",
        "ret $4",
    ]
    assert values_equal(run(exe, np.array(True), i32(7)), make_tuple([i32(7)]))
    assert values_equal(run(exe, np.array(False), i32(7)), make_tuple([i32(1)]))


def test_if_offsets_are_relative_and_back_patched(program_exes):
    for exe in program_exes.values():
        for fn in exe.functions:
            code = fn.instructions
            for pc, instr in enumerate(code):
                if not isinstance(instr, bc.If):
                    continue
                assert instr.true_offset == 1 and instr.false_offset > 1
                if isinstance(code[pc - 2], bc.GetTag):
                    continue  # a match test: checked by the decision-tree tests
                assert code[pc - 1] == bc.LoadConsti(1, instr.target)
                else_start = pc + instr.false_offset
                then_move = code[else_start - 2]
                assert isinstance(code[else_start - 1], bc.Goto)
                assert isinstance(then_move, bc.Move)
                end = else_start - 1 + code[else_start - 1].pc_offset
                # both branches end by moving into the same merge register
                assert isinstance(code[end - 1], bc.Move) and code[end - 1].dst == then_move.dst


LIST_MATCH = """
def @pick(%l: List[int32]) -> int32 {
  match (%l) {
    Cons(%h, Nil) => %h,
    Cons(_, %t) => 2,
    Nil => 0,
  }
}
def @main(%l: List[int32]) -> int32 { @pick(%l) }
"""


def test_list_match_is_a_decision_tree_per_clause():
    exe = compile_text(LIST_MATCH)
    assert texts(exe, "pick") == [
        # Cons(%h, Nil): test the tag, reach the fields, test the tail's tag
        "get_tag $1 $0", "load_consti $2 0", "if $1 $2 1 8",
        "get_field $3 $0[0]", "get_field $4 $0[1]",
        "get_tag $5 $4", "load_consti $6 1", "if $5 $6 1 3",
        "move $7 $3", "goto 15",
        # Cons(_, %t)
        "get_tag $8 $0", "load_consti $9 0", "if $8 $9 1 5",
        "get_field $10 $0[1]",
        "load_const $11 Const[0] 0", "move $7 $11", "goto 8",
        # Nil
        "get_tag $12 $0", "load_consti $13 1", "if $12 $13 1 4",
        "load_const $14 Const[1] 0", "move $7 $14", "goto 2",
        "fatal",
        "ret $7",
    ]
    nil = ADTValue(1, "Nil", ())

    def cons(h, t):
        return ADTValue(0, "Cons", (i32(h), t))
    assert values_equal(run(exe, cons(5, nil)), i32(5))
    assert values_equal(run(exe, cons(5, cons(6, nil))), i32(2))
    assert values_equal(run(exe, nil), i32(0))


def test_incomplete_match_fails_at_fatal():
    exe = compile_text("""
def @main(%o: Option[int32]) -> int32 {
  match? (%o) { Some(%v) => %v }
}""")
    code = exe.function("main").instructions
    assert isinstance(code[-2], bc.Fatal)
    assert values_equal(run(exe, ADTValue(0, "Some", (i32(3),))), i32(3))
    from rvmdbg.vm.machine import VMError
    with pytest.raises(VMError) as info:
        run(exe, ADTValue(1, "None", ()))
    assert info.value.func_name == "main" and info.value.pc == len(code) - 2


def test_nested_and_tuple_patterns_bind_registers():
    exe = compile_text("""
def @main(%p: (Option[int32], int32)) -> int32 {
  match (%p) {
    (Some(%a), %b) => %a + %b,
    (None, %b) => %b,
  }
}""")
    some = make_tuple([ADTValue(0, "Some", (i32(3),)), i32(4)])
    none = make_tuple([ADTValue(1, "None", ()), i32(4)])
    assert values_equal(run(exe, some), i32(7))
    assert values_equal(run(exe, none), i32(4))
    # a tuple pattern has no tag test of its own
    first = exe.function("main").instructions[:2]
    assert [i.name for i in first] == ["GetField", "GetTag"]


# ---------------------------------------------------------------- side tables

def test_source_map_covers_every_instruction(program_exes):
    for name, exe in program_exes.items():
        check_executable(exe)
        assert exe.source_name == name and exe.source_text == (ROOT / "programs" / name).read_text()
        lines = exe.source_text.count("\n") + 1
        for fi, fn in enumerate(exe.functions):
            for pc in range(len(fn.instructions)):
                span = exe.span_at(fi, pc)
                assert span is not None, (name, fn.name, pc)
                if span.file == name:
                    assert 1 <= span.line <= lines


def test_source_map_points_at_the_operation():
    mod = load_module(HEADER + """
def @main(%x: int32) -> int32 {
  let %y = 3 * %x;
  %y - 1
}""", "test.relay")
    body = mod.functions["main"].body
    exe = compile_module(mod)
    code = exe.function("main").instructions
    kernel_spans = [exe.span_at(0, pc) for pc, i in enumerate(code) if isinstance(i, bc.InvokePacked)]
    # each kernel call (and its allocations) maps to the operator call it computes
    assert kernel_spans == [body.value.span, body.body.span]
    assert exe.span_at(0, 0) == body.value.span


def test_constructor_names_are_recorded_for_alloc_data(program_exes):
    exe = program_exes["quicksort.relay"]
    names = set(exe.adt_constructor.values())
    assert names == {"Cons", "Nil"}
    for (fi, pc), con in exe.adt_constructor.items():
        assert isinstance(exe.functions[fi].instructions[pc], bc.AllocADT)
    tuples = compile_text("def @main(%x: int32) -> (int32, int32) { (%x, %x) }")
    assert tuples.adt_constructor == {}


# ---------------------------------------------------------------- kernels

def test_kernels_are_deduplicated_by_source_and_named_like_tvm():
    exe = compile_text("""
def @f(%x: int32) -> int32 { %x * 2 + 1 }
def @g(%x: int32) -> int32 { %x * 2 + 1 }
def @main(%x: int32) -> int32 { @f(%x) - @g(%x * 2) }""")
    names = exe.kernel_names()
    assert names.count("vm_mod_fused_multiply_add") == 1
    assert "vm_mod_fused_multiply" in names and "vm_mod_fused_subtract" in names
    calls = [i.packed_index for fn in exe.functions for i in fn.instructions
             if isinstance(i, bc.InvokePacked)]
    f_kernel = next(i.packed_index for i in exe.function("f").instructions
                    if isinstance(i, bc.InvokePacked))
    g_kernel = next(i.packed_index for i in exe.function("g").instructions
                    if isinstance(i, bc.InvokePacked))
    assert f_kernel == g_kernel and len(set(calls)) == len(names)
    assert values_equal(run(exe, i32(5)), i32(11 - 21))


def test_kernel_names_follow_evaluation_order():
    stages, _ = compile_stages(load_module(HEADER + """
def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(2, 3), float32]) -> Tensor[(1, 2), float32] {
  nn.relu(nn.dense(%x, %w))
}""", "t.relay"))
    fused = stages[[s.name for s in stages].index("FuseOps")].module.functions["main"].body
    assert kernel_name(fused.op) == "vm_mod_fused_nn_dense_nn_relu"


def test_references_run_through_builtin_kernels():
    exe = compile_text("""
def @main(%x: int32) -> (int32, int32) {
  let %r = ref(%x);
  let %old = ref_read(%r);
  ref_write(%r, %old + 1);
  (%old, ref_read(%r))
}""")
    builtins = [k for k in exe.kernels if k.builtin]
    assert sorted(k.name for k in builtins) == ["ref_create", "ref_read", "ref_write"]
    assert all(k.source == "" for k in builtins)
    code = exe.function("main").instructions
    first = code[0]
    assert isinstance(first, bc.InvokePacked) and exe.kernels[first.packed_index].name == "ref_create"
    assert first.args == (0, 1)  # no alloc_tensor for a built-in kernel's output
    assert values_equal(run(exe, i32(4)), make_tuple([i32(4), i32(5)]))


def test_build_kernel_builtins_and_errors():
    cell = RefCell(i32(1))
    assert build_kernel(Kernel("ref_read", "", 1, 1, True))([cell])[0] is cell.value
    write = build_kernel(Kernel("ref_write", "", 2, 1, True))
    assert write([cell, i32(9)])[0].fields == () and cell.value == 9
    created = build_kernel(Kernel("ref_create", "", 1, 1, True))([i32(2)])[0]
    assert isinstance(created, RefCell)
    with pytest.raises(KernelError):
        build_kernel(Kernel("ref_read", "", 1, 1, True))([i32(1)])
    with pytest.raises(KernelBuildError, match="unknown built-in"):
        build_kernel(Kernel("ref_delete", "", 1, 1, True))
    with pytest.raises(KernelBuildError, match="takes 1 inputs"):
        build_kernel(Kernel("ref_read", "", 2, 1, True))
    with pytest.raises(KernelBuildError, match="does not parse"):
        build_kernel(Kernel("fused_add", "fn (%p0: int32 {", 1, 1))
    with pytest.raises(KernelBuildError, match="primitive"):
        build_kernel(Kernel("fused_add", "fn (%p0: int32) { add(%p0, 1) }", 1, 1))
    with pytest.raises(KernelBuildError, match="takes 1 inputs"):
        build_kernel(Kernel("fused_add", "fn (%p0: int32, Primitive=1) { add(%p0, 1) }", 2, 1))
    with pytest.raises(KernelBuildError, match="type-check"):
        build_kernel(Kernel("fused_add", "fn (%p0: int32, Primitive=1) { add(%p0, 1f) }", 1, 1))


def test_composite_functions_inside_a_primitive_function_are_one_kernel():
    # TVM's BYOC partitions: a global Primitive=1 function for an external codegen whose body
    # calls Composite functions; each call is inlined into the one kernel (graph and VM)
    from rvmdbg.graph import GraphExecutor, lower_to_graph
    text = """
def @part(%a: Tensor[(2, 2), float32], Primitive=1, Compiler="example") -> Tensor[(2, 2), float32] {
  %0 = fn (%x: Tensor[(2, 2), float32], Composite="relu") { nn.relu(%x) };
  %1 = %0(%a);
  %2 = fn (%y: Tensor[(2, 2), float32], %z: Tensor[(2, 2), float32], Composite="add") {
    add(%y, %z)
  };
  %2(%a, %1)
}
def @main(%a: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  @part(%a)
}
"""
    a = np.array([[-1, 2], [3, -4]], dtype="float32")
    expected = a + np.maximum(a, 0)
    exe = compile_text(text)
    assert len([k for k in exe.kernels if not k.builtin]) == 1
    np.testing.assert_array_equal(run(exe, a), expected)
    mod = load_module(HEADER + text, "test.relay")
    np.testing.assert_array_equal(GraphExecutor(lower_to_graph(mod)).run([a]), expected)


def test_data_kernels_with_several_outputs_and_tuple_inputs():
    split = build_kernel(Kernel("fused_split", "fn (%p0: Tensor[(4,), float32], Primitive=1) "
                                "{ split(%p0, indices_or_sections=2) }", 1, 2))
    a, b = split([np.arange(4, dtype="float32")])
    assert a.tolist() == [0, 1] and b.tolist() == [2, 3]
    concat = build_kernel(Kernel(
        "fused_concatenate",
        "fn (%p0: (Tensor[(1,), int32], Tensor[(2,), int32]), Primitive=1) "
        "{ concatenate(%p0, axis=0) }", 1, 1))
    out = concat([make_tuple([i32([1]), i32([2, 3])])])
    assert out.tolist() == [1, 2, 3] and out.dtype == np.int32
    chain = build_kernel(Kernel("fused_multiply_add", "fn (%p0: float32, %p1: float32, "
                                "Primitive=1) { %0 = multiply(%p0, %p1); add(%0, %0) }", 2, 1))
    assert chain([np.array(3, "float32"), np.array(2, "float32")]) == 12


def test_shape_kernels_evaluate_type_relations_on_shapes():
    shape = build_kernel(Kernel(
        "fused_concatenate_shape_func",
        "fn (%p0: Tensor[(?, 2), float32], %p1: Tensor[(?, 2), float32], Primitive=1, "
        "ShapeFunc=1) { concatenate((%p0, %p1), axis=0) }", 2, 1))
    (out,) = shape([np.array([3, 2]), np.array([4, 2])])
    assert out.dtype == np.int64 and out.tolist() == [7, 2]
    with pytest.raises(KernelError):
        shape([np.array([3, 2]), np.array([4, 5])])


# ---------------------------------------------------------------- entry points and errors

def test_compile_without_passes_reports_what_is_missing():
    mod = load_module(HEADER + "def @main(%x: int32) -> int32 { %x + 1 }", "t.relay")
    from rvmdbg.relay.typecheck import check_module
    check_module(mod)
    with pytest.raises(CompileError, match="FuseOps"):
        compile_module(mod, pipeline=False)
    partial = Pipeline([p for p in DEFAULT_PASSES if p.name not in ("ManifestAlloc",
                                                                     "ManifestLifetimes")])
    with pytest.raises(CompileError, match="ManifestAlloc"):
        compile_module(partial.apply(mod), pipeline=False)


def test_compile_stages_returns_every_stage_and_the_executable():
    stages, exe = compile_stages(load_module((ROOT / "programs" / "fib.relay").read_text(), "fib"))
    assert [s.name for s in stages][-3:] == ["ManifestAlloc", "ManifestLifetimes", "MemoryPlan"]
    assert exe.function_names() == ["fib", "main"]
    assert values_equal(run(exe, i32(10)), i32(55))


def test_ten_thousand_lets_compile():
    n = 10_000
    lines = ["def @main(%x: int32) -> int32 {", "  let %a0 = (%x, %x);"]
    lines += [f"  let %a{i} = (%a{i - 1}.1, %x);" for i in range(1, n)]
    lines += [f"  %a{n - 1}.0", "}"]
    exe = compile_text("\n".join(lines))
    assert len(exe.function("main").instructions) > 2 * n
    assert values_equal(run(exe, i32(7)), i32(7))


# ---------------------------------------------------------------- register reuse

def test_rename_registers_knows_every_operand():
    samples = [
        bc.Move(1, 2), bc.Ret(1), bc.Invoke(0, [1, 2], 3), bc.InvokeClosure(1, [2], 3),
        bc.InvokePacked(0, 3, 1, [1, 2, 3]), bc.AllocTensor(1, 2, [2, 3], "float32", 3),
        bc.AllocTensorReg(1, 2, 3, "int32", 4), bc.AllocADT(1, [1, 2], 3),
        bc.AllocClosure(0, [1], 2), bc.GetField(1, 0, 2), bc.If(1, 2, 1, 3), bc.LoadConst(0, 1),
        bc.Goto(2), bc.GetTag(1, 2), bc.LoadConsti(5, 1), bc.Fatal(), bc.AllocStorage(1, 64,
                                                                                      "bool", 2),
        bc.ShapeOf(1, 2), bc.ReshapeTensor(1, 2, 3), bc.DeviceCopy(1, 0, 0, 2), bc.KillRegister(1),
    ]
    assert {type(s) for s in samples} == set(bc.OPCODES)
    mapping = {r: r + 10 for r in range(5)}
    for s in samples:
        renamed = rename_registers(s, mapping)
        assert renamed.registers() == tuple(mapping[r] for r in s.registers()), s
        assert type(renamed) is type(s)
        for slot in type(s).__slots__:
            assert slot in REGISTER_OPERANDS | IMMEDIATE_OPERANDS
            if slot in IMMEDIATE_OPERANDS:
                assert getattr(renamed, slot) == getattr(s, slot)


def test_reuse_registers_shrinks_files_and_keeps_results():
    exe = compile_module(load_module((ROOT / "programs" / "fib.relay").read_text(), "fib.relay"))
    report = reuse_registers(exe)
    before, after = report["fib"]
    assert after < before
    assert exe.function("fib").register_file_size == after
    check_executable(exe)
    assert values_equal(run(exe, i32(15)), i32(610))
    with_report = compile_module(load_module((ROOT / "programs" / "fib.relay").read_text(),
                                             "fib.relay"), reuse_registers=True)
    assert with_report.register_report == report
    assert with_report.bytecode() == exe.bytecode()
