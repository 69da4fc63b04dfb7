"""Executables: TVM's `exe.bytecode` listing layout, lookups, and the invariant checker."""
import numpy as np
import pytest

from rvmdbg.relay.diagnostics import Span
from rvmdbg.vm.bytecode import (AllocADT, AllocClosure, AllocStorage, AllocTensor, GetField,
                                Goto, If, Invoke, InvokePacked, KillRegister, LoadConst,
                                LoadConsti, Move, Ret, Fatal)
from rvmdbg.vm.executable import (Executable, InvalidExecutable, Kernel, VMFunction,
                                  check_executable, listing_line, MAX_REGISTER_FILE_SIZE)


def if_tuple_example() -> Executable:
    """A 16-instruction `main(b)` containing the instructions the reference listing shows
    (pcs 0, 1, 4, 5, 7, 15), with plausible code in between."""
    code = [
        LoadConst(0, 1),                        # 0
        AllocADT(0, [1], 2),                    # 1
        GetField(2, 0, 3),                      # 2
        LoadConst(1, 4),                        # 3
        LoadConsti(1, 5),                       # 4
        If(0, 5, 1, 3),                         # 5
        Move(3, 6),                             # 6
        Goto(2),                                # 7
        Move(4, 6),                             # 8
        LoadConsti(16, 7),                      # 9
        AllocStorage(7, 64, "int32", 8),        # 10
        LoadConsti(0, 7),                       # 11
        AllocTensor(8, 7, [], "int32", 9),      # 12
        InvokePacked(0, 3, 1, [6, 4, 9]),       # 13
        KillRegister(8),                        # 14
        Ret(9),                                 # 15
    ]
    return Executable([VMFunction("main", ["b"], 10, code)],
                      [np.array(1, "int32"), np.array(2, "int32")],
                      [Kernel("fused_add", "fn (%p0: int32, %p1: int32, Primitive=1) { add(%p0, %p1) }",
                              2, 1)])


# TVM 0.18's GetBytecode: `setw(2)` pc, `": "`, opcode and each field followed by a space,
# the whole padded to 40 columns, then `"  # "` and the instruction's text.
EXPECTED_LISTING = """\
VM Function[0]: main(b)
# reg file size = 10
# instruction count = 16
opcode, fields # inst(text):
 0: 11 0 0 1                              # load_const $1 Const[0] 0
 1: 7 0 1 2 1                             # alloc_data $2 tag(0) [$1]
 2: 9 2 0 3                               # get_field $3 $2[0]
 3: 11 1 0 4                              # load_const $4 Const[1] 0
 4: 14 1 5                                # load_consti $5 1
 5: 10 0 5 1 3                            # if $0 $5 1 3
 6: 0 3 6                                 # move $6 $3
 7: 12 2                                  # goto 2
 8: 0 4 6                                 # move $6 $4
 9: 14 16 7                               # load_consti $7 16
10: 16 7 64 0 32 1 0 0 8                  # alloc_storage $8 $7 64 int32 0
11: 14 0 7                                # load_consti $7 0
12: 5 8 7 0 32 1 0 9                      # alloc_tensor $9 $8 $7 [] int32
13: 4 0 3 1 6 4 9                         # invoke_packed PackedFunc[0] (in: $6, $4, out: $9)
14: 20 8                                  # kill_register $8
15: 1 9                                   # ret $9

"""


def test_bytecode_listing_matches_tvm_layout():
    exe = if_tuple_example()
    check_executable(exe)
    assert exe.bytecode() == EXPECTED_LISTING


def test_reference_lines_appear_in_the_listing():
    # The reference shows these lines (its padding abbreviated); the fields and text agree.
    listing = if_tuple_example().bytecode()
    for pc, fields, text in [(" 0", "11 0 0 1", "load_const $1 Const[0] 0"),
                             (" 1", "7 0 1 2 1", "alloc_data $2 tag(0) [$1]"),
                             (" 4", "14 1 5", "load_consti $5 1"),
                             (" 5", "10 0 5 1 3", "if $0 $5 1 3"),
                             (" 7", "12 2", "goto 2"),
                             ("15", "1 9", "ret $9")]:
        line = next(l for l in listing.splitlines() if l.startswith(pc + ":"))
        head, _, tail = line.partition("  # ")
        assert head.split(": ", 1)[1].strip() == fields
        assert tail == text


