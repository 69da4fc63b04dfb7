"""The `.mvm` text format of the MiniVM, read into a `MiniProgram`.

    # the classic demo (a comment runs from # or ; to the end of the line)
    .registers 4          # optional: the register file's size (default: highest used + 1)
    .hl stays             # optional: HL leaves the pc where it is (the never-halting loop)
            LD  r1 3
            LD  r2 2
            CH  r1 plus   # a target is a label or an instruction number (pc)
            SUB r1 r2 r0
            JM  done
    plus:   ADD r1 r2 r0
    done:   HL

One instruction per line; operands are separated by spaces or commas; opcodes and register
names are case-insensitive. Every mistake is a `MvmSyntaxError` at its line and column (the
command line prints it as FILE:LINE:COL with the line and a caret, exit 2).
"""
from __future__ import annotations

import re

from rvmdbg.minivm.isa import HL, OPCODES, WORD_BITS
from rvmdbg.minivm.program import MiniProgram
from rvmdbg.relay.diagnostics import ParseError, Source, Span

MAX_REGISTERS = 256
MAX_INSTRUCTIONS = 1 << 20

_TOKEN = re.compile(r"[^\s,]+")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")
_REGISTER = re.compile(r"[rR](\d+)$")
_INT = re.compile(r"[+-]?\d+$")

# operand kinds of each opcode, as the error messages name them
_SIGNATURES = {
    "LD": ("register", "immediate"),
    "ADD": ("register", "register", "register"),
    "SUB": ("register", "register", "register"),
    "CH": ("register", "target"),
    "JM": ("target",),
    "HL": (),
}
_USAGE = {"LD": "LD r imm", "ADD": "ADD a b dst", "SUB": "SUB a b dst", "CH": "CH r target",
          "JM": "JM target", "HL": "HL"}


class MvmSyntaxError(ParseError):
    """A mistake in a `.mvm` file, located; `format()` quotes the line with a caret."""


class _Token:
    __slots__ = ("text", "line", "col")

    def __init__(self, text: str, line: int, col: int):
        self.text, self.line, self.col = text, line, col

    def span(self, file: str) -> Span:
        return Span(self.line, self.col, self.line, self.col + len(self.text), file)


def _strip_comment(line: str) -> str:
    for mark in ("#", ";"):
        i = line.find(mark)
        if i >= 0:
            line = line[:i]
    return line


