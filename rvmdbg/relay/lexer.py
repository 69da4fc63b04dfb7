"""The Relay text lexer: source text to a flat list of tokens, in one compiled-regex scan.

It follows TVM's tokenizer where programs depend on it:
- number lexing is greedy (`[0-9.eE+-]` after the first digit), so `1-2` is one bad number
  and `%n-1` is `%n` followed by the literal `-1`; a run of dashes before a digit is a sign
  (`--1` is 1);
- `/` may appear in identifiers after the first character (`%tf/embeddings`), so `%x/%y` is the
  name `%x/` followed by `%y`;
- `//` comments run to the end of the line and `/* ... */` comments nest.

A token is a tuple `(kind, text, line, col, end_line, end_col, value)`: `kind` is the punctuation
itself (`"("`, `"->"`), a keyword (`"let"`, `"match?"`), or one of `NAME LOCAL GRAPH GLOBAL NUM
BOOL STR ATTR EOF`. `value` is the name without its sigil for LOCAL/GLOBAL/NAME, the index for
GRAPH, the content for STR/ATTR, the bool for BOOL and a `Number` for NUM.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from rvmdbg.i18n import _
from rvmdbg.relay.diagnostics import LexError, Source, Span

NAME = "NAME"
LOCAL = "LOCAL"
GRAPH = "GRAPH"
GLOBAL = "GLOBAL"
NUM = "NUM"
BOOL = "BOOL"
STR = "STR"
ATTR = "ATTR"
EOF = "EOF"

KEYWORDS = {
    "def": "def", "type": "type", "extern": "extern", "let": "let", "fn": "fn", "if": "if",
    "else": "else", "match": "match", "ref": "ref", "ref_read": "ref_read",
    "ref_write": "ref_write", "free_var": "free_var", "_": "_", "match?": "match?",
}

_IDENT = r"[A-Za-z_][A-Za-z0-9_/]*"

# One alternative per token class, after optional blanks; the first that matches wins.
# A newline (with the blank lines and indentation after it) is its own token, for line counting.
_MASTER = re.compile(
    r"[ \t\r]*(?:"
    r"(?P<punct>[(){}\[\],;:.?+*]|->|=>|==|!=|<=|>=|[<>=]|/(?![/*])"
    r"|-(?!-*(?:[0-9]|(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_/]))))"
    rf"|(?P<local>%{_IDENT})"
    r"|(?P<nl>\n[ \t\r\n]*)"
    rf"|(?P<ident>match\?|(?!(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_/])){_IDENT})"
    # an object's address in TVM's repr (`Target(id=1d233c937a0, ...)`): hex digits, a
    # string here (it would read as a number with a suffix); at least 6, one a letter
    r"|(?P<hexid>(?<=id=)(?=[0-9a-f]{6,}(?![A-Za-z0-9_]))[0-9]*[a-f][0-9a-f]*)"
    r"|(?P<num>-*(?:[0-9][0-9.eE+\-]*(?:[fiu][0-9.eE+\-]*)?"
    r"|(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_/])))"
    r"|(?P<graph>%[0-9]+)"
    rf"|(?P<glob>@{_IDENT})"
    r"|(?P<linecomment>//[^\n]*)"
    r"|(?P<blockcomment>/\*)"
    # TVM's printer writes the strings inside an object's repr in single quotes
    # (`kind='llvm'`, `'tvmgen_default_fused_add'` in call_lowered's metadata)
    r'|(?P<string>"[^"]*"|\'[^\'\n]*\')'
    r"|(?P<attr>#\[[^\]\n]*\])"
    r"|(?P<other>.)"
    r"|(?P<end>\Z))",
    re.DOTALL,
)

# The strict form of a number, checked after the greedy scan.
_NUMBER = re.compile(
    r"(?P<sign>-*)(?:(?P<special>inf|nan)f(?P<swidth>[0-9]*)"
    r"|(?P<int>[0-9]+)(?P<frac>\.[0-9]+)?(?P<exp>[eE][+-]?[0-9]+)?"
    r"(?:(?P<suffix>[fiu])(?P<width>[0-9]*))?)"
)

INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1), "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
    "uint8": (0, (1 << 8) - 1), "uint16": (0, (1 << 16) - 1),
    "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1),
}


_INF = float("inf")
# largest finite magnitude per float width (TVM's ValueToFloatImm checks these)
_FLOAT_MAX = {"16": 65504.0, "32": 3.4028234663852886e38}


class Number(NamedTuple):
    """A numeric literal: `dtype` is None for a float written without the `f` suffix (only
    allowed as an attribute value)."""

    value: int | float
    dtype: str | None
    is_float: bool


def _number(text: str, span: Span, source: Source, before: str) -> Number:
    """Check and evaluate the greedy text of a number token."""
    m = _NUMBER.fullmatch(text)
    if m is None:
        raise LexError(_("invalid number `{text}`").format(text=text), span,
                       _number_hint(text, before), source)
    negative = len(m.group("sign")) % 2 == 1
    if m.group("special"):
        width = m.group("swidth") or "32"
        if width not in ("16", "32", "64"):
            raise LexError(_("invalid float width in `{text}`").format(text=text), span,
                           _("float suffixes are f16, f32 and f64"), source)
        value = float(m.group("special"))
        return Number(-value if negative else value, "float" + width, True)
    digits = m.group("int")
    is_float = bool(m.group("frac") or m.group("exp"))
    suffix, width = m.group("suffix"), m.group("width")
    if suffix == "f" or is_float:
        if suffix in ("i", "u"):
            raise LexError(_("an integer suffix on the float literal `{text}`").format(text=text),
                           span, _("a float literal takes f, f16, f32 or f64"), source)
        body = digits + (m.group("frac") or "") + (m.group("exp") or "")
        value = float(body)
        if negative:
            value = -value
        if value in (_INF, -_INF):
            # TVM's tokenizer reads the digits with stod, which refuses a value past float64
            raise LexError(_("invalid floating point number `{text}`").format(text=text), span,
                           _("the value is beyond float64's range; write inff for infinity"),
                           source)
        if suffix is None:
            return Number(value, None, True)
        width = width or "32"
        if width not in ("16", "32", "64"):
            raise LexError(_("invalid float suffix in `{text}`").format(text=text), span,
                           _("float suffixes are f, f16, f32 and f64"), source)
        limit = _FLOAT_MAX.get(width)
        if limit is not None and abs(value) > limit:
            # TVM refuses it rather than rounding to inf (or float16's 65504)
            raise LexError(_("floating point number `{text}` unrepresentable in width {width}")
                           .format(text=text, width=width), span,
                           _("float{width} holds magnitudes up to {limit}; use a wider suffix "
                             "or inff").format(width=width, limit=f"{limit:.6g}"), source)
        return Number(value, "float" + width, True)
    if len(digits.lstrip("0")) > 20:   # no dtype holds more digits; int() refuses 4300+
        raise LexError(_("an integer literal of {n} digits is out of range for every integer "
                         "dtype").format(n=len(digits)), span, None, source)
    value = int(digits)
    if negative:
        value = -value
    if suffix is None:
        # TVM: an unsuffixed integer that does not fit int32 is an int64.
        dtype = "int32" if -(1 << 31) <= value < (1 << 31) else "int64"
    elif suffix == "i" and not width:
        dtype = "int32"  # TVM: a bare `i` suffix is width 32
    else:
        if width not in ("8", "16", "32", "64"):
            raise LexError(_("invalid integer suffix in `{text}`").format(text=text), span,
                           _("integer suffixes are i, i8, i16, i32, i64, u8, u16, u32 and u64"),
                           source)
        dtype = ("int" if suffix == "i" else "uint") + width
    lo, hi = INT_RANGES[dtype]
    if not lo <= value <= hi:
        raise LexError(_("integer literal `{text}` is out of range for {dtype}").format(
            text=text, dtype=dtype), span, None, source)
    return Number(value, dtype, False)


def _number_hint(text: str, before: str) -> str | None:
    body = text.lstrip("-")
    if before == "." and body.count(".") >= 1:
        return _("a projection index followed by `.` reads as a decimal number: write "
                 "(%t.0).1")
    for i in range(1, len(body)):
        if body[i] in "+-" and body[i - 1] not in "eE":
            return _("write `{spaced}` with spaces: numbers lex greedily").format(
                spaced=f"{body[:i]} {body[i]} {body[i + 1:]}")
    if body.count(".") > 1:
        return _("a number has at most one decimal point")
    return None


def tokenize(text: str, filename: str = "<input>", source: Source | None = None) -> list:
    """Split text into tokens; the list ends with an EOF token. Raises LexError."""
    if source is None:
        source = Source(filename, text)
    toks: list = []
    append = toks.append
    finditer = _MASTER.finditer
    keywords = KEYWORDS
    numbers: dict = {}  # literal text -> Number: programs repeat the same few literals
    line = 1
    line_start = 0
    resume = 0
    while resume is not None:
        pos, resume = resume, None
        for m in finditer(text, pos):
            kind = m.lastgroup
            if kind == "punct":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                append((t, t, line, col, line, col + len(t), None))
            elif kind == "local":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                append((LOCAL, t, line, col, line, col + len(t), t[1:]))
            elif kind == "nl":
                t = m[kind]
                line += t.count("\n")
                line_start = m.end() - (len(t) - t.rindex("\n") - 1)
            elif kind == "ident":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                k = keywords.get(t)
                if k is not None:
                    append((k, t, line, col, line, col + len(t), None))
                elif t == "True" or t == "False":
                    append((BOOL, t, line, col, line, col + len(t), t == "True"))
                else:
                    append((NAME, t, line, col, line, col + len(t), t))
            elif kind == "num":
                t = m[kind]
                start = m.start(kind)
                col = start - line_start + 1
                num = numbers.get(t)
                if num is None:
                    span = Span(line, col, line, col + len(t), filename)
                    before = text[start - 1] if start else ""
                    num = numbers[t] = _number(t, span, source, before)
                append((NUM, t, line, col, line, col + len(t), num))
            elif kind == "hexid":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                append((STR, t, line, col, line, col + len(t), t))
            elif kind == "graph":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                append((GRAPH, t, line, col, line, col + len(t), int(t[1:])))
            elif kind == "glob":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                append((GLOBAL, t, line, col, line, col + len(t), t[1:]))
            elif kind == "linecomment" or kind == "end":
                pass
            elif kind == "blockcomment":
                # nesting needs a scan by hand; the regex scan resumes after the comment
                start = m.start(kind)
                resume = _skip_block_comment(text, start, line, start - line_start + 1, filename,
                                             source)
                nl = text.count("\n", start, resume)
                if nl:
                    line += nl
                    line_start = text.rindex("\n", start, resume) + 1
                break
            elif kind == "string":
                t = m[kind]
                start = m.start(kind)
                col = start - line_start + 1
                nl = t.count("\n")
                if nl:
                    end_line, end_col = line + nl, len(t) - t.rindex("\n")
                else:
                    end_line, end_col = line, col + len(t)
                append((STR, t, line, col, end_line, end_col, t[1:-1]))
                if nl:
                    line += nl
                    line_start = start + t.rindex("\n") + 1
            elif kind == "attr":
                t = m[kind]
                col = m.end() - line_start - len(t) + 1
                inner = t[2:-1].strip()
                if inner == "metadata":
                    # the loader split the section off: only its own line is left, at the end
                    if text[m.end():].strip():
                        raise LexError(_("#[metadata] must be on a line of its own, after "
                                         "the program"),
                                       Span(line, col, line, col + len(t), filename),
                                       _("TVM writes the metadata section last: the line "
                                         "#[metadata], then its JSON document"), source)
                    break
                append((ATTR, t, line, col, line, col + len(t), inner))
            else:  # other
                start = m.start(kind)
                _bad_char(text, start, line, start - line_start + 1, filename, source)
    col = len(text) - line_start + 1
    append((EOF, "", line, col, line, col, None))
    return toks


def _skip_block_comment(text: str, pos: int, line: int, col: int, filename: str,
                        source: Source) -> int:
    """The position after the `*/` closing the (nestable) comment opened at pos."""
    depth = 0
    i = pos
    find = text.find
    while True:
        close = find("*/", i)
        opening = find("/*", i)
        if close < 0:
            raise LexError(_("unterminated `/*` comment"),
                           Span(line, col, line, col + 2, filename),
                           _("block comments nest: every `/*` needs its own `*/`"), source)
        if 0 <= opening < close:
            depth += 1
            i = opening + 2
        else:
            depth -= 1
            i = close + 2
            if depth == 0:
                return i


def _bad_char(text: str, pos: int, line: int, col: int, filename: str, source: Source) -> None:
    c = text[pos]
    span = Span(line, col, line, col + 1, filename)
    if c == "%":
        raise LexError(_("expected a variable name or number after `%`"), span,
                       _("locals are written %name, graph variables %0"), source)
    if c == "@":
        raise LexError(_("expected a function name after `@`"), span, None, source)
    if c == '"':
        raise LexError(_("unterminated string literal"), span, _("close it with `\"`"), source)
    if c == "#":
        if text.startswith("#[", pos):
            raise LexError(_("unterminated `#[` attribute"), span, _("close it with `]`"), source)
        raise LexError(_("`#` only starts an attribute such as #[version = \"0.0.5\"]"), span,
                       _("comments are written // or /* */"), source)
    if c == "!":
        raise LexError(_("unexpected `!`"), span, _("not-equal is written `!=`"), source)
    raise LexError(_("unexpected character {char}").format(char=repr(c)), span, None, source)
