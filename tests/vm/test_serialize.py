"""`.rvmx` files: round trips, and every kind of bad input ends in ExecutableFormatError."""
import hashlib
import random
import struct
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from rvmdbg.relay.diagnostics import Span
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm import serialize
from rvmdbg.vm.bytecode import (AllocADT, AllocClosure, AllocStorage, AllocTensor, AllocTensorReg,
                                DeviceCopy, Fatal, GetField, GetTag, Goto, If, Invoke,
                                InvokeClosure, InvokePacked, KillRegister, LoadConst, LoadConsti,
                                Move, ReshapeTensor, Ret, ShapeOf)
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.serialize import (FORMAT_VERSION, HEADER_SIZE, MAGIC, ExecutableFormatError, dumps,
                                 load, loads, save)


def sample_executable() -> Executable:
    main = VMFunction("main", ["b", "t"], 10, [
        LoadConst(0, 2),
        AllocADT(0, [2, 1], 3),
        GetField(3, 1, 4),
        LoadConsti(1, 5),
        If(0, 5, 1, 4),
        AllocClosure(1, [4], 6),
        InvokeClosure(6, [2], 7),
        Goto(2),
        Invoke(1, [4, 2], 7),
        LoadConsti(24, 8),
        AllocStorage(8, 64, "float32", 9),
        LoadConsti(0, 8),
        AllocTensor(9, 8, [2, 3], "float32", 6),
        InvokePacked(0, 3, 1, [1, 2, 6]),
        KillRegister(9),
        Ret(6),
    ])
    helper = VMFunction("helper", ["x", "y"], 5, [
        ShapeOf(0, 2), LoadConsti(0, 3), AllocStorage(3, 64, "int64", 4),
        AllocTensorReg(4, 3, 2, "int64", 3), ReshapeTensor(0, 2, 3), DeviceCopy(3, 0, 0, 2),
        GetTag(1, 4), Ret(2)])
    src = "def @main(%b: bool, %t: Tensor[(2, 3), float32]) {\n  %t\n}\n"
    return Executable(
        [main, helper],
        [np.array(1.5, "float32"), np.arange(6, dtype="int64").reshape(2, 3),
         np.array([True, False]), np.zeros((0, 4), "float16")],
        [Kernel("fused_add", "fn (%p0: Tensor[(2, 3), float32], %p1: float32, Primitive=1) {\n"
                             "  add(%p0, %p1)\n}", 2, 1),
         Kernel("ref_read", "", 1, 1, builtin=True)],
        {(0, 0): Span(2, 3, 2, 5, "prog.relay"), (1, 7): Span(1, 1, 3, 2, "prelude.relay"),
         (0, 15): Span(2, 3, 2, 5, "prog.relay")},
        source_text=src, source_name="prog.relay",
        adt_constructor={(0, 1): "Pair"},
        sources={"prelude.relay": "def @id[A](%x: A) -> A {\n  %x\n}\n"})


def assert_same(a: Executable, b: Executable) -> None:
    assert a.functions == b.functions
    assert a.kernels == b.kernels
    assert len(a.constants) == len(b.constants)
    for x, y in zip(a.constants, b.constants):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    assert a.source_map == b.source_map
    assert a.sources == b.sources
    assert a.source_text == b.source_text and a.source_name == b.source_name
    assert a.adt_constructor == b.adt_constructor
    assert a.bytecode() == b.bytecode()


def reseal(data: bytes) -> bytes:
    """Recompute the header's length and checksum, so damage reaches the payload parser."""
    payload = data[HEADER_SIZE:]
    return (MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(payload))
            + hashlib.sha256(payload).digest() + payload)


def unchecked_dumps(exe, monkeypatch) -> bytes:
    """Serialize without the save-side check, to produce files that break invariants."""
    with monkeypatch.context() as m:
        m.setattr(serialize, "check_executable", lambda exe: None)
        return dumps(exe)


