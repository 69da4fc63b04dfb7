"""Reading and writing the files a user names, safely.

Every file rvmdbg reads on a user's behalf (a program, an executable, a `.npy`, a keys or
breakpoints file, a batch script) goes through `read_file`: it opens without blocking, checks
on the open descriptor that it is a regular file (not a FIFO, a device, a directory or a
socket, whatever a symlink points at) and that its size is within a limit, and only then
reads. So `/dev/zero`, a FIFO nobody writes to, or a 64 GiB file is a message, never a hang or
an out-of-memory kill.

Every file rvmdbg writes goes through `write_atomic`: a fresh temporary file in the
destination's directory, created with O_EXCL and without following symlinks, written whole,
then renamed over the destination; it is removed on every failure.
"""
from __future__ import annotations

import os
import secrets
import stat

# a program text, a keys or breakpoints file, a batch script
TEXT_LIMIT = 256 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class FileRefused(OSError):
    """A file that exists but is not one rvmdbg will read (kind or size); `str()` says why."""

    def __init__(self, path, reason: str):
        super().__init__(reason)
        self.filename = os.fspath(path)
        self.strerror = reason
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def read_file(path, limit: int = TEXT_LIMIT, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, refused (FileRefused) when it is something else
    or larger than `limit`; OSError (FileNotFoundError, PermissionError...) as the OS says."""
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(name, f"{_kind(st.st_mode)}, not a {what} rvmdbg can read")
        if st.st_size > limit:
            raise FileRefused(name, f"{_size_text(st.st_size)}, larger than the "
                                    f"{_size_text(limit)} a {what} may be")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 24, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:   # the file grew while being read
                raise FileRefused(name, f"larger than the {_size_text(limit)} a {what} may be")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path, limit: int = TEXT_LIMIT, what: str = "file") -> str:
    """`read_file` decoded as UTF-8 (a leading byte-order mark dropped); UnicodeDecodeError
    when it is not UTF-8."""
    data = read_file(path, limit, what)
    return data.decode("utf-8-sig")


def write_atomic(path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` atomically: a new temporary file beside it (O_EXCL, no
    symlink followed), then a rename. The temporary file never outlives a failure."""
    name = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(name))
    tmp = os.path.join(folder, f".{os.path.basename(name)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)
        os.replace(tmp, name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = ["FileRefused", "read_file", "read_text", "write_atomic", "TEXT_LIMIT"]
