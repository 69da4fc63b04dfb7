"""The debugger screen's layout modes: which arrangement of panes a terminal size gets (at
150 columns and more source and listing side by side, from 100 stacked, below 100 columns or
28 rows one pane per column with a tab bar), switching tabs, revealing and focusing panes.
`LayoutModes` is a mixin of `DebuggerScreen`.
"""
from __future__ import annotations

from rvmdbg.tui.pane_tabs import PaneTabs
from rvmdbg.i18n import N_, _

NARROW_WIDTH = 100
NARROW_HEIGHT = 28
WIDE_WIDTH = 150

# (pane id, tab label); Tab and Shift+Tab cycle the panes (digits open the teaching views)
CODE_PANES = [("source", N_("Source")), ("listing", N_("Bytecode"))]
STATE_PANES = [("registers", N_("Regs")), ("stack", N_("Stack")), ("heap", N_("Heap")),
               ("breakpoints", N_("Bkpts"))]


def state_panes_for(exe) -> list:
    """The state column's panes for this executable: a Relax VM executable's constant pool
    (its Calls name constants `c[N]`) gets a pane of its own, in the heap's place (the Relax
    VM has no ADT heap: its tuples and closures show in the registers)."""
    if getattr(exe, "kind", None) == "relax":
        return [p for p in STATE_PANES if p[0] != "heap"] + [("constants", N_("Consts"))]
    return STATE_PANES


class LayoutModes:
    """Layout modes, tabs and pane focus, for `DebuggerScreen`."""

    def set_layout_class(self, width: int, height: int) -> bool:
        """Set the class of the layout for this size; whether it changed."""
        if width < NARROW_WIDTH or height < NARROW_HEIGHT:
            mode = "-narrow"
        elif width >= WIDE_WIDTH:
            mode = "-wide"
        else:
            mode = "-stacked"
        if mode == self.layout_mode:
            return False
        for m in ("-narrow", "-wide", "-stacked"):
            self.set_class(m == mode, m)
        self.layout_mode = mode
        return True

    def apply_layout(self, width: int, height: int, force: bool = False) -> None:
        if not self.set_layout_class(width, height) and not force:
            return
        self.show_tab("code-tabs", self.query_one("#code-tabs", PaneTabs).active)
        self.show_tab("state-tabs", self.query_one("#state-tabs", PaneTabs).active)

    @property
    def narrow(self) -> bool:
        return self.layout_mode == "-narrow"

    def show_tab(self, tabs_id: str, pane_id: str) -> None:
        tabs = self.query_one(f"#{tabs_id}", PaneTabs)
        tabs.set_active(pane_id)
        for pid, _ in tabs.panes:
            self.pane(pid).set_class(pid != pane_id, "-tab-hidden")
        if pane_id == "heap":
            self.refresh_heap()

    def reveal(self, pane_id: str) -> None:
        """Make a pane visible (in narrow mode, switch its column's tab to it)."""
        for tabs_id, panes in (("code-tabs", CODE_PANES),
                               ("state-tabs", getattr(self, "state_panes", STATE_PANES))):
            if any(pid == pane_id for pid, _ in panes):
                self.show_tab(tabs_id, pane_id)

    def on_pane_tabs_chosen(self, event: PaneTabs.Chosen) -> None:
        self.action_focus_pane(event.pane_id)

    def action_focus_pane(self, pane_id: str) -> None:
        if not self.query(f"#{pane_id}"):
            self.status.set_message(_("this program has no source: the listing is all there is"))
            return
        self.reveal(pane_id)
        self.focus_now(self.pane(pane_id))

    def focus_now(self, widget) -> None:
        """Focus `widget` before the next key is handled (`Widget.focus` waits for the message
        queue, behind keys that came in the same burst: Tab Tab moved one pane, not two)."""
        self.set_focus(widget)

    def action_cycle_pane(self, delta: int) -> None:
        ids = self.pane_ids()
        focused = self.focused
        current = focused.id if focused is not None and focused.id in ids else None
        k = ids.index(current) if current is not None else (-1 if delta > 0 else 0)
        self.action_focus_pane(ids[(k + delta) % len(ids)])

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        if widget.id in self.pane_ids() and self.narrow:
            self.reveal(widget.id)
        if widget.id == "heap":
            self.refresh_heap()
