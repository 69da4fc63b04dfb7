"""Text drawings shared by the views: rows of (text, role) pieces, symbol sets and arrow lanes.

The engine draws; the screen only colours. A drawing is a list of rows, each a list of
`(text, role)` pieces: the role (`"taken"`, `"current"`, `"dim"`, ...) names what the piece
shows, and the screen maps roles to styles. Every state a role marks is also shown by a
symbol, so drawings read without colour, and each symbol set has an ASCII twin.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.cells import cell_len

UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8


def _box(table: str) -> dict:
    assert len(table) == 16
    return dict(enumerate(table))


#                       0    U    D    UD   L    UL   DL   UDL  R    UR   DR   UDR  LR   ULR  DLR  UDLR
_LIGHT = _box(" " + "╵" + "╷" + "│" + "╴" + "╯" + "╮" + "┤" + "╶" + "╰" + "╭" + "├" + "─" + "┴" + "┬" + "┼")
_HEAVY = _box(" " + "╹" + "╻" + "┃" + "╸" + "┛" + "┓" + "┫" + "╺" + "┗" + "┏" + "┣" + "━" + "┻" + "┳" + "╋")
_ASCII_LIGHT = _box(" " + "|" + "|" + "|" + "-" + "+" + "+" + "+" + "-" + "+" + "+" + "+" + "-" + "+" + "+" + "+")
_ASCII_HEAVY = _box(" " + "#" + "#" + "#" + "=" + "#" + "#" + "#" + "=" + "#" + "#" + "#" + "=" + "#" + "#" + "#")


@dataclass(frozen=True)
class Symbols:
    current: str        # the instruction about to run
    taken: str          # a test that passed, a clause that matched
    failed: str         # a test that failed
    pending: str        # not reached yet
    arrow: str          # "becomes", "goes to"
    head: str           # an arrow head entering a line
    shared: str         # a value reachable along more than one path
    tee: str            # tree branch
    last: str           # last tree branch
    bar: str            # tree trunk
    ellipsis: str
    light: dict = field(repr=False, default_factory=dict)
    heavy: dict = field(repr=False, default_factory=dict)


UNICODE = Symbols(current="▶", taken="✓", failed="✗", pending="·", arrow="→", head="▶",
                  shared="↺", tee="├─", last="└─", bar="│ ", ellipsis="…",
                  light=_LIGHT, heavy=_HEAVY)
ASCII = Symbols(current=">", taken="+", failed="x", pending=".", arrow="->", head=">",
                shared="@", tee="+-", last="`-", bar="| ", ellipsis="...",
                light=_ASCII_LIGHT, heavy=_ASCII_HEAVY)


def symbols_for(ascii_only: bool) -> Symbols:
    return ASCII if ascii_only else UNICODE


def pad(text: str, width: int) -> str:
    """`text` left-aligned in `width` terminal cells (`f"{text:<21}"` counts characters, and a
    Chinese character takes two cells)."""
    return text + " " * max(0, width - cell_len(text))


_WIDE = "\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f" \
        "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
_TOKENS = re.compile(f"[{_WIDE}]|[^\\s{_WIDE}]+|\\s+")


# Closing punctuation that never starts a line (CJK line breaking, as GB/T 15834 and JIS X
# 4051 set it): it stays with the character before it.
NO_LINE_START = set("，。、；：？！）」』》〉】〕｝…—%,.;:?!)]}")


def wrap(text: str, width: int) -> list:
    """`text` in lines of at most `width` cells, broken at spaces, and between Chinese
    characters (which have no spaces between them); textwrap counts characters. No line
    starts with closing punctuation: the character before it goes down with it."""
    lines, line = [], ""
    for token in _TOKENS.findall(text):
        if token.isspace():
            if line:
                line += " "
            continue
        if line and cell_len(line + token) > width:
            carry = ""
            if token[0] in NO_LINE_START:
                # take the last character (or word) of the line down with the punctuation
                parts = _TOKENS.findall(line.rstrip())
                if len(parts) > 1 and not parts[-1].isspace():
                    carry = parts[-1]
                    line = "".join(parts[:-1])
            lines.append(line.rstrip())
            line = carry
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def fold_line(line: str, width: int) -> list:
    """A console line in pieces of at most `width` cells, broken at the last space that
    fits (else between characters), each piece after the first indented two past the line's
    own indent; a line that fits stays as it is, spaces and all."""
    if width <= 8 or cell_len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    out, rest, prefix = [], line, ""
    while cell_len(prefix + rest) > width:
        room = width - cell_len(prefix)
        cut, cells = 0, 0
        for i, ch in enumerate(rest):   # the most characters that fit in `room` cells
            cells += cell_len(ch)
            if cells > room:
                break
            cut = i + 1
        space = rest.rfind(" ", 0, cut + 1)
        if space > len(rest) - len(rest.lstrip(" ")) and space > 0:
            cut = space
        piece, rest = rest[:cut], rest[cut:].lstrip(" ")
        while rest and rest[0] in NO_LINE_START and len(piece) > 1:
            piece, rest = piece[:-1], piece[-1] + rest   # punctuation keeps its character
        out.append(prefix + piece.rstrip())
        prefix = indent
        if not rest:
            break
    if rest:
        out.append(prefix + rest)
    return out


def table(rows: list, width: int, gap: int = 2, names: list | None = None) -> list:
    """Rows of cells (strings) as lines of at most `width` cells: columns aligned with `gap`
    spaces between them when they fit, else each row's label on a line and its other cells
    below it, indented (never run together nor cut). The first row is the header: in the
    stacked form its cells (or the shorter `names`) name the values below each label."""
    if not rows:
        return []
    ncols = max(len(r) for r in rows)
    rows = [list(r) + [""] * (ncols - len(r)) for r in rows]
    widths = [max(cell_len(str(r[c])) for r in rows) for c in range(ncols)]
    if sum(widths) + gap * (ncols - 1) <= width:
        return [(" " * gap).join(pad(str(c), w) for c, w in zip(r, widths)).rstrip()
                for r in rows]
    header, body = rows[0], rows[1:]
    names = list(names) if names else [str(h) for h in header[1:]]
    name_w = max((cell_len(n) for n in names), default=0)
    lines = []
    for r in body:
        lines.append(str(r[0]))
        for name, cell in zip(names, r[1:]):
            if str(cell) == "":
                continue
            for k, part in enumerate(wrap(str(cell), max(8, width - name_w - 4))):
                lines.append("  " + pad(name if k == 0 else "", name_w) + "  " + part)
    return lines


def row_text(row: list) -> str:
    return "".join(text for text, _ in row)


def rows_text(rows: list) -> str:
    """A drawing as plain text (tests, batch output)."""
    return "\n".join(row_text(r).rstrip() for r in rows)


# ---------------------------------------------------------------- arrow lanes

@dataclass
class Arrow:
    """An arrow from row `start` to row `end` in a left gutter; `role` styles it."""

    start: int
    end: int
    role: str = "plain"
    heavy: bool = False
    lane: int = 0


def assign_lanes(arrows: list) -> int:
    """Give each arrow the innermost lane free over its rows (shortest arrows first);
    returns the number of lanes."""
    taken: list = []   # per lane: list of (lo, hi)
    for a in sorted(arrows, key=lambda a: (abs(a.end - a.start), min(a.start, a.end))):
        lo, hi = sorted((a.start, a.end))
        lane = 0
        while lane < len(taken) and any(not (hi < x or lo > y) for x, y in taken[lane]):
            lane += 1
        if lane == len(taken):
            taken.append([])
        taken[lane].append((lo, hi))
        a.lane = lane
    return len(taken)


def draw_gutter(arrows: list, rows: int, symbols: Symbols) -> list:
    """One gutter per row, as a list of (text, role) pieces: lanes to the left, the arrow
    heads at the right edge (the row an arrow enters gets `head`)."""
    lanes = assign_lanes(arrows)
    width = 2 * lanes + 1
    flags = [[0] * width for _ in range(rows)]
    roles = [[None] * width for _ in range(rows)]
    heavy = [[False] * width for _ in range(rows)]
    heads = [None] * rows
    # heavy arrows are drawn last so their role wins where lanes cross
    for a in sorted(arrows, key=lambda a: a.heavy):
        col = width - 3 - 2 * a.lane if lanes else 0
        col = max(col, 0)
        lo, hi = sorted((a.start, a.end))

        def put(r, c, f):
            if 0 <= r < rows and 0 <= c < width:
                flags[r][c] |= f
                roles[r][c] = a.role
                heavy[r][c] = heavy[r][c] or a.heavy
        for r in range(lo, hi + 1):
            f = (UP if r > lo else 0) | (DOWN if r < hi else 0)
            if r in (a.start, a.end):
                f |= RIGHT
                for c in range(col + 1, width - 1):
                    put(r, c, LEFT | RIGHT)
                put(r, width - 1, LEFT)
            put(r, col, f)
        if 0 <= a.end < rows:
            heads[a.end] = a.role
    out = []
    for r in range(rows):
        pieces = []
        for c in range(width):
            f = flags[r][c]
            if c == width - 1 and heads[r] is not None:
                pieces.append((symbols.head, heads[r]))
                continue
            table = symbols.heavy if heavy[r][c] else symbols.light
            pieces.append((table[f] if f else " ", roles[r][c] or "plain"))
        out.append(merge_pieces(pieces))
    return out


def merge_pieces(pieces: list) -> list:
    """Adjacent pieces with the same role joined."""
    out: list = []
    for text, role in pieces:
        if out and out[-1][1] == role:
            out[-1] = (out[-1][0] + text, role)
        else:
            out.append((text, role))
    return out


__all__ = ["Symbols", "UNICODE", "ASCII", "symbols_for", "row_text", "rows_text", "Arrow",
           "assign_lanes", "draw_gutter", "wrap", "table", "pad", "fold_line", "NO_LINE_START"]
