"""The debugger protocol shared by the screen, batch mode and future adapters.

`DebugSession` drives one program on the VM with history (step, next, finish, continue and
their reverse forms, goto), breakpoints and watchpoints, and answers questions about the
current state; `CommandInterpreter` runs the gdb-like command language on a session. Nothing
here imports Textual.
"""
from rvmdbg.debug.breakpoints import (Breakpoint, BreakpointError, BreakpointTable, Condition,
                                      ConditionError, Watchpoint)
from rvmdbg.debug.commands import CommandInterpreter, run_batch
from rvmdbg.debug.deps import DepRead, Deps
from rvmdbg.debug.heap import HeapField, HeapNode
from rvmdbg.debug.session import DebugError, DebugSession, FrameView, StopEvent

__all__ = ["DebugSession", "StopEvent", "FrameView", "DebugError", "Breakpoint",
           "BreakpointTable", "BreakpointError", "Watchpoint", "Condition", "ConditionError",
           "DepRead", "Deps", "HeapNode", "HeapField", "CommandInterpreter", "run_batch"]
