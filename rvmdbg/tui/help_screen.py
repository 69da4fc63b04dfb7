"""`?`: every key of the screen, read from the bindings themselves, and the command language.

The table is built from the `BINDINGS` of the debugger screen and of each pane, so it can
never disagree with what the keys do.
"""
from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from rvmdbg.i18n import N_, _
from rvmdbg.views.text import wrap
from rvmdbg.tui.line_pane import ascii_scrollbars_under

COMMANDS_HELP = [
    ("break @f | @f:PC | LINE | op:NAME [if EXPR]", N_("set a breakpoint (b)")),
    ("delete N | disable N | enable N", N_("change breakpoints")),
    ("condition N [EXPR]", N_("set or clear a breakpoint's condition (e in its pane)")),
    ("step [K] | next | finish | continue", N_("run forward (s n f c)")),
    ("rstep [K] | rnext | rfinish | rcontinue", N_("run backward")),
    ("goto STEP | run-to @f:PC", N_("travel to a step or a place")),
    ("info registers | info frame | info breakpoints", N_("show state")),
    ("info profile | set profile on | off", N_("kernel times of the run so far (P)")),
    ("backtrace | print $N | heap | deps", N_("frames, values, dependencies (bt p)")),
    ("swap? [@f:]PC1 PC2", N_("may the two instructions trade places? if not, the dependence (m marks one)")),
    ("numbering [tvm | reused | toggle]", N_("registers as TVM numbers them or reused by liveness (r)")),
    ("last-write $N | watch $N [change]", N_("go back to a write, watch a register")),
    ("list [@f[:PC]] | source", N_("bytecode (of any function: the listing goes there) or Relay lines")),
    ("display EXPR | undisplay [N] | info display", N_("show a value at every stop")),
    ("search TEXT", N_("every function's bytecode, with the number of matches")),
    ("set logging on [FILE] | off | file FILE", N_("copy the console's text to a file (as gdb)")),
    ("frame N | up | down | restart | info history", N_("frames, start again, the history kept")),
]


_KEY_NAMES = {
    "question_mark": "?", "colon": ":", "slash": "/", "full_stop": ".",
    "left_square_bracket": "[", "right_square_bracket": "]", "escape": "Esc",
    "enter": "Enter", "space": "Space", "tab": "Tab", "pageup": "PgUp", "pagedown": "PgDn",
    "home": "Home", "end": "End", "up": "Up", "down": "Down", "left": "Left", "right": "Right",
    "delete": "Delete", "backspace": "Backspace",
}


def key_text(key: str) -> str:
    """A key as the help shows it, in plain ASCII: `Shift+F11`, `Ctrl+C`, `?`."""
    parts = key.split("+")
    name = parts[-1]
    if name in _KEY_NAMES:
        name = _KEY_NAMES[name]
    elif len(name) > 1 and name[0] == "f" and name[1:].isdigit():
        name = name.upper()
    elif len(name) == 1 and len(parts) > 1:
        name = name.upper()
    mods = [m.capitalize() for m in parts[:-1]]
    return "+".join(mods + [name])


def _key_text(binding: Binding, keymap: dict | None = None) -> str:
    """The binding's keys as the help shows them: the keys file's, when it rebinds them."""
    keys = (keymap or {}).get(binding.id, binding.key) if binding.id else binding.key
    return ", ".join(key_text(k.strip()) for k in keys.split(","))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", N_("Close")),
        Binding("question_mark", "dismiss", N_("Close")),
        Binding("q", "dismiss", N_("Close")),
    ]

    def __init__(self, sections: list[tuple[str, list[Binding]]],
                 keymap: dict | None = None) -> None:
        super().__init__()
        self.sections = sections
        self.keymap = keymap or {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static(Text(""), id="help-keys")

    def rows(self) -> list[tuple[str, str]]:
        """(keys, what they do) per binding, section titles as ("", title) rows."""
        out: list[tuple[str, str]] = []
        for title, bindings in self.sections:
            out.append(("", _(title)))
            seen = set()
            for b in bindings:
                desc = b.tooltip or b.description
                if not desc or (b.key, b.action) in seen:
                    continue
                seen.add((b.key, b.action))
                out.append((_key_text(b, self.keymap), _(desc)))
        return out

    def entries(self) -> list[tuple[str, str]]:
        """Every row of the help in order: (keys or command form, what it does); a section
        title is ("", title), a blank line ("", "")."""
        out: list[tuple[str, str]] = []
        for keys, does in self.rows():
            if not keys:
                out += [("", ""), ("", does)]
            else:
                out.append((keys, does))
        out += [("", ""), ("", _("Command line (:)"))]
        out += [(syntax, _(does)) for syntax, does in COMMANDS_HELP]
        return out

    def _text(self, width: int) -> Text:
        """The help laid out for `width` cells: keys in a column, descriptions wrapped whole
        beside them (Chinese broken between characters, never before closing punctuation);
        a key or command form wider than the column takes its own line, its description
        under it. Nothing is cut."""
        entries = self.entries()
        widest = max((cell_len(k) for k, _d in entries if k), default=0)
        keys_only = max((cell_len(k) for k, _d in self.rows() if k), default=0)
        column = widest if width - widest - 2 >= 36 else min(keys_only, max(8, width // 3))
        desc_width = max(12, width - column - 2)
        text = Text()
        for keys, does in entries:
            if not keys:
                if does:
                    text.append(does, style="bold underline")
                text.append("\n")
                continue
            lines = wrap(does, desc_width) or [""]
            if cell_len(keys) > column:
                text.append(keys, style="bold")
                text.append("\n")
                first = " " * (column + 2)
            else:
                text.append(keys, style="bold")
                first = " " * (column - cell_len(keys) + 2)
            text.append(first + lines[0] + "\n")
            for line in lines[1:]:
                text.append(" " * (column + 2) + line + "\n")
        text.append("\n" + " " * (column + 2))
        text.append(_("Esc, q or ? closes this help"), style="italic")
        return text

    def _width(self) -> int:
        # the dialog's width less its vertical scrollbar, which appears once the help is in
        dialog = self.query_one("#help-dialog")
        width = dialog.content_region.width - dialog.styles.scrollbar_size_vertical
        return width if width > 0 else 66

    def _table(self) -> Text:
        return self._text(self._width())

    def on_resize(self) -> None:
        self.call_after_refresh(self._lay_out)

    def _lay_out(self) -> None:
        self.query_one("#help-keys", Static).update(self._table())

    def on_mount(self) -> None:
        ascii_scrollbars_under(self)
        self.query_one("#help-dialog").focus()
        self.call_after_refresh(self._lay_out)   # laid out at the dialog's width

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)


__all__ = ["HelpScreen"]