def expect_format_error(data: bytes, match: str | None = None) -> ExecutableFormatError:
    with pytest.raises(ExecutableFormatError, match=match) as info:
        loads(data, "f.rvmx", build_kernels=False)
    assert str(info.value).startswith("f.rvmx: ")
    return info.value


# ---------------------------------------------------------------- round trips

def test_round_trip_in_memory_and_on_disk(tmp_path):
    exe = sample_executable()
    data = dumps(exe)
    assert data.startswith(MAGIC)
    assert_same(exe, loads(data, build_kernels=False))
    path = tmp_path / "prog.rvmx"
    save(exe, path)
    assert path.read_bytes() == data
    assert_same(exe, load(path, build_kernels=False))
    assert [p.name for p in tmp_path.iterdir()] == ["prog.rvmx"]  # no temp file left


def test_dumps_is_deterministic():
    assert dumps(sample_executable()) == dumps(sample_executable())


def test_loaded_constants_are_native_independent_arrays():
    exe = loads(dumps(sample_executable()), build_kernels=False)
    c = exe.constants[1]
    assert c.dtype == np.dtype("int64") and c.dtype.isnative
    assert c.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_big_endian_constants_are_written_little_endian():
    exe = Executable([VMFunction("main", [], 1, [LoadConst(0, 0), Ret(0)])],
                     [np.array([1, 2], dtype=">i4")], [])
    assert not exe.constants[0].dtype.isnative
    back = loads(dumps(exe), build_kernels=False)
    assert back.constants[0].tolist() == [1, 2]
    assert (1).to_bytes(4, "little") + (2).to_bytes(4, "little") in dumps(exe)


def test_save_refuses_an_invalid_executable(tmp_path):
    bad = Executable([VMFunction("main", [], 1, [Move(0, 5), Ret(0)])], [], [])
    with pytest.raises(ValueError, match=r"register \$5"):
        save(bad, tmp_path / "bad.rvmx")
    assert not list(tmp_path.iterdir())


DTYPES = st.sampled_from(bc.DTYPES)


