"""Forms of TVM's printed IR on the VM, against the interpreter: primitive functions bound by
`let`, called directly, passed on; a file that is one expression; codegen attributes."""
import numpy as np
import pytest

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.values import values_equal
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

HEADER = '#[version = "0.0.5"]\n'
T = "Tensor[(2), float32]"

PROGRAMS = {
    "let_bound": f"""
def @main(%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ multiply(%p0, 2f) }};
  %f(%f(%x))
}}""",
    "aliased_and_passed_on": f"""
def @apply(%g: fn ({T}) -> {T}, %v: {T}) -> {T} {{ %g(%v) }}
def @main(%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ multiply(%p0, 2f) }};
  let %h = %f;
  %0 = %h(%x);
  %1 = @apply(%f, %0);
  @apply(fn (%p0: {T}, Primitive=1) -> {T} {{ add(%p0, 1f) }}, %1)
}}""",
    "graph_bound_with_codegen_attrs": f"""
def @main(%x: {T}) -> {T} {{
  %0 = fn (%p0: {T}, Primitive=1, Compiler="ccompiler", global_symbol="f0", Inline=1) -> {T} {{
    exp(%p0)
  }};
  %1 = fn (%p0: {T}, Primitive=1, relay.reshape_only=1) -> Tensor[(2, 1), float32] {{
    reshape(%p0, newshape=[2, 1])
  }};
  %2 = %1(%0(%x));
  reshape(%2, newshape=[2])
}}""",
    # as TVM's test_pass_plan_devices.py writes them: a primitive's parameters typed by its call
    "unannotated_primitive_parameters": f"""
def @main(%a: {T}, %b: {T}) {{
  %0 = fn (%x, %y, Primitive=1) {{ add(%x, %y) }};
  %1 = fn (%z, Primitive=1) {{ negative(%z) }};
  %1(%0(%a, %b))
}}""",
    # on_device is the identity and compiles to nothing: the tensor it names must not be
    # killed while the result, in the same register, is still to be returned
    "on_device_of_the_result": f"""
def @main(%a: {T}) {{
  %0 = add(%a, %a);
  on_device(%0, constrain_result=True)
}}""",
    # MarkCompilerFunctionsAsExtern's result (test_compiler_function_utils.py): an `Extern=1`
    # global holding a Composite function, compiled already, called as one kernel
    "extern_global": f"""
def @main(%x: {T}) -> {T} {{ @tvmgen_default_ccompiler_main_0(%x, %x) }}
def @tvmgen_default_ccompiler_main_0(%a: {T}, %b: {T}, Extern=1) -> {T} {{
  %0 = fn (%p: {T}, %q: {T}, PartitionedFromPattern="add_", Composite="ccompiler.add") -> {T} {{
    add(%p, %q)
  }};
  %0(%a, %b)
}}""",
    "bare_expression": f"""
fn (%x: {T}) -> {T} {{
  let %f = fn (%p0: {T}, Primitive=1) -> {T} {{ negative(%p0) }};
  add(%f(%x), %x)
}}""",
}


def run_both(text: str, args):
    mod = load_module(HEADER + text.lstrip("\n"), "t.relay")
    exe = compile_module(mod)
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(exe).invoke("main", args)
    return exe, expected, got


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vm_agrees_with_the_interpreter(name):
    x = np.array([1.5, -2.0], dtype="float32")
    args = [x, x + 1] if name == "unannotated_primitive_parameters" else [x]
    _, expected, got = run_both(PROGRAMS[name], args)
    assert got is not None and values_equal(expected, got)


def test_a_let_bound_primitive_is_one_kernel_called_directly():
    exe, _, _ = run_both(PROGRAMS["let_bound"], [np.ones(2, "float32")])
    assert [f.name for f in exe.functions] == ["main"]
    assert len(exe.kernels) == 1
    listing = exe.bytecode()
    assert listing.count("invoke_packed PackedFunc[0]") == 2
    assert "alloc_closure" not in listing and "invoke_closure" not in listing


def test_a_primitive_passed_on_becomes_a_closure_over_one_kernel_call():
    exe, _, _ = run_both(PROGRAMS["aliased_and_passed_on"], [np.ones(2, "float32")])
    names = [f.name for f in exe.functions]
    assert names[:2] == ["apply", "main"] and len(names) == 4  # two lifted wrappers
    assert len(exe.kernels) == 2


