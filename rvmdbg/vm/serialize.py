"""Saving and loading executables as `.rvmx` files (layout: docs/rvmx-format.md).

A plain little-endian struct layout: a fixed header (magic number, format version, payload
length, SHA-256 of the payload) and a payload of tagged sections. Nothing is pickled or
evaluated. `load` trusts nothing: it checks the header, the checksum, every length before
reading, every opcode and operand, and then the executable's invariants
(`executable.check_executable`). Every failure is an `ExecutableFormatError` naming the file.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct

import numpy as np

from rvmdbg.fileio import FileRefused, read_file, write_atomic
from rvmdbg.i18n import N_, _
from rvmdbg.relay.diagnostics import Span
from rvmdbg.vm.bytecode import DTYPES, BytecodeError, decode
from rvmdbg.vm.executable import (Executable, InvalidExecutable, Kernel, VMFunction,
                                  check_executable)
from rvmdbg.wording import escape_controls

MAGIC = b"RVMX\r\n\x1a\n"   # the CR LF and ^Z catch files mangled by text-mode transfers
FORMAT_VERSION = 2   # 2: every file of the source map carries its text
_HEADER = struct.Struct("<8sIQ32s")   # magic, version, payload length, sha256(payload)
HEADER_SIZE = _HEADER.size

SECTIONS = (b"SRCE", b"GLOB", b"CNST", b"KERN", b"FUNC", b"SMAP", b"ADTC")
# the sections' and the fields' names, shown in messages through `_()`
_SECTION_NAMES = {b"SRCE": N_("source"), b"GLOB": N_("globals"), b"CNST": N_("constants"),
                  b"KERN": N_("kernels"), b"FUNC": N_("functions"), b"SMAP": N_("source map"),
                  b"ADTC": N_("constructor names")}

_MAX_NDIM = 32
MAX_FILE_BYTES = 4 << 30   # a larger file is refused before it is read

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _shown(s: str) -> str:
    """A name from a file as a message shows it: quoted, control characters escaped."""
    return "'" + escape_controls(s[:80]) + ("...'" if len(s) > 80 else "'")


# how a source map file's text is stored (format version 2)
_TEXT_IS_PROGRAM, _TEXT_FOLLOWS = 1, 2


class ExecutableFormatError(Exception):
    """A file that is not a valid rvmdbg executable; `str()` names the file and the problem."""

    def __init__(self, message: str, path: str | None = None, reason: str | None = None):
        super().__init__(message)
        self.path = path
        self.reason = reason if reason is not None else message


def _fail(name: str, reason: str) -> ExecutableFormatError:
    return ExecutableFormatError(f"{name}: {reason}", name, reason)


# ---------------------------------------------------------------- writing

class _Writer:
    def __init__(self):
        self.parts: list[bytes] = []

    def raw(self, b: bytes) -> None:
        self.parts.append(bytes(b))

    def u8(self, v: int) -> None:
        self.parts.append(struct.pack("<B", v))

    def u32(self, v: int) -> None:
        self.parts.append(struct.pack("<I", v))

    def u64(self, v: int) -> None:
        self.parts.append(struct.pack("<Q", v))

    def i64s(self, values) -> None:
        values = list(values)
        self.parts.append(struct.pack(f"<{len(values)}q", *values))

    def str(self, s: str) -> None:
        b = s.encode("utf-8")
        self.u32(len(b))
        self.parts.append(b)

    def data(self) -> bytes:
        return b"".join(self.parts)


def dumps(exe: Executable) -> bytes:
    """The `.rvmx` bytes of an executable (checked first: an invalid one is never written)."""
    check_executable(exe)
    try:
        payload = _payload(exe)
    except (struct.error, UnicodeEncodeError) as e:
        raise InvalidExecutable(_("cannot serialize: {error}").format(error=e)) from None
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, len(payload), hashlib.sha256(payload).digest())
    return header + payload


def _payload(exe: Executable) -> bytes:
    w = _Writer()

    w.raw(b"SRCE")
    w.u8((1 if exe.source_name is not None else 0) | (2 if exe.source_text is not None else 0))
    if exe.source_name is not None:
        w.str(exe.source_name)
    if exe.source_text is not None:
        w.str(exe.source_text)

    w.raw(b"GLOB")
    w.u32(len(exe.functions))
    for f in exe.functions:
        w.str(f.name)

    w.raw(b"CNST")
    w.u32(len(exe.constants))
    for c in exe.constants:
        w.str(c.dtype.name)
        w.u32(c.ndim)
        w.i64s(c.shape)
        raw = np.ascontiguousarray(c).astype(c.dtype.newbyteorder("<"), copy=False).tobytes()
        w.u64(len(raw))
        w.raw(raw)

    w.raw(b"KERN")
    w.u32(len(exe.kernels))
    for k in exe.kernels:
        w.str(k.name)
        w.str(k.source)
        w.u32(k.num_inputs)
        w.u32(k.num_outputs)
        w.u8(1 if k.builtin else 0)

    w.raw(b"FUNC")
    w.u32(len(exe.functions))
    for f in exe.functions:
        w.str(f.name)
        w.u32(len(f.params))
        for p in f.params:
            w.str(p)
        w.i64s(f.param_device_indexes)
        w.u32(f.register_file_size)
        w.u32(len(f.instructions))
        for instr in f.instructions:
            fields = instr.fields()
            w.u32(instr.opcode)
            w.u32(len(fields))
            w.i64s(fields)

    w.raw(b"SMAP")
    # spans only into files whose text the executable carries: a loaded one opens no paths
    entries = sorted((key, span) for key, span in exe.source_map.items()
                     if exe.source_of(span.file) is not None)
    files: dict[str, int] = {}   # in order of first use, so equal executables give equal bytes
    for _, span in entries:
        files.setdefault(span.file, len(files))
    w.u32(len(files))
    for fname in files:
        w.str(fname)
        text = exe.source_of(fname)
        if fname == exe.source_name and text == exe.source_text:
            w.u8(_TEXT_IS_PROGRAM)
        else:
            w.u8(_TEXT_FOLLOWS)
            w.str(text)
    w.u32(len(entries))
    for (fi, pc), span in entries:
        w.u32(fi)
        w.u32(pc)
        w.u32(span.line)
        w.u32(span.col)
        w.u32(span.end_line)
        w.u32(span.end_col)
        w.u32(files[span.file])

    w.raw(b"ADTC")
    constructors = sorted(exe.adt_constructor.items())
    w.u32(len(constructors))
    for (fi, pc), con in constructors:
        w.u32(fi)
        w.u32(pc)
        w.str(con)

    return w.data()


def save(exe: Executable, path) -> None:
    """Write `exe` to `path` (conventionally `.rvmx`), replacing the file atomically."""
    write_atomic(path, dumps(exe))


# ---------------------------------------------------------------- reading

class _Malformed(Exception):
    """Internal: a section's bytes do not parse; turned into ExecutableFormatError."""


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.section = N_("payload")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _Malformed(_("unexpected end of data in the {section} section (needs {n} "
                               "bytes at offset {offset}, {left} left)").format(
                section=_(self.section), n=n, offset=self.pos, left=len(self.data) - self.pos))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def i64s(self, n: int) -> list:
        return list(struct.unpack(f"<{n}q", self.take(8 * n)))

    def str(self, what: str) -> str:
        n = self.u32()
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise _Malformed(_("{what} in the {section} section is not valid UTF-8").format(
                what=_(what), section=_(self.section))) from None

    def name(self, what: str) -> str:
        """A name (function, kernel, constructor, file): never empty, no control characters,
        so nothing read from a file can put escape sequences on the user's terminal."""
        s = self.str(what)
        if not s:
            raise _Malformed(_("empty {what} in the {section} section").format(
                what=_(what), section=_(self.section)))
        if _CONTROL.search(s):
            raise _Malformed(_("{what} {name} in the {section} section holds control "
                               "characters").format(what=_(what), name=_shown(s),
                                                    section=_(self.section)))
        return s

    def count(self, what: str, min_item_bytes: int) -> int:
        """A u32 element count, refused if the remaining bytes cannot possibly hold it."""
        n = self.u32()
        if n * min_item_bytes > len(self.data) - self.pos:
            raise _Malformed(_("{section} section declares {n} {what}, more than the remaining "
                               "{left} bytes can hold").format(
                section=_(self.section), n=n, what=_(what), left=len(self.data) - self.pos))
        return n

    def section_tag(self, tag: bytes) -> None:
        self.section = _SECTION_NAMES[tag]
        got = self.take(4)
        if got != tag:
            raise _Malformed(_("expected the {section} section (tag {tag}), found {got}").format(
                section=_(self.section), tag=repr(tag), got=repr(got)))


