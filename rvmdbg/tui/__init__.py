"""The debugger screen (Textual). The engine never imports this package; the command line
imports it only to open the screen: `rvmdbg PROGRAM [ARG...]`."""
from __future__ import annotations


def run_screen(path: str, arg_texts: list[str], **kwargs) -> int:
    """Open the debugger screen on a `.relay` or `.rvmx` program; returns the exit code."""
    from rvmdbg.tui.app import run_screen as run
    return run(path, arg_texts, **kwargs)


__all__ = ["run_screen"]
