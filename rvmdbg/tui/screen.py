"""The debugger screen: the panes, the keys, and the one place that drives the DebugSession.

Every key that moves execution goes through `drive()`: a single step runs at once; anything
that may run long (continue, finish, next, run to cursor, go to step, commands) runs in a
worker thread while the screen stays live, shows progress batched to ~0.1 s and can be
interrupted with Esc or Ctrl+C (`session.interrupt()`). Every call into the session is
guarded: whatever the program does, the screen shows it and stays up.

After each stop `show_stop()` reads the session once (frames, deps, breakpoints) and hands
each pane what it shows (stop_painting.py, a mixin of the screen). Panes never call the
session themselves.

Layout (screen_layout.py, a mixin of the screen): at 150 columns and more, source and
listing sit side by side; from 100 they are stacked; below 100 columns or 28 rows each
column shows one pane at a time with a tab bar (Tab, Shift+Tab and clicks switch).
"""
from __future__ import annotations

import time
from typing import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import UPDATE_PERIOD, Screen
from textual.widgets import Input

from rvmdbg.tui.breakpoints import BreakpointPane
from rvmdbg.tui.command_line import CommandLine
from rvmdbg.tui.command_output import CommandOutput
from rvmdbg.tui.compositor import RowCompositor
from rvmdbg.tui.console import Console
from rvmdbg.tui.cycle_strip import CycleStrip, cycle_of
from rvmdbg.debug.profiling import motion_timer, stop_notes
from rvmdbg.views.cycle import PHASE_LABELS
from rvmdbg.tui.footer import KeyFooter
from rvmdbg.tui.glyphs import Glyphs
from rvmdbg.tui.goto_modal import GotoStepModal
from rvmdbg.tui.heap import HeapTree
from rvmdbg.tui.help_screen import HelpScreen
from rvmdbg.tui.line_pane import LinePane
from rvmdbg.tui.links import SourceLinks
from rvmdbg.tui.listing import BytecodeListing
from rvmdbg.tui.pane_tabs import PaneTabs
from rvmdbg.tui.registers import RegisterPane
from rvmdbg.tui.search_bar import SearchBar
from rvmdbg.tui.source_view import SourceView
from rvmdbg.tui.stack import CallStackPane
from rvmdbg.tui.screen_layout import CODE_PANES, STATE_PANES, LayoutModes, state_panes_for
from rvmdbg.tui.status import StatusLine
from rvmdbg.tui.stop_painting import StopPainting
from rvmdbg.tui.stops import (breakpoint_marks, breakpoint_rows, error_text, is_program_error,
                              is_quick_command, pc_note, toggle_message)
from rvmdbg.i18n import N_, _, ngettext

PROGRESS_INTERVAL = 0.1   # seconds between progress updates while running

# what a key or the start is called on the status line and in the console
RUN_LABELS = {N_("start"), N_("step"), N_("reverse step"), N_("next"), N_("finish"), N_("continue"),
              N_("reverse next"), N_("reverse finish"), N_("reverse continue"), N_("restart")}


class Progress(Message):
    """Sent from the worker thread about every PROGRESS_INTERVAL while a run is going."""

    def __init__(self, steps: int, rate: float) -> None:
        super().__init__()
        self.steps = steps
        self.rate = rate


class RunFinished(Message):
    """The worker thread's session call returned (or raised). For a command line, `event` is
    the text the command printed."""

    def __init__(self, label: str, event, error: BaseException | None,
                 command: str | None = None) -> None:
        super().__init__()
        self.label = label
        self.event = event
        self.error = error
        self.command = command


def shown_label(label: str) -> str:
    """A run's label as shown: the fixed ones translated, a command line as typed."""
    return _(label) if label in RUN_LABELS else label


def _human_rate(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.1f}M"
    if rate >= 1e3:
        return f"{rate / 1e3:.0f}k"
    return f"{rate:.0f}"