@st.composite
def executables(draw):
    n_funcs = draw(st.integers(1, 4))
    params = [draw(st.integers(0, 3)) for _ in range(n_funcs)]
    sizes = [p + draw(st.integers(1, 6)) for p in params]
    constants = [draw(hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                      max_side=3)))
                 for dt in draw(st.lists(DTYPES, max_size=3))]
    kernels = [Kernel(draw(st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1,
                                   max_size=8)), draw(st.text(max_size=40)),
                      draw(st.integers(0, 3)), draw(st.integers(0, 2)), draw(st.booleans()))
               for _ in range(draw(st.integers(0, 3)))]
    functions, source_map, constructors = [], {}, {}
    for fi in range(n_funcs):
        size = sizes[fi]
        reg = st.integers(0, size - 1)
        regs = lambda n: [draw(reg) for _ in range(n)]  # noqa: E731
        n = draw(st.integers(1, 12))
        code = []
        for pc in range(n - 1):
            choices = ["move", "consti", "adt", "field", "tag", "if", "goto", "closure",
                       "invoke", "invoke_closure", "tensor", "storage", "kill", "fatal"]
            if constants:
                choices.append("const")
            if kernels:
                choices.append("packed")
            kind = draw(st.sampled_from(choices))
            other = [t for t in range(n) if t != pc]
            if kind == "move":
                code.append(Move(draw(reg), draw(reg)))
            elif kind == "consti":
                code.append(LoadConsti(draw(st.integers(-(1 << 63), (1 << 63) - 1)), draw(reg)))
            elif kind == "adt":
                code.append(AllocADT(draw(st.integers(0, 5)), regs(draw(st.integers(0, 3))), draw(reg)))
                if draw(st.booleans()):   # pc counts the prefix added below
                    constructors[(fi, pc + size + 1 - params[fi])] = draw(st.sampled_from(["Cons", "Nil", "Some", "Ünï"]))
            elif kind == "field":
                code.append(GetField(draw(reg), draw(st.integers(0, 4)), draw(reg)))
            elif kind == "tag":
                code.append(GetTag(draw(reg), draw(reg)))
            elif kind == "if":
                code.append(If(draw(reg), draw(reg), draw(st.sampled_from(other)) - pc,
                               draw(st.sampled_from(other)) - pc))
            elif kind == "goto":
                code.append(Goto(draw(st.sampled_from(other)) - pc))
            elif kind == "closure":
                callee = draw(st.integers(0, n_funcs - 1))
                code.append(AllocClosure(callee, regs(draw(st.integers(0, params[callee]))),
                                         draw(reg)))
            elif kind == "invoke":
                callee = draw(st.integers(0, n_funcs - 1))
                code.append(Invoke(callee, regs(params[callee]), draw(reg)))
            elif kind == "invoke_closure":
                code.append(InvokeClosure(draw(reg), regs(draw(st.integers(0, 3))), draw(reg)))
            elif kind == "tensor":
                code.append(AllocTensor(draw(reg), draw(reg),
                                        draw(st.lists(st.integers(0, 9), max_size=3)),
                                        draw(DTYPES), draw(reg)))
            elif kind == "storage":
                code.append(AllocStorage(draw(reg), draw(st.sampled_from([1, 16, 64])),
                                         draw(DTYPES), draw(reg)))
            elif kind == "kill":
                code.append(KillRegister(size))   # the scratch register: nothing reads it
            elif kind == "fatal":
                code.append(Fatal())
            elif kind == "const":
                code.append(LoadConst(draw(st.integers(0, len(constants) - 1)), draw(reg)))
            else:
                k = draw(st.integers(0, len(kernels) - 1))
                kern = kernels[k]
                code.append(InvokePacked(k, kern.arity, kern.num_outputs, regs(kern.arity)))
        code.append(draw(st.sampled_from([Ret(draw(reg)), Fatal()])))
        # every register written first (the verifier refuses reads before writes); relative
        # jumps keep their targets under the prefix
        code = [LoadConsti(r, r) for r in range(params[fi], size + 1)] + code
        names = [f"p{i}" for i in range(params[fi])]
        functions.append(VMFunction(f"f{fi}" if fi else "main", names, size + 1, code))
        for pc in draw(st.sets(st.integers(0, len(code) - 1), max_size=3)):
            line, col, more = draw(st.integers(1, 1000)), draw(st.integers(1, 80)), draw(st.integers(0, 3))
            source_map[(fi, pc)] = Span(line, col, line + more,
                                        draw(st.integers(1 if more else col, 80)),
                                        draw(st.sampled_from(["a.relay", "prelude.relay", "é.relay"])))
    # each file's text: 1003 lines of 80 characters hold every span drawn above
    text = ("x" * 80 + "\n") * 1003
    sources = {f: text for f in draw(st.sets(st.sampled_from(["a.relay", "prelude.relay",
                                                              "é.relay"])))}
    return Executable(functions, constants, kernels, source_map,
                      draw(st.none() | st.text(max_size=60)),
                      draw(st.none() | st.text(st.characters(blacklist_categories=("Cc", "Cs")),
                                               min_size=1, max_size=10)),
                      constructors, sources)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(executables())
def test_round_trip_of_generated_executables(exe):
    data = dumps(exe)
    back = loads(data, build_kernels=False)
    # spans into files whose text the executable does not carry are not saved
    carried = {k: sp for k, sp in exe.source_map.items() if sp.file in exe.sources}
    exe.source_map = carried
    used = {sp.file for sp in carried.values()}
    exe.sources = {f: t for f, t in exe.sources.items() if f in used}
    if exe.source_name is not None and exe.source_text is not None:
        exe.sources.setdefault(exe.source_name, exe.source_text)
    assert_same(exe, back)
    assert dumps(back) == data


