"""`?`: every key of the screen, read from the bindings themselves, and the command language.

The table is built from the `BINDINGS` of the debugger screen and of each pane, so it can
never disagree with what the keys do.
"""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from rvmdbg.i18n import N_, _
from rvmdbg.tui.line_pane import ascii_scrollbars_under

COMMANDS_HELP = [
    ("break @f | @f:PC | LINE | op:NAME [if EXPR]", N_("set a breakpoint (b)")),
    ("delete N | disable N | enable N", N_("change breakpoints")),
    ("condition N [EXPR]", N_("set or clear a breakpoint's condition (e in its pane)")),
    ("step [K] | next | finish | continue", N_("run forward (s n f c)")),
    ("rstep [K] | rnext | rfinish | rcontinue", N_("run backward")),
    ("goto STEP | run-to @f:PC", N_("travel to a step or a place")),
    ("info registers | info frame | info breakpoints", N_("show state")),
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
            yield Static(self._table(), id="help-keys")

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

    def _table(self) -> Table:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), expand=True)
        # the keys and command forms whole (they are what is typed); the descriptions wrap
        table.add_column("key", style="bold", no_wrap=True)
        table.add_column("does", ratio=1)
        for keys, does in self.rows():
            if not keys:
                table.add_row("", "")
                table.add_row(Text(does, style="bold underline"), "")
            else:
                table.add_row(Text(keys), Text(does))  # Text: `[` and `[if EXPR]` are no markup
        table.add_row("", "")
        table.add_row(Text(_("Command line (:)"), style="bold underline"), "")
        for syntax, does in COMMANDS_HELP:
            table.add_row(Text(syntax), Text(_(does)))
        table.add_row("", "")
        table.add_row("", Text(_("Esc, q or ? closes this help"), style="italic"))
        return table

    def on_mount(self) -> None:
        ascii_scrollbars_under(self)
        self.query_one("#help-dialog").focus()

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)


__all__ = ["HelpScreen"]
