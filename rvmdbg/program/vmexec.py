"""The saved Relax executable kind (`.vmexec`): what TVM wrote with `ex.mod.write_to_file(path,
"")`, run with the kernels of the library TVM exported with `ex.export_library(lib)`, which the
user names with `--lib FILE.so` (`rvmdbg --engine tvm --lib model.so model.vmexec`).

Loading a shared library runs its code, so rvmdbg loads only the library named with --lib,
never one found beside the file. The file is read and checked by rvmdbg's own reader
(`rvmdbg.relax.executable.read_serialized`: header, function table, constant pool, code)
before TVM's loader sees it, so a truncated or damaged file is a message, exit 2; a library
that lacks a kernel the executable calls is refused the same way.
"""
from __future__ import annotations

import os
import re
import struct

from rvmdbg.i18n import _
from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, UsageError, check_entry,
)
from rvmdbg.program import relax

SUFFIX = ".vmexec"
MAX_FILE_BYTES = 1 << 31   # a saved executable holds the model's weights: 2 GiB at most


# relax.executable.MAGIC's bytes, here so that telling kinds apart never imports rvmdbg.relax
HEAD = struct.pack("<Q", 0xD225DE2F4214151E)


def sniff(head: bytes) -> bool:
    return head[:8] == HEAD


def build(path: str, lib: str | None):
    """The `RelaxExecutable` of the saved executable at `path` with the kernels of `lib`."""
    from rvmdbg.relax.executable import FUNC_PACKED, RelaxFormatError, parse_listing, read_serialized
    if not lib:
        raise UsageError(f"{path}: " + _("a saved Relax executable runs TVM's compiled kernels from "
                                         "the library TVM exported beside it: name it with --lib "
                                         "FILE.so (loading a library runs its code, so rvmdbg "
                                         "loads only the one you name)"))
    tvm = relax._tvm_or_usage(path)
    from tvm import relax as tvm_relax
    from rvmdbg.fileio import FileRefused, read_file
    from rvmdbg.i18n import N_
    try:   # a FIFO or a device is refused, never read (rvmdbg.fileio)
        data = read_file(path, MAX_FILE_BYTES, N_("saved executable"))
    except FileRefused as exc:
        raise UsageError(f"{path}: {exc.reason}") from None
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    try:
        table, constants = read_serialized(data)
    except RelaxFormatError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if not os.path.isfile(lib):
        raise UsageError(f"{lib}: " + _("no such file (the kernel library given with --lib)"))
    try:
        library = tvm.runtime.load_module(os.path.abspath(lib))
    except Exception as exc:  # TVM's loader raises its own error types
        raise UsageError(f"{lib}: " + _("TVM cannot load this library: {why}").format(
            why=relax._first_lines(exc, 3))) from None
    # export_library writes the VM executable and its kernels: the kernels are its import
    kernels = library
    if getattr(library, "kind", "") == "relax.VMExecutable":
        kernels = next(iter(library.imports), None)
        if kernels is None:
            raise UsageError(f"{lib}: " + _("the library holds no compiled kernels"))
    missing = []
    for g in table:
        if g.kind != FUNC_PACKED:
            continue
        if tvm.get_global_func(g.name, allow_missing=True) is not None:
            continue
        try:
            found = kernels.get_function(g.name, query_imports=True)
        except Exception:  # TVM raises its own error type for a missing name
            found = None
        if found is None:
            missing.append(g.name)
    if missing:
        raise UsageError(f"{path}: " + _("the library {lib} does not hold the kernels this executable "
                                         "calls: {names} (was it exported with this executable?)")
                         .format(lib=lib, names=", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")))
    try:
        mod = tvm.get_global_func("relax.ExecutableLoadFromFile")(os.path.abspath(path))
        mod.import_module(kernels)
        tvm_exe = tvm_relax.VMExecutable(mod)
        code = parse_listing(tvm_exe.as_text())
        from rvmdbg.relax.executable import RelaxExecutable
        exe = RelaxExecutable(table, constants, code, tvm_exe, tvm_exe.as_text(), path)
        exe.param_types = declared_types(constants)
    except RelaxFormatError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except Exception as exc:  # TVM's loader raises its own error types
        raise UsageError(f"{path}: " + _("TVM cannot load this executable: {why}").format(
            why=relax._first_lines(exc, 3))) from None
    return exe


ANNOTATION = re.compile(r'fn=([\w.]+), loc=param\[(\d+)\], param=[^,]*, annotation=R\.Tensor\('
                        r'\(([^)]*)\), dtype="(\w+)"\)')


def declared_types(constants: list) -> dict:
    """{function: [(dtype, shape) or None, ...]} from the error contexts TVM keeps in the
    constant pool (one per checked parameter: `fn=main, loc=param[0], param=x,
    annotation=R.Tensor((3,), dtype="float32")`): what ARGs are cast to, as for TVMScript."""
    out: dict = {}
    for c in constants:
        if not isinstance(c, str):
            continue
        m = ANNOTATION.search(c)
        if m is None:
            continue
        fn, i, dims, dtype = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        shape = tuple(int(d) if d.strip().isdigit() else None
                      for d in dims.split(",") if d.strip())
        types = out.setdefault(fn, [])
        types.extend([None] * (i + 1 - len(types)))
        types[i] = (dtype, shape)
    return out


def _lib(options: LoadOptions):
    return (options.extra or {}).get("lib")


def load(path: str, options: LoadOptions) -> Program:
    return Program(path, executable=build(path, _lib(options)), kind=KIND)


def bind(program: Program, entry: str, texts: list[str]) -> list:
    """ARG texts as NumPy values of the declared dtypes the constant pool records (else as
    written)."""
    from rvmdbg.args import parse_untyped_args
    exe = program.executable
    fn = next((f for f in exe.functions if f.name == entry), None)
    if fn is None:
        raise UsageError(f"{program.path}: " + _("no function @{entry}").format(entry=entry))
    types = exe.param_types.get(entry)
    if types is None or len(types) != len(fn.params):
        exe.param_types[entry] = (list(types or []) + [None] * len(fn.params))[:len(fn.params)]
    return relax.bind(program, entry, texts)


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    try:
        exe = build(path, _lib(options))
    except UsageError as exc:
        raise ProgramLoadError(str(exc)) from None
    check_entry(exe, entry, path)
    return Debuggable(exe, None, exe.source_text, path, None, saved=True)


KIND = ProgramKind("vmexec", (SUFFIX,), load, bind, debuggable, machine="relax",
                   compiled=True, source_language=None, sniff=sniff)