# the memory dialect as TVM 0.18 lays it out after ManifestAlloc (a dynamic alloc_tensor, whose
# shape comes from vm.shape_of, so the text needs no metadata), with device annotations
DIALECT = f"""
def @main(%x: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */, %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {{
  %0 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], Primitive=1, hash="5b5ea8a5b7d2e2b1") -> Tensor[(2, 3), float32] {{
    %1 = add(%p0, %p1) /* ty=Tensor[(2, 3), float32] */;
    exp(%1) /* ty=Tensor[(2, 3), float32] */
  }} /* ty=fn (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] */;
  let %shape: Tensor[(2), int64] = vm.shape_of(%x) /* ty=Tensor[(2), int64] */;
  let %storage_0: Storage[] /* ty=Storage[] */ = memory.alloc_storage(24i64 /* ty=int64 */, alignment=64, dtype_hint="float32") /* ty=Storage[] */;
  let %tensor_0: Tensor[(2, 3), float32] = memory.alloc_tensor(%storage_0, 0i64 /* ty=int64 */, %shape, assert_shape=[2, 3]) /* ty=Tensor[(2, 3), float32] */;
  %2 = on_device(%x, constrain_result=True) /* ty=Tensor[(2, 3), float32] */;
  %3 = (%2, %y);
  %4 = (%tensor_0,);
  let %x1: () /* ty=() */ = vm.invoke_tvm_op(%0, %3, %4) /* ty=() */;
  let %x_0: Tensor[(2, 3), float32] = %tensor_0;
  device_copy(%x_0) /* ty=Tensor[(2, 3), float32] */
}}"""


def test_a_printed_manifest_alloc_stage_runs_on_the_vm():
    mod = load_module(HEADER + DIALECT.lstrip("\n"), "d.relay")
    exe = compile_module(mod)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = np.ones((2, 3), dtype="float32")
    got = VirtualMachine(exe).invoke("main", [x, y])
    np.testing.assert_allclose(got, np.exp(x + y), rtol=1e-6)
    ops = [line.split("# ")[1].split()[0] for line in exe.bytecode().splitlines()
           if line[:4].strip().rstrip(":").isdigit()]
    # ManifestLifetimes (which the stage had not run) kills the shape after its last use
    assert ops == ["shape_of", "load_const", "alloc_storage", "load_const", "alloc_tensor_reg",
                   "kill_register", "invoke_packed", "device_copy", "ret"]


def test_the_pipeline_skips_the_passes_a_printed_stage_is_past():
    from rvmdbg.passes.pipeline import default_pipeline
    mod = load_module(HEADER + DIALECT.lstrip("\n"), "d.relay")
    stages = default_pipeline().run(mod)
    skipped = [s.name for s in stages if s.description.startswith("skipped")]
    assert skipped == ["RemoveUnusedFunctions", "SimplifyInference", "EtaExpand", "FoldConstant",
                       "FuseOps", "ToANormalForm", "InferType", "LambdaLift", "DeadCodeElimination", "ManifestAlloc"]
    assert "memory.kill(%x_0)" not in stages[-2].text and "memory.kill" in stages[-1].text


@pytest.mark.parametrize("call, message, col", [
    ("memory.alloc_storage(24i64, 0i64, 64i64, 1i64)",
     "memory.alloc_storage takes 1, 2 or 3 arguments, 4 given", 3),
    ("memory.alloc_storage(24i64, %x)",
     "memory.alloc_storage: the alignment must be an int64 scalar, found Tensor[(2, 3), float32]",
     3),
    ("memory.alloc_tensor(%x, 0i64, vm.shape_of(%x))",
     "memory.alloc_tensor: the first argument must be a storage, found Tensor[(2, 3), float32]",
     3),  # a variable's own span is its binder's: the error points at the call
    ("memory.alloc_storage(24, alignment=64)",
     "memory.alloc_storage: the size must be an int64 scalar, found int32", 24),
])
def test_dialect_calls_that_do_not_fit_are_located_errors(call, message, col):
    from rvmdbg.relay.diagnostics import RelayTypeError
    from rvmdbg.relay.typecheck import check_module
    text = HEADER + f"def @main(%x: Tensor[(2, 3), float32]) {{\n  {call}\n}}\n"
    with pytest.raises(RelayTypeError) as info:
        check_module(load_module(text, "e.relay"))
    assert info.value.format().splitlines()[0] == f"e.relay:3:{col}: error: {message}"


def test_a_global_used_as_a_value_is_a_closure_with_no_wrapper_as_in_tvm():
    text = """
def @double(%x: int32) -> int32 { %x * 2 }
def @apply(%f: fn (int32) -> int32, %x: int32) -> int32 { %f(%x) }
def @main(%x: int32) -> int32 { @apply(@double, %x) }"""
    exe, expected, got = run_both(text, [np.array(21, "int32")])
    assert int(got) == 42 and values_equal(expected, got)
    assert [f.name for f in exe.functions] == ["double", "apply", "main"]
    main = exe.functions[exe.global_map["main"]]
    texts = [i.text() for i in main.instructions]
    assert texts[0] == "alloc_closure $1 VMFunc[0]($)"


@pytest.mark.parametrize("program", ["fib", "mlp", "tuples", "closures", "list_ops", "grow"])
def test_every_printed_stage_reads_back_and_runs_like_the_program(program):
    # a pass stage printed with its metadata (as TVM's astext() prints) is a program of its own
    from pathlib import Path

    from rvmdbg.args import parse_program_args
    from rvmdbg.passes.pipeline import default_pipeline
    from rvmdbg.relay.loader import program_default_args
    from rvmdbg.relay.printer import print_module
    path = Path(__file__).resolve().parents[2] / "programs" / f"{program}.relay"
    text = path.read_text()
    mod = load_module(text, path.name)
    texts = program_default_args(text) or []
    expected = Interpreter(mod).run("main", parse_program_args(mod, "main", texts))
    for stage in default_pipeline().run(mod)[1:]:
        again = load_module(print_module(stage.module), f"{program}_{stage.name}.relay")
        got = VirtualMachine(compile_module(again)).invoke(
            "main", parse_program_args(again, "main", texts))
        assert values_equal(expected, got), stage.name


