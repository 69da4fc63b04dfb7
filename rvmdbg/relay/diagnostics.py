"""Source positions and the one error type the front end raises.

Every lex, parse, type and name error is a `RelayError` carrying a `Span`; `format()` renders
`FILE:LINE:COL: error: MESSAGE`, the source line, a caret under the span and an optional hint.
"""
from __future__ import annotations

from dataclasses import dataclass

from rvmdbg.i18n import _
from rvmdbg.wording import escape_controls, picture_controls


@dataclass(frozen=True, init=False)
class Span:
    """A region of a source file: 1-based line and column of the start, end exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int
    file: str = "<input>"

    def __init__(self, line: int, col: int, end_line: int, end_col: int,
                 file: str = "<input>") -> None:
        # frozen: the fields are written once, straight into the instance's dict (the
        # dataclass's own __init__ goes through object.__setattr__ per field, twice as slow;
        # a large program makes a few spans per token)
        d = self.__dict__
        d["line"] = line
        d["col"] = col
        d["end_line"] = end_line
        d["end_col"] = end_col
        d["file"] = file

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def merge(self, other: "Span | None") -> "Span":
        """The smallest span covering both."""
        if other is None:
            return self
        start = min((self.line, self.col), (other.line, other.col))
        end = max((self.end_line, self.end_col), (other.end_line, other.end_col))
        return Span(start[0], start[1], end[0], end[1], self.file)


class Source:
    """The text of one file, kept so diagnostics can quote lines."""

    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text
        self.lines = text.split("\n")

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r")
        return ""


class RelayError(Exception):
    """A located error in a Relay program (lex, parse, name, type)."""

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 source: Source | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.source = source

    def format(self, source: Source | None = None) -> str:
        src = source or self.source
        # what the file holds is quoted with its control characters made harmless
        message = escape_controls(self.message)
        hint = escape_controls(self.hint) if self.hint else self.hint
        if self.span is None:
            head = f"{src.name if src else '<input>'}: error: {message}"
            return head + ("\n  " + _("hint: {hint}").format(hint=hint) if hint else "")
        sp = self.span
        out = [f"{sp.file}:{sp.line}:{sp.col}: error: {message}"]
        if src is not None:
            text = src.line_text(sp.line)
            if text or sp.line <= len(src.lines):
                gutter = f"{sp.line:>4} | "
                out.append(gutter + picture_controls(text.expandtabs(1)))
                width = (sp.end_col - sp.col) if sp.end_line == sp.line else len(text) - sp.col + 1
                width = max(1, width)
                out.append(" " * (len(gutter) + sp.col - 1) + "^" + "~" * (width - 1))
        if hint:
            out.append("  " + _("hint: {hint}").format(hint=hint))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.format()


class RelayWarning(RelayError):
    """A located warning: collected on `Module.warnings` and printed, never raised."""

    kind = "warning"

    def format(self, source: Source | None = None) -> str:
        return super().format(source).replace(": error: ", ": warning: ", 1)


class RelayNote(RelayWarning):
    """A located note: something read as TVM would, said once (an expression file without a
    version header); collected on `Module.warnings`."""

    kind = "note"

    def format(self, source: Source | None = None) -> str:
        return RelayError.format(self, source).replace(": error: ", ": note: ", 1)


class LexError(RelayError):
    kind = "lex"


class ParseError(RelayError):
    kind = "parse"


class NameResolutionError(RelayError):
    """Unbound names, duplicate definitions, unknown operators or attributes."""

    kind = "name"


class RelayTypeError(RelayError):
    kind = "type"
