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


def wrap(text: str, width: int) -> list:
    """`text` in lines of at most `width` cells, broken at spaces, and between Chinese
    characters (which have no spaces between them); textwrap counts characters."""
    lines, line = [], ""
    for token in _TOKENS.findall(text):
        if token.isspace():
            if line:
                line += " "
            continue
        if line and cell_len(line + token) > width:
            lines.append(line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(line.rstrip())
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
           "assign_lanes", "draw_gutter"]
