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

from rvmdbg.i18n import _, ngettext
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
                fail(_("bad label {name}").format(name=repr(name)), tok,
                     hint=_("a label is a letter or _ then letters, digits, _ or ."))
            if name.upper() in OPCODES or _REGISTER.match(name):
                fail(_("label {name} is an opcode or register name").format(name=repr(name)), tok)
            if name in labels:
                where = labels[name][1]
                fail(_("label {name} is defined twice (first at line {line})").format(
                    name=repr(name), line=where.line), tok)
            labels[name] = (len(rows), tok)
        if not tokens:
            continue
        op_tok = tokens[0]
        op = op_tok.text.upper()
        if op not in OPCODES:
            fail(_("unknown opcode {op}").format(op=repr(op_tok.text)), op_tok,
                 hint=_("the MiniVM's opcodes are {usage}").format(
                     usage=", ".join(_USAGE.values())))
        operands = tokens[1:]
        kinds = _SIGNATURES[op]
        if len(operands) != len(kinds):
            where = operands[len(kinds)] if len(operands) > len(kinds) else None
            message = ngettext("{op} takes {n} operand, got {given}: expected {usage}",
                               "{op} takes {n} operands, got {given}: expected {usage}",
                               len(kinds)).format(op=op, n=len(kinds), given=len(operands),
                                                  usage=_USAGE[op])
            if where is None:
                end = (operands[-1] if operands else op_tok)
                fail(message, line=lineno, col=end.col + len(end.text))
            fail(message, where)
        last = operands[-1] if operands else op_tok
        span = Span(lineno, op_tok.col, lineno, last.col + len(last.text), filename)
        rows.append((op, operands, op_tok, span))
        if len(rows) > MAX_INSTRUCTIONS:
            fail(_("more than {n} instructions").format(n=MAX_INSTRUCTIONS), op_tok)
    if not rows:
        lines = text.split("\n")
        fail(_("the program has no instructions"), line=len(lines), col=1,
             hint=_("write at least one, e.g. `HL`"))

    highest = -1
    decoded = []
    for op, operands, op_tok, _span in rows:
        values = []
        for kind, tok in zip(_SIGNATURES[op], operands):
            if kind == "register":
                m = _REGISTER.match(tok.text)
                if not m:
                    fail(_("expected a register (r0, r1, ...), got {text}").format(
                        text=repr(tok.text)), tok,
                        hint=_("{op} is written {usage}").format(op=op, usage=_USAGE[op]))
                n = int(m.group(1))
                if n >= MAX_REGISTERS:
                    fail(_("register {reg} is past the last one ({last})").format(
                        reg=tok.text, last=f"r{MAX_REGISTERS - 1}"), tok)
                highest = max(highest, n)
                values.append(n)
            elif kind == "immediate":
                if not _INT.match(tok.text):
                    fail(_("expected an integer, got {text}").format(text=repr(tok.text)), tok)
                v = int(tok.text)
                if not -(1 << (WORD_BITS - 1)) <= v < (1 << (WORD_BITS - 1)):
                    fail(_("{value} does not fit a {bits}-bit register").format(
                        value=tok.text, bits=WORD_BITS), tok)
                values.append(v)
            else:  # target
                if _INT.match(tok.text):
                    t = int(tok.text)
                elif tok.text in labels:
                    t = labels[tok.text][0]
                else:
                    known = ", ".join(sorted(labels)) or _("none defined")
                    fail(_("expected a label or an instruction number, got {text}").format(
                        text=repr(tok.text)), tok, hint=_("labels: {known}").format(known=known))
                if not 0 <= t < len(rows):
                    fail(_("jump target {target} is outside the program (instructions "
                           "0..{last})").format(target=tok.text, last=len(rows) - 1), tok,
                         hint=_("to stop, jump to an HL"))
                values.append(t)
        decoded.append(values)

    if registers_directive is not None:
        count, tok = registers_directive
        if count <= highest:
            fail(_(".registers {count} is too few: the program uses {reg}").format(
                count=count, reg=f"r{highest}"), tok)
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
            fail(_(".registers takes one number: the register file's size"),
                 args[0] if args else first)
        n = int(args[0].text)
        if not 1 <= n <= MAX_REGISTERS:
            fail(_(".registers must be 1..{max}").format(max=MAX_REGISTERS), args[0])
        return (n, args[0]), hl_stays
    if name == ".hl":
        if len(args) != 1 or args[0].text.lower() not in ("halts", "stays"):
            fail(_(".hl takes `halts` (the default) or `stays` (HL leaves the pc where it is)"),
                 args[0] if args else first)
        return registers_directive, args[0].text.lower() == "stays"
    fail(_("unknown directive {name}").format(name=repr(first.text)), first,
         hint=_("directives: .registers N, .hl halts|stays"))


def load_mvm(path: str) -> MiniProgram:
    """Read and parse a `.mvm` file (a missing or unreadable file is an OSError)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return parse_mvm(text, path)


__all__ = ["parse_mvm", "load_mvm", "MvmSyntaxError", "MAX_REGISTERS"]