def _check_header(data: bytes, name: str) -> bytes:
    """Validate the header; return the payload."""
    if len(data) < len(MAGIC):
        if MAGIC.startswith(data):
            raise _fail(name, _("file is truncated ({n} bytes, not even a header)").format(
                n=len(data)))
        raise _fail(name, _("not an rvmdbg executable (bad magic number)"))
    if data[:len(MAGIC)] != MAGIC:
        raise _fail(name, _("not an rvmdbg executable (bad magic number)"))
    if len(data) < len(MAGIC) + 4:
        raise _fail(name, _("file is truncated ({n} bytes, header is {header})").format(
            n=len(data), header=HEADER_SIZE))
    (version,) = struct.unpack_from("<I", data, len(MAGIC))
    if version > FORMAT_VERSION:
        raise _fail(name, _("written by a newer rvmdbg (format version {version}; this rvmdbg "
                            "reads versions up to {newest}); upgrade rvmdbg or recompile the "
                            "program").format(version=version, newest=FORMAT_VERSION))
    if version == 1:
        raise _fail(name, _("written by an older rvmdbg (format version 1, which named source "
                            "files by path instead of carrying their text); recompile the "
                            "program"))
    if version < 1:
        raise _fail(name, _("unsupported format version {version}").format(version=version))
    if len(data) < HEADER_SIZE:
        raise _fail(name, _("file is truncated ({n} bytes, header is {header})").format(
            n=len(data), header=HEADER_SIZE))
    _magic, _version, length, digest = _HEADER.unpack_from(data, 0)
    payload = data[HEADER_SIZE:]
    if len(payload) < length:
        raise _fail(name, _("file is truncated (payload is {n} of {length} bytes)").format(
            n=len(payload), length=length))
    if len(payload) > length:
        raise _fail(name, _("file is corrupted ({n} unexpected bytes after the payload)").format(
            n=len(payload) - length))
    if hashlib.sha256(payload).digest() != digest:
        raise _fail(name, _("file is corrupted (checksum mismatch)"))
    return payload


