"""The instruction set: TVM text forms, TVM serialized fields, read/write sets, control flow."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.bytecode import (
    OPCODES, AllocADT, AllocClosure, AllocStorage, AllocTensor, AllocTensorReg, BytecodeError,
    DeviceCopy, Fatal, GetField, GetTag, Goto, If, Invoke, InvokeClosure, InvokePacked,
    KillRegister, LoadConst, LoadConsti, Move, ReshapeTensor, Ret, ShapeOf, decode)

# One instance of every opcode: (instruction, TVM text, TVM serialized fields).
EXAMPLES = [
    (Move(0, 1), "move $1 $0", [0, 1]),
    (Ret(9), "ret $9", [9]),
    (Invoke(0, [1, 2], 3), "invoke $3 VMFunc[0]($1,$2)", [0, 2, 3, 1, 2]),
    (InvokeClosure(4, [5], 6), "invoke_closure $6 $4($5)", [4, 1, 6, 5]),
    (InvokePacked(2, 3, 1, [0, 5, 4]), "invoke_packed PackedFunc[2] (in: $0, $5, out: $4)",
     [2, 3, 1, 0, 5, 4]),
    (AllocTensor(7, 8, [2, 3], "float32", 9), "alloc_tensor $9 $7 $8 [2, 3] float32",
     [7, 8, 2, 32, 1, 2, 9, 2, 3]),
    (AllocTensorReg(1, 2, 3, "int64", 4), "alloc_tensor_reg $4 $1 $2 $3 int64",
     [1, 2, 3, 0, 64, 1, 4]),
    (AllocADT(0, [1], 2), "alloc_data $2 tag(0) [$1]", [0, 1, 2, 1]),
    (AllocClosure(3, [1, 2], 5), "alloc_closure $5 VMFunc[3]($1,$2)", [3, 2, 5, 1, 2]),
    (GetField(2, 1, 3), "get_field $3 $2[1]", [2, 1, 3]),
    (If(0, 5, 1, 3), "if $0 $5 1 3", [0, 5, 1, 3]),
    (LoadConst(0, 1), "load_const $1 Const[0] 0", [0, 0, 1]),
    (Goto(2), "goto 2", [2]),
    (GetTag(1, 2), "get_tag $2 $1", [1, 2]),
    (LoadConsti(1, 5), "load_consti $5 1", [1, 5]),
    (Fatal(), "fatal", []),
    (AllocStorage(3, 64, "float32", 4), "alloc_storage $4 $3 64 float32 0",
     [3, 64, 2, 32, 1, 0, 0, 4]),
    (ShapeOf(1, 2), "shape_of $2 $1", [1, 2]),
    (ReshapeTensor(1, 2, 3), "reshape_tensor $3 $1 $2", [1, 2, 3]),
    (DeviceCopy(1, 0, 2, 3), "device_copy $3 $1 2 0", [1, 0, 2, 3]),
    (KillRegister(7), "kill_register $7", [7]),
]


def test_every_opcode_has_an_example_and_a_class():
    assert len(OPCODES) == 21
    assert sorted(type(i).opcode for i, _, _ in EXAMPLES) == list(range(21))
    for number, cls in enumerate(OPCODES):
        assert cls.opcode == number
        assert bc.BY_NAME[cls.name] is cls


@pytest.mark.parametrize("instr,text,fields", EXAMPLES, ids=lambda x: getattr(x, "name", None))
def test_text_and_fields_follow_tvm(instr, text, fields):
    assert instr.text() == text
    assert str(instr) == text
    assert instr.fields() == fields
    assert decode(instr.opcode, fields) == instr
    assert type(instr).from_fields(fields) == instr


def test_tvm_prints_empty_register_lists_with_a_bare_dollar():
    # TVM's StrJoin returns "" for no items but the printer has already written the `$`.
    assert AllocADT(1, [], 0).text() == "alloc_data $0 tag(1) [$]"
    assert AllocClosure(2, [], 4).text() == "alloc_closure $4 VMFunc[2]($)"
    assert Invoke(0, [], 1).text() == "invoke $1 VMFunc[0]($)"
    assert InvokeClosure(3, [], 1).text() == "invoke_closure $1 $3($)"
    assert InvokePacked(0, 1, 1, [4]).text() == "invoke_packed PackedFunc[0] (in: $, out: $4)"


def test_dtype_text_and_dlpack_codes():
    # alloc_tensor uses DLDatatypePrint (bool shows as uint1); alloc_storage uses
    # DLDataType2String (bool shows as bool). Both serialize bool as uint1.
    t = AllocTensor(0, 1, [], "bool", 2)
    assert t.text() == "alloc_tensor $2 $0 $1 [] uint1"
    assert t.fields()[2:5] == [1, 1, 1]
    s = AllocStorage(0, 64, "bool", 1)
    assert s.text() == "alloc_storage $1 $0 64 bool 0"
    assert AllocTensorReg(0, 1, 2, "float16", 3).fields()[3:6] == [2, 16, 1]
    assert AllocTensor(0, 1, [4], np.dtype("int8"), 2).dtype == "int8"
    assert bc.dl_to_dtype(0, 32, 1) == "int32"
    with pytest.raises(BytecodeError):
        bc.dl_to_dtype(2, 32, 4)  # vector lanes
    with pytest.raises(BytecodeError):
        AllocTensor(0, 1, [2], "complex64", 2)


def test_negative_offsets_and_immediates_print_signed():
    assert Goto(-3).text() == "goto -3"
    assert If(1, 2, 1, -4).text() == "if $1 $2 1 -4"
    assert LoadConsti(-7, 0).text() == "load_consti $0 -7"
    assert decode(14, [-(1 << 63), 0]).value == -(1 << 63)


def test_text_with_name_tables_adds_a_note_but_keeps_tvm_text_first():
    funcs, kernels = ["main", "sum_up"], ["fused_add"]
    assert Invoke(1, [4], 5).text(funcs, kernels) == "invoke $5 VMFunc[1]($4)  // @sum_up"
    assert AllocClosure(0, [], 1).text(funcs) == "alloc_closure $1 VMFunc[0]($)  // @main"
    assert (InvokePacked(0, 2, 1, [1, 2]).text(funcs, kernels)
            == "invoke_packed PackedFunc[0] (in: $1, out: $2)  // fused_add")
    assert Move(0, 1).text(funcs, kernels) == "move $1 $0"
    assert Invoke(7, [], 5).text(funcs) == "invoke $5 VMFunc[7]($)"  # no such name: no note


READS_WRITES = [
    (Move(0, 1), (0,), (1,)),
    (Ret(9), (9,), ()),
    (Invoke(0, [1, 2], 3), (1, 2), (3,)),
    (InvokeClosure(4, [5, 6], 7), (4, 5, 6), (7,)),
    (InvokePacked(0, 4, 2, [1, 2, 3, 4]), (1, 2), (3, 4)),
    (AllocTensor(7, 8, [2], "float32", 9), (7, 8), (9,)),
    (AllocTensorReg(1, 2, 3, "int64", 4), (1, 2, 3), (4,)),
    (AllocADT(0, [1, 1, 2], 3), (1, 1, 2), (3,)),
    (AllocClosure(3, [1], 5), (1,), (5,)),
    (GetField(2, 0, 3), (2,), (3,)),
    (If(0, 5, 1, 3), (0, 5), ()),
    (LoadConst(0, 1), (), (1,)),
    (Goto(2), (), ()),
    (GetTag(1, 2), (1,), (2,)),
    (LoadConsti(1, 5), (), (5,)),
    (Fatal(), (), ()),
    (AllocStorage(3, 64, "float32", 4), (3,), (4,)),
    (ShapeOf(1, 2), (1,), (2,)),
    (ReshapeTensor(1, 2, 3), (1, 2), (3,)),
    (DeviceCopy(1, 0, 0, 3), (1,), (3,)),
    (KillRegister(7), (), (7,)),
]


@pytest.mark.parametrize("instr,reads,writes", READS_WRITES, ids=lambda x: getattr(x, "name", None))
def test_reads_and_writes(instr, reads, writes):
    assert instr.reads() == reads
    assert instr.writes() == writes
    assert instr.registers() == reads + writes


def test_invoke_packed_outputs_are_written_not_read():
    ip = InvokePacked(1, 3, 1, [0, 5, 4])
    assert ip.inputs == (0, 5) and ip.outputs == (4,)
    assert 4 not in ip.reads()
    assert InvokePacked(0, 2, 2, [1, 2]).reads() == ()


def test_control_flow():
    assert If(0, 5, 1, 3).jump_targets(5) == (6, 8)
    assert If(0, 5, 1, -5).jump_targets(5) == (6, 0)
    assert Goto(2).jump_targets(7) == (9,)
    assert Goto(-7).jump_targets(7) == (0,)
    assert Move(0, 1).jump_targets(3) == ()
    assert Move(0, 1).successors(3) == (4,)
    assert If(0, 5, 1, 3).successors(5) == (6, 8)
    assert Goto(2).successors(7) == (9,)
    assert Ret(0).successors(4) == () and Fatal().successors(4) == ()
    flags = {cls.name: (cls.is_jump, cls.is_call, cls.is_kernel_call, cls.is_return)
             for cls in OPCODES}
    assert flags["If"] == flags["Goto"] == (True, False, False, False)
    assert flags["Invoke"] == flags["InvokeClosure"] == (False, True, False, False)
    assert flags["InvokePacked"] == (False, False, True, False)
    assert flags["Ret"] == (False, False, False, True)
    others = set(flags) - {"If", "Goto", "Invoke", "InvokeClosure", "InvokePacked", "Ret"}
    assert all(flags[n] == (False, False, False, False) for n in others)


def test_alloc_adt_fields_is_both_the_operand_and_the_serializer():
    a = AllocADT(2, [4, 5], 6)
    assert tuple(a.fields) == (4, 5) and len(a.fields) == 2 and a.fields[1] == 5
    assert a.fields() == [2, 2, 6, 4, 5]
    assert repr(a) == "AllocADT(tag=2, fields=(4, 5), dst=6)"


def test_equality_hash_and_repr():
    assert Move(0, 1) == Move(0, 1)
    assert Move(0, 1) != Move(1, 0)
    assert Move(0, 1) != ShapeOf(0, 1)  # same fields, different opcode
    assert len({Move(0, 1), Move(0, 1), Goto(1)}) == 2
    assert repr(Invoke(0, [1], 2)) == "Invoke(func_index=0, args=(1,), dst=2)"
    assert repr(Fatal()) == "Fatal()"
    assert LoadConst(3, 4) == LoadConst(3, 4, 0)


def test_operands_accept_numpy_integers_and_lists():
    i = Invoke(np.int64(1), [np.int32(2)], np.uint8(3))
    assert i.fields() == [1, 1, 3, 2] and all(type(v) is int for v in i.fields())
    assert isinstance(i.args, tuple)


@pytest.mark.parametrize("regs,message", [
    ([1, -1], "must not be negative"), ([True], "must be an integer"),
    ([2.0], "must be an integer"), ([1 << 63], "does not fit in 64 bits"), (5, "list of registers"),
])
def test_register_lists_are_checked_register_by_register(regs, message):
    # plain ints are taken at once; anything else goes through each register's own check
    with pytest.raises(BytecodeError, match=message):
        AllocADT(0, regs, 1)
    assert AllocADT(0, [np.int64(2), 3], 1).fields == (2, 3)


@pytest.mark.parametrize("opcode,fields,message", [
    (21, [], "unknown opcode"),
    (-1, [], "unknown opcode"),
    (0, [1], "takes 2 fields"),
    (1, [], "takes 1 field,"),
    (15, [0], "takes 0 fields"),
    (0, [-1, 0], "must not be negative"),
    (2, [0, 2, 1, 5], "declares 2 trailing fields"),
    (2, [0, -1, 1], "declares -1"),
    (2, [0, 1], "at least 3"),
    (4, [0, 2, 1, 5], "declares 2 trailing fields"),
    (4, [0, 1, 2, 5], "output size 2 exceeds arity 1"),
    (5, [0, 1, 2, 32, 4, 1, 3, 2], "unsupported DLPack dtype"),
    (5, [0, 1, 2, 32, 1, 1, 3, -2], "must not be negative"),
    (7, [0, 1, 2], "declares 1 trailing fields"),
    (11, [0, 1], "takes 3 fields"),
    (16, [0, 64, 2, 32, 1, 0, 1, 4, 2], "static shape"),
    (16, [0, 64, 9, 32, 1, 0, 0, 4], "unsupported DLPack dtype"),
    (0, [0, 1 << 63], "does not fit in 64 bits"),
    (0, [0, 1.5], "must be an integer"),
    (0, [0, True], "must be an integer"),
])
def test_malformed_fields_raise_bytecode_error(opcode, fields, message):
    with pytest.raises(BytecodeError, match=message):
        decode(opcode, fields)


def test_constructor_checks():
    with pytest.raises(BytecodeError, match="arity 3 but 2 arguments"):
        InvokePacked(0, 3, 1, [1, 2])
    with pytest.raises(BytecodeError):
        Move("0", 1)
    with pytest.raises(BytecodeError, match="list of registers"):
        AllocADT(0, 5, 1)
    with pytest.raises(BytecodeError):
        GetField(0, -1, 1)
    assert issubclass(BytecodeError, ValueError)


# ---------------------------------------------------------------- random operands

REG = st.integers(0, 1 << 20)
INDEX = st.integers(0, (1 << 31) - 1)
I64 = st.integers(-(1 << 63), (1 << 63) - 1)
REGS = st.lists(REG, max_size=6)
DTYPE = st.sampled_from(bc.DTYPES)


@st.composite
def invoke_packed(draw):
    args = draw(REGS)
    return InvokePacked(draw(INDEX), len(args), draw(st.integers(0, len(args))), args)


INSTRUCTIONS = st.one_of(
    st.builds(Move, REG, REG),
    st.builds(Ret, REG),
    st.builds(Invoke, INDEX, REGS, REG),
    st.builds(InvokeClosure, REG, REGS, REG),
    invoke_packed(),
    st.builds(AllocTensor, REG, REG, st.lists(st.integers(0, 1 << 40), max_size=5), DTYPE, REG),
    st.builds(AllocTensorReg, REG, REG, REG, DTYPE, REG),
    st.builds(AllocADT, INDEX, REGS, REG),
    st.builds(AllocClosure, INDEX, REGS, REG),
    st.builds(GetField, REG, INDEX, REG),
    st.builds(If, REG, REG, I64, I64),
    st.builds(LoadConst, INDEX, REG, INDEX),
    st.builds(Goto, I64),
    st.builds(GetTag, REG, REG),
    st.builds(LoadConsti, I64, REG),
    st.just(Fatal()),
    st.builds(AllocStorage, REG, INDEX, DTYPE, REG, INDEX),
    st.builds(ShapeOf, REG, REG),
    st.builds(ReshapeTensor, REG, REG, REG),
    st.builds(DeviceCopy, REG, INDEX, INDEX, REG),
    st.builds(KillRegister, REG),
)


@settings(max_examples=300, deadline=None)
@given(INSTRUCTIONS)
def test_fields_round_trip(instr):
    fields = instr.fields()
    assert all(type(v) is int for v in fields)
    again = decode(instr.opcode, fields)
    assert again == instr
    assert type(again) is type(instr)
    assert again.text() == instr.text()
    assert again.reads() == instr.reads() and again.writes() == instr.writes()
    assert hash(again) == hash(instr)
    assert type(instr).from_fields(list(fields)) == instr


@settings(max_examples=300, deadline=None)
@given(st.integers(-2, 23), st.lists(st.integers(-(1 << 64), 1 << 64), max_size=12))
def test_decode_of_arbitrary_fields_raises_only_bytecode_error(opcode, fields):
    try:
        instr = decode(opcode, fields)
    except BytecodeError:
        return
    assert instr.fields() == fields
