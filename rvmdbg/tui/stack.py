"""The call stack: one row per frame, innermost first as in gdb's backtrace (`#0` is where
execution is). Enter selects the frame under the cursor; `u` and `d` move the selection out
and in from anywhere. The selected frame's registers and pc are what the other panes show.
"""
from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.message import Message

from rvmdbg.tui.line_pane import LinePane, set_title
from rvmdbg.i18n import N_, _


class CallStackPane(LinePane):
    title = N_("Stack")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "stack--selected", "stack--number", "stack--function", "stack--pc", "stack--text",
    }

    BINDINGS = [
        Binding("enter", "select", N_("Select frame"), tooltip=N_("Inspect this frame"), id="select-frame"),
    ]

    class FrameSelected(Message):
        def __init__(self, depth: int) -> None:
            super().__init__()
            self.depth = depth

    def __init__(self, exe, **kwargs) -> None:
        super().__init__(**kwargs)
        self.exe = exe
        self.frames: list = []        # FrameView, outermost first (depth = index)
        self.selected = 0             # depth of the selected frame
        self.message = _("not running")
        self._generation = 0

    def set_frames(self, frames, selected: int) -> None:
        """Show the frames; with the same number of frames only changed rows repaint."""
        old = self.frames
        self.frames = list(frames)
        self.selected = selected
        n = len(self.frames)
        set_title(self, f"{_(self.title)} ({n})" if n else _(self.title))
        self.message = "" if n else _("no frames: the program is not running")
        if n and n == len(old):
            for depth, (a, b) in enumerate(zip(old, self.frames)):
                if _frame_key(a) != _frame_key(b):
                    self.refresh_content_line(self.row_of(depth))
        else:
            self._generation += 1
            self.set_lines(max(1, n), 120)
        if n:
            self.set_cursor(self.row_of(selected), quiet=True)

    def select(self, depth: int) -> None:
        old = self.selected
        self.selected = depth
        self.refresh_content_line(self.row_of(old))
        self.refresh_content_line(self.row_of(depth))
        self.set_cursor(self.row_of(depth), quiet=True)

    def row_of(self, depth: int) -> int:
        return len(self.frames) - 1 - depth

    def depth_at(self, row: int) -> int | None:
        depth = len(self.frames) - 1 - row
        return depth if 0 <= depth < len(self.frames) else None

    def action_select(self) -> None:
        depth = self.depth_at(self.cursor)
        if depth is not None:
            self.post_message(self.FrameSelected(depth))

    @property
    def has_rows(self) -> bool:
        return bool(self.frames)

    def line_state(self, index: int) -> tuple:
        depth = self.depth_at(index)
        if depth is None:
            return (self._generation,)
        return (self._generation, _frame_key(self.frames[depth]), depth == self.selected)

    def line_text(self, index: int) -> str:
        depth = self.depth_at(index)
        if depth is None:
            return self.message
        f = self.frames[depth]
        return f"#{index} @{f.func_name} pc={f.pc} {self._text(f)}"

    def _text(self, f) -> str:
        ins = getattr(f, "instruction", None)
        if ins is None:
            return ""
        try:
            return ins.text(self.exe.function_names(), self.exe.kernel_names())
        except Exception:
            return str(ins)

    def render_full_line(self, index: int, cursor: str):
        base = self.base_style
        depth = self.depth_at(index)
        if depth is not None and depth == self.selected:
            base = base + self.style("stack--selected")
        if cursor:
            base = base + self.cursor_style(cursor)
        st = self.style
        if depth is None:
            return [Segment(f" {self.message}", base + st("pane--dim"))], base
        f = self.frames[depth]
        g = self.glyphs
        mark = g.pc if depth == self.selected else " "
        return [
            Segment(mark, base + st("stack--selected")),
            Segment(f"#{index:<3}", base + st("stack--number")),
            Segment(f"@{f.func_name}", base + st("stack--function")),
            Segment(f" pc={f.pc}", base + st("stack--pc")),
            Segment(f"  {self._text(f)}", base + st("stack--text")),
        ], base


def _frame_key(f) -> tuple:
    """What a stack row shows of a frame: which activation, where."""
    return (f.func_index, f.pc, getattr(f, "serial", 0))


__all__ = ["CallStackPane"]