def test_listing_of_several_functions_separates_them_with_blank_lines():
    f0 = VMFunction("main", [], 2, [AllocClosure(1, [], 0), Invoke(1, [0], 1), Ret(1)])
    f1 = VMFunction("id", ["x"], 2, [AllocADT(1, [0], 1), Ret(0)])
    exe = Executable([f0, f1], [], [], adt_constructor={(1, 0): "Some"})
    text = exe.bytecode()
    assert text.startswith("VM Function[0]: main()\n")
    assert "\n\nVM Function[1]: id(x)\n# reg file size = 2\n# instruction count = 2\n" in text
    assert text.endswith(" 1: 1 0 " + " " * 32 + "  # ret $0\n\n")
    assert "# alloc_data $1 tag(1) [$0]\n" in text
    named = exe.bytecode(names=True)
    assert "# invoke $1 VMFunc[1]($0)  // @id" in named
    assert "# alloc_closure $0 VMFunc[1]($)  // @id" in named
    assert "# alloc_data $1 tag(1) [$0]  // Some\n" in named


def test_long_listing_lines_are_not_cut():
    line = listing_line(123, InvokePacked(0, 9, 1, list(range(100, 109))))
    assert line.startswith("123: 4 0 9 1 100 101")
    assert "108   # invoke_packed" in line  # past column 40: just the separator


def test_lookups():
    exe = if_tuple_example()
    assert exe.func_index("main") == 0 and exe.func_index("@main") == 0
    assert exe.function("main").params == ["b"]
    assert exe.global_map == {"main": 0}
    assert exe.kernel_names() == ["fused_add"]
    assert exe.function_names() == ["main"]
    with pytest.raises(KeyError, match="no function @nope"):
        exe.func_index("nope")
    exe.source_map[(0, 3)] = Span(2, 5, 2, 9, "t.relay")
    assert exe.span_at(0, 3).line == 2 and exe.span_at(0, 4) is None


def test_constants_and_primitives_text():
    exe = Executable([VMFunction("main", [], 1, [Ret(0)])],
                     [np.array(1, "int32"), np.array([1.5, 2.0], "float32"),
                      np.zeros((2, 3), "float64"), np.array([True, False])],
                     [Kernel("fused_add", "", 2, 1), Kernel("ref_read", "", 1, 1, builtin=True)])
    assert exe.constants_text() == (
        "VM Const[0]: NDArray[(),int32,(1,0)]=[1] on device index 0\n"
        "VM Const[1]: NDArray[(2),float32,(1,0)]=[1.5,2] on device index 0\n"
        "VM Const[2]: NDArray[(2,3),float64,(1,0)] on device index 0\n"
        "VM Const[3]: NDArray[(2),bool,(1,0)]=[1,0] on device index 0\n")
    assert exe.primitives() == "VM PackedFunc[0]: fused_add\nVM PackedFunc[1]: ref_read\n"
    assert "Primitive ops (#2): [fused_add, ref_read]" in exe.stats()
    assert "Constant shapes (# 4): [scalar, [2], [2, 3], [2]]" in exe.stats()


def test_function_and_kernel_equality():
    a = VMFunction("f", ["x"], 2, [Move(0, 1), Ret(1)])
    assert a == VMFunction("f", ["x"], 2, [Move(0, 1), Ret(1)], [0])
    assert a != VMFunction("f", ["x"], 2, [Move(0, 1), Ret(0)])
    k = Kernel("k", "src", 1, 1)
    k2 = Kernel("k", "src", 1, 1, impl=len)
    assert k == k2 and k.arity == 2
    assert k != Kernel("k", "src", 1, 1, builtin=True)


