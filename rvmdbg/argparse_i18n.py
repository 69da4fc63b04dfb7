"""argparse in the language in use: its own words ("usage:", "options", "invalid choice",
"the following arguments are required", ...) through rvmdbg's catalog, and help text wrapped
by terminal cells, so that `rvmdbg --help` and every `rvmdbg COMMAND --help` read whole in
Chinese.

argparse looks its words up with `gettext.gettext` (the default domain, which rvmdbg's catalog
is not) through the names `_` and `ngettext` of its own module, when a parser is built (the
section titles, `-h`'s help) and when it reports (usage, errors). `speaking()` points those
two names at rvmdbg's translation while rvmdbg builds and uses its parsers, and puts them
back after: other users of argparse in the process (pytest) are left as they were. In English
the words come out as argparse wrote them.

The msgids below are argparse's own (Python 3.11's `argparse.py`; the ones a user of rvmdbg's
parsers can meet: no mutually exclusive groups, files or fixed counts here, and not those
reporting a programming error in a parser), declared with `N_` so that the catalog extraction
sees them. A Python that words one differently shows that one in English.
"""
from __future__ import annotations

import argparse
import re
import unicodedata
from contextlib import contextmanager
from typing import Iterator

from rvmdbg import i18n
from rvmdbg.i18n import N_

ARGPARSE_WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("ignored explicit argument %r"),
    N_("unexpected option string: %s"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)


@contextmanager
def speaking() -> Iterator[None]:
    """argparse's own words in the language in use while the block runs (build a parser,
    parse, print help or an error)."""
    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = i18n._, i18n.ngettext
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


def cells(text: str) -> int:
    """The width of `text` in terminal cells (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# the pieces a line breaks between: spaces, a run of narrow characters, one wide character;
# opening punctuation holds to what follows it, closing punctuation to what it follows
_OPEN, _CLOSE = "[（《「『“‘【]*", "[，。；：、）》」』”’！？】]*"
_PIECE = re.compile(rf"\s+|{_OPEN}[^\s\u2e80-\uffef]+{_CLOSE}|{_OPEN}[\u2e80-\uffef]{_CLOSE}")


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken at spaces and between wide
    characters (a word longer than a line stays whole, as argparse's textwrap leaves it)."""
    lines: list[str] = []
    line, used, space = "", 0, False
    for piece in _PIECE.findall(" ".join(text.split())):
        if piece.isspace():
            space = bool(line)
            continue
        gap = " " if space else ""
        need = cells(gap + piece)
        if line and used + need > width:
            lines.append(line)
            line, used = piece, cells(piece)
        else:
            line, used = line + gap + piece, used + need
        space = False
    if line:
        lines.append(line)
    return lines


class CellHelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, measured in cells where the text has wide characters (English
    help is laid out exactly as argparse does)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if cells(text) == len(text):
            return super()._split_lines(text, width)
        return wrap_cells(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if cells(text) == len(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap_cells(text, width - len(indent)))

    def _format_usage(self, usage, actions, groups, prefix) -> str:
        if prefix is None:
            prefix = argparse._("usage: ")
        extra = cells(prefix) - len(prefix)
        if not extra or usage is not None:   # (a usage given is laid out already)
            return super()._format_usage(usage, actions, groups, prefix)
        # argparse measures the prefix by len(): wrap `extra` cells narrower, and indent the
        # continuation lines by the prefix's cells
        self._width -= extra
        try:
            text = super()._format_usage(usage, actions, groups, prefix)
        finally:
            self._width += extra
        first, *rest = text.split("\n")
        return "\n".join([first] + [" " * extra + ln if ln.strip() else ln for ln in rest])


class TranslatedParser(argparse.ArgumentParser):
    """An ArgumentParser whose help is laid out by cells (`CellHelpFormatter`, its
    subparsers' too) and whose intermixed parsing keeps the usage whole in any language."""

    def __init__(self, *a, **kw):
        kw.setdefault("formatter_class", CellHelpFormatter)
        super().__init__(*a, **kw)

    def parse_known_intermixed_args(self, args=None, namespace=None):
        # argparse keeps the usage for its errors by cutting its English `usage: ` (seven
        # characters) off format_usage(): cut the prefix in use instead
        saved = self.usage
        if saved is None:
            prefix = argparse._("usage: ")
            usage = self.format_usage()
            self.usage = usage[len(prefix):] if usage.startswith(prefix) else usage[7:]
        try:
            return super().parse_known_intermixed_args(args, namespace)
        finally:
            self.usage = saved


__all__ = ["ARGPARSE_WORDS", "CellHelpFormatter", "TranslatedParser", "cells", "speaking",
           "wrap_cells"]
