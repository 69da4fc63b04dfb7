"""Reading `.npy` files and `.npz` archives that someone else wrote, without trusting them.

NumPy's own `np.load` decompresses an archive member whole before looking at it, takes any
non-zip file for pickled data, and returns the raw bytes of a member that is not an array.
Here every array is read the same way, from a plain file or from a zip member: the `.npy`
header first (magic, version, a header of bounded length giving dtype, order and shape); a
dtype that is not a number or a boolean, or a declared size over the caller's byte limit, is
refused before any data is read or decompressed; then exactly the declared bytes are read,
and a stream that ends early or holds more is refused (for a zip member the last read also
checks its CRC). Nothing is unpickled. Every failure is an `ArrayFileError` whose text says
what is wrong, without the file's name (the caller adds where it was named).
"""
from __future__ import annotations

import io
import lzma
import math
import struct
import tokenize
import zipfile
import zlib

import numpy as np
import numpy.lib.format as npformat

from rvmdbg.i18n import _

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")   # a zip's first entry, or an empty zip
NUMERIC_KINDS = "biuf"                         # bool, signed, unsigned, float
_HEADER_LIMIT = 10_000                         # NumPy's own bound on a header's length
_CHUNK = 1 << 24
# what a damaged zip, a damaged member or a malformed header raises: the standard library's
# zip, zlib, bz2 and lzma readers and NumPy's header parser (which tokenizes and evaluates the
# header's text: TokenError, SyntaxError, ...) have no common base below Exception, and any
# failure there means only that the file is not a plain array
_BROKEN = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError, EOFError,
           OSError, NotImplementedError, RuntimeError, ValueError, struct.error, KeyError,
           IndexError, TypeError, OverflowError, SyntaxError, tokenize.TokenError,
           AttributeError)


class ArrayFileError(ValueError):
    """A file or member that is not a plain numeric array rvmdbg will read; str() says why."""


def kind_of(data: bytes) -> str | None:
    """"npy", "npz" or None, from the first bytes."""
    if data.startswith(NPY_MAGIC):
        return "npy"
    if data.startswith(ZIP_MAGICS):
        return "npz"
    return None


def read_npy(stream, limit: int) -> np.ndarray:
    """The array a `.npy` stream holds; ArrayFileError when its header is malformed, its dtype
    is not numeric, it declares more than `limit` bytes, or its data is short or too long."""
    try:
        major, minor = npformat.read_magic(stream)
        if (major, minor) == (1, 0):
            shape, fortran, dtype = npformat.read_array_header_1_0(
                stream, max_header_size=_HEADER_LIMIT)
        elif (major, minor) == (2, 0):
            shape, fortran, dtype = npformat.read_array_header_2_0(
                stream, max_header_size=_HEADER_LIMIT)
        else:
            raise ArrayFileError(_("a .npy header of version {version}, which rvmdbg does not "
                                   "read (1.0 and 2.0 it does)").format(
                                       version=f"{major}.{minor}"))
    except ArrayFileError:
        raise
    except _BROKEN as e:
        raise ArrayFileError(_("not a .npy array: {reason}").format(reason=_short(e))) from None
    if dtype.hasobject or dtype.kind not in NUMERIC_KINDS:
        raise ArrayFileError(_("holds {dtype} data; only numbers and booleans can be Relay "
                               "tensors").format(dtype=dtype))
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > limit:
        raise ArrayFileError(_("declares a {shape} array of {dtype}: {n} bytes, more than the "
                               "limit of {limit} (--max-bytes)").format(
                                   shape="x".join(map(str, shape)) or "0-d", dtype=dtype,
                                   n=nbytes, limit=limit))
    try:
        data = _exactly(stream, nbytes)
    except ArrayFileError:
        raise
    except _BROKEN as e:
        raise ArrayFileError(_("its data cannot be read: {reason}").format(
            reason=_short(e))) from None
    flat = np.frombuffer(data, dtype=dtype, count=math.prod(shape))
    if fortran:
        return flat.reshape(shape[::-1]).transpose()
    return flat.reshape(shape)


def _exactly(stream, n: int) -> bytes:
    """n bytes of `stream` and then its end; ArrayFileError when it has fewer or more."""
    parts, left = [], n
    while left > 0:
        chunk = stream.read(min(left, _CHUNK))
        if not chunk:
            raise ArrayFileError(_("its data ends after {got} of the {n} bytes its header "
                                   "declares").format(got=n - left, n=n))
        parts.append(chunk)
        left -= len(chunk)
    if stream.read(1):
        raise ArrayFileError(_("it holds more data than the {n} bytes its header declares")
                             .format(n=n))
    return b"".join(parts)


def _short(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text if len(text) <= 200 else text[:200] + "..."


class NpzArchive:
    """The named arrays of an `.npz` archive: `files` lists the names (`.npy` dropped, as
    NumPy does); `archive[name]` reads one member, a compressed one under the byte limit."""

    def __init__(self, data: bytes, limit: int):
        self.limit = limit
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except _BROKEN as e:
            raise ArrayFileError(_("a damaged zip archive: {reason}").format(
                reason=_short(e))) from None
        self._members = {}
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            self._members.setdefault(name, info)
        self.files = list(self._members)

    def __getitem__(self, name: str) -> np.ndarray:
        info = self._members[name]
        try:
            with self._zip.open(info) as member:
                head = member.read(len(NPY_MAGIC))
                if head != NPY_MAGIC:
                    raise ArrayFileError(_("the member {name} is not a .npy array (it does not "
                                           "start with the .npy header)").format(
                                               name=info.filename))
                # what would be decompressed is bounded by the limit; a stored member's data
                # is in the file already, bounded by its size
                limit = self.limit if info.compress_type != zipfile.ZIP_STORED else info.file_size
                return read_npy(_Prefixed(head, member), limit)
        except ArrayFileError:
            raise
        except _BROKEN as e:
            raise ArrayFileError(_("the member {name} is damaged: {reason}").format(
                name=info.filename, reason=_short(e))) from None

    def close(self) -> None:
        self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Prefixed:
    """A stream whose first bytes were already read (to look for the magic)."""

    def __init__(self, head: bytes, rest):
        self.head, self.rest = head, rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0:
                out, self.head = self.head + self.rest.read(), b""
                return out
            out, self.head = self.head[:n], self.head[n:]
            if len(out) < n:
                out += self.rest.read(n - len(out))
            return out
        return self.rest.read(n)


__all__ = ["ArrayFileError", "NpzArchive", "read_npy", "kind_of", "NUMERIC_KINDS"]
