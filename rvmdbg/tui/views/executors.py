"""View 2, VM versus graph executor: the same program and inputs on both.

Left, the VM's instruction stream (every dispatch, the instruction the debugger is about to
run marked); right, the graph executor's node list with each node's storage block drawn
across the memory plan (written, held, free), or, for a dynamic program, what the graph
executor refuses and where. Below, like with like on this program: dispatches and kernel
calls, memory with inputs and constants counted the same way on both sides, time in and
outside kernels per run and per dispatch, compile, and a verdict computed from exactly those
figures (`views/verdict.py`), with why a Python graph executor's times differ from TVM's C++
one. Beside them the cost model (a one-off compile cost against a per-dispatch cost) fitted
to this program: scaled where its arguments carry a size, else at its own size over several
runs, as the pane says.

Nothing is timed until `m` is pressed (the timings run in a worker thread); figures handed
over in the context (`ViewContext.measurements`, `cost_samples`, `cost_workload`) are shown
as they are. Keys: up/down/pageup/pagedown move through the stream, `m` measure, `c` the
chart's drawing (braille, blocks, ASCII).
"""
from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from rvmdbg.tui.views.base import TeachingScreen
from rvmdbg.tui.views.rows_pane import RowsPane
from rvmdbg.views.costmodel import (cost_chart, executor_label, fit_cost_model,
                                    measure_program, one_run_measurements)
from rvmdbg.views.executors import compare_executors, memory_explanation, storage_strip
from rvmdbg.views.flow import quote
from rvmdbg.views.plot import format_number
from rvmdbg.views.text import UNICODE, pad, table, wrap
from rvmdbg.views.verdict import PYTHON_NOTE, executor_verdict, model_verdict
from rvmdbg.i18n import N_, _

CHART_MODES = ("braille", "block", "ascii")


def _right(text: str, width: int) -> str:
    """`text` right-aligned in `width` cells."""
    return " " * max(0, width - cell_len(text)) + text


def _text_width(pane) -> int:
    """The cells a pane's lines may take: its content width less room for a vertical
    scrollbar (it appears once the rows are in, and is two cells wide)."""
    width = pane.scrollable_content_region.width
    if pane.scrollbars_enabled[0] and pane.show_vertical_scrollbar:
        return max(20, width) if width > 0 else 64   # already taken off
    return max(20, width - pane.styles.scrollbar_size_vertical) if width > 0 else 64