class DebuggerScreen(LayoutModes, StopPainting, Screen):
    """The main screen. `app.program` and `app.session` are what it shows."""

    # The listing has the focus from the start (the first focusable pane, the source, taking it
    # and giving it up would style both panes twice more before the first frame)
    AUTO_FOCUS = "#listing"

    # Keys that move execution are disabled (shown dim) while a run is in progress.
    DRIVING = {"step", "next", "finish", "cont", "rstep", "rnext", "rfinish", "rcont", "goto",
               "run_to_cursor", "toggle_breakpoint", "watch_cursor", "command", "restart", "quiz"}

    BINDINGS = [
        Binding("s,f11", "step", N_("Step"), tooltip=N_("Step one instruction, into calls (F11)"), id="step"),
        Binding("n,f10", "next", N_("Next"), tooltip=N_("Step over a call (F10)"), id="next"),
        Binding("f,shift+f11", "finish", N_("Finish"), tooltip=N_("Run until this frame returns (Shift+F11)"), id="finish"),
        Binding("c,f5", "cont", N_("Cont"), tooltip=N_("Continue to the next breakpoint (F5)"), id="continue"),
        Binding("S", "rstep", N_("Back"), show=False, tooltip=N_("Reverse step one instruction"), id="rstep"),
        Binding("N", "rnext", N_("RNext"), show=False, tooltip=N_("Reverse next: back over a call"), id="rnext"),
        Binding("F", "rfinish", N_("RFinish"), show=False, tooltip=N_("Reverse finish: back to the call"), id="rfinish"),
        Binding("C,shift+f5", "rcont", N_("RCont"), show=False,
                tooltip=N_("Reverse continue to the previous breakpoint hit (Shift+F5)"), id="rcontinue"),
        Binding("g", "goto", N_("Goto"), show=False, tooltip=N_("Go to step N (back or forward)"), id="goto"),
        Binding("u", "frame_up", N_("Up"), show=False, tooltip=N_("Select the caller's frame (up the stack)"), id="up"),
        Binding("d", "frame_down", N_("Down"), show=False, tooltip=N_("Select the callee's frame (down the stack)"), id="down"),
        Binding("colon", "command", N_("Cmd"), tooltip=N_("Command line (the batch-mode commands)"), id="command"),
        Binding("slash", "search", N_("Search"), show=False, tooltip=N_("Search in the focused pane"), id="search"),
        Binding("o", "toggle_output", N_("Output"), show=False, tooltip=N_("Show or hide the command output"), id="output"),
        Binding("r", "toggle_numbering", N_("Reuse"), show=False,
                tooltip=N_("Registers: TVM's numbering or reused by liveness (as --reuse-registers), "
                        "in the listing and the registers pane at once, live ranges beside the "
                        "listing; the session switches at the same step"), id="numbering"),
        Binding("p", "toggle_cycle", N_("Phases"), show=False,
                tooltip=N_("Fetch, decode, execute: show the dispatch loop's strip; while it is "
                        "shown, s advances one phase (the VM steps at execute)"), id="cycle"),
        Binding("P", "profile", N_("Profile"), show=False,
                tooltip=N_("Kernel times of the run so far (info profile); the first press "
                        "turns profiling on: stops then say a kernel's time, n and f the time "
                        "they covered"), id="profile"),
        Binding("ctrl+r", "restart", N_("Restart"), show=False, tooltip=N_("Restart the program (keeps breakpoints)"), id="restart"),
        Binding("question_mark", "help", N_("Help"), tooltip=N_("Every key"), id="help"),
        Binding("q", "quit", N_("Quit"), tooltip=N_("Quit rvmdbg"), id="quit"),
        # The teaching views are modes of the app: 1-3 open one over the debugger, which stays
        # where it was; 0 or Esc in a view come back. The footer shows one "1-3 Views" entry,
        # after Help and Quit so that a narrow footer cuts it rather than them.
        Binding("1", "open_view('flow')", N_("Views"), key_display="1-3",
                tooltip=N_("View 1: compile and execute flow (0 or Esc comes back)"), id="view-flow"),
        Binding("2", "open_view('executors')", N_("VM/graph"), show=False,
                tooltip=N_("View 2: VM versus graph executor"), id="view-executors"),
        Binding("3", "open_view('control')", N_("CFG/ADTs"), show=False,
                tooltip=N_("View 3: control flow and ADTs"), id="view-control"),
        Binding("v", "views", N_("Last view"), show=False, tooltip=N_("Reopen the last teaching view"),
                id="views"),
        Binding("Q", "quiz", N_("Quiz"), show=False,
                tooltip=N_("Check yourself: predict the next step, then the VM answers"), id="quiz"),
        Binding("tab", "cycle_pane(1)", N_("Next pane"), show=False, tooltip=N_("Focus the next pane"), id="next-pane"),
        Binding("shift+tab", "cycle_pane(-1)", N_("Previous pane"), show=False, tooltip=N_("Focus the previous pane"),
                id="previous-pane"),
        Binding("escape", "interrupt", N_("Interrupt"), show=False, tooltip=N_("Interrupt a running continue"),
                id="interrupt"),
        Binding("ctrl+c", "interrupt", N_("Interrupt"), show=False, priority=True,
                tooltip=N_("Interrupt a running continue")),  # no id: Ctrl+C always interrupts
    ]

    def __init__(self, glyphs: Glyphs) -> None:
        super().__init__()
        self._compositor = RowCompositor()   # a key repaints the rows it changed, not the screen
        self.glyphs = glyphs
        self.running = False
        self.run_label = ""
        self.frames: list = []
        self.selected_depth: int | None = None
        self._run_started = 0.0
        self._covered = None   # debug.profiling.motion_timer of a running next or finish
        self._last_progress = 0.0
        self.heap_stale = True
        self.layout_mode = ""
        self.shown_event = None
        self._waiting: list[Callable[[], None]] = []   # keys pressed during a run, in order
        self._matches = None   # (text, matches) of the last search across functions
        self._parts: dict = {}   # id -> widget, see `pane`
        self.numbering = "tvm"  # the register numbering shown (`r`, `numbering`)
        self.last_paint = 0.0   # when the screen last painted (time.monotonic, see `_on_idle`)

    # ------------------------------------------------------------ composition

    @property
    def program(self):
        return self.app.program

    @property
    def session(self):
        return self.app.session

    def compose(self) -> ComposeResult:
        program = self.program
        # the layout's class before the panes mount: set after, it restyles every pane again
        self.set_layout_class(*self.app.size)
        g = self.glyphs
        self.links = SourceLinks(program.exe, program.source_file)
        has_source = program.source_text is not None
        code_panes = CODE_PANES if has_source else CODE_PANES[1:]

        def tab(pane_id: str, panes) -> str:  # the class `show_tab` would give it
            return "-tab-hidden" if pane_id != panes[0][0] else ""
        with Horizontal(id="main"):
            with Vertical(id="code-column"):
                yield PaneTabs(code_panes, id="code-tabs", classes="pane-tabs")
                with Horizontal(id="code"):
                    if has_source:
                        yield SourceView(program.source_text, self.links, program.name,
                                         file=program.source_file, glyphs=g, id="source",
                                         classes=tab("source", code_panes))
                    yield BytecodeListing(program.exe, self.links, glyphs=g, id="listing",
                                      classes=tab("listing", code_panes))
                yield CycleStrip(marker=g.pc, id="cycle")
            with Vertical(id="state-column"):
                state_panes = self.state_panes = state_panes_for(program.exe)
                yield PaneTabs(state_panes, id="state-tabs", classes="pane-tabs")
                registers = RegisterPane(glyphs=g, id="registers",
                                         classes=tab("registers", STATE_PANES))
                registers.constructor_types = program.constructor_types
                registers.register_prefix = getattr(program.exe, "register_prefix", "$")
                yield registers
                yield CallStackPane(program.exe, glyphs=g, id="stack", classes=tab("stack", STATE_PANES))
                heap = HeapTree(glyphs=g, id="heap", classes=tab("heap", STATE_PANES))
                heap.constructor_types = program.constructor_types
                if not any(p == "heap" for p, _ in state_panes):
                    heap.display = False   # (set only here: an inline display beats the tabs' CSS)
                yield heap
                yield BreakpointPane(glyphs=g, id="breakpoints", classes=tab("breakpoints", STATE_PANES))
                if any(p == "constants" for p, _ in state_panes):   # a Relax VM executable's pool
                    from rvmdbg.tui.constants import ConstantPane
                    yield ConstantPane(program.exe, glyphs=g, id="constants",
                                       classes=tab("constants", state_panes))
        yield Console(id="console")
        yield SearchBar(id="search")
        yield StatusLine(id="status")
        yield KeyFooter(compact=True)

    def pane_ids(self) -> list[str]:
        """The panes Tab cycles through: the code and state panes, and the console's
        scrollback while it is shown."""
        ids = [p for p, _ in CODE_PANES + getattr(self, "state_panes", STATE_PANES)]
        ids = [p for p in ids if self.query(f"#{p}")]
        if self.query("#console") and self.console.shown:
            ids.append("output")
        return ids

    @property
    def console(self) -> Console:
        return self.pane("console")

    def pane(self, pane_id: str):
        """The screen's part with this id (looked up once: the parts live as long as the
        screen, and a query walks the whole widget tree, which showed in every step)."""
        widget = self._parts.get(pane_id)
        if widget is None:
            widget = self._parts[pane_id] = self.query_one(f"#{pane_id}")
        return widget

    @property
    def listing(self) -> BytecodeListing:
        return self.pane("listing")

    @property
    def source(self) -> SourceView | None:
        if "source" not in self._parts:
            found = self.query("#source")
            if not found and not self.is_mounted:
                return None  # not composed yet: ask again later
            self._parts["source"] = found.first() if found else None
        return self._parts["source"]

    @property
    def status(self) -> StatusLine:
        return self.pane("status")

    def on_mount(self) -> None:
        exe = self.program.exe
        entry = exe.func_index(self.program.entry)
        self.listing.show_function(entry)
        self.pane("registers").clear(_("not started"))
        self.pane("heap").show_message(_("not started"))
        self.pane("breakpoints").set_rows([])
        self.pane("stack").set_frames([], 0)
        if self.has_class("-ascii"):
            from rvmdbg.tui.line_pane import use_ascii_scrollbars
            use_ascii_scrollbars(self.console.output)
        self.status.set_stop(_("{program}: waiting for arguments").format(program=self.program.name), "stop")
        self.apply_layout(self.size.width, self.size.height, force=True)
        self.listing.focus()
        # the first frame (listing and source) paints before the session is built
        self.status.set_stop(_("{program}: starting").format(program=self.program.name), "stop")
        self.call_after_refresh(self.app.begin)

    def on_resize(self, event) -> None:
        self.apply_layout(event.size.width, event.size.height)

    # ------------------------------------------------------------ painting

    async def _on_idle(self, event) -> None:
        """Paint a key's changes as soon as the screen is idle, when the last paint is a
        frame old or more. Textual leaves that to its 60 Hz update timer, whose next tick
        comes one to two frames after the last (it skips the ticks missed while paused): a
        key pressed in that window waited up to 33 ms for a screen it had already updated.
        Paints stay at most one a frame: a key within a frame of the last paint waits for the
        timer as before."""
        if (not self.app._batch_count and self.is_current
                and time.monotonic() - self.last_paint >= UPDATE_PERIOD
                and (self._layout_required or self._scroll_required or self._repaint_required
                     or self._dirty_widgets)):
            self._on_timer_update()

    def _on_timer_update(self) -> None:
        self.last_paint = time.monotonic()
        super()._on_timer_update()

    def on_unmount(self) -> None:
        # Leaving the app must not leave a run going in the worker thread.
        if self.running and self.session is not None:
            self.session.interrupt()

    # ------------------------------------------------------------ starting

    def start_session(self) -> None:
        """Called by the app once the session exists."""
        session = self.session
        session.on_progress = self._progress_from_worker
        self.console.command_line.complete = lambda text: self.app.interpreter().complete(text)
        self.show_stop(None, "start")
        self._record_stop("start")

    # ------------------------------------------------------------ driving the session

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in self.DRIVING and self.session is None:
            return None  # shown disabled
        return True

    def _wait_turn(self, action: Callable[[], None]) -> bool:
        """True when a run is going: then `action` (a key pressed meanwhile) waits its turn
        and runs after it, in order; keys that come in one burst all count."""
        if not self.running:
            return False
        self._waiting.append(action)
        return True

    def _run_waiting(self) -> None:
        while self._waiting and not self.running:
            self._waiting.pop(0)()

    def drive(self, label: str, call: Callable, threaded: bool = True,
              command: str | None = None) -> None:
        """Run `call(session)`, then show where it stopped. With `command`, `call` returns
        the text that command line printed, for the output pane."""
        if self.session is None:
            self.status.set_message(_("no program running"), warning=True)
            return
        if self._wait_turn(lambda: self.drive(label, call, threaded, command)):
            return
        # with profiling on, the stop of `next` and `finish` says the time they covered
        self._covered = motion_timer(self.session) if label in ("next", "finish") else None
        if not threaded:
            try:
                event = call(self.session)
                error = None
            except Exception as exc:
                event, error = None, exc
            self._finish(label, event, error, command)
            return
        self.running = True
        self.run_label = label
        self._run_started = time.monotonic()
        self._last_progress = 0.0
        self.status.set_running(f"{self.glyphs.running} " + _("{label}: running").format(label=shown_label(label))
                                + f" {self.glyphs.separator} " + _("Esc or Ctrl+C interrupts"))
        self._run_in_thread(label, call, command)

    @work(thread=True, exclusive=True, group="session", exit_on_error=False)
    def _run_in_thread(self, label: str, call: Callable, command: str | None) -> None:
        try:
            event = call(self.session)
            error = None
        except BaseException as exc:  # reported on screen, never raised into the worker
            event, error = None, exc
        self.post_message(RunFinished(label, event, error, command))

    def on_run_finished(self, message: RunFinished) -> None:
        self.running = False
        self.status.set_running("")
        self._finish(message.label, message.event, message.error, message.command)
        self._run_waiting()

    def _progress_from_worker(self, steps: int, steps_per_s: float = 0.0) -> None:
        """The session's progress callback (worker thread): batched to PROGRESS_INTERVAL."""
        now = time.monotonic()
        if now - self._last_progress >= PROGRESS_INTERVAL:
            self._last_progress = now
            self.post_message(Progress(steps, steps_per_s))

    def on_progress(self, message: Progress) -> None:
        if not self.running:
            return
        g = self.glyphs
        self.status.set_running(
            f"{g.running} " + _("{label}: step {step}").format(label=shown_label(self.run_label), step=f"{message.steps:,}")
            + f" {g.separator} " + _("{rate} steps/s").format(rate=_human_rate(message.rate))
            + f" {g.separator} " + _("Esc or Ctrl+C interrupts"))

    def _finish(self, label: str, event, error: BaseException | None,
                command: str | None = None) -> None:
        notice = self._adopt_session() if command is not None else ""
        message = ""
        warning = False
        if command is not None:
            output = _("error: {message}").format(message=error_text(error)) if error is not None else event
            self._show_output(command, output if isinstance(output, str) else str(output))
            event = None
            if error is not None and not is_program_error(error):
                error = None  # already in the output pane
        if error is not None and not is_program_error(error):
            # a program's failure is an error stop and shows as one; anything else is news
            message = f"{shown_label(label)}: {error_text(error)}"
            warning = True
        try:
            self.show_stop(event, label)
            if command is None:
                self._record_stop(label)  # a command's output has its stop already
        except Exception as exc:  # the screen must survive a surprise in the session's state
            message = _("cannot show the state: {error}").format(error=f"{type(exc).__name__}: {exc}")
            warning = True
        if message:
            self.status.set_message(message, warning=warning)
        elif notice:
            self.status.set_message(notice)

    def action_step(self) -> None:
        if self.cycle_shown:
            if not self._wait_turn(self.action_step):
                self._advance_cycle()
            return
        self.drive("step", lambda s: s.step(), threaded=False)

    # ------------------------------------------------------------ register numbering

    def action_toggle_numbering(self) -> None:
        """`r`: TVM's numbering or reused by liveness (the command `numbering toggle`)."""
        self.run_command("numbering toggle")

    def _adopt_session(self) -> str:
        """After `numbering`: the command language switched to the other numbering's session;
        the screen shows that session and that executable from now on."""
        interpreter = self.app._interpreter
        if interpreter is None or interpreter.session is self.session:
            return ""
        import dataclasses
        new = interpreter.session
        numberings = interpreter.numberings
        reused = numberings.current == "reused"
        app = self.app
        app.session = new
        app._interpreter_session = new
        new.on_progress = self._progress_from_worker
        programs = getattr(app, "numbered_programs", None)
        if programs is None:
            programs = app.numbered_programs = {"tvm": app.program}
        if numberings.current not in programs:
            programs[numberings.current] = dataclasses.replace(programs["tvm"],
                                                               exe=new.original_exe)
        app.program = programs[numberings.current]
        sizes = numberings.report if reused else None
        self.listing.set_exe(new.original_exe, live=reused, register_sizes=sizes)
        stack = self.query_one("#stack", CallStackPane)
        stack.exe = new.original_exe
        stack.invalidate()
        self.numbering = numberings.current
        before, after = numberings.totals()
        text = (_("registers in reused numbering at step {step}: {before} -> {after} over all "
                  "functions (r switches back)") if reused else
                _("registers in TVM numbering at step {step}: {before} -> {after} over all "
                  "functions (r switches back)"))
        return text.format(step=new.step_count, before=before, after=after)

    # ------------------------------------------------------------ fetch, decode, execute

    @property
    def cycle_shown(self) -> bool:
        return self.pane("cycle").has_class("-shown")   # (asked at every step)

    def action_toggle_cycle(self) -> None:
        strip = self.query_one("#cycle", CycleStrip)
        shown = not strip.has_class("-shown")
        strip.set_class(shown, "-shown")
        if shown:
            self.draw_cycle()
            self.status.set_message(_("fetch, decode, execute: s advances one phase; p hides "
                                      "the strip"))
        else:
            self.status.set_message(_("s steps whole instructions again"))

    def _advance_cycle(self) -> None:
        s = self.session
        if s is None:
            return
        try:
            phase = cycle_of(self.app).advance(
                s, lambda: self.drive("step", lambda s: s.step(), threaded=False))
        except Exception as exc:  # the strip is a view of the session: it must not break it
            self.status.set_message(_("fetch-decode-execute: {error}").format(
                error=error_text(exc)), warning=True)
            return
        self.draw_cycle()
        if phase and phase != "execute":
            self.status.set_message(_("{phase}: done; s does the next phase").format(
                phase=_(PHASE_LABELS[phase])))
        elif not phase:
            self.status.set_message(_("nothing left to run"), warning=True)

    def draw_cycle(self) -> None:
        if self.cycle_shown:
            self.query_one("#cycle", CycleStrip).show(cycle_of(self.app).rows(self.session))

    def action_rstep(self) -> None:
        self.drive("reverse step", lambda s: s.rstep(), threaded=False)

    def action_next(self) -> None:
        if self._wait_turn(lambda: self.action_next()):
            return
        # Over anything but a call, next is one instruction: done at once, like `s`, without
        # the worker thread's round trip (a call may run for long: that goes to the worker).
        ins = self.session.current_instruction() if self.session is not None else None
        one_step = ins is not None and not ins.is_call
        self.drive("next", lambda s: s.next(), threaded=not one_step)

    def action_finish(self) -> None:
        self.drive("finish", lambda s: s.finish())

    def action_cont(self) -> None:
        self.drive("continue", lambda s: s.cont())

    def action_rnext(self) -> None:
        self.drive("reverse next", lambda s: s.rnext())

    def action_rfinish(self) -> None:
        self.drive("reverse finish", lambda s: s.rfinish())

    def action_rcont(self) -> None:
        self.drive("reverse continue", lambda s: s.rcontinue())

    def action_restart(self) -> None:
        self.drive("restart", lambda s: s.restart(), threaded=False)

    def action_interrupt(self) -> None:
        if self.running and self.session is not None:
            self._waiting.clear()  # an interrupt also drops the keys waiting for the run
            try:
                self.session.interrupt()
            except Exception as exc:
                self.status.set_message(_("cannot interrupt: {error}").format(error=exc), warning=True)
                return
            self.status.set_running(f"{self.glyphs.running} " + _("{label}: interrupting").format(label=shown_label(self.run_label)))
            return
        # not running: Escape leaves the command line or search box if one is open
        for box_id in ("command", "search"):
            box = self.query_one(f"#{box_id}")
            if box.has_class("-shown"):
                self._close_box(box)
                return
        self.listing.clear_swap()  # and then drops a swap? mark

    def action_quit(self) -> None:
        if self.running and self.session is not None:
            try:
                self.session.interrupt()
            except Exception:
                pass
        self.app.exit()

    def action_goto(self) -> None:
        if self._wait_turn(lambda: self.action_goto()):
            return
        s = self.session
        if s is None or self.running:
            return
        try:
            current, earliest, latest = s.step_count, s.history_start, s.last_step
        except Exception:
            current, earliest, latest = 0, 0, 0

        def chosen(step: int | None) -> None:
            if step is not None:
                self.drive(_("go to step {step}").format(step=step), lambda s: s.goto(step))
        self.app.push_screen(GotoStepModal(current, earliest, latest), chosen)

    def action_run_to_cursor(self) -> None:
        if self._wait_turn(lambda: self.action_run_to_cursor()):
            return
        loc = self._cursor_location()
        if loc is None:
            if isinstance(self.focused, SourceView):
                self.status.set_message(_("line {line} has no instructions").format(line=self.focused.cursor + 1),
                                        warning=True)
            else:
                self.status.set_message(_("t runs to the line or instruction under the cursor: "
                                          "focus the listing or the source"), warning=True)
            return
        fi, pc = loc
        name = self.program.exe.functions[fi].name
        self.drive(_("run to @{func}:{pc}").format(func=name, pc=pc), lambda s: s.run_to(fi, pc))

    def _cursor_location(self) -> tuple[int, int] | None:
        focused = self.focused
        if isinstance(focused, BytecodeListing):
            return focused.cursor_location()
        if isinstance(focused, SourceView) and focused.shows_program:
            line = focused.cursor + 1
            frame = self.selected_frame()
            return self.links.best_location(line, frame.func_index if frame is not None else None)
        return None

    # ------------------------------------------------------------ breakpoints and watches

    def action_toggle_breakpoint(self) -> None:
        if self._wait_turn(lambda: self.action_toggle_breakpoint()):
            return
        s = self.session
        if s is None:
            return
        focused = self.focused
        try:
            if isinstance(focused, BytecodeListing):
                loc = focused.cursor_location()
                if loc is None:
                    return
                result = s.breakpoints.toggle_at(*loc)
                where = f"@{self.program.exe.functions[loc[0]].name}:{loc[1]}"
            elif isinstance(focused, SourceView) and not focused.shows_program:
                self.status.set_message(_("line breakpoints are for the program's own file: "
                                          "here, b in the listing"), warning=True)
                return
            elif isinstance(focused, SourceView):
                line = focused.cursor + 1
                result = s.breakpoints.toggle_line(line)
                where = _("line {line}").format(line=line)
            else:
                self.status.set_message(_("b toggles a breakpoint in the listing or the source"),
                                        warning=True)
                return
        except Exception as exc:
            self.status.set_message(_("breakpoint: {error}").format(error=error_text(exc)), warning=True)
            return
        self.status.set_message(toggle_message(result, where))
        self.refresh_breakpoints()

    def action_watch_cursor(self) -> None:
        if self._wait_turn(lambda: self.action_watch_cursor()):
            return
        s = self.session
        if s is None:
            return
        focused = self.focused
        depth = self.selected_depth
        if isinstance(focused, RegisterPane):
            register = focused.cursor_register()
        elif isinstance(focused, BytecodeListing):
            register = focused.cursor_written_register()
            frame = self.selected_frame()
            if frame is None or frame.func_index != focused.func_index:
                self.status.set_message(_("w in the listing watches a register of the selected "
                                          "frame's function"), warning=True)
                return
        else:
            self.status.set_message(_("w watches the register under the cursor in the registers "
                                      "pane or the listing"), warning=True)
            return
        if register is None:
            self.status.set_message(_("no register under the cursor"), warning=True)
            return
        try:
            w = s.watch(register, depth=depth)
        except Exception as exc:
            self.status.set_message(_("watch: {error}").format(error=error_text(exc)), warning=True)
            return
        where = w.where(self.program.exe) if callable(getattr(w, "where", None)) else f"${register}"
        self.status.set_message(_("watchpoint {n}: {where}").format(n=w.id, where=where))
        self.refresh_breakpoints()

    def on_breakpoint_pane_changed(self, event: BreakpointPane.Changed) -> None:
        s = self.session
        if s is None:
            return
        row = event.row
        try:
            if event.action == "show":
                if row.location is not None:
                    fi, pc = row.location
                    self.listing.show_function(fi, cursor=pc)
                    self.mark_listing_breakpoints()
                    self.action_focus_pane("listing")
                return
            if event.action == "condition":
                if row.kind != "break":
                    self.status.set_message(_("a watchpoint has no condition: it stops on "
                                              "every write (or change) of its register"))
                    return
                self.action_command(f"condition {row.number} {row.condition}")
                return
            # breakpoints and watchpoints share one numbering in the session
            if event.action == "delete":
                s.delete(row.number)
            elif row.enabled:
                s.disable(row.number)
            else:
                s.enable(row.number)
        except Exception as exc:
            self.status.set_message(f"{event.action}: {error_text(exc)}", warning=True)
        self.refresh_breakpoints()

    def refresh_breakpoints(self) -> None:
        try:
            rows = breakpoint_rows(self.session, self.program.exe)
        except Exception as exc:
            rows = []
            self.status.set_message(_("breakpoints: {error}").format(error=error_text(exc)), warning=True)
        self.pane("breakpoints").set_rows(rows)
        self.mark_listing_breakpoints()

    def mark_listing_breakpoints(self) -> None:
        s = self.session
        if s is None:
            return
        try:
            marks = breakpoint_marks(s, self.program.exe, self.links)
        except Exception:
            marks = ({}, {})
        by_location, by_line = marks
        fi = self.listing.func_index
        self.listing.set_breakpoints({pc: m for (f, pc), m in by_location.items() if f == fi})
        if self.source is not None:
            self.source.set_breakpoints(by_line if self.source.shows_program else {})

    # ------------------------------------------------------------ frames

    def selected_frame(self):
        d = self.selected_depth
        if d is None or not (0 <= d < len(self.frames)):
            return None
        return self.frames[d]

    def action_frame_up(self) -> None:
        if self.selected_depth is None:
            return
        if self.selected_depth == 0:
            self.status.set_message(_("already at the outermost frame"))
            return
        self.select_frame(self.selected_depth - 1)

    def action_frame_down(self) -> None:
        if self.selected_depth is None:
            return
        if self.selected_depth >= len(self.frames) - 1:
            self.status.set_message(_("already at the innermost frame"))
            return
        self.select_frame(self.selected_depth + 1)

    def on_call_stack_pane_frame_selected(self, event: CallStackPane.FrameSelected) -> None:
        self.select_frame(event.depth)

    def select_frame(self, depth: int) -> None:
        self.selected_depth = depth
        self.pane("stack").select(depth)
        try:
            self.show_selected_frame()
        except Exception as exc:
            self.status.set_message(_("frame: {error}").format(error=error_text(exc)), warning=True)
        frame = self.selected_frame()
        if frame is not None:
            self.status.set_message(_("frame #{n}").format(n=len(self.frames) - 1 - depth)
                                    + f": @{frame.func_name} pc={frame.pc}")

    # ------------------------------------------------------------ the listing and the source

    def on_line_pane_cursor_moved(self, event: LinePane.CursorMoved) -> None:
        pane = event.pane
        if isinstance(pane, BytecodeListing) and self.source is not None:
            if not self.source.shows_program:
                return
            loc = pane.cursor_location()
            line = self.links.line_of(*loc) if loc is not None else None
            self.source.set_linked(line)
        elif isinstance(pane, SourceView) and pane.shows_program:
            line = event.index + 1
            frame = self.selected_frame()
            prefer = self.listing.func_index
            loc = self.links.best_location(line, prefer)
            if loc is None:
                self.listing.set_linked(())
                return
            if loc[0] != self.listing.func_index:
                self.listing.show_function(loc[0])
                self._show_location_of_selected_frame(frame)
            self.listing.set_linked(self.links.pcs_in(line, loc[0]))
            self.listing.set_cursor(loc[1], quiet=True)
            self.source.set_typed(None)

    def on_bytecode_listing_swap_shown(self, event: BytecodeListing.SwapShown) -> None:
        """swap?: the verdict between the marked instruction and the cursor, in words."""
        listing = event.listing
        mark, v = listing.swap_mark, event.verdict
        if mark is None:
            self.status.set_message(_("swap?: mark cleared"))
            return
        if v is None:
            self.status.set_message(_("swap?: pc {pc} marked; move to another instruction "
                                      "(m on the mark, or Esc, clears it)").format(pc=mark))
            return
        if v.ok:
            self.status.set_message(_("swap? pc {a} and pc {b}: may swap (no dependence and no "
                                      "control between them)").format(a=v.pc_a, b=v.pc_b))
            return
        more = len(v.reasons) - 1
        prefix = getattr(self.program.exe, "register_prefix", "$")
        reason = v.reasons[0].text(prefix)
        if more:
            text = ngettext("swap? pc {a} and pc {b}: may not: {reason} (+{n} more: "
                            "`swap? {a} {b}` lists them)",
                            "swap? pc {a} and pc {b}: may not: {reason} (+{n} more: "
                            "`swap? {a} {b}` lists them)", more)
        else:
            text = _("swap? pc {a} and pc {b}: may not: {reason}")
        self.status.set_message(text.format(a=v.pc_a, b=v.pc_b, reason=reason, n=more),
                                warning=True)

    def _show_location_of_selected_frame(self, frame) -> None:
        """After switching the listing's function: mark the pc if the frame is in it."""
        listing = self.listing
        if frame is not None and frame.func_index == listing.func_index:
            top = self.selected_depth == len(self.frames) - 1
            error = getattr(self.session, "error", None) if self.session else None
            kind = "error" if top and error is not None else "top" if top else "caller"
            listing.set_location(frame.pc, kind, error_text(error) if kind == "error" else "",
                                 pc_note(frame, self.program.exe) if top else "", follow=False)
            if top:
                listing.set_deps(*self.listing_deps())
        self.mark_listing_breakpoints()

    def action_show_function(self, delta: int) -> None:
        n = len(self.program.exe.functions)
        fi = self.listing.func_index or 0
        self.listing.show_function((fi + delta) % n)
        self._show_location_of_selected_frame(self.selected_frame())
        fn = self.program.exe.functions[self.listing.func_index]
        self.status.set_message(_("showing @{func}").format(func=fn.name) + f" (VMFunc[{self.listing.func_index}])")

    def action_show_pc(self) -> None:
        frame = self.selected_frame()
        if frame is None:
            return
        self.listing.show_function(frame.func_index, cursor=frame.pc)
        self._show_location_of_selected_frame(frame)

    def action_type_at_cursor(self) -> None:
        source = self.source
        types = self.program.expression_types
        if source is None:
            return
        if not source.shows_program:
            self.status.set_message(_("types are known for the program's own file only"))
            return
        line, col = source.cursor_position()
        entry = types.innermost_at(line, col) if types is not None else None
        if entry is None:
            source.set_typed(None)
            why = "" if self.program.module is not None else " " + _("(no typed module for this executable)")
            self.status.set_message(_("no typed expression at {place}").format(place=f"{line}:{col}") + why)
            return
        source.set_typed((entry.line, entry.col, entry.end_line, entry.end_col))
        what = f"%{entry.name}" if entry.kind == "Var" else (f"@{entry.name}" if entry.name else entry.kind)
        self.status.set_message(f"{entry.line}:{entry.col} {what} : {entry.type}")

    # ------------------------------------------------------------ registers

    def action_profile(self) -> None:
        """`P`: the kernel table of the run so far in the console (profiling on if off)."""
        self.run_command("info profile")

    def action_print_register(self) -> None:
        registers = self.pane("registers")
        r = registers.cursor_register()
        if r is None:
            return
        from rvmdbg.values import format_value
        try:
            text = format_value(registers.registers[r])
        except Exception as exc:
            text = "<" + _("cannot print: {error}").format(error=exc) + ">"
        self._show_output(f"print ${r}", f"${r} = {text}")

    # ------------------------------------------------------------ command line and search

    def action_command(self, text: str = "") -> None:
        """Open the command line, holding `text` (the cursor after it)."""
        if self._wait_turn(lambda: self.action_command(text)):
            return
        self._close_box(self.query_one("#search", SearchBar), refocus=False)
        self.focus_now(self.console.open(text))

    def action_search(self) -> None:
        focused = self.focused
        if not isinstance(focused, (LinePane, HeapTree)):
            focused = self.listing
        bar = self.query_one("#search", SearchBar)
        self._close_box(self.query_one("#command", CommandLine), refocus=False)
        bar.open_for(focused, getattr(focused, "title", "pane"))
        bar.add_class("-shown")
        self.focus_now(bar)

    def action_toggle_output(self) -> None:
        console = self.console
        if console.shown and self.focused is console.output:
            self.focus_now(self.listing)
        console.show(not console.shown)

    def action_copy_pane(self) -> None:
        """Copy the focused pane's whole text to the terminal's clipboard (OSC 52)."""
        pane = self.focused
        if isinstance(pane, CommandOutput):
            text, name = pane.text(), _("the console")
        elif isinstance(pane, LinePane):
            text = "\n".join(pane.line_text(i) for i in range(pane.line_count))
            name = pane.border_title or pane.title
        elif isinstance(pane, HeapTree):
            text, name = pane.text(), pane.border_title or _("the heap")
        else:
            self.status.set_message(_("Y copies the focused pane's text: focus a pane first"),
                                    warning=True)
            return
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1 if text else 0
        self.status.set_message(ngettext("copied {n} line of {name} to the clipboard "
                                         "(OSC 52: terminals that support it, tmux with set-clipboard on)",
                                         "copied {n} lines of {name} to the clipboard "
                                         "(OSC 52: terminals that support it, tmux with set-clipboard on)",
                                         lines).format(n=lines, name=name))

    def action_open_view(self, name: str) -> None:
        from rvmdbg.tui.views.base import show_view
        show_view(self.app, name)

    def action_views(self) -> None:
        self.action_open_view(getattr(self.app, "last_teaching_view", "flow"))

    def action_quiz(self) -> None:
        from rvmdbg.tui.quiz_screen import open_quiz
        error = open_quiz(self.app)
        if error:
            self.status.set_message(error, warning=True)

    def action_help(self) -> None:
        sections = [(N_("Everywhere"), self.BINDINGS)]
        for cls in (BytecodeListing, SourceView, RegisterPane, CallStackPane, BreakpointPane):
            own = [b for b in cls.BINDINGS if b.show or b.tooltip]
            if own:
                sections.append((cls.title, own))
        sections.append((N_("Every pane"), LinePane.BINDINGS))
        sections.append((N_("Console (o shows it, Tab focuses it)"), CommandOutput.BINDINGS))
        sections.append((N_("Command line (:)"), CommandLine.BINDINGS))
        sections.append((N_("Search box (/)"), SearchBar.BINDINGS))
        from rvmdbg.tui.quiz_screen import QuizScreen
        from rvmdbg.tui.views.flow import FlowScreen
        sections.append((N_("Quiz (Q, also in the views)"),
                         [Binding("1-9", "choose", tooltip=N_("Answer with that choice; the VM "
                                  "then answers by stepping"))]
                         + [b for b in QuizScreen.BINDINGS if b.tooltip]))
        sections.append((N_("View 1 (1)"), FlowScreen.BINDINGS))
        self.app.push_screen(HelpScreen(sections, getattr(self.app, "keymap", None)))

    def _close_box(self, box, refocus: bool = True) -> None:
        if not box.has_class("-shown"):
            return
        box.remove_class("-shown")
        target = getattr(box, "target", None)
        if refocus:
            self.focus_now(target if target is not None else self.listing)

    def on_command_line_closed(self, event: CommandLine.Closed) -> None:
        self._close_box(self.console.command_line)

    def on_command_line_note(self, event: CommandLine.Note) -> None:
        self.status.set_message(event.text)

    def on_search_bar_closed(self, event: SearchBar.Closed) -> None:
        self._close_box(self.query_one("#search", SearchBar))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, SearchBar):
            self._search(event.input, event.value)

    def on_search_bar_moved(self, event: SearchBar.Moved) -> None:
        self._search(event.bar, event.bar.value, event.delta)

    def _search(self, bar: SearchBar, text: str, delta: int = 1) -> None:
        target = bar.target
        if not text or target is None:
            return
        if isinstance(target, BytecodeListing):
            self._search_bytecode(text, delta)
            return
        if isinstance(target, HeapTree):
            found = target.search(text)
        else:
            found = target.search(text) is not None
        self.status.set_message(f"/{text}: " + (_("found") if found else _("no match")),
                                warning=not found)

    def _search_bytecode(self, text: str, delta: int) -> None:
        """Search every function's bytecode: go to the next (or previous) match after the
        listing's cursor, and say which one of how many it is."""
        from rvmdbg.debug.commands import search_bytecode
        exe = self.program.exe
        if self._matches is None or self._matches[0] != text:
            self._matches = (text, search_bytecode(exe, text))
        matches = self._matches[1]
        if not matches:
            self.status.set_message(f"/{text}: " + _("no match in any function"), warning=True)
            return
        here = (self.listing.func_index, self.listing.cursor)
        places = [(fi, pc) for fi, pc, _ in matches]
        if delta > 0:
            k = next((i for i, p in enumerate(places) if p > here), 0)
        else:
            k = next((i for i in range(len(places) - 1, -1, -1) if places[i] < here),
                     len(places) - 1)
        fi, pc = places[k]
        self.listing.show_function(fi, cursor=pc)
        self._show_location_of_selected_frame(self.selected_frame())
        funcs = len({f for f, _ in places})
        self.status.set_message(f"/{text}: " + ngettext(
            "match {k} of {n} in {funcs} function", "match {k} of {n} in {funcs} functions", funcs
        ).format(k=k + 1, n=len(places), funcs=funcs) + f": @{exe.functions[fi].name}:{pc} "
            + _("(Enter or Down: next, Up: previous)"))

    def run_command(self, line: str) -> None:
        """Run one command-language line; its output goes to the output pane. Commands that
        only read or edit state run at once, the rest in the worker like `c`."""
        if self.session is None or self._wait_turn(lambda: self.run_command(line)):
            return
        try:
            interpreter = self.app.interpreter()
        except Exception as exc:
            self._show_output(line, _("error: {message}").format(message=error_text(exc)))
            return
        self.console.interpreter = interpreter
        if is_quick_command(line):
            try:
                text = interpreter.execute(line)
            except Exception as exc:
                text = _("error: {message}").format(message=error_text(exc))
            self._show_output(line, text)
            self.refresh_breakpoints()
            self._follow_list(line)
            return
        self.drive(line, lambda s: interpreter.execute(line), command=line)

    def _follow_list(self, line: str) -> None:
        """`list @f[:PC]` also shows that function in the listing (jump to any function)."""
        words = line.split()
        if len(words) != 2 or words[0] not in ("list", "l"):
            return
        try:
            fields = self.session.breakpoints.resolve(words[1])
        except Exception:
            return
        fi = fields.get("func_index")
        if fi is not None:
            self.listing.show_function(fi, cursor=fields.get("pc") or 0)
            self._show_location_of_selected_frame(self.selected_frame())

    def _record_stop(self, label: str) -> None:
        """The stop a key made (or the start), and the displays at it, into the console."""
        try:
            interpreter = self.app.interpreter()
        except Exception:
            return
        console = self.console
        console.interpreter = interpreter
        interpreter.selected = None
        displays = interpreter.display_lines()
        covered, self._covered = self._covered, None
        notes = ["  " + line for line in stop_notes(self.session, covered and covered())]
        console.record([f"({shown_label(label)}) {self.status.stop_text}"] + notes + displays,
                       show=bool(displays))

    def _show_output(self, line: str, text) -> None:
        self.console.show_command(line, text if isinstance(text, str) else str(text))


__all__ = ["DebuggerScreen"]