def _read_payload(payload: bytes, name: str) -> Executable:
    r = _Reader(payload)

    r.section_tag(b"SRCE")
    flags = r.u8()
    if flags & ~3:
        raise _Malformed(_("unknown source flags {flags}").format(flags=f"{flags:#x}"))
    source_name = r.name(N_("source name")) if flags & 1 else None
    source_text = r.str(N_("source text")) if flags & 2 else None

    r.section_tag(b"GLOB")
    globals_ = [r.name(N_("global name")) for _n in range(r.count(N_("globals"), 4))]

    r.section_tag(b"CNST")
    constants = [_read_constant(r, i) for i in range(r.count(N_("constants"), 16))]

    r.section_tag(b"KERN")
    kernels = []
    for _n in range(r.count(N_("kernels"), 17)):
        kname = r.name(N_("kernel name"))
        source = r.str(N_("kernel source"))
        num_inputs, num_outputs = r.u32(), r.u32()
        builtin = r.u8()
        if builtin > 1:
            raise _Malformed(_("kernel {kernel}: builtin flag {flag} is not 0 or 1").format(
                kernel=kname, flag=builtin))
        kernels.append(Kernel(kname, source, num_inputs, num_outputs, bool(builtin)))

    r.section_tag(b"FUNC")
    n_funcs = r.count(N_("functions"), 16)
    if n_funcs != len(globals_):
        raise _Malformed(_("{n} functions but {m} global names").format(n=n_funcs,
                                                                          m=len(globals_)))
    functions = []
    for fi in range(n_funcs):
        functions.append(_read_function(r, fi, globals_[fi]))

    r.section_tag(b"SMAP")
    files, sources = [], {}
    for _n in range(r.count(N_("files"), 5)):
        fname = r.name(N_("file name"))
        how = r.u8()
        if how == _TEXT_IS_PROGRAM:
            if fname != source_name or source_text is None:
                raise _Malformed(_("source map file {file} claims the program's text, which "
                                   "the file does not carry under that name").format(
                    file=_shown(fname)))
            text = source_text
        elif how == _TEXT_FOLLOWS:
            text = r.str(N_("source text"))
        else:
            raise _Malformed(_("source map file {file}: unknown text flag {flag}").format(
                file=_shown(fname), flag=how))
        if fname in sources:
            raise _Malformed(_("source map names file {file} twice").format(file=_shown(fname)))
        files.append(fname)
        sources[fname] = text
    source_map = {}
    for _n in range(r.count(N_("source map entries"), 28)):
        fi, pc, line, col, end_line, end_col, file_index = (r.u32() for _n in range(7))
        if file_index >= len(files):
            raise _Malformed(_("source map entry names file {index} of {n}").format(
                index=file_index, n=len(files)))
        if (fi, pc) in source_map:
            raise _Malformed(_("two source map entries for function {fi}, pc {pc}").format(
                fi=fi, pc=pc))
        source_map[(fi, pc)] = Span(line, col, end_line, end_col, files[file_index])

    r.section_tag(b"ADTC")
    adt_constructor = {}
    for _n in range(r.count(N_("constructor names"), 12)):
        fi, pc = r.u32(), r.u32()
        con = r.name(N_("constructor name"))
        if (fi, pc) in adt_constructor:
            raise _Malformed(_("two constructor names for function {fi}, pc {pc}").format(
                fi=fi, pc=pc))
        adt_constructor[(fi, pc)] = con

    if r.pos != len(payload):
        raise _Malformed(_("{n} unexpected bytes after the last section").format(
            n=len(payload) - r.pos))
    return Executable(functions, constants, kernels, source_map, source_text, source_name,
                      adt_constructor, sources)