# ---------------------------------------------------------------- damaged files

def test_foreign_files_are_rejected():
    expect_format_error(b"\x7fELF\x02\x01\x01" + bytes(100), "not an rvmdbg executable")
    expect_format_error(b"def @main() { 1 }\n", "not an rvmdbg executable")
    expect_format_error(b"PK", "not an rvmdbg executable")
    expect_format_error(b"", "truncated")


def test_future_and_zero_versions_are_rejected():
    data = dumps(sample_executable())
    future = data[:8] + struct.pack("<I", FORMAT_VERSION + 1) + data[12:]
    err = expect_format_error(future, "newer rvmdbg")
    assert f"format version {FORMAT_VERSION + 1}" in str(err)
    expect_format_error(data[:8] + struct.pack("<I", 0) + data[12:], "unsupported format version 0")


def test_truncation_at_every_sampled_length_is_reported_cleanly():
    data = dumps(sample_executable())
    lengths = sorted(set(range(0, HEADER_SIZE + 8)) | set(random.Random(1).sample(range(len(data)), 150)))
    for n in lengths:
        err = expect_format_error(data[:n])
        assert "truncated" in err.reason, (n, err.reason)


def test_trailing_garbage_is_reported():
    expect_format_error(dumps(sample_executable()) + b"\x00", "unexpected bytes after the payload")


def test_flipped_bytes_are_detected():
    data = dumps(sample_executable())
    rng = random.Random(7)
    positions = sorted(set(range(HEADER_SIZE)) | set(rng.sample(range(len(data)), 200)))
    for i in positions:
        damaged = bytearray(data)
        damaged[i] ^= 1 << rng.randrange(8)
        expect_format_error(bytes(damaged))
    payload_flip = bytearray(data)
    payload_flip[HEADER_SIZE + 10] ^= 0xFF
    expect_format_error(bytes(payload_flip), r"corrupted \(checksum mismatch\)")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_damaged_payload_with_a_valid_checksum_never_escapes(data):
    """Mutations past the checksum must still end in ExecutableFormatError (or a valid load)."""
    original = dumps(sample_executable())
    buf = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(HEADER_SIZE, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(HEADER_SIZE, len(buf)))
        buf = buf[:cut]
    try:
        loads(reseal(bytes(buf)), "f.rvmx", build_kernels=False)
    except ExecutableFormatError as e:
        assert str(e).startswith("f.rvmx: ")


@pytest.mark.parametrize("code,message", [
    ([Move(0, 9), Ret(0)], r"function @main, pc 0: register \$9 outside the register file"),
    ([If(0, 0, 0, 1), Ret(0)], "function @main, pc 0: if offset 0"),
    ([Goto(0), Ret(0)], "function @main, pc 0: goto offset 0"),
    ([Goto(7), Ret(0)], "function @main, pc 0: jump target 7 outside the function"),
    ([LoadConsti(1, 1), If(0, 1, 1, -3), Ret(0)], "pc 1: jump target -2 outside"),
    ([Move(0, 1)], "control falls off the end"),
    ([LoadConst(5, 0), Ret(0)], "constant index 5 out of range"),
    ([Invoke(4, [], 0), Ret(0)], "function index 4 out of range"),
    ([InvokePacked(2, 1, 1, [0]), Ret(0)], "kernel index 2 out of range"),
])
def test_invalid_programs_are_rejected_on_load(code, message, monkeypatch):
    exe = Executable([VMFunction("main", ["x"], 2, code)], [], [])
    data = unchecked_dumps(exe, monkeypatch)
    err = expect_format_error(data, message)
    assert "invalid executable" in err.reason


