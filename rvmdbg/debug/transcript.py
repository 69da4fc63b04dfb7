"""`set logging`: a copy of the debugger's output in a file, as gdb's `set logging` keeps one.

The command language owns one `Transcript`; what it prints while logging is on is appended
to the file (the screen adds the stops its keys make, so the file holds what its console
shows). gdb's forms are read: `set logging on [FILE]`, `set logging off`, `set logging file
FILE`, `set logging enabled on|off`, and the short `set logging FILE`.
"""
from __future__ import annotations

from pathlib import Path

from rvmdbg.i18n import _

DEFAULT_FILE = "rvmdbg.txt"   # gdb's default is gdb.txt in the current directory


class TranscriptError(Exception):
    """A `set logging` command that cannot be carried out (a bad form, an unwritable file)."""


class Transcript:
    def __init__(self) -> None:
        self.path = DEFAULT_FILE
        self._file = None

    @property
    def active(self) -> bool:
        return self._file is not None

    def write(self, text: str) -> None:
        """Append `text` (a line or lines) when logging is on."""
        if self._file is not None and text:
            self._file.write(text if text.endswith("\n") else text + "\n")
            self._file.flush()

    def start(self, path: str | None = None) -> str:
        if path:
            self.stop()
            self.path = path
        if self._file is None:
            try:
                self._file = open(Path(self.path).expanduser(), "a", encoding="utf-8")
            except OSError as exc:
                raise TranscriptError(_("cannot log to {path}: {error}").format(
                    path=self.path, error=exc.strerror or exc)) from None
        return _("logging to {path} (appending; `set logging off` stops)").format(path=self.path)

    def stop(self) -> str:
        if self._file is None:
            return _("logging is off")
        self._file.close()
        self._file = None
        return _("done logging to {path}").format(path=self.path)

    def command(self, args: list[str]) -> str:
        """`set logging ARGS` (the words after `logging`)."""
        words = [a.lower() for a in args]
        if words[:1] == ["enabled"]:
            words, args = words[1:], args[1:]
            if words not in (["on"], ["off"]):
                raise TranscriptError(_("usage: {forms}").format(forms="set logging enabled on|off"))
        if not words:
            return (_("logging to {path}") if self.active
                    else _("logging is off (the file would be {path})")).format(path=self.path)
        if words[0] == "on":
            return self.start(args[1] if len(args) > 1 else None)
        if words[0] == "off":
            return self.stop()
        if words[0] == "file":
            if len(args) != 2:
                raise TranscriptError(_("usage: {forms}").format(forms="set logging file FILE"))
            if self.active:
                self.stop()
                return self.start(args[1])
            self.path = args[1]
            return _("the log file is {path} (`set logging on` starts)").format(path=self.path)
        if len(args) == 1:
            return self.start(args[0])
        raise TranscriptError(_("usage: {forms}").format(
            forms="set logging on [FILE] | off | file FILE | FILE"))


__all__ = ["Transcript", "TranscriptError", "DEFAULT_FILE"]
