"""View 1, compile and execute flow: walk the program from source to bytecode, stage by stage.

The left pane shows the current stage (source, AST, typed AST, a pass's output, bytecode, the
VM's position) with the selected expression highlighted; the right pane shows the next stage
with what that expression became; below, the bytecode made from it and a one-line answer
per stage. Stepping the program (s, S) selects the expression the current instruction came
from, so execution can be traced back through every stage.

Keys: left/right stage, up/down line, `,`/`.` smaller steps through expressions, `o` the
enclosing expression, `e` the current instruction's expression, `p` the fetch-decode-execute
strip (while it is shown, `s` advances one phase of the dispatch loop), `M` the list of
misconceptions about the VM (each with a program that shows it wrong).
"""
from __future__ import annotations

import bisect
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from rvmdbg.tui.cycle_strip import CycleStrip, cycle_of
from rvmdbg.tui.views.base import TeachingScreen, drive_session
from rvmdbg.tui.views.rows_pane import RowsPane, region_overlays
from rich.cells import cell_len

from rvmdbg.debug.session import step_tag
from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.views.flow import (BYTECODE, EXECUTION, PASS, FlowModel, stage_description,
                               stage_title)
from rvmdbg.views.text import UNICODE, pad

MAX_RECENT = 8


class FlowView(Vertical, can_focus=True):
    """The stage walker; `context` is a `rvmdbg.views.context.ViewContext` (or a callable
    returning one, read again on every refresh)."""

    BINDINGS = [
        Binding("left,h", "stage(-1)", N_("Prev stage"), tooltip=N_("The previous stage"), id="previous-stage"),
        Binding("right,l", "stage(1)", N_("Next stage"), tooltip=N_("The next stage"), id="next-stage"),
        Binding("up,k", "line(-1)", N_("Up"), show=False, tooltip=N_("The expression on the line above")),
        Binding("down,j", "line(1)", N_("Down"), show=False,
                tooltip=N_("The expression on the line below")),
        Binding("comma", "item(-1)", N_("Prev expr"), show=False,
                tooltip=N_("The previous expression (inner ones too)")),
        Binding("full_stop", "item(1)", N_("Next expr"), show=False,
                tooltip=N_("The next expression (inner ones too)")),
        Binding("o", "outer", N_("Outer"), tooltip=N_("The enclosing expression"), id="outer"),
        Binding("e", "follow", N_("Exec"), tooltip=N_("The current instruction's expression"),
                id="follow"),
        Binding("p", "toggle_cycle", N_("Phases"), show=False,   # the footer keeps `0` at 80 columns
                tooltip=N_("Fetch, decode, execute: show the dispatch loop's strip; while it is "
                        "shown, s advances one phase (the VM steps at execute)"), id="cycle"),
        Binding("pageup", "line(-10)", N_("Page up"), show=False),
        Binding("pagedown", "line(10)", N_("Page down"), show=False),
    ]

    def __init__(self, context, symbols=UNICODE, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._view_source = context
        self.symbols = symbols
        self.model: FlowModel | None = None
        self.stage_index = 0
        self.selected: int | None = None     # item index in the current stage
        self.origin = None                   # the selected item's source span
        self.recent: list = []
        self._last_step = None

    @property
    def context(self):
        return self._view_source() if callable(self._view_source) else self._view_source

    def compose(self) -> ComposeResult:
        yield Static("", id="flow-stages")
        yield Static("", id="flow-selection")
        with Horizontal(id="flow-main"):
            yield RowsPane(_("stage"), id="flow-current")
            yield RowsPane(_("next stage"), id="flow-next")
        with Horizontal(id="flow-bottom"):
            yield RowsPane(_("bytecode"), id="flow-bytecode")
            yield RowsPane(_("in every stage"), id="flow-follow")
        yield CycleStrip(marker=self.symbols.current, id="flow-cycle")

    def on_mount(self) -> None:
        for pane in self.query(RowsPane):
            pane.can_focus = False
        self.query_one("#flow-selection", Static).update(
            _("preparing the stages: running the passes and placing every node..."))
        self._prepare(self.context)

    @work(thread=True, exclusive=True, group="flow-prepare", exit_on_error=False)
    def _prepare(self, ctx) -> None:
        """Every stage's model, built off the event loop (seconds on a big program)."""
        try:
            model = FlowModel(ctx)
            for i in range(len(model) - 1):
                model.stage(i)
            error = None
        except Exception as exc:  # shown; the rest of the screen keeps working
            model, error = None, f"{type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._prepared, model, error)

    def _prepared(self, model, error) -> None:
        if model is None:
            self.query_one("#flow-selection", Static).update(_("cannot build the stages: {error}").format(error=error))
            return
        self.model = model
        self.query_one("#flow-selection", Static).update("")
        if self.context.stage_error:
            self.query_one("#flow-selection", Static).update(
                _("the passes failed: {error}").format(error=self.context.stage_error))
        self.refresh_from_session()

    def focus_main(self) -> None:
        self.focus()

    def on_resize(self) -> None:
        if self.model is not None:
            self.call_after_refresh(self._draw_strip)

    # ---- state ----

    @property
    def stage(self):
        return self.model.stage(self.stage_index)

    def refresh_from_session(self, stepped: bool = False) -> None:
        """Re-read the session (after a step, or when the view is shown again)."""
        if self.model is None:
            return
        ctx = self.context
        self.model.ctx.session = ctx.session
        s = ctx.session
        if s is not None:
            step = s.step_count
            if step != self._last_step:
                loc = s.location()
                if loc is not None:
                    ins = s.current_instruction()
                    text = ins.text(ctx.exe.function_names(), ctx.exe.kernel_names()) \
                        if ins is not None else "?"
                    self.recent.append(f"{step_tag(step)} @{s.func_name(loc[0])} pc={loc[1]}: "
                                       f"{text}")
                    del self.recent[:-MAX_RECENT]
                self._last_step = step
                if stepped or self.origin is None:
                    self.action_follow(draw=False)
        self.model.execution_stage(self.recent)
        if self.selected is None and self.origin is None:
            self._select_first()
        self.redraw()
        self.draw_cycle()

    def _select_first(self) -> None:
        st = self.stage
        self.selected = 0 if st.items else None
        self.origin = st.items[0].origin if st.items else None

    def select(self, index: int | None) -> None:
        self.selected = index
        if index is not None:
            self.origin = self.stage.items[index].origin
        self.redraw()

    # ---- drawing ----

    def redraw(self) -> None:
        if self.model is None or not self.is_mounted:
            return
        model, st = self.model, self.stage
        self._draw_strip()
        current = self.query_one("#flow-current", RowsPane)
        current.border_title = f"{stage_title(st.name)}: {stage_description(st.description)}"
        self._draw_stage(current, self.stage_index, own=True)
        nxt_index = self.stage_index + 1 if self.stage_index + 1 < len(model) else None
        if st.kind == EXECUTION:
            nxt_index = 0
        nxt = self.query_one("#flow-next", RowsPane)
        if nxt_index is not None:
            nst = model.stage(nxt_index)
            nxt.border_title = (_("next: {stage}") if nxt_index > self.stage_index
                                else _("back to: {stage}")).format(stage=stage_title(nst.name))
            self._draw_stage(nxt, nxt_index, own=False)
        self._draw_bytecode()
        self._draw_follow()
        self._draw_selection()

    def _draw_strip(self) -> None:
        """Every stage name, the current one marked; when they do not fit on one line,
        a window of them around the current one."""
        arrow = f" {self.symbols.arrow} "
        names = [stage_title(n) for n in self.model.names]
        strip = self.query_one("#flow-stages", Static)
        width = (strip.size.width or self.size.width or 200) - 2
        lo, hi = 0, len(names)
        full = cell_len(arrow.join(names)) + 2
        # on a wide screen the whole list may take two lines; otherwise a window of it
        if full > width and not (width >= 100 and full <= 2 * width):
            lo = hi = self.stage_index
            hi += 1
            while True:   # grow the window on both sides while it fits
                grown = False
                for a, b in ((lo - 1, hi), (lo, hi + 1)):
                    if 0 <= a and b <= len(names) and \
                            cell_len(arrow.join(names[a:b])) + 24 <= width:
                        lo, hi, grown = a, b, True
                if not grown:
                    break
        parts = [f"[b reverse] {name} [/]" if i == self.stage_index else name
                 for i, name in enumerate(names[lo:hi], lo)]
        text = arrow.join(parts)
        if lo > 0:
            text = f"{self.symbols.ellipsis}{arrow}" + text
        if hi < len(names):
            text += f"{arrow}{self.symbols.ellipsis}"
        if (lo, hi) != (0, len(names)):
            text += f"  ({self.stage_index + 1}/{len(names)})"
        strip.update(text)

    def _draw_stage(self, pane: RowsPane, index: int, own: bool) -> None:
        st = self.model.stage(index)
        gutter = None
        if st.kind == PASS:
            gutter = [[(m or " ", "changed" if m == "~" else "added" if m == "+" else "plain"),
                       (" ", "plain")] for m in st.marks]
        if st.kind == BYTECODE:
            loc = self.context.session.location() if self.context.session is not None else None
            cur_line = st.line_of.get(loc) if loc is not None else None
            gutter = _pc_gutter(len(st.lines), cur_line, self.symbols)
        pane.set_lines(st.lines, gutter=gutter)
        overlays: dict = {}
        # where the VM is: the current instruction's expression, in every stage
        exec_origin = None
        s = self.context.session
        if s is not None and s.location() is not None:
            exec_origin = s.current_span()
        if exec_origin is not None and st.kind != EXECUTION:
            for i in st.matches(exec_origin).exact:
                region_overlays(st.items[i].region, st.lines, "inside", overlays)
        first = None
        if own:
            if self.selected is not None and self.selected < len(st.items):
                region = st.items[self.selected].region
                region_overlays(region, st.lines, "select", overlays)
                first = region[0]
        else:
            m = st.matches(self.origin)
            for role, ids in (("inside", m.inside), ("made", m.made), ("exact", m.exact)):
                for i in ids:
                    region_overlays(st.items[i].region, st.lines, role, overlays)
            ids = m.exact or m.made or m.inside
            if ids:
                first = min(st.items[i].region[0] for i in ids)
        pane.set_overlays(overlays)
        if first is not None:
            pane.scroll_to_row(first)
        elif own and st.kind == EXECUTION:
            pane.scroll_to_row(0)

    def _draw_bytecode(self) -> None:
        model = self.model
        bst = model.stage(model.bytecode_index)
        pane = self.query_one("#flow-bytecode", RowsPane)
        m = bst.matches(self.origin)
        s = self.context.session
        loc = s.location() if s is not None else None
        cur_line = bst.line_of.get(loc) if loc is not None else None
        gutter = _pc_gutter(len(bst.lines), cur_line, self.symbols)
        pane.set_lines(bst.lines, gutter=gutter)
        overlays: dict = {}
        for role, ids in (("inside", m.inside), ("made", m.made), ("exact", m.exact)):
            for i in ids:
                region_overlays(bst.items[i].region, bst.lines, role, overlays)
        pane.set_overlays(overlays)
        ids = m.exact or m.made
        n = len(m.exact) + len(m.made)
        pane.border_title = ngettext("bytecode: {n} instruction from the selection",
                                     "bytecode: {n} instructions from the selection", n).format(n=n)
        if ids:
            pane.scroll_to_row(min(bst.items[i].region[0] for i in ids))
        elif cur_line is not None:
            pane.scroll_to_row(cur_line)

    def _draw_follow(self) -> None:
        pane = self.query_one("#flow-follow", RowsPane)
        rows = []
        for sm in self.model.follow(self.origin):
            here = sm.index == self.stage_index
            mark = self.symbols.current if here else " "
            role = "header" if here else ("plain" if sm.matches else "dim")
            rows.append([(f"{mark} {pad(stage_title(sm.name), 21)} ", role), (sm.summary, role)])
        pane.set_rows(rows)

    def _draw_selection(self) -> None:
        st = self.stage
        label = self.query_one("#flow-selection", Static)
        if self.selected is None or self.selected >= len(st.items):
            text = _("nothing selected") if st.kind != EXECUTION else \
                _("the VM's position; s steps, S steps back, p shows fetch-decode-execute")
        else:
            item = st.items[self.selected]
            origin = item.origin
            where = f"{origin.file}:{origin.line}:{origin.col}" if origin is not None else \
                _("no source span")
            made = "" if item.own else " " + _("(made by a pass: shown with its enclosing span)")
            text = _("selected: {label}  from {where}").format(label=item.label, where=where) + made
        label.update(text)

    # ---- fetch, decode, execute ----

    @property
    def cycle_shown(self) -> bool:
        return self.query_one("#flow-cycle", CycleStrip).has_class("-shown")

    def action_toggle_cycle(self) -> None:
        strip = self.query_one("#flow-cycle", CycleStrip)
        strip.set_class(not strip.has_class("-shown"), "-shown")
        self.draw_cycle()

    def draw_cycle(self) -> None:
        if self.is_mounted and self.cycle_shown:
            self.query_one("#flow-cycle", CycleStrip).show(
                cycle_of(self.app).rows(self.context.session))

    def advance_cycle(self) -> str | None:
        """`s` while the strip is shown: one phase; at execute the VM steps (through the
        debugger, whose panes follow). Returns an error message, or None."""
        session = self.context.session
        if session is None:
            return _("the program has not started")
        errors = []
        try:
            cycle_of(self.app).advance(
                session, lambda: errors.append(drive_session(self.app, True)))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        self.draw_cycle()
        return next((e for e in errors if e), None)

    # ---- keys ----

    def action_stage(self, delta: int) -> None:
        if self.model is None:
            return
        n = len(self.model)
        self.stage_index = (self.stage_index + delta) % n
        st = self.stage
        self.selected = st.preferred(st.matches(self.origin))
        self.redraw()

    def action_line(self, delta: int) -> None:
        """Move to the outermost expression starting `delta` item-bearing lines away."""
        if self.model is None:
            return
        st = self.stage
        if not st.items:
            return
        lines = sorted({it.region[0] for it in st.items})
        if self.selected is None:
            k = 0 if delta > 0 else len(lines) - 1
        else:
            here = st.items[self.selected].region[0]
            k = bisect.bisect_left(lines, here) + delta
        k = max(0, min(len(lines) - 1, k))
        self.select(st.items_on_line(lines[k])[0])

    def action_item(self, delta: int) -> None:
        if self.model is None:
            return
        st = self.stage
        if not st.items:
            return
        if self.selected is None:
            self.select(0)
            return
        self.select(max(0, min(len(st.items) - 1, self.selected + delta)))

    def action_outer(self) -> None:
        if self.model is None or self.selected is None:
            return
        parent = self.stage.enclosing(self.selected)
        if parent is not None:
            self.select(parent)

    def action_follow(self, draw: bool = True) -> None:
        """Select the expression the current instruction came from."""
        if self.model is None:
            return
        s = self.context.session
        if s is None or s.location() is None:
            return
        span = s.current_span()
        if span is None:
            return
        self.origin = span
        st = self.stage
        self.selected = st.preferred(st.matches(span), inside=False)
        if st.kind == EXECUTION:
            self.selected = 0 if st.items else None
        if draw:
            self.redraw()

    def on_rows_pane_clicked(self, event: RowsPane.Clicked) -> None:
        if self.model is None:
            return
        if event.pane.id == "flow-next" and self.stage_index + 1 < len(self.model):
            self.stage_index += 1
        elif event.pane.id != "flow-current":
            return
        st = self.stage
        found = st.item_at(event.row, max(0, event.col))
        if found is None:
            on_line = st.items_on_line(event.row)
            found = on_line[0] if on_line else None
        if found is not None:
            self.select(found)
        else:
            self.redraw()
        self.focus()


def _pc_gutter(n: int, current: int | None, symbols) -> list:
    """A one-cell gutter marking the line of the instruction about to run."""
    blank = [(" ", "plain"), (" ", "plain")]
    return [[(symbols.current, "current"), (" ", "plain")] if i == current else blank
            for i in range(n)]


class FlowScreen(TeachingScreen):
    CSS_PATH = str(Path(__file__).with_name("flow.tcss"))
    view_name = "flow"

    BINDINGS = [
        Binding("M", "misconceptions", N_("Myths"), tooltip=N_("Common misconceptions about the VM, "
                "each with a program that shows it wrong"), id="misconceptions"),
    ]

    def action_misconceptions(self) -> None:
        from rvmdbg.tui.misconceptions_screen import MisconceptionsScreen
        self.app.push_screen(MisconceptionsScreen())

    def compose_view(self) -> ComposeResult:
        yield FlowView(self.context, self.symbols, id="flow")

    @property
    def view(self) -> FlowView:
        return self.query_one(FlowView)

    def action_step(self, forward: bool) -> None:
        view = self.view
        if forward and view.cycle_shown:   # one phase of the dispatch loop at a time
            err = view.advance_cycle()
            self.set_status(err or "")
            view.refresh_from_session(stepped=True)
            return
        super().action_step(forward)


__all__ = ["FlowView", "FlowScreen"]