def _read_constant(r: _Reader, i: int) -> np.ndarray:
    dtype = r.str(N_("constant dtype"))
    if dtype not in DTYPES:
        raise _Malformed(_("constant {i} has unsupported dtype {dtype}").format(
            i=i, dtype=repr(dtype)))
    ndim = r.u32()
    if ndim > _MAX_NDIM:
        raise _Malformed(_("constant {i} has {n} dimensions").format(i=i, n=ndim))
    shape = r.i64s(ndim)
    if any(d < 0 for d in shape):
        raise _Malformed(_("constant {i} has a negative dimension in {shape}").format(
            i=i, shape=shape))
    nbytes = r.u64()
    dt = np.dtype(dtype)
    expected = dt.itemsize * int(np.prod(shape, dtype=object))
    if nbytes != expected:
        raise _Malformed(_("constant {i} ({type}) has {n} bytes, expected {expected}").format(
            i=i, type=f"{dtype}{list(shape)}", n=nbytes, expected=expected))
    if int(np.prod([d for d in shape if d], dtype=object)) >= 1 << 62:
        # An empty array may still declare dimensions NumPy cannot index.
        raise _Malformed(_("constant {i} has an impossible shape {shape}").format(
            i=i, shape=shape))
    raw = r.take(nbytes)
    if dtype == "bool" and raw.translate(None, b"\x00\x01"):
        raise _Malformed(_("constant {i} (bool) holds bytes other than 0 and 1").format(i=i))
    try:
        return np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt).reshape(shape)
    except ValueError as e:
        raise _Malformed(_("constant {i} cannot be built: {error}").format(i=i, error=e)) from None


