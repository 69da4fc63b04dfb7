"""The MiniVM kind (`.mvm`): the teaching machine's assembly, run by its own machine through
the same debugger protocol; it takes no arguments (its LD instructions set the registers) and
has no Relay module."""
from __future__ import annotations

from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, bind_untyped, check_entry,
)


def load(path: str, options: LoadOptions) -> Program:
    from rvmdbg.minivm import load_mvm
    return Program(path, executable=load_mvm(path), kind=KIND)


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    from rvmdbg.minivm import MvmSyntaxError, load_mvm
    try:
        exe = load_mvm(path)
    except MvmSyntaxError as exc:
        raise ProgramLoadError(exc.format()) from None
    except OSError as exc:
        raise ProgramLoadError(f"{path}: error: {exc.strerror or exc}") from None
    check_entry(exe, entry, path)
    return Debuggable(exe, None, exe.source_text, path, None)


KIND = ProgramKind("minivm", (".mvm",), load, bind_untyped, debuggable, machine="minivm",
                   source_language=None)
