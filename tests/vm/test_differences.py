"""One test per deliberate difference from TVM in docs/differences.md that no other test
shows, so each difference listed there is pinned by a test (the others: test_bytecode,
test_compiler, test_machine, test_listing_tvm, tests/passes, test_vm_tvm_forms)."""
import numpy as np

from rvmdbg.passes.fold_constant import MAX_FOLDED_ELEMENTS
from rvmdbg.relay.ast import Call, Function
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.parser import parse_expr
from rvmdbg.vm.compiler import MAX_KERNEL_NAME, compile_module, kernel_name
from rvmdbg.vm.machine import VirtualMachine

HEADER = '#[version = "0.0.5"]\n'


def compiled(text: str):
    return compile_module(load_module(HEADER + text, "d.relay"))


def writes_of(exe, opname: str, args):
    """The values the VM writes with each instruction called opname, in order."""
    vm = VirtualMachine(exe)
    vm.start("main", args)
    out = []
    while True:
        info = vm.step()
        if info.instruction.name == opname:
            out.extend(w.new for w in info.writes)
        if info.halted:
            return out


def test_constructor_tags_are_indexes_and_get_tag_gives_a_0d_int32():
    exe = compiled("type T { A, B(int32) }\n"
                   "def @main() -> int32 { match (B(1)) { A => 0, B(%x) => %x } }")
    assert "alloc_data $1 tag(1) [$0]" in exe.bytecode()  # TVM: a hash of T in the top byte
    tags = writes_of(exe, "GetTag", [])  # one test per clause tried
    assert tags and all(t.shape == () and t.dtype == np.int32 and int(t) == 1 for t in tags)


def test_load_consti_gives_a_0d_int64():
    exe = compiled("def @main(%b: bool) -> int32 { if (%b) { 1 } else { 2 } }")
    (value,) = writes_of(exe, "LoadConsti", [np.array(True)])
    assert value.shape == () and value.dtype == np.int64


def test_the_constant_pool_holds_each_distinct_constant_once():
    exe = compiled("def @main(%x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32] {\n"
                   "  %0 = add(%x, full(2f, shape=[3, 4]));\n"
                   "  %1 = multiply(%0, full(2f, shape=[3, 4]));\n"
                   "  subtract(%1, %x)\n}")
    tensors = [c for c in exe.constants if c.shape == (3, 4)]
    assert len(tensors) == 1  # TVM: one entry per constant node, two here


def test_fold_constant_leaves_results_past_its_cap():
    n = MAX_FOLDED_ELEMENTS + 1
    mod = load_module(HEADER + f"def @main() -> Tensor[({n}), float32] {{ ones(shape=[{n}]) }}",
                      "d.relay")
    exe = compile_module(mod)
    assert all(c.size <= MAX_FOLDED_ELEMENTS for c in exe.constants)
    assert "vm_mod_fused_ones" in exe.kernel_names()


def test_a_diamond_is_fused_as_in_tvm():
    exe = compiled("def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
                   "  %0 = exp(%x);\n  add(negative(%0), sqrt(%0))\n}")
    # TVM's post-dominator analysis: both uses of exp lead to the add, so one kernel
    assert exe.kernel_names() == ["vm_mod_fused_exp_negative_sqrt_add"]


def test_a_long_kernel_name_is_cut_with_a_digest():
    body = "%p0"
    for _ in range(20):
        body = f"negative({body})"
    fn = parse_expr(f"fn (%p0: float32, Primitive=1) {{ {body} }}")
    assert isinstance(fn, Function) and isinstance(fn.body, Call)
    name = kernel_name(fn)
    assert name.startswith("vm_mod_fused_negative_negative")
    head, digest = name[len("vm_mod_"):].rstrip("_").rsplit("_", 1)
    assert len(head) == MAX_KERNEL_NAME and len(digest) == 12


def test_device_copy_copies_from_device_0_to_device_0():
    exe = compiled("def @main(%x: float32) -> float32 { device_copy(%x) }")
    assert "device_copy $1 $0 0 0" in exe.bytecode()
    value = VirtualMachine(exe).invoke("main", [np.array(2.5, "float32")])
    # a 0-d float32 tensor is held as a NumPy scalar (rvmdbg/scalars.py)
    assert type(value) is np.float32 and float(value) == 2.5


def test_alloc_storage_takes_its_size_from_a_register_with_no_static_shape():
    # TVM 0.14+ also writes the static shape into the instruction (`alloc_storage $2 [2, 3]
    # float32 0`, ndim 2 among its fields); rvmdbg's, as TVM's before, is size and alignment
    exe = compiled("def @main(%x: Tensor[(2, 3), float32]) { exp(%x) }")
    (alloc,) = [i for i in exe.functions[0].instructions if i.name == "AllocStorage"]
    assert alloc.text() == "alloc_storage $2 $1 64 float32 0"
    assert alloc.fields()[6] == 0  # ndim


def test_vm_functions_are_numbered_in_the_modules_order():
    exe = compiled("def @g(%x: int32) -> int32 { %x }\n"
                   "def @main(%x: int32) -> int32 { @f(@g(%x)) }\n"
                   "def @f(%x: int32) -> int32 { @g(%x) }")
    assert [f.name for f in exe.functions] == ["g", "main", "f"]
