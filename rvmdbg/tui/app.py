"""The rvmdbg screen application: `rvmdbg PROGRAM [ARG...]`.

`DebuggerApp(program, arg_texts)` shows the `DebuggerScreen`; when the program's arguments are
complete (from the command line or its `// args:` line) it starts the `DebugSession` at once,
otherwise it first asks for the missing ones in `ArgumentsModal`. `run_screen()` is what the
command line calls: it loads the program before any screen opens, so a bad program prints its
error like every other command.
"""
from __future__ import annotations

import gc
import os
import sys
import time

from textual.app import App

from rvmdbg.tui.args_modal import ArgumentsModal
from rvmdbg.tui.glyphs import ASCII_CSS, glyphs_for, use_ascii_frames
from rvmdbg.tui.keymap import KeymapError, load_keymap
from rvmdbg.tui.program import DebugProgram, ProgramLoadError, load_program_kept
from rvmdbg.tui.screen import DebuggerScreen
from rvmdbg.tui.terminal import colour_classes, environment_error, wants_ascii
from rvmdbg.i18n import _

# A full collection of the cyclic garbage collector waits until no key has been painted for
# this long (with `freeze_heap`, see DebuggerApp.__init__).
GC_IDLE_SECONDS = 1.0


class DebuggerApp(App):
    CSS_PATH = "debugger.tcss"
    CSS = ASCII_CSS
    TITLE = "rvmdbg"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, program: DebugProgram, arg_texts: list[str] | None = None, *,
                 ascii_only: bool = False, limits=None, config_dir=None,
                 history_bytes: int | None = None, freeze_heap: bool = False,
                 keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        # binding id -> keys, from the user's keys file (`rvmdbg.tui.keymap`)
        self.keymap: dict[str, str] = dict(keymap or {})
        # `freeze_heap` (the command line's screen, which owns its process): once the first
        # stop is on screen, everything alive then (the program, the decoded VM, the widget
        # tree) is moved out of the cyclic collector's reach with `gc.freeze`, so that its
        # full collections while stepping scan only what stepping made (a collection over
        # all of it took about 110 ms with the 20,000-instruction benchmark listing); and
        # the full collections themselves wait for a pause in the keys (`_collect_when_idle`).
        self.freeze_heap = freeze_heap
        self._gc_thresholds: tuple | None = None   # the collector's, while full ones wait
        self._collected_at = 0.0
        self._gc_timer = None
        self.animation_level = "none"   # scrolling never animates: it costs frames over ssh
        self.program = program
        self.arg_texts = program.initial_arg_texts(arg_texts or [])
        self.ascii_only = ascii_only
        self.glyphs = glyphs_for(ascii_only)
        use_ascii_frames(self, ascii_only)
        self.limits = limits
        self.config_dir = config_dir
        self.history_bytes = history_bytes
        self.session = None
        self.start_error: str | None = None
        self.notes: list[str] = []  # notes about the user's saved setup, shown on start
        self._interpreter = None
        self._interpreter_session = None

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)

    def get_default_screen(self) -> DebuggerScreen:
        screen = DebuggerScreen(self.glyphs)
        if self.ascii_only:
            screen.add_class("-ascii")
        # 16 colours and no colour get their own rules in debugger.tcss: the tints that mark
        # rows there become black, so the cursor is drawn another way
        for cls in colour_classes(os.environ):
            screen.add_class(cls)
        return screen

    @property
    def debugger(self) -> DebuggerScreen:
        return self.screen_stack[0]

    def begin(self) -> None:
        """Called by the debugger screen once mounted: start, or ask for arguments first."""
        params = self.program.params()
        values = None
        if len(self.arg_texts) == len(params):
            try:
                values = self.program.parse_args(self.arg_texts)
            except Exception as exc:
                self.start_error = str(getattr(exc, "message", exc))
        if values is not None:
            self.start(values)
        else:
            self.push_screen(ArgumentsModal(self.program, self.arg_texts), self._arguments_given)
            if self.start_error:
                self.call_after_refresh(self._show_argument_error)

    def _show_argument_error(self) -> None:
        try:
            self.screen.query_one("#args-error").update(self.start_error)
        except Exception:
            pass

    def _arguments_given(self, values) -> None:
        if values is None:
            self.exit(return_code=2)
            return
        self.start(values)

    def start(self, values: list) -> None:
        """Create the session on `values` and show its first stop."""
        kwargs = {"entry": self.program.entry, "limits": self.limits,
                  "config_dir": self.config_dir, "program_path": self.program.path,
                  "names": getattr(self.program, "names", None)}
        if self.history_bytes is not None:
            kwargs["history_bytes"] = self.history_bytes
        screen = self.debugger
        try:
            from rvmdbg.debug import DebugSession
            self.session = DebugSession(self.program.exe, values, **kwargs)
        except Exception as exc:
            screen.status.set_stop(_("cannot start @{entry}: {error}").format(entry=self.program.entry, error=exc), "error")
            return
        screen.start_session()
        # what was wrong in the user's saved state (keys, breakpoints): said once, not lost
        notes = [f"note: {n}" for n in (*self.notes, *self.session.notes)]
        if notes:
            screen.console.record(notes, show=True)
        if self.freeze_heap:
            self.call_after_refresh(self._freeze_heap)

    def _freeze_heap(self) -> None:
        if self.session is not None:
            self.session.warm_up()  # frozen with the rest, and the first `n` does not wait
        gc.collect()  # what startup left behind is collected first, not frozen for good
        gc.freeze()
        # What stepping leaves (history, rendered rows) still grows; a full collection over
        # it, 50-70 ms on the benchmark program, used to land on every 30th to 100th key.
        # It runs when the keys pause instead (young generations are collected as before).
        if self._gc_thresholds is None:
            self._gc_thresholds = gc.get_threshold()
            gc.set_threshold(self._gc_thresholds[0], self._gc_thresholds[1], 1 << 30)
            self._gc_timer = self.set_interval(GC_IDLE_SECONDS, self._collect_when_idle)

    def _collect_when_idle(self) -> None:
        """The deferred full collection, once the screen has been still for a while."""
        if not self.screen_stack:
            return   # the app is closing
        screen = self.debugger
        painted = screen.last_paint
        if (painted > self._collected_at and not screen.running
                and time.monotonic() - painted >= GC_IDLE_SECONDS):
            gc.collect()
            self._collected_at = time.monotonic()

    def on_unmount(self) -> None:
        if self._gc_timer is not None:
            self._gc_timer.stop()
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None

    def interpreter(self):
        """The command-language interpreter on the session (made on first use)."""
        if self._interpreter is None or self._interpreter_session is not self.session:
            from rvmdbg.debug import CommandInterpreter
            self._interpreter = CommandInterpreter(self.session)
            self._interpreter_session = self.session
        return self._interpreter


