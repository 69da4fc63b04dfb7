"""The symbols the debugger screen draws with, in a Unicode set and an ASCII fallback.

Every state the screen shows by colour is also shown by one of these symbols, so the screen
reads in 16 colours, without colour, and (with `--ascii`) on terminals without box drawing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Directions a gutter cell connects to: bit flags combined per cell.
UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8


def _box(table: str) -> dict[int, str]:
    """A direction-set -> character table from 16 characters indexed by the flag value."""
    assert len(table) == 16
    return {i: c for i, c in enumerate(table)}


#                 0    U    D    UD   L    UL   DL   UDL  R    UR   DR   UDR  LR   ULR  DLR  UDLR
_LIGHT = _box(" " + "╵" + "╷" + "│" + "╴" + "╯" + "╮" + "┤" + "╶" + "╰" + "╭" + "├" + "─" + "┴" + "┬" + "┼")
_HEAVY = _box(" " + "╹" + "╻" + "┃" + "╸" + "┛" + "┓" + "┫" + "╺" + "┗" + "┏" + "┣" + "━" + "┻" + "┳" + "╋")
_DASHED = _box(" " + "╵" + "╷" + "┆" + "╴" + "╯" + "╮" + "┤" + "╶" + "╰" + "╭" + "├" + "┄" + "┴" + "┬" + "┼")
_ASCII_LIGHT = _box(" " + "|" + "|" + "|" + "-" + "+" + "+" + "+" + "-" + "+" + "+" + "+" + "-" + "+" + "+" + "+")
_ASCII_HEAVY = _box(" " + "#" + "#" + "#" + "=" + "#" + "#" + "#" + "=" + "#" + "#" + "#" + "=" + "#" + "#" + "#")
_ASCII_DASHED = _box(" " + ":" + ":" + ":" + "." + "+" + "+" + "+" + "." + "+" + "+" + "+" + "." + "+" + "+" + "+")


@dataclass(frozen=True)
class Glyphs:
    breakpoint: str
    breakpoint_disabled: str
    breakpoint_conditional: str
    pc: str                 # the instruction about to execute
    caller_pc: str          # the call instruction of a frame further out
    error: str              # the instruction that failed
    linked: str             # a line linked to the cursor in the other pane
    changed: str            # a register changed since the last stop
    read: str               # an instruction whose result the current one reads
    write: str              # a register the current instruction writes
    link_bar: str           # the source-line colour bar
    arrow_head: str
    dep_head: str           # where a dependency arrow reaches the instruction that reads
    shared: str             # an ADT value reachable from more than one place
    ellipsis: str
    separator: str
    running: str
    swap_mark: str          # the instruction marked for swap?
    swap_ok: str            # it may swap with the one under the cursor
    swap_no: str            # it may not (and each reason's row)
    live: str               # live-range bars: "def live end point" (written, live across,
                            # last read, written and never read)
    light: dict = field(repr=False, default_factory=dict)    # jump arrows
    heavy: dict = field(repr=False, default_factory=dict)    # jump arrows touching the pc
    dashed: dict = field(repr=False, default_factory=dict)   # dependency arrows


UNICODE = Glyphs(
    breakpoint="●", breakpoint_disabled="○", breakpoint_conditional="◆",
    pc="▶", caller_pc="▷", error="✗", linked="◆", changed="*", read="◂", write="▸",
    link_bar="▌", arrow_head="▶", dep_head="▹", shared="↺", ellipsis="…", separator="·", running="⟳",
    swap_mark="◆", swap_ok="⇅", swap_no="✗", live="┬│┴╥",
    light=_LIGHT, heavy=_HEAVY, dashed=_DASHED,
)

ASCII = Glyphs(
    breakpoint="B", breakpoint_disabled="b", breakpoint_conditional="?",
    pc=">", caller_pc=")", error="X", linked="~", changed="*", read="<", write=">",
    link_bar="|", arrow_head=">", dep_head=">", shared="@", ellipsis="...", separator="-", running="~",
    swap_mark="#", swap_ok="=", swap_no="X", live="+|'*",
    light=_ASCII_LIGHT, heavy=_ASCII_HEAVY, dashed=_ASCII_DASHED,
)


def glyphs_for(ascii_only: bool) -> Glyphs:
    return ASCII if ascii_only else UNICODE


# The frames every screen draws (teaching views, quiz, help and other dialogs, the cycle strip)
# in ASCII when the app has the `-ascii` class: app-level rules, so they outrank each widget's
# own and reach screens pushed over the debugger.
ASCII_CSS = """
App.-ascii RowsPane { border: ascii $panel-lighten-2; }
App.-ascii RowsPane:focus { border: ascii $accent; }
App.-ascii .dialog, App.-ascii #quiz-dialog, App.-ascii #mis-dialog { border: ascii $accent; }
App.-ascii CycleStrip { border-top: ascii $primary-darken-1; }
"""


def use_ascii_frames(app, ascii_only: bool) -> None:
    """Give the app the `-ascii` class `ASCII_CSS` selects on."""
    app.set_class(ascii_only, "-ascii")
