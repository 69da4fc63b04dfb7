"""The toy MiniVM: the six-opcode register machine VM tutorials start from, as a real
machine the debugger runs through the same protocol as the Relay VM.

- `isa.py`: the instructions (LD, ADD, SUB, CH, JM, HL) with text, read and write sets and
  jump targets, in the shape of `rvmdbg.vm.bytecode`;
- `parser.py`: `parse_mvm(text, filename)` reads the `.mvm` text format into a `MiniProgram`
  (`load_mvm(path)` reads a file); errors are located (`MvmSyntaxError`, FILE:LINE:COL);
- `program.py`: `MiniProgram`, an executable of one function `main` (what the listing, the
  breakpoints and the source links read);
- `machine.py`: `MiniMachine`, the fetch-decode-execute loop, which implements the
  debugger's `Machine` protocol (`rvmdbg.debug.machine`) and stops a program that can never
  halt as soon as a state (pc and registers) repeats.
"""
from rvmdbg.minivm.isa import ADD, CH, HL, JM, LD, OPCODES, SUB
from rvmdbg.minivm.machine import MiniMachine, run_program
from rvmdbg.minivm.parser import MvmSyntaxError, load_mvm, parse_mvm
from rvmdbg.minivm.program import MiniProgram

__all__ = ["LD", "ADD", "SUB", "CH", "JM", "HL", "OPCODES", "MiniMachine", "MiniProgram",
           "MvmSyntaxError", "parse_mvm", "load_mvm", "run_program"]