def parse_mvm(text: str, filename: str = "<input>") -> MiniProgram:
    """Read a `.mvm` program; raises MvmSyntaxError at the first mistake."""
    source = Source(filename, text)

    def fail(message: str, token: _Token | None = None, line: int = 1, col: int = 1,
             hint: str | None = None):
        span = token.span(filename) if token is not None else Span(line, col, line, col + 1,
                                                                   filename)
        raise MvmSyntaxError(message, span, hint, source)

    labels: dict[str, tuple[int, _Token]] = {}
    rows: list[tuple[str, list[_Token], _Token, Span]] = []   # (opcode, operands, opcode token, span)
    registers_directive: tuple[int, _Token] | None = None
    hl_stays = False
    for lineno, raw in enumerate(text.split("\n"), start=1):
        code = _strip_comment(raw.rstrip("\r"))
        tokens = [_Token(m.group(), lineno, m.start() + 1) for m in _TOKEN.finditer(code)]
        if not tokens:
            continue
        first = tokens[0]
        if first.text.startswith("."):
            registers_directive, hl_stays = _directive(tokens, fail, registers_directive, hl_stays)
            continue
        # labels: `name:` (several may precede one instruction)
        while tokens and tokens[0].text.endswith(":"):
            tok = tokens.pop(0)
            name = tok.text[:-1]
            if not _LABEL.match(name):
                fail(f"bad label {name!r}", tok,
                     hint="a label is a letter or _ then letters, digits, _ or .")
            if name.upper() in OPCODES or _REGISTER.match(name):
                fail(f"label {name!r} is an opcode or register name", tok)
            if name in labels:
                where = labels[name][1]
                fail(f"label {name!r} is defined twice (first at line {where.line})", tok)
            labels[name] = (len(rows), tok)
        if not tokens:
            continue
        op_tok = tokens[0]
        op = op_tok.text.upper()
        if op not in OPCODES:
            fail(f"unknown opcode {op_tok.text!r}", op_tok,
                 hint="the MiniVM's opcodes are " + ", ".join(_USAGE.values()))
        operands = tokens[1:]
        kinds = _SIGNATURES[op]
        if len(operands) != len(kinds):
            where = operands[len(kinds)] if len(operands) > len(kinds) else None
            if where is None:
                end = (operands[-1] if operands else op_tok)
                fail(f"{op} takes {len(kinds)} operand{'s' if len(kinds) != 1 else ''}, got "
                     f"{len(operands)}: expected {_USAGE[op]}", line=lineno,
                     col=end.col + len(end.text))
            fail(f"{op} takes {len(kinds)} operand{'s' if len(kinds) != 1 else ''}, got "
                 f"{len(operands)}: expected {_USAGE[op]}", where)
        last = operands[-1] if operands else op_tok
        span = Span(lineno, op_tok.col, lineno, last.col + len(last.text), filename)
        rows.append((op, operands, op_tok, span))
        if len(rows) > MAX_INSTRUCTIONS:
            fail(f"more than {MAX_INSTRUCTIONS} instructions", op_tok)
    if not rows:
        lines = text.split("\n")
        fail("the program has no instructions", line=len(lines), col=1,
             hint="write at least one, e.g. `HL`")

    highest = -1
    decoded = []
    for op, operands, op_tok, _span in rows:
        values = []
        for kind, tok in zip(_SIGNATURES[op], operands):
            if kind == "register":
                m = _REGISTER.match(tok.text)
                if not m:
                    fail(f"expected a register (r0, r1, ...), got {tok.text!r}", tok,
                         hint=f"{op} is written {_USAGE[op]}")
                n = int(m.group(1))
                if n >= MAX_REGISTERS:
                    fail(f"register {tok.text} is past the last one (r{MAX_REGISTERS - 1})", tok)
                highest = max(highest, n)
                values.append(n)
            elif kind == "immediate":
                if not _INT.match(tok.text):
                    fail(f"expected an integer, got {tok.text!r}", tok)
                v = int(tok.text)
                if not -(1 << (WORD_BITS - 1)) <= v < (1 << (WORD_BITS - 1)):
                    fail(f"{tok.text} does not fit a {WORD_BITS}-bit register", tok)
                values.append(v)
            else:  # target
                if _INT.match(tok.text):
                    t = int(tok.text)
                elif tok.text in labels:
                    t = labels[tok.text][0]
                else:
                    known = ", ".join(sorted(labels)) or "none defined"
                    fail(f"expected a label or an instruction number, got {tok.text!r}", tok,
                         hint=f"labels: {known}")
                if not 0 <= t < len(rows):
                    fail(f"jump target {tok.text} is outside the program (instructions "
                         f"0..{len(rows) - 1})", tok, hint="to stop, jump to an HL")
                values.append(t)
        decoded.append(values)

    if registers_directive is not None:
        count, tok = registers_directive
        if count <= highest:
            fail(f".registers {count} is too few: the program uses r{highest}", tok)
    else:
        count = max(highest + 1, 1)

    instructions = []
    source_map = {}
    for pc, ((op, _operands, _tok, span), values) in enumerate(zip(rows, decoded)):
        cls = OPCODES[op]
        instructions.append(HL(hl_stays) if cls is HL else cls(*values))
        source_map[(0, pc)] = span
    return MiniProgram(instructions, count, source_map, text, filename, hl_stays=hl_stays)


def _directive(tokens, fail, registers_directive, hl_stays):
    first = tokens[0]
    name = first.text.lower()
    args = tokens[1:]
    if name == ".registers":
        if len(args) != 1 or not args[0].text.isdigit():
            fail(".registers takes one number: the register file's size",
                 args[0] if args else first)
        n = int(args[0].text)
        if not 1 <= n <= MAX_REGISTERS:
            fail(f".registers must be 1..{MAX_REGISTERS}", args[0])
        return (n, args[0]), hl_stays
    if name == ".hl":
        if len(args) != 1 or args[0].text.lower() not in ("halts", "stays"):
            fail(".hl takes `halts` (the default) or `stays` (HL leaves the pc where it is)",
                 args[0] if args else first)
        return registers_directive, args[0].text.lower() == "stays"
    fail(f"unknown directive {first.text!r}", first, hint="directives: .registers N, .hl halts|stays")


def load_mvm(path: str) -> MiniProgram:
    """Read and parse a `.mvm` file (a missing or unreadable file is an OSError)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return parse_mvm(text, path)


__all__ = ["parse_mvm", "load_mvm", "MvmSyntaxError", "MAX_REGISTERS"]
