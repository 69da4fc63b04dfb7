"""What the `:` commands printed: a scrolling log under the panes, shown once there is output."""
from __future__ import annotations

from textual.widgets import Log


class CommandOutput(Log):
    title = "Output"

    def __init__(self, **kwargs) -> None:
        super().__init__(max_lines=2000, auto_scroll=True, **kwargs)
        self.border_title = self.title

    def show_command(self, line: str, output: str) -> None:
        self.write_line(f"(rvmdbg) {line}")
        for text in output.rstrip("\n").split("\n") if output else []:
            self.write_line(text)


__all__ = ["CommandOutput"]
