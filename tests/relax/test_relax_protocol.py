"""The debugger protocol's features on the Relax VM, one test each: breakpoints by the name a
Call calls (`break matmul`, `break vm.builtin.alloc_tensor`, `kernel:TEXT`), watchpoints on a
register a VM function's return fills, last write, read/write sets from `in:` and `dst:`,
`swap?` (with the in-place writes of kernels), `goto`, and next/finish with their reverse."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tvm")

from rvmdbg.debug import CommandInterpreter, DebugSession  # noqa: E402
from rvmdbg.debug.breakpoints import BreakpointError  # noqa: E402
from rvmdbg.relax.machine import to_host  # noqa: E402

from tests.relax import programs  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("relax")
    from rvmdbg.program.relax import build
    out = {}
    for name in ("fact", "matmul_relu", "dataflow"):
        path = d / f"{name}.relax.py"
        path.write_text(programs.source(name))
        out[name] = build(str(path))
    return out


def session(built, name):
    return DebugSession(built[name], programs.inputs(name))


def state(s):
    """Frames, pcs and register contents (tensors as NumPy) of a session."""
    out = []
    for f in s.vm.frames:
        regs = [None if r is None else repr(r) if type(r).__name__ in ("Storage", "Closure")
                else to_host(r) for r in f.registers]
        out.append((f.func_index, f.pc, [r.tolist() if isinstance(r, np.ndarray) else r
                                         for r in regs]))
    return out


def test_break_on_a_called_name(built):
    s = session(built, "matmul_relu")
    bp = s.breakpoints.add("matmul")
    assert bp.kind == "kernel" and bp.locations == frozenset([(0, 6)])
    ev = s.cont()
    assert ev.reason == "breakpoint" and ev.pc == 6 and ev.text.startswith("call  matmul ")
    alloc = s.breakpoints.add("vm.builtin.alloc_tensor")
    assert alloc.locations == frozenset([(0, 5), (0, 8), (0, 12)])
    assert [s.cont().pc for _ in range(2)] == [8, 12]
    assert s.breakpoints.add("kernel:relu").locations == frozenset([(0, 10)])
    with pytest.raises(BreakpointError, match="no kernel name contains"):
        s.breakpoints.add("kernel:conv")
    # a VM function's name is still its entry, as on the Relay VM
    f = session(built, "fact")
    assert f.breakpoints.add("fact").kind == "function"
    f.breakpoints.clear()
    text = CommandInterpreter(f).execute("break multiply")
    assert "multiply" in text and f.cont().text.startswith("call  multiply ")


def test_watchpoint_on_a_register_a_return_fills(built):
    s = session(built, "fact")
    s.breakpoints.add("@fact:11")
    s.cont()
    wp = s.watch(6)   # call fact in: %5 dst: %6: written when the callee returns
    s.breakpoints.clear()
    ev = s.cont()
    assert ev.reason == "watchpoint" and ev.number == wp.id
    # the outermost @fact's %6: fact(5), when the whole recursion below has returned
    assert ev.func_name == "fact" and ev.pc == 12 and len(s.vm.frames) == 2
    assert int(to_host(s.frame().registers[6])) == 120 and "-> 120i64" in ev.message
    # as on the Relay VM (tests/debug/test_dbg_traps.py): going back, no earlier write
    assert s.rcontinue().reason == "start of history"


def test_last_write_and_read_write_sets(built):
    s = session(built, "matmul_relu")
    s.breakpoints.add("relu")
    s.cont()
    deps = s.deps()
    assert [d.register for d in deps.reads] == [3, 5] and list(deps.writes) == []
    writer = {d.register: (d.write_pc, d.write_text) for d in deps.reads}
    assert writer[3][0] == 5 and "alloc_tensor" in writer[3][1]
    assert writer[5][0] == 8
    ev = s.last_write(5)
    assert ev.pc == 8 and ev.text.startswith("call  vm.builtin.alloc_tensor")
    ins = s.current_instruction()
    assert ins.reads() == (4, 2, 0) or ins.writes() == (5,)


def test_swap_verdicts(built):
    s = session(built, "matmul_relu")
    it = CommandInterpreter(s)
    assert "may swap" in it.execute("swap? 6 7")              # matmul, alloc_storage %4
    no = it.execute("swap? 7 8")                                  # alloc_storage %4 -> alloc_tensor on %4
    assert "may not swap" in no and "read after write of %4" in no
    war = it.execute("swap? 10 11")                               # relu reads %3, null_value %3
    assert "write after read of %3" in war
    # matmul writes the tensor in %3 in place; relu reads it: nothing in the registers says so
    from rvmdbg.debug.deps import swap_verdict
    verdict = swap_verdict(built["matmul_relu"].functions[0], 6, 10)
    assert any(r.kind == "RAW" and r.register == 3 and r.detail == "inplace"
               for r in verdict.reasons)
    f = CommandInterpreter(session(built, "fact"))
    assert "is a call" in f.execute("swap? @fact:10 11")


def test_goto_a_step_and_back(built):
    s = session(built, "fact")
    s.goto(40)
    at40 = state(s)
    s.goto(70)
    s.goto(12)
    s.goto(40)
    assert s.step_count == 40 and state(s) == at40


def test_next_finish_and_their_reverse(built):
    s = session(built, "fact")
    s.step()
    assert s.vm.location == (1, 1)                  # main: call fact
    ev = s.next()
    assert ev.func_name == "main" and ev.pc == 2 and len(s.vm.frames) == 1
    assert int(to_host(s.frame().registers[1])) == 720
    back = s.rnext()
    assert back.func_name == "main" and back.pc == 1 and s.step_count == 1
    s.breakpoints.add("multiply")
    s.cont()
    depth = len(s.vm.frames)
    out = s.finish()
    assert len(s.vm.frames) == depth - 1 and out.func_name == "fact" and out.pc == 12
    again = s.rfinish()
    assert len(s.vm.frames) == depth and again.func_name == "fact"


def test_batch_mode_on_a_relax_executable(capsys, tmp_path):
    """`rvmdbg debug X.relax.py --batch FILE`: break by a called name, print a slice of a TVM
    tensor, swap?, next over a VM function call, finish, reverse-next, to the end."""
    from rvmdbg import cli
    path = tmp_path / "fact.relax.py"
    path.write_text(programs.source("fact"))
    script = tmp_path / "cmds"
    script.write_text("break vm.builtin.copy\ncontinue\nprint $8\nswap? 16 17\n"
                      "finish\nrnext\ndelete 1\nbreak @main:1\nrun\ncontinue\nnext\ncontinue\n")
    code = cli.main(["debug", str(path), "--batch", str(script), "3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in out + err
    assert "breakpoint 1 at vm.builtin.copy (2 locations)" in out
    assert "@fact pc=20: call  vm.builtin.copy  in: c[8]" in out
    assert "%8 is empty" in out    # the base case's frame: its multiply never ran
    assert "@fact pc 16 and pc 17: may not swap" in out
    assert "write after read of %6: pc 16 reads %6, pc 17 overwrites it" in out
    assert "[step 35] @fact pc=12: call  vm.builtin.null_value" in out      # finish
    assert out.count("(breakpoint 1)") == 2                                 # rnext stops there
    assert "[step 53] @main pc=2: ret   %1" in out                          # next over @fact
    assert "[step 54] @main: returned 6i64    (finished)" in out


def test_registers_by_tvms_name_in_commands(built):
    """`print %3[0, :2]`, `watch %5`, `last-write %5`: the Relax VM's registers by the name TVM
    (and the screen) gives them, as well as `$3`."""
    s = session(built, "matmul_relu")
    it = CommandInterpreter(s)
    s.breakpoints.add("relu")
    s.cont()
    assert it.execute("print %3[0, :2]") == it.execute("print $3[0, :2]")
    assert it.execute("print %3[0, :2]").startswith("%3[0, :2] = [")
    assert "pc=8" in it.execute("last-write %5")
    # on the Relay VM `%1` stays a name of the source, not a register
    assert "expected a register like $3" in CommandInterpreter(
        DebugSession(*_relay_fib())).execute("print %1")


def _relay_fib():
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    src = ('#[version = "0.0.5"]\ndef @main(%x: int32) -> int32 { add(%x, 1) }\n')
    return compile_module(check_module(load_module(src, "t.relay"))), [np.array(1, "int32")]


def test_break_completes_a_called_name(built):
    from rvmdbg.debug.completion import complete
    it = CommandInterpreter(session(built, "matmul_relu"))
    assert complete(it, "break mat")[1] == ["matmul"]
    assert complete(it, "break vm.builtin.alloc_t")[1] == ["vm.builtin.alloc_tensor"]
    assert complete(it, "break P")[1] == []       # no PackedFunc[N] on the Relax VM
