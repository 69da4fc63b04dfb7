"""The program the debugger screen opens: any kind the front door (`rvmdbg.program`) reads, a
`.relay` file compiled here, a saved `.rvmx`, or a MiniVM `.mvm` program (run by its own
machine through the same debugger protocol).

`load_program(path, entry)` does the front end before the screen starts, so a parse or type
error prints like every other command's and never opens the screen. It keeps what the panes
need beside the executable: the typed module (types on demand), the source text, the
constructor-to-type table and the `// args:` defaults. A saved executable that carries its
source text gets its module back by checking that text again; without source it is shown as a
listing only.

No Textual here: loading and argument parsing are tested without a screen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from rvmdbg.i18n import _
from rvmdbg.program import LoadOptions, ProgramLoadError, UsageError, kind_for
from rvmdbg.program.base import refuse_foreign_options
from rvmdbg.program.relay_text import recheck as _recheck


@dataclass
class DebugProgram:
    path: str
    name: str                      # the file's base name: what the screen shows
    exe: object                    # rvmdbg.vm.executable.Executable
    module: object | None          # the type-checked module, when there is one
    source_text: str | None
    source_file: str | None        # the span file name of the program's own lines
    default_args: list[str] | None
    entry: str = "main"
    saved: bool = False            # opened from a .rvmx
    constructor_types: dict = field(default_factory=dict)
    names: object = None           # the kind's debug.names.NameTable (an ONNX model's names)
    _expression_types: object = field(default=None, repr=False)

    @property
    def expression_types(self):
        """ExpressionTypes of the source, built on first use (None without a module). A
        `.relay` file's module went through the compiler's passes, which re-type its shared
        nodes, so its types come from checking the source text again; a saved executable's
        module was checked from its text and never compiled."""
        if self._expression_types is None and self.module is not None:
            from rvmdbg.tui.expr_types import ExpressionTypes
            module = self.module
            if not self.saved:
                module = _recheck(self.source_text, self.source_file) if self.source_text else None
            self._expression_types = ExpressionTypes(module, self.source_file)
        return self._expression_types

    def params(self) -> list[tuple[str, str]]:
        """The entry's parameters as (name, type text); the type is "" when unknown."""
        if self.module is not None and self.entry in self.module.functions:
            from rvmdbg.args import param_types
            fn = self.module.functions[self.entry]
            types = param_types(fn)
            return [(p.name, "" if t is None else str(t)) for p, t in zip(fn.params, types)]
        try:
            fn = self.exe.function(self.entry)
        except KeyError:
            return []
        return [(p, "") for p in fn.params]

    def parse_args(self, texts: list[str]) -> list:
        """Runtime values for the entry's parameters; raises ArgumentError saying why not."""
        from rvmdbg.args import parse_program_args, parse_untyped_args
        if self.module is not None and self.entry in self.module.functions:
            return parse_program_args(self.module, self.entry, texts)
        return parse_untyped_args(self.entry, texts, len(self.params()))

    def bind_inputs(self, given: list[str], inputs: str) -> list[str]:
        """`--inputs FILE.npz`: the argument texts with the archive's arrays bound by name
        (`@FILE.npz:NAME`) after the given ones; raises ArgumentError saying why not."""
        from rvmdbg.args import bind_inputs
        return bind_inputs([name for name, _ in self.params()], given, inputs, self.entry)

    def initial_arg_texts(self, given: list[str]) -> list[str]:
        """The argument texts to start with: the command line's, else the `// args:` line."""
        if given:
            return list(given)
        return list(self.default_args or [])


def load_program(path: str, entry: str = "main", missing_meta=None) -> DebugProgram:
    """Load, check and compile `path` (or read a saved executable), as its kind opens it for
    the debugger (`rvmdbg.program`); raises ProgramLoadError. `missing_meta`: --meta-inputs /
    --meta-random (`metadata.MissingConstants`)."""
    from rvmdbg.tui.summary import constructor_types
    # `missing_meta` may be the whole LoadOptions (--shape, --dtype, --opset as well)
    options = (missing_meta if isinstance(missing_meta, LoadOptions)
               else LoadOptions(missing_meta=missing_meta))
    kind = kind_for(path)
    try:
        refuse_foreign_options(kind.name, options)
    except UsageError as exc:
        raise ProgramLoadError(_("error: {message}").format(message=exc)) from None
    d = kind.debuggable(path, entry, options)
    prog = DebugProgram(path, os.path.basename(path), d.exe, d.module, d.source_text,
                        d.source_file, d.default_args, entry, saved=d.saved)
    prog.names = d.names
    prog.constructor_types = constructor_types(prog.module)
    return prog


def load_program_kept(path: str, entry: str = "main", missing_meta=None) -> DebugProgram:
    """`load_program` for a program that lives as long as the process (the screen's): loaded
    with the cyclic collector paused, then frozen out of its reach (`gc.freeze`) before it
    runs again. Loading makes no reference cycles (a collection right after loading the
    20,160-instruction benchmark program freed nothing), yet the collector's passes between
    the phases (parse, check, each pass) rescanned the growing AST: 150 ms of that program's
    start. Frozen objects are still freed by reference counting."""
    import gc
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        program = load_program(path, entry, missing_meta)
        gc.freeze()  # also sets the young generation's count back: no pass right after
    finally:
        if was_enabled:
            gc.enable()
    return program


def program_from_executable(exe, name: str = "<executable>", entry: str = "main",
                            module=None) -> DebugProgram:
    """A program around an executable built in memory (benchmarks, tests of big listings)."""
    from rvmdbg.tui.summary import constructor_types
    text = exe.source_text
    prog = DebugProgram(name, name, exe, module, text, exe.source_name, None, entry, saved=True)
    prog.constructor_types = constructor_types(module)
    return prog


__all__ = ["DebugProgram", "ProgramLoadError", "load_program", "program_from_executable"]
