"""`M` in View 1: common misconceptions about the VM, each with the program that shows it wrong.

The list holds the claims (`rvmdbg.views.misconceptions`); the highlighted one shows its
program, what to watch in the debugger, and the evidence, gathered by running the program on
the real VM in a worker thread (cached per claim). The program opens in its own debugger with
the command shown (`rvmdbg programs/misconceptions/NAME.relay`).
"""
from __future__ import annotations

from rich.style import Style
from rich.text import Span, Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rvmdbg.i18n import N_, _, language
from rvmdbg.views.misconceptions import MISCONCEPTIONS, demonstrate
from rvmdbg.tui.line_pane import ascii_scrollbars_under

# (language, key) -> Evidence or an error text: the programs do not change, but the evidence's
# lines are written in the language shown when they were gathered
_evidence_cache: dict = {}


def _no_background(style):
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold, italic=style.italic)


class MisconceptionsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    #mis-dialog { width: 110; max-width: 95%; height: 90%; border: round $accent;
                  background: $panel; padding: 0 1; }
    #mis-title { text-style: bold; }
    #mis-list { height: auto; max-height: 9; margin-bottom: 1; }
    #mis-detail { height: 1fr; }
    #mis-source { margin-top: 1; }
    #mis-keys { color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape,q", "close", N_("Close"), tooltip=N_("Close the list")),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.selected = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="mis-dialog"):
            yield Static(_("Misconceptions about the VM, each shown wrong by a program that "
                           "runs"), id="mis-title", markup=False)
            yield OptionList(*[Option(f"{i}. {_(m.claim)}", id=m.key)
                               for i, m in enumerate(MISCONCEPTIONS, 1)], id="mis-list")
            with VerticalScroll(id="mis-detail"):
                yield Static("", id="mis-text")
                yield Static("", id="mis-source")
            yield Static(_("Up/Down: choose   Esc: close"), id="mis-keys", markup=False)

    def on_mount(self) -> None:
        ascii_scrollbars_under(self)
        self.query_one("#mis-list", OptionList).focus()
        self.query_one("#mis-list", OptionList).highlighted = 0
        self._show(0)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is not None:
            self._show(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._show(event.option_index)

    def _show(self, index: int) -> None:
        self.selected = index
        m = MISCONCEPTIONS[index]
        found = _evidence_cache.get((language(), m.key))
        self.query_one("#mis-text", Static).update(self._detail(m, found))
        self.query_one("#mis-source", Static).update(self._source(m))
        if found is None:
            self._gather(m)

    def _detail(self, m, found) -> Text:
        t = Text()
        t.append(_("Claim:") + " ", style="bold")
        t.append(_(m.claim) + "\n")
        t.append(_("Program:") + " ", style="bold")
        t.append(m.relative_path + "   "
                 + _("(open it: rvmdbg {path})").format(path=m.relative_path) + "\n")
        t.append(_("Watch:") + " ", style="bold")
        t.append(_(m.watch) + "\n\n")
        t.append(_("What the VM shows:") + "\n", style="bold")
        if found is None:
            t.append(_("running the program...") + "\n")
        elif isinstance(found, str):
            t.append(found + "\n", style="bold red")
        else:
            t.append("\n".join(found.lines) + "\n")
        return t

    def _source(self, m):
        """The program, highlighted as the source pane highlights Relay."""
        from rich.syntax import Syntax

        from rvmdbg.relay.highlight import RelayLexer
        try:
            source = m.path.read_text(encoding="utf-8")
        except OSError as exc:
            return Text(_("(cannot read {path}: {why})").format(path=m.relative_path,
                                                                why=exc.strerror))
        text = Syntax(source.rstrip("\n"), RelayLexer(), theme="ansi_dark").highlight(
            source.rstrip("\n"))
        # the theme's colours without its background, which would be a black block here
        text.spans = [Span(sp.start, sp.end, _no_background(sp.style)) for sp in text.spans]
        text.style = ""
        text.no_wrap = True   # code keeps its indentation and lines
        return text

    @work(thread=True, exclusive=True, group="misconception", exit_on_error=False)
    def _gather(self, m) -> None:
        lang = language()
        try:
            found = demonstrate(m)
        except Exception as exc:  # shown in the dialog; the rest keeps working
            found = _("could not run it: {error}").format(error=f"{type(exc).__name__}: {exc}")
        _evidence_cache[(lang, m.key)] = found
        self.app.call_from_thread(self._gathered, m.key)

    def _gathered(self, key: str) -> None:
        if MISCONCEPTIONS[self.selected].key == key:
            self._show(self.selected)

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["MisconceptionsScreen"]