def _patch_first_instruction(data: bytes, opcode: int | None = None, fields=None) -> bytes:
    """Rewrite the first instruction of the sample's @main (a LoadConst, 3 fields)."""
    payload = bytearray(data[HEADER_SIZE:])
    marker = struct.pack("<IIqqq", 11, 3, 0, 0, 2)   # load_const $2 Const[0] 0
    at = payload.index(marker)
    if opcode is not None:
        payload[at:at + 4] = struct.pack("<I", opcode)
    if fields is not None:
        payload[at + 8:at + 32] = struct.pack("<3q", *fields)
    return reseal(data[:HEADER_SIZE] + bytes(payload))


def test_unknown_opcode_and_bad_fields_are_rejected():
    data = dumps(sample_executable())
    expect_format_error(_patch_first_instruction(data, opcode=99),
                        "function @main, pc 0: unknown opcode 99")
    expect_format_error(_patch_first_instruction(data, opcode=0), "Move takes 2 fields, got 3")
    expect_format_error(_patch_first_instruction(data, fields=(0, 0, -2)),
                        "function @main, pc 0: register must not be negative")
    # Still decodable, but the register is past the file's 10 slots.
    expect_format_error(_patch_first_instruction(data, fields=(0, 0, 10)), r"register \$10 outside")


def test_huge_counts_are_refused_before_allocating(monkeypatch):
    exe = Executable([VMFunction("main", [], 1, [Fatal()])], [], [])
    data = dumps(exe)
    payload = bytearray(data[HEADER_SIZE:])
    at = payload.index(b"GLOB") + 4
    payload[at:at + 4] = struct.pack("<I", 0xFFFFFFFF)
    expect_format_error(reseal(data[:HEADER_SIZE] + bytes(payload)), "declares 4294967295 globals")


def test_bad_constant_data_is_rejected(monkeypatch):
    exe = Executable([VMFunction("main", [], 1, [LoadConst(0, 0), Ret(0)])],
                     [np.array([True, False])], [])
    data = dumps(exe)
    payload = bytearray(data[HEADER_SIZE:])
    at = payload.index(b"bool") + 4 + 4 + 8 + 8   # dtype, ndim, dim, byte count
    payload[at] = 7
    expect_format_error(reseal(data[:HEADER_SIZE] + bytes(payload)), "bytes other than 0 and 1")
    payload = bytearray(data[HEADER_SIZE:])
    payload[payload.index(b"bool"):payload.index(b"bool") + 4] = b"obj_"
    expect_format_error(reseal(data[:HEADER_SIZE] + bytes(payload)), "unsupported dtype 'obj_'")


def test_constructor_names_must_name_alloc_data(monkeypatch):
    exe = Executable([VMFunction("main", [], 1, [AllocADT(0, [], 0), Ret(0)])], [], [],
                     adt_constructor={(0, 0): "Nil"})
    assert loads(dumps(exe), build_kernels=False).adt_constructor == {(0, 0): "Nil"}
    exe.adt_constructor = {(0, 1): "Nil"}
    expect_format_error(unchecked_dumps(exe, monkeypatch),
                        "constructor name 'Nil' for function 0, pc 1 does not name an alloc_data")


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(ExecutableFormatError, match="nope.rvmx: cannot read"):
        load(tmp_path / "nope.rvmx")


# ---------------------------------------------------------------- kernel rebuilding

def test_kernels_are_rebuilt_on_load(monkeypatch):
    built = []

    def build_kernel(kernel):
        built.append(kernel.name)
        return lambda *args: ("ran", kernel.name)

    fake = types.ModuleType("rvmdbg.vm.kernels")
    fake.build_kernel = build_kernel
    monkeypatch.setitem(sys.modules, "rvmdbg.vm.kernels", fake)
    exe = loads(dumps(sample_executable()))
    assert built == ["fused_add", "ref_read"]
    assert exe.kernels[0].impl() == ("ran", "fused_add")