# TVM 0.18's layout after ManifestAlloc, printed with show_meta_data: alloc_storage takes
# (size, shape, alignment), const_shape and the virtual devices are metadata references
TVM_STAGE = """
def @main(%x: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */, %y: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */) -> Tensor[(2, 3), float32] {
  %0 = fn (%p0: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */, %p1: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */, Primitive=1, hash="5b5ea8a5b7d2e2b1") -> Tensor[(2, 3), float32] {
    %1 = add(%p0, %p1) /* ty=Tensor[(2, 3), float32] */;
    exp(%1) /* ty=Tensor[(2, 3), float32] */
  } /* ty=fn (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] */;
  let %storage_0: Storage[] /* ty=Storage[] */ = memory.alloc_storage(24i64 /* ty=int64 */, meta[relay.Constant][0] /* ty=Tensor[(1), int64] */, 64i64 /* ty=int64 */, virtual_device=meta[VirtualDevice][0]) /* ty=Storage[] */;
  let %tensor_0: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */ = memory.alloc_tensor(%storage_0, 0i64 /* ty=int64 */, meta[relay.Constant][1] /* ty=Tensor[(2), int64] */, const_shape=meta[relay.Constant][1], assert_shape=[]) /* ty=Tensor[(2, 3), float32] */;
  %2 = on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True) /* ty=Tensor[(2, 3), float32] */;
  %3 = (%2, %y) /* ty=(Tensor[(2, 3), float32], Tensor[(2, 3), float32]) */;
  %4 = (%tensor_0,) /* ty=(Tensor[(2, 3), float32],) */;
  let %x1: () /* ty=() */ = vm.invoke_tvm_op(%0, %3, %4) /* ty=() */;
  let %x_0: Tensor[(2, 3), float32] /* ty=Tensor[(2, 3), float32] */ = %tensor_0;
  %5 = device_copy(%x_0, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][0]) /* ty=Tensor[(2, 3), float32] */;
  %5
}
"""


def test_tvms_manifest_alloc_layout_with_metadata_runs_on_the_vm():
    from rvmdbg.relay.metadata import MetaObject, metadata_text
    device = MetaObject("VirtualDevice", 0, "VirtualDevice",
                        {"device_type_int": "1", "virtual_device_id": "0", "target": "0",
                         "memory_scope": "0"})
    section = metadata_text([np.array([24], "int64"), np.array([2, 3], "int64")], [device])
    mod = load_module(HEADER + TVM_STAGE.lstrip("\n") + "#[metadata]\n" + section + "\n",
                      "tvm_stage.relay")
    exe = compile_module(mod)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    got = VirtualMachine(exe).invoke("main", [x, -x])
    np.testing.assert_allclose(got, np.ones((2, 3)), rtol=1e-6)
    assert "alloc_tensor $5 $3 $4 [2, 3] float32" in exe.bytecode()
    assert "device_copy" in exe.bytecode()


def test_tvm_0_13_alloc_storage_layout_size_and_alignment_runs_on_the_vm():
    # TVM 0.8 to 0.13 printed `memory.alloc_storage(%size, %alignment, ...)` (no shape yet);
    # its test_pass_plan_devices.py test_alloc_storage writes that form
    text = TVM_STAGE.replace("memory.alloc_storage(24i64 /* ty=int64 */, meta[relay.Constant][0] "
                             "/* ty=Tensor[(1), int64] */, 64i64",
                             "memory.alloc_storage(24i64 /* ty=int64 */, 64i64")
    assert text != TVM_STAGE
    from rvmdbg.relay.metadata import MetaObject, metadata_text
    device = MetaObject("VirtualDevice", 0, "VirtualDevice",
                        {"device_type_int": "1", "virtual_device_id": "0", "target": "0",
                         "memory_scope": "0"})
    section = metadata_text([np.array([24], "int64"), np.array([2, 3], "int64")], [device])
    exe = compile_module(load_module(HEADER + text.lstrip("\n") + "#[metadata]\n" + section,
                                     "tvm_013.relay"))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_allclose(VirtualMachine(exe).invoke("main", [x, -x]), np.ones((2, 3)))
    assert "alloc_storage $3 $2 64 float32 0" in exe.bytecode()


def test_an_extern_global_is_one_kernel_named_by_the_global_as_in_tvm():
    # TVM's VM compiles no VMFunction for it and calls the external kernel by its name
    exe, _, _ = run_both(PROGRAMS["extern_global"], [np.ones(2, "float32")])
    assert [f.name for f in exe.functions] == ["main"]
    assert exe.kernel_names() == ["tvmgen_default_ccompiler_main_0"]
