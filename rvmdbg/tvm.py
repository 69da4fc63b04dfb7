"""Debug a Relax VM executable from the user's own Python script, as `pudb.set_trace()` does
for Python:

    import rvmdbg.tvm
    ex = relax.build(mod, target="llvm")
    rvmdbg.tvm.debug(ex, x, w, mod=mod)      # the debugger screen, on this executable
    s = rvmdbg.tvm.session(ex, x, w)         # a DebugSession, for scripting
    s.breakpoints.add("matmul"); s.cont(); print(s.frame().registers)

`ex` is what `tvm.relax.build` returned (`exec_mode="bytecode"`, the default); the inputs are
NumPy arrays, TVM tensors or numbers. `mod` (optional): the IRModule it was built from, whose
TVMScript text (`mod.script()`) the source pane shows and whose parameter dtypes the inputs
take. The session is the one batch mode and the screen use (`rvmdbg.debug.DebugSession`), on
the same Relax machine as `rvmdbg debug prog.relax.py`. Importing this module imports neither
tvm nor Textual; `debug()` imports Textual, `session()` does not.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from rvmdbg.i18n import _


class NotAnExecutable(TypeError):
    """What was passed is not a Relax VM executable built by `tvm.relax.build`."""


def executable(ex, mod=None, name: str | None = None):
    """rvmdbg's `RelaxExecutable` of TVM's `VMExecutable` `ex` (`mod`: its IRModule)."""
    from rvmdbg.relax import require_tvm
    from rvmdbg.relax.executable import RelaxExecutable, from_tvm
    if isinstance(ex, RelaxExecutable):
        return ex
    require_tvm()
    if not (hasattr(ex, "as_text") and hasattr(getattr(ex, "mod", None), "write_to_file")):
        raise NotAnExecutable(_("rvmdbg.tvm needs the executable tvm.relax.build returned "
                                "(exec_mode=\"bytecode\"), not a {what}").format(
                                    what=type(ex).__name__))
    text = None
    if mod is not None:
        text = mod.script()
    exe = from_tvm(ex, source_text=text, source_name=name if text is not None else None)
    if mod is not None:
        from rvmdbg.program.relax import _param_types
        exe.param_types = _param_types(mod)
        exe.tvm_mod = mod
    return exe


def host_inputs(inputs) -> list:
    """The inputs as host values the machine starts from: TVM tensors as NumPy arrays (the
    session keeps pristine copies of them for restarts), numbers as 0-d arrays."""
    out = []
    for v in inputs:
        if hasattr(v, "numpy") and callable(v.numpy):
            out.append(v.numpy())
        elif isinstance(v, (bool, int, float, np.generic)):
            out.append(np.asarray(v))
        elif isinstance(v, (list, tuple)):
            out.append(tuple(host_inputs(v)))
        else:
            out.append(v)
    return out


def session(ex, *inputs, mod=None, entry: str = "main", limits=None, **options):
    """A `DebugSession` on `ex` started at `@entry` on `inputs`, stopped before its first
    instruction: `step()`, `cont()`, `breakpoints.add("matmul")`, `frame().registers`, ...
    (`rvmdbg.debug.CommandInterpreter(session).execute("info registers")` runs the batch
    commands on it)."""
    from rvmdbg.debug import DebugSession
    exe = executable(ex, mod)
    return DebugSession(exe, host_inputs(inputs), entry=entry, limits=limits, **options)


def _caller_file(depth: int = 2) -> str:
    try:
        name = sys._getframe(depth).f_code.co_filename
    except ValueError:
        return "<python>"
    return name if os.path.exists(name) else "<python>"


def debug(ex, *inputs, mod=None, entry: str = "main", limits=None, config_dir=None,
          ascii_only: bool | None = None, runner=None, program_path: str | None = None):
    """Open the debugger screen on `ex` at `@entry` with `inputs`; returns when the user quits
    (the screen's exit code). Breakpoints are kept per calling script, as for a program file.
    `runner(app)` (tests): what runs the screen's app, instead of `app.run()`; its value is
    returned."""
    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.program import program_from_executable
    from rvmdbg.tui.terminal import wants_ascii
    path = program_path or _caller_file()
    exe = executable(ex, mod, name=os.path.basename(path))
    values = host_inputs(inputs)
    program = program_from_executable(exe, name=path, entry=entry)
    program.name = os.path.basename(path)

    class ScriptApp(DebuggerApp):
        """The screen on values the script passed (no argument texts to parse)."""

        # Textual reads a relative CSS_PATH beside the class's own file: name the screen's
        CSS_PATH = os.path.join(os.path.dirname(sys.modules[DebuggerApp.__module__].__file__),
                                DebuggerApp.CSS_PATH)

        def begin(self) -> None:
            self.start(values)

    if ascii_only is None:
        ascii_only = wants_ascii(os.environ)
    app = ScriptApp(program, [], ascii_only=ascii_only, limits=limits, config_dir=config_dir)
    if runner is not None:
        return runner(app)
    code = app.run()
    return code if isinstance(code, int) else (app.return_code or 0)


__all__ = ["debug", "session", "executable", "host_inputs", "NotAnExecutable"]