def test_kernel_rebuild_failures_are_format_errors(monkeypatch):
    def build_kernel(kernel):
        raise SyntaxError("unexpected token")

    fake = types.ModuleType("rvmdbg.vm.kernels")
    fake.build_kernel = build_kernel
    monkeypatch.setitem(sys.modules, "rvmdbg.vm.kernels", fake)
    with pytest.raises(ExecutableFormatError, match=r"kernel 0 \(fused_add\) cannot be rebuilt: "
                                                    r"unexpected token"):
        loads(dumps(sample_executable()), "p.rvmx")


def test_missing_kernel_builder_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "rvmdbg.vm.kernels", None)  # makes the import fail
    with pytest.raises(ExecutableFormatError, match="rvmdbg.vm.kernels is unavailable"):
        loads(dumps(sample_executable()), "p.rvmx")
    # Without kernels nothing needs rebuilding.
    plain = Executable([VMFunction("main", [], 1, [Fatal()])], [], [])
    assert loads(dumps(plain)).functions == plain.functions


# ---------------------------------------------------------------- hostile files (issue 16)

def test_format_version_1_is_refused_with_the_reason():
    data = bytearray(dumps(sample_executable()))
    struct.pack_into("<I", data, len(MAGIC), 1)
    expect_format_error(bytes(data), "format version 1, which named source files by path")


@pytest.mark.parametrize("span,message", [
    (Span(2, 4294967295, 2, 4294967295, "prog.relay"), "start column 4294967295 is outside line 2"),
    (Span(99, 1, 99, 2, "prog.relay"), "start line 99 is outside prog.relay"),
    (Span(2, 3, 2, 1, "prog.relay"), r"ends \(2:1\) before it starts \(2:3\)"),
    (Span(1, 1, 3, 99, "prelude.relay"), "end column 99 is outside line 3 of prelude.relay"),
])
def test_spans_are_checked_against_the_carried_text(span, message, monkeypatch):
    exe = sample_executable()
    exe.source_map[(0, 0)] = span
    expect_format_error(unchecked_dumps(exe, monkeypatch), message)


def test_names_with_control_characters_are_refused_and_shown_escaped(monkeypatch):
    exe = sample_executable()
    exe.kernels[0].name = "fused_\x1b]0;pwned\x07add"
    err = expect_format_error(unchecked_dumps(exe, monkeypatch), "holds control characters")
    assert "\x1b" not in str(err) and "\\x1b" in str(err)


def test_spans_into_files_without_text_are_not_saved():
    exe = sample_executable()
    exe.source_map[(0, 2)] = Span(1, 1, 1, 2, "/etc/passwd")
    back = loads(dumps(exe), build_kernels=False)
    assert (0, 2) not in back.source_map and "/etc/passwd" not in back.sources
    assert back.source_map[(1, 7)].file == "prelude.relay"


def test_a_saved_executable_never_opens_the_paths_it_names(tmp_path, monkeypatch):
    """The quoted line of a run-time error comes from the text carried in the file, even when
    the span names a real file on disk (a saved file could name any path)."""
    secret = tmp_path / "secret.relay"
    secret.write_text("SECRET LINE ONE\nSECRET LINE TWO\n")
    exe = sample_executable()
    exe.functions[0].instructions[0] = Fatal()
    carried = "carried text line one\ncarried text line two\n"
    exe.sources = {str(secret): carried}
    exe.source_map = {(0, 0): Span(2, 1, 2, 8, str(secret))}
    exe.source_text = exe.source_name = None
    path = tmp_path / "x.rvmx"
    save(exe, path)
    opened = []
    real_open = open

    def spy(file, *a, **kw):
        opened.append(str(file))
        return real_open(file, *a, **kw)
    monkeypatch.setattr("builtins.open", spy)
    from rvmdbg.vm.machine import VirtualMachine, VMError
    loaded = load(path)
    with pytest.raises(VMError) as info:
        VirtualMachine(loaded).invoke("main", [np.array(True), np.zeros((2, 3), "float32")])
    text = info.value.format()
    assert "carried text line two" in text and "SECRET" not in text
    assert str(secret) not in opened