class ExecutorsView(Vertical, can_focus=True):
    BINDINGS = [
        Binding("up,k", "move(-1)", N_("Up"), show=False),
        Binding("down,j", "move(1)", N_("Down"), show=False),
        Binding("pageup", "move(-20)", N_("Page up"), show=False),
        Binding("pagedown", "move(20)", N_("Page down"), show=False),
        Binding("m", "measure", N_("Measure"), tooltip=N_("Time both executors on this program and fit "
                                                                 "the cost model"), id="measure"),
        Binding("c", "chart_mode", N_("Chart"), tooltip=N_("Braille, block or ASCII chart"), id="chart"),
    ]

    def __init__(self, context, symbols=UNICODE, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._view_source = context
        self.symbols = symbols
        self.comparison = None
        self.cursor = 0
        self.chart_mode = "ascii" if symbols is not UNICODE else "braille"
        self.measuring = False
        self._comparing = False

    @property
    def context(self):
        return self._view_source() if callable(self._view_source) else self._view_source

    def compose(self) -> ComposeResult:
        yield Static("", id="exec-summary")
        with Horizontal(id="exec-main"):
            yield RowsPane("VM", id="exec-stream")
            yield RowsPane(_("graph executor"), id="exec-graph")
        with Horizontal(id="exec-bottom"):
            yield RowsPane(_("measured"), id="exec-measure")
            yield RowsPane(_("cost model"), id="exec-cost")

    def focus_main(self) -> None:
        self.focus()

    def on_resize(self) -> None:
        if getattr(self.context.exe, "kind", None) == "relax":
            self.call_after_refresh(lambda: self._not_for_relax(self.context.exe))
        if self.comparison is not None:
            # explanations wrap to their panes and the chart fits its pane
            self.call_after_refresh(self._draw_to_width)

    def _draw_to_width(self) -> None:
        self._draw_graph()
        self._draw_measurements()
        self._draw_cost()

    def on_mount(self) -> None:
        for pane in self.query(RowsPane):
            pane.can_focus = False
        self._start()

    def _start(self) -> None:
        ctx = self.context
        if getattr(ctx.exe, "kind", None) == "relax":
            self._not_for_relax(ctx.exe)
            return
        args = ctx.session_args()
        if args is None:
            self.query_one("#exec-summary", Static).update(
                _("the program has not started: the executors compare on its arguments"))
            return
        self.query_one("#exec-summary", Static).update(
            _("running the program on both executors..."))
        self._comparing = True
        self._compare(ctx, args)

    def _not_for_relax(self, exe) -> None:
        """TVM's Relax VM has no graph executor beside it here: say so, and what the
        bytecode's calls are."""
        from rvmdbg.relax.compare import call_counts
        self.query_one("#exec-summary", Static).update(_(
            "View 2 compares the Relay VM with a graph executor: it does not apply to TVM's "
            "Relax VM, which runs this program."))
        stream = self.query_one("#exec-stream", RowsPane)
        stream.border_title = _("Relax VM: what the bytecode calls")
        width = _text_width(stream)
        rows = []
        for line in call_counts(exe):
            rows += [[(part, "plain")] for part in wrap(line, width)]
        stream.set_rows(rows)
        graph = self.query_one("#exec-graph", RowsPane)
        graph.border_title = _("graph executor: does not apply")
        graph.set_rows([[(line, "dim")] for line in wrap(_(
            "No graph executor here: on the Relax VM every allocation is a call to "
            "vm.builtin.alloc_storage or vm.builtin.alloc_tensor in the bytecode (left), "
            "planned by TVM's compiler; View 1's last two stages compare the two VMs on one "
            "model."), _text_width(graph))])
        for pane_id in ("#exec-measure", "#exec-cost"):
            self.query_one(pane_id, RowsPane).set_rows([[(_("not for the Relax VM"), "dim")]])

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def _compare(self, ctx, args) -> None:
        """Both runs off the event loop (a long program's stream takes a while to record)."""
        try:
            cmp, error = compare_executors(ctx.module, ctx.run_exe(), args, ctx.entry), None
        except Exception as exc:  # shown; the view stays up
            cmp, error = None, f"{type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._compared, cmp, error)

    def _compared(self, cmp, error) -> None:
        self._comparing = False
        if cmp is None:
            self.query_one("#exec-summary", Static).update(_("cannot compare: {error}").format(error=error))
            return
        self.comparison = cmp
        self.draw_all()
        self.refresh_from_session()

    def refresh_from_session(self, stepped: bool = False) -> None:
        if getattr(self.context.exe, "kind", None) == "relax":
            return
        if self.comparison is None:
            if self.is_mounted and self.context.session is not None and not self._comparing:
                self._start()   # the program started after the view first opened
            return
        s = self.context.session
        if s is not None:
            self.cursor = min(s.step_count, max(0, len(self.comparison.stream) - 1))
        self._draw_stream()

    # ---- drawing ----

    def draw_all(self) -> None:
        self._draw_summary()
        self._draw_stream()
        self._draw_graph()
        self._draw_measurements()
        self._draw_cost()

    def _draw_summary(self) -> None:
        c = self.comparison
        sym = self.symbols
        if c.static:
            if c.results_equal:
                verdict = f"[b green]{sym.taken} " + _("results agree") + "[/]"
            elif c.results_equal is None:
                verdict = f"[b red]{sym.failed} " + _("a run failed: {error}").format(error=c.vm_error or c.graph_error) + "[/]"
            else:
                verdict = f"[b red]{sym.failed} " + _("results differ") + "[/]"
            text = (_("static program, the same inputs on both executors: {verdict}").format(verdict=verdict)
                    + "   " + _("VM {dispatches} dispatches, graph {calls} kernel calls over {nodes} nodes").format(
                        dispatches=c.stream_total, calls=c.graph_dispatches, nodes=len(c.nodes)))
        else:
            text = (_("dynamic program: the graph executor refuses it; the VM runs it in "
                      "{n} dispatches").format(n=c.stream_total)
                    + (f" ([red]{c.vm_error}[/])" if c.vm_error else ""))
        self.query_one("#exec-summary", Static).update(text)

    def _draw_stream(self) -> None:
        c = self.comparison
        if c is None:
            return
        pane = self.query_one("#exec-stream", RowsPane)
        s = self.context.session
        current = s.step_count if s is not None else None
        names = self.context.exe.function_names()
        rows = []
        gutter = []
        for d in c.stream:
            mark = self.symbols.current if d.step == current else " "
            gutter.append([(mark, "current" if mark != " " else "plain"), (" ", "plain")])
            role = {"free": "free-op"}.get(d.kind, d.kind)
            row = [(f"{d.step:>6}  @{names[d.func_index]}:{d.pc:<4}", "dim"), (d.text, role)]
            if d.allocated:
                row.append((f"   +{d.allocated} B", "alloc"))
            if d.freed:
                row.append((f"   -{d.freed} B", "free-op"))
            rows.append(row)
        if c.stream_total > len(c.stream):
            rows.append([(f"{self.symbols.ellipsis} " + _("{n} more dispatches (counted, not listed)").format(
                n=c.stream_total - len(c.stream)), "dim")])
            gutter.append([])
        pane.set_rows(rows, gutter)
        pane.border_title = _("VM: every dispatch ({n})").format(n=c.stream_total)
        if rows:
            pane.set_cursor(min(self.cursor, len(rows) - 1))

    def _draw_graph(self) -> None:
        c = self.comparison
        pane = self.query_one("#exec-graph", RowsPane)
        if not c.static:
            ctx = self.context
            width = _text_width(pane)
            rows = [[(_("the graph executor refuses this program"), "error")], []]
            rows += [[(line, "plain")] for line in wrap(c.refusal or "", width)]
            if c.refusal_span is not None:
                rows.append([])
                rows += [[(line, "plain")] for line in
                         quote(c.refusal_span, ctx.source_text, ctx.source_file)]
            rows.append([])
            rows += [[(line, "dim")] for line in wrap(_(
                "A graph executor runs a fixed list of kernels over memory planned before the "
                "run: control flow, recursion, ADTs and closures need the VM, which decides at "
                "run time (left)."), width)]
            pane.set_rows(rows)
            pane.border_title = _("graph executor: refused")
            return
        strips = storage_strip(c.graph, c.plan, c.nodes, self.symbols)
        nblocks = len(c.plan.block_sizes)
        cells = "█▒·" if self.symbols is UNICODE else "#=."
        # the header's words translated, each padded to its column (widths of the rows below)
        header = (pad(_("node"), 4) + "  " + pad(_("op"), 6) + "  " + pad(_("name"), 28) + " "
                  + _right(_("sid"), 3) + " " + _right(_("bytes"), 8) + "  ")
        rows = [[(header, "header"),
                 ("".join(str(i % 10) for i in range(nblocks)), "header")]]
        rows += [[(line, "dim")] for line in wrap(_(
            "storage blocks: {written} written here  {held} held for a later node  {free} "
            "free").format(written=cells[0], held=cells[1], free=cells[2]), _text_width(pane))]
        names = self.context.names
        by_line = names.line_names() if names is not None else {}
        for n, strip in zip(c.nodes, strips):
            op = "tvm_op" if n.kind == "kernel" else "null"
            note = ""
            # an imported model's kernel: the nodes it came from, as `rvmdbg graph` names them
            places = [by_line[line] for line in n.lines if line in by_line]
            if places:
                note = f"  [{', '.join(places)}]"
            if n.alias:
                note += "  " + _("aliases its input (reshape: no kernel call)")
            elif n.reuses is not None:
                note += "  " + _("reuses node {n}'s block").format(n=n.reuses)
            name = str(n.name)
            if len(name) > 28:
                name = name[:27] + self.symbols.ellipsis[:1]
            rows.append([(f"{n.node:>4}  {op:<6}  {name:<28} {n.storage_id if n.storage_id is not None else '-':>3} "
                          f"{n.bytes:>8}  ", "kernel" if n.kind == "kernel" else "plain")]
                        + strip + [(note, "binding" if n.reuses is not None else "dim")])
        plan = c.plan
        rows += [[], [(_("pool: {blocks} blocks, {pool} bytes for {tensors} bytes of tensors "
                         "({ratio}x reuse)").format(blocks=plan.num_blocks, pool=plan.pool_bytes,
                                                    tensors=plan.tensor_bytes,
                                                    ratio=f"{plan.reuse_ratio:.2f}"),
                       "plain")]]
        pane.set_rows(rows)
        pane.border_title = _("graph executor: {n} nodes and their storage").format(n=len(c.nodes))

    def _draw_measurements(self) -> None:
        c = self.comparison
        pane = self.query_one("#exec-measure", RowsPane)
        ms = self.context.measurements
        graph = c.static and c.graph_memory is not None
        width = _text_width(pane)

        cells = [[_("this program"), "VM"] + ([_("graph executor")] if graph else [])]

        def row(label, vm, g=""):
            cells.append([label, str(vm)] + ([str(g)] if graph else []))
        row(_("dispatches"), c.stream_total, _("{n} kernel calls").format(n=c.graph_dispatches))
        row(_("kernel calls"), c.vm_kernel_calls, c.graph_dispatches)
        row(_("allocations"), _("{n} storage, each run").format(n=c.vm_allocations),
            _("{n} pool blocks, once").format(n=c.plan.num_blocks if graph else 0))

        def memory(m):
            return f"{m.total} B = {m.inputs}+{m.constants}+{m.working}"

        def table_rows():
            # aligned columns with a gap when they fit, else stacked: never run together
            lines = table(cells, width, names=["VM", executor_label("graph")])
            aligned = len(lines) == len(cells)
            return [[(line, "header" if (k == 0 and aligned) or (not aligned and not line.startswith(" "))
                      else "plain")] for k, line in enumerate(lines)]
        row(_("memory"), memory(c.vm_memory), memory(c.graph_memory) if graph else "")
        if c.peak_vs_plan is not None:
            row(_("peak / plan"), f"{c.peak_vs_plan:.2f}x", "1.00x")  # VM peak / graph plan
        notes = [_("memory = inputs (the arguments, the same on both sides) + constants + kernel "
                   "outputs (the VM's peak of live storage; the graph's pool blocks for them)")]
        notes += memory_explanation(c)
        if graph and c.graph_input_buffers:
            notes.append(_("the graph pool also reserves {n} B to copy inputs "
                           "into (TVM's set_input); here kernels read them in place").format(
                n=c.graph_input_buffers))
        note_rows = [[(line, "dim")] for n in notes for line in wrap(n, width)]
        if ms is None:
            rows = table_rows()
            rows.append([])
            if self.measuring:
                rows.append([(_("measuring..."), "next")])
            else:
                rows += [[(line, "dim")] for line in wrap(_(
                    "no timings yet: press m to measure (time in and outside kernels, "
                    "per dispatch, compile)"), width)]
            pane.set_rows(rows + [[]] + note_rows)
            return
        vm, g = ms.get("VM"), ms.get("graph") if graph else None

        def fmt(m, what):
            if m is None:
                return ""
            if what == "total":
                return format_number(m.total_seconds, "s")
            if what == "kernel":
                return f"{format_number(m.kernel_seconds, 's')} ({m.kernel_share * 100:.0f}%)"
            if what == "outside":
                return format_number(m.overhead_seconds, "s")
            if what == "dispatch":
                return format_number(m.per_dispatch_seconds, "s")
            return format_number(m.compile_seconds, "s")
        for label, what in ((_("one run"), "total"), (_("in kernels"), "kernel"),
                            (_("outside kernels"), "outside"), (_("per dispatch"), "dispatch"),
                            (_("compile"), "compile")):
            row(label, fmt(vm, what), fmt(g, what))
        rows = table_rows()
        if vm is not None and g is not None:
            rows += [[(line, "header")] for v in executor_verdict(vm, g).lines
                     for line in wrap(v, width)]
        rows += [[(line, "dim")] for line in wrap(_("per dispatch = time outside kernels / dispatches"), width)]
        rows += note_rows
        rows += [[(line, "dim")] for line in wrap(_(PYTHON_NOTE), width)]
        pane.set_rows(rows)

    def _draw_cost(self) -> None:
        pane = self.query_one("#exec-cost", RowsPane)
        ctx = self.context
        samples = ctx.cost_samples
        workload = ctx.cost_workload
        what = workload.description if workload is not None else _("this program")
        pane.border_title = _("cost model: this program")
        width = _text_width(pane)
        rows = [[(line, "dim")] for line in wrap(_("workload: {what}").format(what=what), width)]
        if not samples:
            rows.append([(_("not measured yet: press m"), "dim")])
            pane.set_rows(rows)
            return
        models = {}
        for name in sorted({s.executor for s in samples}):
            models[name] = fit_cost_model([s for s in samples if s.executor == name],
                                          compile_known=workload is not None and workload.fixed)
            rows += [[(line, f"series{len(models) - 1}")] for line in wrap(models[name].describe(), width)]
        loose = [m for m in models.values() if not m.explains]
        if loose:
            # a line that does not explain the data predicts nothing: no verdict from it
            rows += [[(line, "failed")] for line in wrap(_(
                "the fit does not explain these measurements ({fits}): the time outside "
                "kernels is mostly noise at this size, so the model predicts nothing here; "
                "the measured figures (left) are the verdict").format(
                    fits=", ".join(f"{executor_label(m.executor)} r2 {m.r2:.2f}" for m in loose)),
                width)]
        elif "VM" in models and "graph" in models:
            # both run only a static program, measured at its own size: its first point is
            # one run, whose dispatch counts are the n of a run. The crossover is said once,
            # by the measured figures (left): the model gives its per-run prediction only
            first = min(s.size for s in samples)
            per = {s.executor: s.dispatches for s in samples if s.size == first}
            v = model_verdict(models["VM"], per["VM"], models["graph"], per["graph"])
            rows += [[(line, "plain")] for line in wrap(
                _("the model, with n = {vm} VM dispatches and {graph} graph kernel calls a run, "
                  "predicts: {verdict}").format(
                    vm=per['VM'], graph=per['graph'], verdict=v.lines[1]), width)]
        width = max(24, (pane.size.width or 60) - 16)
        height = max(4, (pane.size.height or 16) - 2 - len(rows) - 4)
        rows += cost_chart(samples, models, workload, width=width, height=height,
                           mode=self.chart_mode)
        pane.set_rows(rows)

    # ---- keys ----

    def action_move(self, delta: int) -> None:
        if self.comparison is None:
            return
        self.cursor = max(0, min(len(self.comparison.stream) - 1, self.cursor + delta))
        self.query_one("#exec-stream", RowsPane).set_cursor(self.cursor)

    def action_chart_mode(self) -> None:
        self.chart_mode = CHART_MODES[(CHART_MODES.index(self.chart_mode) + 1) % len(CHART_MODES)]
        if self.comparison is not None:
            self._draw_cost()

    def action_measure(self) -> None:
        if self.comparison is None or self.measuring:
            return
        self.measuring = True
        self._draw_measurements()
        self._measure()

    @work(thread=True, exclusive=True, group="measure", exit_on_error=False)
    def _measure(self) -> None:
        ctx = self.context
        try:
            samples, workload = measure_program(ctx.module, ctx.run_exe(), ctx.session_args(),
                                                ctx.entry, comparison=self.comparison)
            ms = one_run_measurements(samples, workload, self.comparison)
            error = None
        except Exception as exc:  # shown; the view stays up
            ms, samples, workload, error = None, None, None, f"{type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._measured, ms, workload, samples, error)

    def _measured(self, ms, workload, samples, error) -> None:
        self.measuring = False
        ctx = self.context
        if error is None:
            ctx.measurements = ms
            ctx.cost_samples = samples
            ctx.cost_workload = workload
        else:
            self.query_one("#exec-summary", Static).update(f"measuring failed: {error}")
        self._draw_measurements()
        self._draw_cost()


class ExecutorsScreen(TeachingScreen):
    CSS_PATH = str(Path(__file__).with_name("executors.tcss"))
    view_name = "executors"

    def compose_view(self) -> ComposeResult:
        yield ExecutorsView(self.context, self.symbols, id="executors")

    @property
    def view(self) -> ExecutorsView:
        return self.query_one(ExecutorsView)


__all__ = ["ExecutorsView", "ExecutorsScreen"]
