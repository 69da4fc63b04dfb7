"""The Relay source pane: the program highlighted with the project's Pygments lexer.

The text is lexed once with `RelayLexer` and split into per-line token runs; each row is then
rendered once per state and cached like the listing's. A row shows breakpoint marker, current
line marker, line number, the line's link colour (shared with its instructions) and the code;
the sub-expression being executed is underlined. The cursor has a column too: `i` shows the
type of the innermost expression under it (from the type-checked module).
"""
from __future__ import annotations

from rich.cells import cell_len

from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Token)
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.reactive import reactive

from rvmdbg.tui.line_pane import LinePane, overlay_segments
from rvmdbg.tui.links import PALETTE_SIZE, SourceLinks
from rvmdbg.i18n import N_, _

_TOKEN_CLASSES = [
    (Comment, "source--comment"),
    (Keyword.Type, "source--type"),
    (Keyword.Constant, "source--constant"),
    (Keyword, "source--keyword"),
    (Name.Function, "source--function"),
    (Name.Variable, "source--variable"),
    (Name.Class, "source--type"),
    (Name.Constant, "source--constructor"),
    (Name.Attribute, "source--attribute"),
    (Name.Builtin, "source--builtin"),
    (Number, "source--number"),
    (String, "source--string"),
    (Operator, "source--operator"),
    (Punctuation, "source--punctuation"),
]


_CLASS_OF: dict = {}


def _token_class(ttype) -> str | None:
    cls = _CLASS_OF.get(ttype, _CLASS_OF)
    if cls is _CLASS_OF:
        cls = None
        for parent, name in _TOKEN_CLASSES:
            if ttype in parent:
                cls = name
                break
        _CLASS_OF[ttype] = cls
    return cls


class LexedLines:
    """The text as lines of (component class, text) runs, lexed once as a whole, lazily:
    tokens are pulled from the lexer only as far as the lines asked for so far, so a long
    program's first screen does not wait for its last line."""

    def __init__(self, text: str):
        from rvmdbg.relay.highlight import RelayLexer
        lexer = RelayLexer(stripnl=False, ensurenl=False, tabsize=4)
        self.plain = [line.expandtabs(4) for line in text.split("\n")]
        if len(self.plain) > 1 and self.plain[-1] == "":
            self.plain.pop()  # a trailing newline does not start a line of the program
        self._tokens = lexer.get_tokens(text)
        self._lines: list[list[tuple[str | None, str]]] = [[]]

    def __len__(self) -> int:
        return len(self.plain)

    def __getitem__(self, index: int) -> list[tuple[str | None, str]]:
        lines = self._lines
        tokens = self._tokens
        while tokens is not None and len(lines) <= index + 1:
            try:
                ttype, value = next(tokens)
            except StopIteration:
                self._tokens = tokens = None
                break
            cls = _token_class(ttype) if ttype is not Token.Text else None
            if "\n" not in value:
                lines[-1].append((cls, value.expandtabs(4) if "\t" in value else value))
                continue
            for k, part in enumerate(value.split("\n")):
                if k:
                    lines.append([])
                if part:
                    lines[-1].append((cls, part.expandtabs(4)))
        return lines[index] if index < len(lines) else []


def lex_lines(text: str) -> list[list[tuple[str | None, str]]]:
    """Every line's runs at once (tests, and tools that want the whole text)."""
    lexed = LexedLines(text)
    return [lexed[i] for i in range(len(lexed))]


