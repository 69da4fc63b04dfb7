"""The saved-executable kind (`.rvmx`, or any file that starts with its magic): loaded and
verified, run on the Relay VM as saved; it keeps no types (ARGs take Relay's default dtypes)
and shows the source text it carries, when it carries one."""
from __future__ import annotations

from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, UsageError, bind_untyped,
    check_entry,
)


def sniff(head: bytes) -> bool:
    from rvmdbg.vm.serialize import MAGIC
    return head.startswith(MAGIC)


def load(path: str, options: LoadOptions) -> Program:
    from rvmdbg.vm.serialize import ExecutableFormatError, load as load_exe
    try:
        return Program(path, executable=load_exe(path), kind=KIND)
    except ExecutableFormatError as e:
        raise UsageError(str(e)) from None


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    """The saved executable; its module comes back by checking the source text it carries."""
    from rvmdbg.program.relay_text import recheck
    from rvmdbg.relay.loader import program_default_args
    from rvmdbg.vm.serialize import ExecutableFormatError, load as load_exe
    try:
        exe = load_exe(path)
    except ExecutableFormatError as exc:
        raise ProgramLoadError(str(exc)) from None
    except OSError as exc:
        raise ProgramLoadError(f"{path}: error: {exc.strerror or exc}") from None
    check_entry(exe, entry, path)
    text = exe.source_text
    module = recheck(text, exe.source_name or path) if text is not None else None
    return Debuggable(exe, module, text, exe.source_name,
                      program_default_args(text) if text else None, saved=True)


KIND = ProgramKind("rvmx", (".rvmx",), load, bind_untyped, debuggable, compiled=True,
                   sniff=sniff)
