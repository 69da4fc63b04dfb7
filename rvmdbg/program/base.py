"""What a program is, for every front end: `Program` (what `load` returns), `ProgramKind` (one
kind of program file: how it is recognised, loaded, bound to arguments, run and shown),
`LoadOptions` (what a load may be told), `Debuggable` (what the debugger screen opens), and
the errors a load raises. No kind is named here: the kinds live one per module beside this
one and are listed in `registry.py`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from rvmdbg.i18n import _
from rvmdbg.relay.diagnostics import Source


class UsageError(Exception):
    """Bad input that is not located in a program (exit 2)."""


class ProgramFailed(Exception):
    """The program failed while running (exit 1); `text` is the full message to print."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class ProgramLoadError(Exception):
    """The debugger screen cannot open the program; `message` is ready to print (with
    FILE:LINE:COL)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class LoadOptions:
    """What a load may be told beyond the path. Each kind reads the fields it knows and
    ignores the rest, so a new kind's options are a new field here (or a key of `extra`),
    never a new parameter of every `load`.

    `check`: type-check Relay source (a caller that only lists may skip it).
    `missing_meta`: what --meta-inputs / --meta-random make of Relay constants without a
    #[metadata] section (a `relay.metadata.MissingConstants`, or None). `shapes`,
    `dtypes`, `opset`: for a kind whose file leaves them open (an ONNX graph's input shapes
    and dtypes by input name, the opset to import at). `extra`: anything else a kind defines
    by name."""

    check: bool = True
    missing_meta: object = None
    shapes: dict | None = None
    dtypes: dict | None = None
    opset: int | None = None
    extra: dict = field(default_factory=dict)


def refuse_foreign_options(kind_name: str, options: LoadOptions) -> None:
    """--shape / --dtype / --opset are an ONNX model's: on another kind of program they are a
    usage error naming the option (not silently ignored)."""
    from rvmdbg.i18n import _   # the function binds `_` locally below: import it before use
    extra = options.extra or {}
    if extra.get("lib") and kind_name != "vmexec":
        raise UsageError(_("--lib names the kernel library of a saved Relax executable (.vmexec), "
                           "not of a {kind} program").format(kind=kind_name))
    if extra.get("engine") == "tvm" and kind_name not in ("onnx", "vmexec", "relax"):
        raise UsageError(_("--engine tvm applies to an ONNX model (.onnx) or a saved Relax "
                           "executable (.vmexec), not to a {kind} program").format(kind=kind_name))
    if extra.get("engine") == "relay" and kind_name == "vmexec":
        raise UsageError(_("a saved Relax executable (.vmexec) runs on TVM's Relax VM: use "
                           "--engine tvm"))
    if kind_name == "onnx":
        return
    for flag, value in (("--shape", options.shapes), ("--dtype", options.dtypes),
                        ("--opset", options.opset)):
        if value is not None:
            from rvmdbg.i18n import _
            raise UsageError(_("{option} applies only to an ONNX model (.onnx), not to "
                               "a {kind} program").format(option=flag, kind=kind_name))


@dataclass
class Program:
    """A program named on the command line: Relay source (type-checked), a saved executable or
    a MiniVM program, as its kind loaded it."""

    path: str
    text: str | None = None          # the Relay source; None for a .rvmx
    module: object = None            # the type-checked Module; None for a .rvmx
    executable: object = None        # a loaded Executable, for a .rvmx (MiniProgram for .mvm)
    parse_warnings: int = 0          # module.warnings[:n] came from the parser (already shown)
    kind: "ProgramKind | None" = None
    names: object = None             # a debug.names.NameTable (an ONNX model's node names)

    @property
    def source(self) -> Source | None:
        return getattr(self.module, "source", None)


@dataclass
class Debuggable:
    """What the debugger screen opens: the executable and what the panes show beside it."""

    exe: object                      # an Executable (MiniProgram for .mvm)
    module: object | None            # the type-checked module, when there is one
    source_text: str | None          # the text the source pane shows
    source_file: str | None          # the span file name of the program's own lines
    default_args: list[str] | None   # the `// args:` line's ARG texts
    saved: bool = False              # a saved executable (not compiled here)
    names: object = None             # a debug.names.NameTable: `break NODE`, `print TENSOR`


@dataclass(frozen=True)
class ProgramKind:
    """One kind of program file.

    `name`: what it is called (`relay`, `rvmx`, `minivm`, ...). `suffixes`: the file names it
    claims (with the dot; case matters, as on the file system). `sniff(head) -> bool`: whether the file's first bytes
    are this kind whatever its name says (None: recognised by suffix only). `load(path,
    options) -> Program`: for the command line and the DAP server (errors are RelayErrors,
    UsageErrors or OSErrors, as the command line reports them). `bind(program, entry, texts)
    -> list`: the ARG texts as runtime values. `debuggable(path, entry, options) -> Debuggable`: for the
    debugger screen (errors are ProgramLoadErrors). `machine`: which machine runs it
    (`relay-vm`, `minivm`). `compiled`: a compiled executable (no source to check, lower to a
    graph or interpret). `source_language`: how its source is shown (the language
    named in the DAP `source` answer's `text/x-...` type; None: plain text)."""

    name: str
    suffixes: tuple[str, ...]
    load: Callable[[str, LoadOptions], Program]
    bind: Callable[[Program, str, list[str]], list]
    debuggable: Callable[[str, str, LoadOptions], Debuggable]
    machine: str = "relay-vm"
    compiled: bool = False
    source_language: str | None = "relay"
    sniff: Callable[[bytes], bool] | None = None


def check_entry(exe, entry: str, path: str) -> None:
    """ProgramLoadError unless `exe` has the function @entry."""
    try:
        exe.func_index(entry)
    except KeyError:
        names = exe.function_names()
        raise ProgramLoadError(f"{path}: error: " + _("no function @{entry} to run; the program ").format(entry=entry)
                               + (_("defines {names}").format(names=', '.join('@' + n for n in names)) if names
                                  else _("defines no functions"))) from None


def bind_untyped(program: Program, entry: str, texts: list[str]) -> list:
    """ARG texts for an executable that keeps no types: values take Relay's default dtypes;
    a saved executable keeps its source text, whose `// args:` line gives the defaults as for
    the .relay file."""
    from rvmdbg.args import parse_untyped_args
    from rvmdbg.relay.loader import program_default_args
    exe = program.executable
    if not texts and getattr(exe, "source_text", None):
        texts = program_default_args(exe.source_text) or []
    try:
        params = exe.function(entry).params
    except KeyError:
        raise UsageError(f"{program.path}: " + _("no function @{entry}").format(entry=entry)) from None
    return parse_untyped_args(entry, texts, len(params))   # program_arguments adds the hint


__all__ = ["Debuggable", "LoadOptions", "refuse_foreign_options", "Program", "ProgramFailed", "ProgramKind",
           "ProgramLoadError", "UsageError", "bind_untyped", "check_entry"]