class SourceView(LinePane):
    """The program's Relay text, linked to the listing."""

    MARK_COMPONENT = "source--current"  # the pc / current line

    title = N_("Source")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "source--comment", "source--type", "source--constant", "source--keyword",
        "source--function", "source--variable", "source--constructor", "source--attribute",
        "source--builtin", "source--number", "source--string", "source--operator",
        "source--punctuation", "source--line-number", "source--current", "source--caller",
        "source--error", "source--marker", "source--span", "source--breakpoint",
        "source--linked", "source--typed", "source--column", "source--note",
    } | {f"source--link-{i}" for i in range(PALETTE_SIZE)}

    BINDINGS = [
        Binding("left", "column(-1)", N_("Left"), show=False),
        Binding("right", "column(1)", N_("Right"), show=False),
        Binding("b", "screen.toggle_breakpoint", N_("Break"), tooltip=N_("Toggle a breakpoint on this line"),
                id="break"),
        Binding("t", "screen.run_to_cursor", N_("Run to"), tooltip=N_("Run to this line"), id="run-to"),
        Binding("i", "screen.type_at_cursor", N_("Type"), tooltip=N_("Show the type of the expression under the cursor"),
                id="type"),
    ]

    column: reactive[int] = reactive(0, repaint=False, init=False)

    def __init__(self, text: str, links: SourceLinks | None = None, name: str = "",
                 file: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.program_file = file       # the program's own file (breakpoints, links, types)
        self.program_text = text
        self.program_links = links
        self.program_name = name
        self._load(text, links, name, file)
        self.current: int | None = None          # 1-based line of the selected frame
        self.current_kind = "top"
        self.current_span: tuple[int, int] | None = None   # columns (1-based, end exclusive)
        self.note = ""
        self.breakpoint_lines: dict[int, str] = {}
        self.linked: int | None = None
        self.typed: tuple[int, int, int, int] | None = None  # the span `i` highlights

    def _load(self, text: str, links: SourceLinks | None, name: str, file: str | None) -> None:
        self.file = file
        self.border_title = f"{_(self.title)} {name}" if name else _(self.title)
        self.lines = LexedLines(text)
        self.plain = self.lines.plain
        self.links = links
        self.number_width = max(2, len(str(len(self.lines))))

    def on_mount(self) -> None:
        # (Textual also runs LinePane.on_mount: handlers are called along the MRO.)
        self._declare_lines()

    def _declare_lines(self) -> None:
        widest = max((cell_len(p) for p in self.plain), default=0)
        self.set_lines(len(self.lines), 4 + self.number_width + widest + 40)

    @property
    def shows_program(self) -> bool:
        """Whether the program's own file is shown (not the prelude or another file)."""
        return self.file == self.program_file

    def show_file(self, file: str | None, text: str | None = None, name: str = "") -> None:
        """Show another file (the prelude, ...; `text` is its content), or the program's own
        file again with `file` equal to `program_file`. The title names the file."""
        if file == self.file:
            return
        if file == self.program_file:
            self._load(self.program_text, self.program_links, self.program_name, file)
        else:
            self._load(text or "", None, _("{name} (not the program's file)").format(name=name), file)
        self.current = self.linked = self.typed = None
        self.breakpoint_lines = {}
        self.column = 0
        self._declare_lines()
        self.set_cursor(0, quiet=True)

    # ------------------------------------------------------------ state from the screen

    def set_current(self, line: int | None, kind: str = "top", span=None, note: str = "",
                    follow: bool = True) -> None:
        old = self.current
        cols = None
        if span is not None and line is not None and span.line == line:
            cols = (span.col, span.end_col if span.end_line == line else 10**6)
        self.current, self.current_kind, self.current_span, self.note = line, kind, cols, note
        self.refresh_content_line(None if old is None else old - 1)
        self.refresh_content_line(None if line is None else line - 1)
        if follow and line is not None:
            self.scroll_to_line(line - 1, ahead=True)
            # again after the layout: a file just switched still has the old scroll range
            self.call_after_refresh(self.scroll_to_line, line - 1, False, True)

    def set_breakpoints(self, marks: dict[int, str]) -> None:
        changed = set(marks.items()) ^ set(self.breakpoint_lines.items())
        self.breakpoint_lines = dict(marks)
        for line in {line for line, _ in changed}:
            self.refresh_content_line(line - 1)

    def set_linked(self, line: int | None) -> None:
        old, self.linked = self.linked, line
        if old != line:
            self.refresh_content_line(None if old is None else old - 1)
            self.refresh_content_line(None if line is None else line - 1)
            if line is not None:
                self.scroll_to_line(line - 1)

    def set_typed(self, span: tuple[int, int, int, int] | None) -> None:
        old, self.typed = self.typed, span
        for s in (old, span):
            if s is not None:
                self.refresh_content_lines(s[0] - 1, s[2] - 1)

    # ------------------------------------------------------------ cursor column

    def action_column(self, delta: int) -> None:
        length = len(self.plain[self.cursor]) if self.line_count else 0
        self.column = max(0, min(self.column + delta, max(0, length)))

    def watch_column(self) -> None:
        self.refresh_content_line(self.cursor)

    def on_click(self, event) -> None:
        # LinePane.on_click moves the line cursor; this adds the column
        col = event.x + self.scroll_offset.x - self.text_column
        if col >= 0:
            self.column = col

    @property
    def text_column(self) -> int:
        return 3 + self.number_width + 1 + 1

    def cursor_position(self) -> tuple[int, int]:
        """The cursor as a 1-based (line, column)."""
        return self.cursor + 1, self.column + 1

    # ------------------------------------------------------------ rows

    def line_state(self, index: int) -> tuple:
        line = index + 1
        typed = self.typed
        return (
            (self.current_kind, self.current_span, self.note) if line == self.current else (),
            self.breakpoint_lines.get(line, ""),
            line == self.linked,
            typed if typed is not None and typed[0] <= line <= typed[2] else None,
            self.column if index == self.cursor else -1,
        )

    def line_text(self, index: int) -> str:
        return self.plain[index]

    def render_full_line(self, index: int, cursor: str):
        g = self.glyphs
        st = self.style
        line = index + 1
        is_current = line == self.current
        base = self.line_base("source", self.current_kind if is_current else None,
                              line == self.linked, cursor)
        segs: list[Segment] = []
        add = segs.append
        add(self.breakpoint_segment(self.breakpoint_lines.get(line, ""), base,
                                    "source--breakpoint", "source--breakpoint"))
        if is_current:
            mark = {"error": g.error, "caller": g.caller_pc}.get(self.current_kind, g.pc)
            add(Segment(mark, base + st("source--marker")))
        elif line == self.linked:
            add(Segment(g.linked, base + st("source--marker")))
        else:
            add(Segment(" ", base))
        number = base + st("source--line-number")
        if cursor and is_current:
            number = number + Style(reverse=True)
        add(Segment(f"{line:>{self.number_width}}", number))
        add(Segment(" ", base))
        colour = self.links.colour_of_line.get(line) if self.links is not None else None
        add(Segment(g.link_bar if colour is not None else " ",
                    base + st(f"source--link-{colour}") if colour is not None else base))
        add(Segment(" ", base))

        # code: split runs where the executing span, the typed span or the cursor column fall
        marks: list[tuple[int, int, Style]] = []
        if is_current and self.current_span is not None:
            marks.append((self.current_span[0] - 1, self.current_span[1] - 1, st("source--span")))
        typed = self.typed
        if typed is not None and typed[0] <= line <= typed[2]:
            start = typed[1] - 1 if line == typed[0] else 0
            end = typed[3] - 1 if line == typed[2] else 10**6
            marks.append((start, end, st("source--typed")))
        if cursor == "focused":
            marks.append((self.column, self.column + 1, st("source--column")))
        pos = 0
        runs = self.lines[index]
        for cls, text in runs:
            style = base + st(cls) if cls else base
            if not marks:
                add(Segment(text, style))
            else:
                overlay_segments(text, pos, style, marks, segs)
            pos += len(text)
        if cursor == "focused" and self.column >= pos:
            add(Segment(" " * (self.column - pos), base))
            add(Segment(" ", base + st("source--column")))
        if is_current and self.note:
            add(Segment(f"   {g.error} {self.note}" if self.current_kind == "error" else f"   {self.note}",
                        base + st("source--note")))
        return segs, base


__all__ = ["SourceView", "lex_lines"]
