"""A program kind's name table in the debugger: `break NAME` stops at the kernel of the named
source line, `print NAME` reads the register that line's kernel wrote (or says why it has no
value), stop lines name the line. The table is plain names and lines: no ONNX here."""
from __future__ import annotations

import numpy as np

from rvmdbg.debug import DebugSession
from rvmdbg.debug.commands import CommandInterpreter
from rvmdbg.debug.names import Fixed, NameTable, Param, Produced
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module

TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = exp(%x);
  %1 = cumsum(%0, axis=1);
  %2 = add(%1, %x);
  multiply(%2, 2f)
}
"""
# lines: 3 exp, 4 cumsum, 5 add, 6 multiply (exp and the opaque cumsum are each their own
# kernel; add and multiply fuse into one, which carries the multiply's line)
NAMES = NameTable(places={"Exp_0": 3, "T_1": 4, "Add_2": 5, "Mul_3": 6},
                  values={"x": Param(0), "e": Produced(3), "t": Produced(4),
                          "s": Produced(5), "y": Produced(6),
                          "two": Fixed(np.float32(2.0))})


def session(names=NAMES) -> tuple[DebugSession, CommandInterpreter]:
    mod = check_module(load_module(TEXT, "prog.relay"))
    exe = compile_module(mod)
    x = np.arange(4, dtype="float32").reshape(2, 2)
    s = DebugSession(exe, [x], names=names)
    return s, CommandInterpreter(s)


def test_break_on_a_name_stops_at_that_lines_kernel_and_the_stop_line_names_it():
    s, ci = session()
    out = ci.execute("break T_1")
    assert "breakpoint 1 at T_1 (prog.relay:4)" in out and "(1 location)" in out
    stop = ci.execute("continue")
    assert "[T_1]" in stop and "invoke_packed" in stop and "(breakpoint 1)" in stop


def test_print_a_name_reads_the_register_its_kernel_wrote():
    s, ci = session()
    ci.execute("break T_1")
    ci.execute("continue")
    x = np.arange(4, dtype="float32").reshape(2, 2)
    e = ci.execute("print e")
    assert e.startswith("e ($") and "2.718282" in e and "20.085537" in e
    assert "t ($8) has no value here: not computed yet" in ci.execute("print t")
    ci.execute("next")
    want = np.cumsum(np.exp(x), axis=1)[1, 1]   # e^2 + e^3 = 27.4746
    out = ci.execute("print t[1, 1]")
    assert out.startswith("t ($") and "27.47" in out, (out, want)
    assert "[[0., 1.]" in ci.execute("print x") or "0., 1." in ci.execute("print x")
    assert ci.execute("print two").startswith("two = 2")


def test_a_value_fused_into_a_later_kernel_says_so_and_registers_still_print():
    s, ci = session()
    ci.execute("break Mul_3")
    ci.execute("continue")
    assert "fused into the kernel of a later line" in ci.execute("print s")
    assert ci.execute("print $0").startswith("$0 = ")


def test_names_are_only_what_the_table_holds():
    s, ci = session()
    assert "no function @Nope" in ci.execute("break Nope")
    assert "expected a register" in ci.execute("print nope")
    s2, ci2 = session(names=None)
    assert "no function @T_1" in ci2.execute("break T_1")
    assert "[" not in ci2.execute("step").split(":")[0].replace("[step", "")