def run_screen(path: str, arg_texts: list[str], *, entry: str = "main", mouse: bool = True,
               ascii_only: bool | None = None, limits=None, history_bytes: int | None = None,
               config_dir=None, keys_file: str | None = None, inputs: str | None = None,
               check_only: bool = False, missing_meta=None) -> int:
    """Open the screen on a program; returns the exit code (2 when the program or the keys
    file cannot be loaded). `keys_file` (default: the config directory's keys.conf, when
    there is one) rebinds keys. `ascii_only` None: ASCII glyphs where the locale is not UTF-8
    or the terminal is the Linux console (`terminal.wants_ascii`). Environment settings with
    values Textual does not know are refused (2) with the valid ones named. `check_only`:
    check all that and return 0 without opening the screen."""
    problem = environment_error(os.environ)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    if ascii_only is None:
        ascii_only = wants_ascii(os.environ)
    keymap_notes: list[str] = []
    try:
        keymap = load_keymap(keys_file, config_dir, keymap_notes)
    except KeymapError as exc:
        print(exc.format(), file=sys.stderr)
        return 2
    try:
        # the program's AST and bytecode live as long as the screen: loaded without cyclic
        # collections and frozen out of the collector's reach (a full collection over them is
        # a visible pause, at start and while stepping)
        program = load_program_kept(path, entry, missing_meta)
    except ProgramLoadError as exc:
        print(exc.message, file=sys.stderr)
        return 2
    if inputs is not None:
        # --inputs x.npz fills the argument form with `@x.npz:NAME` per named parameter
        from rvmdbg.args import ArgumentError
        try:
            arg_texts = program.bind_inputs(arg_texts, inputs)
        except ArgumentError as exc:
            print(_("error: {message}").format(message=exc.message), file=sys.stderr)
            return 2
    if check_only:
        for note in keymap_notes:
            print(f"note: {note}", file=sys.stderr)
        return 0
    app = DebuggerApp(program, arg_texts, ascii_only=ascii_only, limits=limits,
                      history_bytes=history_bytes, config_dir=config_dir, freeze_heap=True,
                      keymap=keymap)
    app.notes = keymap_notes
    code = app.run(mouse=mouse)
    return code if isinstance(code, int) else (app.return_code or 0)


__all__ = ["DebuggerApp", "run_screen"]
