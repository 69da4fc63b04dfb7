"""The console, as gdb's and pudb's command windows are: a scrollback of the whole session
(`CommandOutput`) over the command line (`CommandLine`).

It records every stop, from keys or commands, and the displays (`display EXPR`) at each,
whether it is shown or not, so opening it (`:` or `o`) shows the session so far; with
`set logging` the same text goes to a file. Commands typed into it run through the screen
(`DebuggerScreen.run_command`), which drives the session.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from rvmdbg.tui.command_line import CommandLine
from rvmdbg.tui.command_output import CommandOutput


class Console(Vertical):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.interpreter = None   # the command language's interpreter (set by the screen)

    def compose(self) -> ComposeResult:
        yield CommandOutput(id="output")
        yield CommandLine(id="command")

    @property
    def output(self) -> CommandOutput:
        return self.query_one("#output", CommandOutput)

    @property
    def command_line(self) -> CommandLine:
        return self.query_one("#command", CommandLine)

    @property
    def shown(self) -> bool:
        return self.output.has_class("-shown")

    def show(self, shown: bool = True) -> None:
        output = self.output
        output.set_class(shown, "-shown")
        if shown:
            output.flush()

    def open(self, text: str = "") -> CommandLine:
        """Show the scrollback and the command line holding `text` (the cursor after it)."""
        self.show()
        box = self.command_line
        box.add_class("-shown")
        box.value = text
        box.cursor_position = len(text)
        return box

    def show_command(self, line: str, text: str) -> None:
        """A command line and what it printed (already in the log file: the interpreter
        writes what it runs)."""
        self.show()
        self.output.show_command(line, text)

    def record(self, lines: list[str], show: bool = False) -> None:
        """Lines the screen printed (a stop from a key, its displays): into the scrollback
        and the log file, shown or not."""
        if not lines:
            return
        if show:
            self.show()
        self.output.show_lines(lines)
        if self.interpreter is not None:
            self.interpreter.transcript.write("\n".join(lines))

    def on_command_line_completions(self, event: CommandLine.Completions) -> None:
        event.stop()
        self.show()
        self.output.show_lines(["  ".join(event.words)])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not isinstance(event.input, CommandLine):
            return
        event.stop()
        line = event.value.strip()
        event.input.remember(line)
        event.input.value = ""
        if line:
            self.screen.run_command(line)


__all__ = ["Console"]