def _one(code, size=4, params=("x",), functions=(), kernels=(), constants=()):
    main = VMFunction("main", list(params), size, code)
    return Executable([main, *functions], list(constants), list(kernels))


@pytest.mark.parametrize("exe,message", [
    (_one([Move(0, 4), Ret(4)]), r"function @main, pc 0: register \$4 outside the register file"),
    (_one([Ret(0)], size=0), "1 parameters but only 0 registers"),
    (_one([Ret(0)], size=MAX_REGISTER_FILE_SIZE + 1), "register file size"),
    (_one([]), "function @main: no instructions"),
    (_one([Move(0, 1)]), "control falls off the end after pc 0"),
    (_one([LoadConsti(0, 1), If(0, 1, -1, -1)]), "falls off the end"),
    (_one([If(0, 0, 0, 1), Ret(0)]), "function @main, pc 0: if offset 0"),
    (_one([If(0, 0, 1, 0), Ret(0)]), "if offset 0"),
    (_one([Goto(0), Ret(0)]), "function @main, pc 0: goto offset 0"),
    (_one([Goto(5), Ret(0)]), "pc 0: jump target 5 outside the function"),
    (_one([Ret(0), Goto(-2)]), "pc 1: jump target -1 outside"),
    (_one([If(0, 0, 1, 2), Ret(0)]), "jump target 2 outside"),
    (_one([Invoke(1, [0], 1), Ret(1)]), "function index 1 out of range"),
    (_one([AllocClosure(3, [], 1), Ret(1)]), "function index 3 out of range"),
    (_one([Invoke(0, [], 1), Ret(1)]), "@main takes 1 argument, invoked with 0"),
    (_one([AllocClosure(0, [0, 0], 1), Ret(1)]), "captures 2 values"),
    (_one([LoadConst(0, 1), Ret(1)]), "constant index 0 out of range"),
    (_one([InvokePacked(0, 1, 1, [0]), Ret(0)]), "kernel index 0 out of range"),
    (_one([InvokePacked(0, 2, 1, [0, 1]), Ret(1)], kernels=[Kernel("k", "", 2, 1)]),
     "kernel k takes 2 inputs and 1 outputs, called with 1 and 1"),
    (Executable([VMFunction("f", [], 1, [Fatal()]), VMFunction("f", [], 1, [Fatal()])], [], []),
     "function @f is defined twice"),
    (_one([Ret(0)], constants=[np.array("s")]), "constant 0 has unsupported dtype"),
    (_one([Ret(0)], kernels=[Kernel("", "", 1, 1)]), "kernel 0 has an empty name"),
    # a register read before any write: a crafted file once returned None with exit 0
    (_one([Ret(1)]), r"pc 0: `ret \$1` reads \$1, which is not written on every path"),
    # written on one branch only
    (_one([LoadConsti(1, 1), If(0, 1, 1, 3), Move(0, 2), Goto(1), Ret(2)]),
     r"pc 4: `ret \$2` reads \$2"),
    # read after its kill
    (_one([Move(0, 1), KillRegister(1), Ret(1)]), r"pc 2: `ret \$1` reads \$1"),
    # a loop that reads what only its own body writes
    (_one([LoadConsti(1, 1), If(0, 1, 1, 3), Move(2, 3), Goto(-2), Move(0, 2), Ret(2)]),
     r"pc 2: `move \$3 \$2` reads \$2"),
])
def test_check_executable_rejects(exe, message):
    with pytest.raises(InvalidExecutable, match=message):
        check_executable(exe)


def test_check_executable_accepts_valid_control_flow():
    code = [LoadConsti(1, 1), If(0, 1, 1, 3), Move(0, 2), Goto(3), Fatal(), Goto(-4), Ret(2)]
    check_executable(_one(code, size=3))
    check_executable(_one([Fatal()], params=()))


def test_source_map_must_name_instructions():
    exe = _one([Ret(0)])
    exe.source_map[(0, 1)] = Span(1, 1, 1, 2)
    with pytest.raises(InvalidExecutable, match="function 0, pc 1 has no instruction"):
        check_executable(exe)