def _read_function(r: _Reader, fi: int, global_name: str) -> VMFunction:
    fname = r.name(N_("function name"))
    if fname != global_name:
        raise _Malformed(_("function {fi} is named @{func} but global {fi} is @{name}").format(
            fi=fi, func=fname, name=global_name))
    params = [r.name(N_("parameter name")) for _n in range(r.count(N_("parameters"), 4))]
    devices = r.i64s(len(params))
    register_file_size = r.u32()
    instructions = []
    for pc in range(r.count(N_("instructions"), 8)):
        opcode = r.u32()
        n_fields = r.count(N_("fields"), 8)
        fields = r.i64s(n_fields)
        try:
            instructions.append(decode(opcode, fields))
        except BytecodeError as e:
            raise _Malformed(_("function @{func}, pc {pc}: {error}").format(
                func=fname, pc=pc, error=e)) from None
    return VMFunction(fname, params, register_file_size, instructions, devices)


def loads(data: bytes, name: str = "<bytes>", build_kernels: bool = True) -> Executable:
    """Parse and verify `.rvmx` bytes; `name` is used in error messages.

    With `build_kernels`, each kernel's `impl` is rebuilt by `rvmdbg.vm.kernels.build_kernel`.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _fail(name, _("expected bytes, got {type}").format(type=type(data).__name__))
    data = bytes(data)
    payload = _check_header(data, name)
    try:
        exe = _read_payload(payload, name)
    except _Malformed as e:
        raise _fail(name, _("malformed executable: {error}").format(error=e)) from None
    try:
        check_executable(exe)
    except InvalidExecutable as e:
        raise _fail(name, _("invalid executable: {error}").format(error=e)) from None
    if build_kernels:
        _build_kernels(exe, name)
    return exe


def _build_kernels(exe: Executable, name: str) -> None:
    if not exe.kernels:
        return
    try:
        from rvmdbg.vm.kernels import build_kernel  # late: the kernel builder is a separate layer
    except ImportError as e:
        raise _fail(name, _("cannot rebuild kernels: rvmdbg.vm.kernels is unavailable "
                            "({error})").format(error=e)) from e
    for i, kern in enumerate(exe.kernels):
        try:
            impl = build_kernel(kern)
        except Exception as e:  # any failure to rebuild means the file cannot run
            raise _fail(name, _("kernel {i} ({kernel}) cannot be rebuilt: {error}").format(
                i=i, kernel=kern.name, error=e)) from e
        if impl is not None:
            kern.impl = impl
        if not callable(kern.impl):
            raise _fail(name, _("kernel {i} ({kernel}) cannot be rebuilt: no "
                                "implementation").format(i=i, kernel=kern.name))


def load(path, build_kernels: bool = True) -> Executable:
    """Read and verify a `.rvmx` file."""
    name = os.fspath(path)
    try:
        data = read_file(name, MAX_FILE_BYTES, N_("saved executable"))
    except FileRefused as e:
        raise _fail(name, e.reason) from e
    except OSError as e:
        raise _fail(name, _("cannot read: {error}").format(error=e.strerror or e)) from e
    return loads(data, name, build_kernels)


__all__ = ["save", "load", "dumps", "loads", "ExecutableFormatError", "MAGIC", "FORMAT_VERSION",
           "HEADER_SIZE"]
