"""`g`: a small dialog asking for the step to go to; it checks the number before closing."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label
from rvmdbg.i18n import N_, _


class GotoStepModal(ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "cancel", N_("Cancel"))]

    def __init__(self, current: int, earliest: int, latest: int) -> None:
        super().__init__()
        self.current, self.earliest, self.latest = current, earliest, latest

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-dialog", classes="dialog"):
            yield Label(_("Go to step (history holds {earliest}..{latest}; "
                          "a later step runs forward)").format(earliest=self.earliest, latest=self.latest), classes="dialog--title", markup=False)
            yield Input(str(self.current), id="goto-step", type="integer")
            yield Label("", id="goto-error", classes="dialog--error", markup=False)

    def on_mount(self) -> None:
        box = self.query_one("#goto-step", Input)
        box.focus()
        box.select_all()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        error = self.query_one("#goto-error", Label)
        try:
            step = int(text)
        except ValueError:
            error.update(_("not a step number: {text}").format(text=repr(text)))
            return
        if step < self.earliest:
            error.update(_("history starts at step {step}").format(step=self.earliest))
            return
        self.dismiss(step)

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["GotoStepModal"]
