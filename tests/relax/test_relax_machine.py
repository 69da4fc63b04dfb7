"""The Relax VM behind the debugger protocol: each TVMScript program stepped to the end gives
TVM's `vm["main"]` result bit for bit, the check mode's call sequence is TVM's, the listing
is TVM's `as_text()`, and reverse stepping restores the state (in-place kernel writes too)."""
from __future__ import annotations

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

from rvmdbg.relax.check import CheckFailed, check, norm, stepper_trace, tvm_trace  # noqa: E402
from rvmdbg.relax.executable import (  # noqa: E402
    RCall, RelaxFormatError, RGoto, RIf, RRet, parse_instruction, read_serialized,
)
from rvmdbg.relax.machine import to_host  # noqa: E402

from tests.relax import programs  # noqa: E402

NAMES = sorted(programs.PROGRAMS)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return programs.built(tmp_path_factory.mktemp("relax"))


def tvm_result(exe, name):
    from tvm import relax
    vm = relax.VirtualMachine(exe.tvm_exe, tvm.cpu())
    return to_host(vm["main"](*[tvm.runtime.tensor(a) for a in programs.inputs(name)]))


def test_at_least_thirty_programs():
    assert len(NAMES) >= 30


@pytest.mark.parametrize("name", NAMES)
def test_stepped_to_the_end_matches_tvm_bit_for_bit(built, name):
    exe = built[name]
    m = exe.machine()
    m.start("main", programs.inputs(name))
    infos = []
    while not m.halted:
        infos.append(m.step())
    assert m.steps == len(infos) and infos[-1].halted
    assert norm(to_host(m.result)) == norm(tvm_result(exe, name))


@pytest.mark.parametrize("name", NAMES)
def test_check_mode_call_sequence_is_tvms(built, name):
    exe = built[name]
    result, steps = check(exe, "main", programs.inputs(name))
    ours, _, _ = stepper_trace(exe, "main", programs.inputs(name))
    theirs, _ = tvm_trace(exe.tvm_exe, "main", programs.inputs(name))
    assert [(n, b) for n, b, _a, _r in ours] == [(n, b) for n, b, _a, _r in theirs]
    assert len(ours) >= 2 and steps > len(ours) // 2


@pytest.mark.parametrize("name", NAMES)
def test_listing_is_tvms_as_text(built, name):
    exe = built[name]
    assert exe.listing() == exe.tvm_exe.as_text()


def test_check_mode_catches_a_difference(built):
    exe = built["fact"]
    import copy
    bad = copy.copy(exe)
    bad.constants = list(exe.constants)
    ones = [i for i, c in enumerate(bad.constants)
            if isinstance(c, np.ndarray) and c.shape == () and c == 1]
    assert ones
    bad.constants[ones[0]] = np.array(2, dtype=bad.constants[ones[0]].dtype)
    with pytest.raises(CheckFailed):
        check(bad, "main", programs.inputs("fact"))


def test_the_programs_cover_the_instructions_and_builtins(built):
    seen = set()
    for exe in built.values():
        for fn in exe.functions:
            for ins in fn.instructions:
                seen.add(type(ins).__name__)
                if isinstance(ins, RCall):
                    seen.add(ins.func)
    for needed in ("RCall", "RRet", "RGoto", "RIf", "vm.builtin.alloc_storage",
                   "vm.builtin.alloc_tensor", "vm.builtin.make_closure",
                   "vm.builtin.invoke_closure", "vm.builtin.alloc_shape_heap",
                   "vm.builtin.match_shape", "addone", "scale"):
        assert needed in seen, needed


def _state(session):
    vm = session.vm
    return (vm.steps, vm.location, vm.live_bytes, vm.orphan_bytes,
            [(f.func_index, f.pc, f.serial, f.owned_bytes,
                                      tuple(norm(to_host(v)) for v in f.registers))
                                     for f in vm.frames])


