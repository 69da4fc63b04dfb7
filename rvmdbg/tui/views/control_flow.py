"""View 3, control flow and ADTs: where the current function can go, and what it works on.

Left, the selected frame's function as basic blocks joined by If/Goto edges, the path the
activation has taken so far marked (pcs executed, edges taken with counts) and, at an `if`,
its two values and the way it will go. Right, above: at (or before) a `match`, its decision
tree (get_tag, load_consti, if, get_field per clause) with the clause the scrutinee takes and
the variables it binds; below: the ADT heap reachable from the frame's registers, as a graph
of constructed values with shared references marked.

Keys: u/d select the caller's or callee's frame, Tab moves between the panes, arrows scroll.
"""
from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from rvmdbg.tui.views.base import TeachingScreen
from rvmdbg.tui.views.rows_pane import RowsPane
from rvmdbg.views.text import wrap
from rvmdbg.views.cfg import ActivationPath, branch_outcome, build_cfg, draw_cfg
from rvmdbg.views.decision import decision_tree_at, draw_decision_tree, find_decision_trees
from rvmdbg.views.heap_graph import draw_heap
from rvmdbg.views.text import UNICODE
from rvmdbg.vm import bytecode as bc
from rvmdbg.i18n import N_, _, ngettext


class ControlFlowView(Vertical):
    BINDINGS = [
        Binding("u", "frame(-1)", N_("Up frame"), tooltip=N_("The caller's frame"), id="up"),
        Binding("d", "frame(1)", N_("Down frame"), tooltip=N_("The callee's frame"), id="down"),
    ]

    def __init__(self, context, symbols=UNICODE, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._view_source = context
        self.symbols = symbols
        self.depth: int | None = None        # selected frame (None: the innermost)
        self._cfgs: dict = {}
        self._trees: dict = {}
        self._path: ActivationPath | None = None
        self._stages_pending = False

    @property
    def context(self):
        return self._view_source() if callable(self._view_source) else self._view_source

    def compose(self) -> ComposeResult:
        yield Static("", id="cfg-summary")
        with Horizontal(id="cfg-main"):
            yield RowsPane(_("control flow"), id="cfg-graph")
            with Vertical(id="cfg-side"):
                yield RowsPane(_("match"), id="cfg-match")
                yield RowsPane(_("ADT heap"), id="cfg-heap")

    def focus_main(self) -> None:
        self.query_one("#cfg-graph", RowsPane).focus()

    def on_mount(self) -> None:
        self.refresh_from_session()

    # ---- model ----

    def cfg(self, func_index: int):
        got = self._cfgs.get(func_index)
        if got is None:
            got = self._cfgs[func_index] = build_cfg(self.context.exe.functions[func_index],
                                                     func_index)
        return got

    def trees(self, func_index: int) -> list:
        """The function's matches; until the pass stages are ready (they are computed in the
        background the first time), without the patterns' names."""
        got = self._trees.get(func_index)
        if got is None:
            ctx = self.context
            if not ctx.stages_ready:
                if not self._stages_pending:
                    self._stages_pending = True
                    self._prepare_stages(ctx)
                return find_decision_trees(ctx.exe, func_index, None)
            stages = ctx.stages
            module = stages[-1].module if stages else None
            got = self._trees[func_index] = find_decision_trees(ctx.exe, func_index, module)
        return got

    @work(thread=True, exclusive=True, group="stages", exit_on_error=False)
    def _prepare_stages(self, ctx) -> None:
        ctx.stages  # noqa: B018 - computed (and kept in the context) here, off the event loop
        self.app.call_from_thread(self.refresh_from_session)

    def activation_path(self):
        if self._path is None:
            ctx = self.context
            args = ctx.session_args()
            if args is None:
                return None
            self._path = ActivationPath(ctx.run_exe(), ctx.entry, args)
        return self._path

    # ---- drawing ----

    def refresh_from_session(self, stepped: bool = False) -> None:
        if not self.is_mounted:
            return
        if stepped:
            self.depth = None
        s = self.context.session
        summary = self.query_one("#cfg-summary", Static)
        panes = [self.query_one(f"#cfg-{p}", RowsPane) for p in ("graph", "match", "heap")]
        if s is None or s.depth() < 0:
            text = _("the program has not started") if s is None else \
                _("the program finished at step {step}: no frames to show").format(step=s.step_count)
            summary.update(text)
            for p in panes:
                p.set_rows([])
            return
        frames = s.frames()
        depth = len(frames) - 1 if self.depth is None else max(0, min(self.depth,
                                                                      len(frames) - 1))
        frame = frames[depth]
        top = depth == len(frames) - 1
        self._draw_graph(s, frame, top, len(frames))
        self._draw_match(frame)
        self._draw_heap(s, depth)

    def _draw_graph(self, s, frame, top: bool, nframes: int) -> None:
        ctx = self.context
        cfg = self.cfg(frame.func_index)
        ap = self.activation_path()
        path = ap.path(frame.serial, frame.func_index, s.step_count, cfg, frame.pc) if ap else None
        ins = frame.instruction
        outcome = None
        if top and isinstance(ins, bc.If):
            outcome = branch_outcome(ins, frame.pc, frame.registers)
        rows, row_of_pc = draw_cfg(cfg, ctx.exe.function_names(), ctx.exe.kernel_names(), path,
                                   frame.pc, outcome, self.symbols)
        pane = self.query_one("#cfg-graph", RowsPane)
        pane.set_rows(rows)
        pane.border_title = (f"@{cfg.name}: "
                             + ngettext("{n} basic block", "{n} basic blocks", len(cfg.blocks)).format(n=len(cfg.blocks))
                             + ", " + ngettext("{n} edge", "{n} edges", len(cfg.edges)).format(n=len(cfg.edges)))
        row = row_of_pc.get(frame.pc)
        if row is not None:
            pane.set_cursor(row)
        where = _("innermost frame") if top else _("waiting on the call at this pc")
        text = (f"@{cfg.name}  " + _("frame #{n} of {total} ({where})").format(n=frame.depth, total=nframes, where=where)
                + f"  pc {frame.pc}: "
                f"{ins.text(ctx.exe.function_names(), ctx.exe.kernel_names()) if ins else '?'}")
        if outcome is not None:
            text += f"\n{self.symbols.arrow} {outcome.describe()}"
        elif path is not None:
            text += ("\n" + _("path so far: {n} instructions through {blocks} of {total} blocks").format(
                n=len(path.pcs), blocks=len(path.blocks), total=len(cfg.blocks))
                     + (" " + _("(the oldest dropped)") if path.truncated else ""))
        self.query_one("#cfg-summary", Static).update(text)

    def _draw_match(self, frame) -> None:
        pane = self.query_one("#cfg-match", RowsPane)
        trees = self.trees(frame.func_index)
        code = self.context.exe.functions[frame.func_index].instructions
        if not trees:
            if getattr(self.context.exe, "kind", None) == "relax":
                pane.set_rows([[(line, "dim")] for line in wrap(_(
                    "TVM's Relax VM has no match: R.If compiles to If and Goto (left), and "
                    "tuples are built and read by vm.builtin.make_tuple and "
                    "vm.builtin.tuple_getitem calls."),
                    max(20, min(pane.size.width or 999, self.app.size.width // 2) - 4))])
            else:
                pane.set_rows([[(_("this function has no match"), "dim")]])
            pane.border_title = _("match")
            return
        tree = decision_tree_at(trees, frame.pc)
        note = None
        if tree is None:
            ahead = [t for t in trees if t.first_pc > frame.pc]
            tree = ahead[0] if ahead else trees[0]
            note = (_("not in a match at pc {pc}; the next one of {n} in this function:") if ahead
                    else _("not in a match at pc {pc}; the first one of {n} in this function:")
                    ).format(pc=frame.pc, n=len(trees))
        rows = ([[(note, "dim")]] if note else []) + draw_decision_tree(
            tree, frame.registers, frame.pc, code, self.symbols)
        pane.set_rows(rows)
        pane.border_title = _("match decision tree (pcs {first}-{last})").format(first=tree.first_pc, last=tree.fatal_pc)

    def _draw_heap(self, s, depth: int) -> None:
        pane = self.query_one("#cfg-heap", RowsPane)
        try:
            nodes = s.heap(depth)
            truncated = getattr(s, "heap_truncated", False)
        except Exception as exc:  # shown in the pane; the view stays up
            pane.set_rows([[(_("cannot walk the heap: {error}").format(error=exc), "error")]])
            return
        pane.set_rows(draw_heap(nodes, self.symbols, truncated=truncated))
        shared = sum(1 for n in nodes if n.shared)
        pane.border_title = ngettext("ADT heap: {n} value, {shared} shared",
                                     "ADT heap: {n} values, {shared} shared", len(nodes)).format(n=len(nodes), shared=shared)

    # ---- keys ----

    def action_frame(self, delta: int) -> None:
        s = self.context.session
        if s is None or s.depth() < 0:
            return
        n = s.depth() + 1
        current = n - 1 if self.depth is None else self.depth
        self.depth = max(0, min(n - 1, current + delta))
        self.refresh_from_session()


class ControlFlowScreen(TeachingScreen):
    CSS_PATH = str(Path(__file__).with_name("control_flow.tcss"))
    view_name = "control"

    def compose_view(self) -> ComposeResult:
        yield ControlFlowView(self.context, self.symbols, id="control")

    @property
    def view(self) -> ControlFlowView:
        return self.query_one(ControlFlowView)


__all__ = ["ControlFlowView", "ControlFlowScreen"]
