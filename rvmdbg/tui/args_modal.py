"""The form for program arguments the command line and the `// args:` line did not give.

One input per parameter of the entry function, labelled with its name and type. Submitting
parses all of them with the CLI's argument syntax and conversion (`DebugProgram.parse_args`);
an argument that does not fit stays on screen with the reason, so the form only closes with
values the program can start with.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label
from rvmdbg.i18n import N_, _


class ArgumentsModal(ModalScreen[list | None]):
    """Dismisses with the parsed argument values, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"))]

    def __init__(self, program, given: list[str]) -> None:
        super().__init__()
        self.program = program
        self.params = program.params()
        self.given = list(given)
        self.texts: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="args-dialog", classes="dialog"):
            yield Label(_("Arguments for @{entry} of {program}").format(entry=self.program.entry, program=self.program.name),
                        classes="dialog--title", markup=False)
            for i, (name, type_text) in enumerate(self.params):
                label = f"%{name}" + (f": {type_text}" if type_text else "")
                yield Label(label, classes="dialog--label", markup=False)
                value = self.given[i] if i < len(self.given) else ""
                yield Input(value, id=f"arg-{i}", placeholder=_("e.g. 10, 2.5f, Cons(1, Nil), [1, 2]"))
            yield Label("", id="args-error", classes="dialog--error", markup=False)
            with Horizontal(classes="dialog--buttons"):
                yield Button(_("Start"), id="args-start", variant="primary")
                yield Button(_("Quit"), id="args-quit")

    def on_mount(self) -> None:
        # focus at once (not `focus()`, which waits its turn in the message queue): keys
        # typed right after the form opens go to the first missing argument
        for i in range(len(self.params)):
            box = self.query_one(f"#arg-{i}", Input)
            if not box.value:
                self.set_focus(box)
                return
        if self.params:
            self.set_focus(self.query_one("#arg-0", Input))

    def _submit(self) -> None:
        texts = [self.query_one(f"#arg-{i}", Input).value.strip() for i in range(len(self.params))]
        error = self.query_one("#args-error", Label)
        missing = [i for i, t in enumerate(texts) if not t]
        if missing:
            error.update(_("argument {n} (%{name}) is missing").format(n=missing[0] + 1, name=self.params[missing[0]][0]))
            self.query_one(f"#arg-{missing[0]}", Input).focus()
            return
        try:
            values = self.program.parse_args(texts)
        except Exception as exc:  # ArgumentError, or anything odd in a value: show it
            error.update(str(getattr(exc, "message", exc)))
            return
        self.texts = texts
        self.dismiss(values)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        # Enter moves to the next empty argument, or starts when all are filled.
        for i in range(len(self.params)):
            box = self.query_one(f"#arg-{i}", Input)
            if not box.value.strip() and box is not event.input:
                box.focus()
                return
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "args-start":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["ArgumentsModal"]