@pytest.mark.parametrize("name", NAMES)
def test_reverse_stepping_restores_the_state(built, name):
    from rvmdbg.debug import DebugSession
    session = DebugSession(built[name], programs.inputs(name), interval=4)
    total = check(built[name], "main", programs.inputs(name))[1]
    for k in sorted({1, min(5, total - 2), total // 2, total - 2}):
        session.goto(k)
        before = _state(session)
        session.step(7 if k + 7 < total else 1)
        after = session.vm.steps
        session.rstep(after - k)
        assert _state(session) == before
    session.goto(0)
    session.cont()
    assert norm(to_host(session.vm.result)) == norm(tvm_result(built[name], name))


def test_reverse_over_a_kernel_undoes_its_in_place_write(built):
    from rvmdbg.debug import DebugSession
    exe = built["dataflow"]
    session = DebugSession(exe, programs.inputs("dataflow"))
    fn = exe.functions[0]
    at = next(pc for pc, ins in enumerate(fn.instructions) if isinstance(ins, RCall) and ins.func == "add")
    session.goto(at)
    out = fn.instructions[at].args[-1].value
    before = session.vm.frames[0].registers[out].numpy().copy()
    session.step(1)
    written = session.vm.frames[0].registers[out].numpy().copy()
    assert not np.array_equal(before, written)
    session.rstep(1)
    assert np.array_equal(session.vm.frames[0].registers[out].numpy(), before)
    session.step(1)
    assert np.array_equal(session.vm.frames[0].registers[out].numpy(), written)


def test_read_and_write_sets_from_operands():
    call = parse_instruction("call  add              in: %0, c[1], i2, %3 dst: %void")
    assert call.reads() == (0, 3) and call.writes() == ()
    call = parse_instruction("call  vm.builtin.copy  in: %8           dst: %9")
    assert call.reads() == (8,) and call.writes() == (9,)
    assert isinstance(parse_instruction("If    %3, 14"), RIf)
    assert parse_instruction("If    %3, 14").jump_targets(6) == (20,)
    assert parse_instruction("goto  -4").jump_targets(10) == (6,)
    assert isinstance(parse_instruction("ret   %9"), RRet) and parse_instruction("ret   %9").reads() == (9,)
    assert isinstance(parse_instruction("goto  2"), RGoto)
    with pytest.raises(RelaxFormatError):
        parse_instruction("jump somewhere")


def test_serialized_reader_refuses_what_is_not_an_executable():
    with pytest.raises(RelaxFormatError, match="magic"):
        read_serialized(b"\0" * 64)
    with pytest.raises(RelaxFormatError, match="truncated"):
        from rvmdbg.relax.executable import MAGIC
        import struct
        read_serialized(struct.pack("<Q", MAGIC) + b"\x05")


@pytest.mark.parametrize("name", ["fact", "call_tir", "closure", "dataflow"])
def test_the_protocol_driver_debugs_it(built, name):
    """The driver that debugs the Relay VM and the MiniVM (step to the end, back one step at
    a time through the same states, goto, breakpoint, deps, watchpoint, reverse continue)."""
    import sys
    from pathlib import Path
    from rvmdbg.debug import DebugSession
    from rvmdbg.debug.machine import Machine, machine_for
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debug"))
    from test_dbg_machine_protocol import drive
    assert isinstance(machine_for(built[name]), Machine)
    out = drive(DebugSession(built[name], programs.inputs(name), interval=3))
    assert out["steps"] > 3
    assert norm(to_host(out["result"])) == norm(tvm_result(built[name], name))


def test_a_failing_builtin_is_a_located_vm_error(built):
    from rvmdbg.program import vm_error_text
    from rvmdbg.vm.machine import VMError
    exe = built["symbolic"]
    m = exe.machine()
    m.start("main", [np.ones((3, 5), "float32"), np.ones((4, 2), "float32")])
    with pytest.raises(VMError) as info:
        m.run()
    text = vm_error_text(info.value, exe)
    assert "vm.builtin.match_shape failed" in text and "5 vs. 4" in text
    assert "at @main pc=" in text and m.location == (info.value.func_index, info.value.pc)


def test_live_bytes_count_the_storages_and_obey_max_bytes(built):
    from rvmdbg.limits import Limits
    from rvmdbg.vm.machine import VMError
    exe = built["dataflow"]
    m = exe.machine()
    m.start("main", programs.inputs("dataflow"))
    peak = 0
    while not m.halted:
        ins = m.current_instruction()
        before = m.live_bytes
        m.step()
        if isinstance(ins, RCall) and ins.func == "vm.builtin.alloc_storage":
            assert m.live_bytes > before
        peak = max(peak, m.live_bytes + m.orphan_bytes)
    assert peak >= 2 * 3 * 4                       # at least one (2, 3) float32 tensor
    assert m.orphan_bytes >= 2 * 3 * 4             # the result outlives @main's frame
    small = exe.machine(Limits(max_bytes=peak - 1))
    small.start("main", programs.inputs("dataflow"))
    with pytest.raises(VMError) as info:
        small.run()
    assert info.value.limit == "max_bytes" and "alloc_storage of" in str(info.value)
    big = exe.machine(Limits(max_bytes=peak))
    big.start("main", programs.inputs("dataflow"))
    big.run()


def test_a_callee_frees_its_storages_but_its_result(built):
    exe = built["fact"]
    m = exe.machine()
    m.start("main", programs.inputs("fact"))
    depth_bytes = {}
    while not m.halted:
        m.step()
        depth_bytes.setdefault(len(m.frames), []).append(m.live_bytes)
    assert max(depth_bytes[1]) < max(max(v) for v in depth_bytes.values())
