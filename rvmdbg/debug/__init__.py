"""The debugger protocol shared by the screen, batch mode and future adapters.

`DebugSession` drives one program on the VM with history (step, next, finish, continue and
their reverse forms, goto), breakpoints and watchpoints, and answers questions about the
current state; `CommandInterpreter` runs the gdb-like command language on a session. Nothing
here imports Textual.
"""
from importlib import import_module

# name -> the module that defines it, imported on first use: a program's screen paints its first
# frame before it needs the session (and the command language after that), and a process that
# only reads the config directory (rvmdbg.debug.config) loads none of them
_DEFINED_IN = {
    **dict.fromkeys(["Breakpoint", "BreakpointError", "BreakpointTable", "Condition",
                     "ConditionError", "Watchpoint"], "breakpoints"),
    **dict.fromkeys(["CommandInterpreter", "run_batch"], "commands"),
    **dict.fromkeys(["DepRead", "Deps"], "deps"),
    **dict.fromkeys(["HeapField", "HeapNode"], "heap"),
    **dict.fromkeys(["DebugError", "DebugSession", "FrameView", "StopEvent"], "session"),
}


def __getattr__(name: str):
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # looked up once
    return value


__all__ = ["DebugSession", "StopEvent", "FrameView", "DebugError", "Breakpoint",
           "BreakpointTable", "BreakpointError", "Watchpoint", "Condition", "ConditionError",
           "DepRead", "Deps", "HeapNode", "HeapField", "CommandInterpreter", "run_batch"]
