"""The Relay text kind (`.relay`, and any file no other kind claims): parsed with the prelude,
type-checked, compiled for the Relay VM here; its ARGs take the entry's parameter types."""
from __future__ import annotations

import sys

from rvmdbg.i18n import _
from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, UsageError, check_entry,
)


def read_source(path: str) -> str:
    """A program file's text; failures are RelayErrors naming the file (exit 2)."""
    from rvmdbg.relay.loader import read_program
    return read_program(path)


def load(path: str, options: LoadOptions) -> Program:
    """Parse (with the prelude) and type-check a `.relay` file; the parser's warnings (a global
    defined twice) are printed on stderr, for every command."""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    text = read_source(path)
    mod = load_module(text, path, missing_meta=options.missing_meta)
    for w in mod.warnings:
        print(w.format(mod.source), file=sys.stderr)
    parsed_warnings = len(mod.warnings)
    if options.check:
        mod = check_module(mod)
    return Program(path, text=text, module=mod, parse_warnings=parsed_warnings, kind=KIND)


def bind(program: Program, entry: str, texts: list[str]) -> list:
    """ARG texts converted to the entry's parameter types."""
    from rvmdbg.args import parse_program_args
    if entry not in program.module.functions:
        own = [n for n, f in program.module.functions.items()
               if f.span is not None and f.span.file == program.path]
        raise UsageError(f"{program.path}: " + _("no function @{entry} to run; the program ").format(entry=entry)
                         + (_("defines {names}").format(names=', '.join('@' + n for n in own)) if own
                            else _("defines no functions")))
    # (with no ARGs, program_arguments adds where the client takes them)
    return parse_program_args(program.module, entry, texts)


def recheck(text: str, filename: str):
    """The typed module of a source text (a saved executable's), or None if it no longer
    checks."""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    try:
        return check_module(load_module(text, filename))
    except Exception:
        return None


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    """Load, check and compile for the debugger screen."""
    from rvmdbg.relay.diagnostics import RelayError
    from rvmdbg.relay.loader import load_file, program_default_args
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    try:
        module = check_module(load_file(path, missing_meta=options.missing_meta))
    except RelayError as exc:
        raise ProgramLoadError(exc.format()) from None
    text = module.source.text if module.source is not None else None
    try:
        exe = compile_module(module, entries=("main",) if entry == "main" else ("main", entry))
    except RelayError as exc:
        raise ProgramLoadError(exc.format()) from None
    except Exception as exc:  # the compiler's own errors carry their message
        raise ProgramLoadError(f"{path}: error: " + _("cannot compile: {error}").format(error=exc)) from None
    check_entry(exe, entry, path)
    return Debuggable(exe, module, text, path, program_default_args(text) if text else None)


KIND = ProgramKind("relay", (".relay",), load, bind, debuggable)
