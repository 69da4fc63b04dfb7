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

from rvmdbg.i18n import N_, _

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


def _refusal(mode: int, what: str) -> str:
    """Why a file of this mode is refused, for a `what` (a translated noun)."""
    if stat.S_ISDIR(mode):
        message = _("a directory, not a {what} rvmdbg can read")
    elif stat.S_ISFIFO(mode):
        message = _("a FIFO (named pipe), not a {what} rvmdbg can read")
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        message = _("a device, not a {what} rvmdbg can read")
    elif stat.S_ISSOCK(mode):
        message = _("a socket, not a {what} rvmdbg can read")
    else:
        message = _("not a regular file, not a {what} rvmdbg can read")
    return message.format(what=what)


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return _("{n} bytes").format(n=n)


def read_file(path, limit: int = TEXT_LIMIT, what: str = N_("file")) -> bytes:
    """The bytes of the regular file `path`, refused (FileRefused) when it is something else
    or larger than `limit`; OSError (FileNotFoundError, PermissionError...) as the OS says.
    `what` names the kind of file in messages: an English noun marked with N_ ("program",
    N_("keys file")), translated here."""
    name = os.fspath(path)
    what = _(what)
    fd = os.open(name, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(name, _refusal(st.st_mode, what))
        if st.st_size > limit:
            raise FileRefused(name, _("{size}, larger than the {limit} a {what} may be").format(
                size=_size_text(st.st_size), limit=_size_text(limit), what=what))
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 24, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:   # the file grew while being read
                raise FileRefused(name, _("larger than the {limit} a {what} may be").format(
                    limit=_size_text(limit), what=what))
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path, limit: int = TEXT_LIMIT, what: str = N_("file")) -> str:
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
