"""The constant pool of a Relax VM executable: one row per constant `c[N]` (tensors as rvmdbg
shows tensors, shape tuples, data types, strings, numbers), the rows the instruction at the pc
reads (its `c[N]` operands) marked. Shown for the executables that have such a pool
(`RelaxExecutable`: its Calls name constants by index), as a pane of the state column.
"""
from __future__ import annotations

import numpy as np
from rich.segment import Segment

from rvmdbg.i18n import N_, _
from rvmdbg.tui.line_pane import LinePane, set_title


def constant_text(value, width: int = 200) -> str:
    """One line of a constant: a tensor as the registers pane shows one, a shape as
    `R.shape([3, 5])`, a dtype as `dtype float32`, a string quoted."""
    from rvmdbg.debug.heap import value_text
    from rvmdbg.relax.isa import DType
    if isinstance(value, np.ndarray):
        return f"Tensor  {value_text(value, width)}"
    if isinstance(value, DType):
        return f"dtype {value}"
    if isinstance(value, str):
        text = repr(value.strip())
        return text if len(text) <= width else text[:width - 1] + "…"
    return repr(value)


class ConstantPane(LinePane):
    title = N_("Constants")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "constants--index", "constants--used", "constants--text",
    }

    def __init__(self, exe, **kwargs) -> None:
        super().__init__(**kwargs)
        self.exe = exe
        self.texts = [constant_text(c) for c in getattr(exe, "constants", ())]
        self.used: frozenset = frozenset()

    def on_mount(self) -> None:
        super().on_mount()
        n = len(self.texts)
        set_title(self, f"{_(self.title)} ({n})")
        self.set_lines(max(1, n), max((len(t) for t in self.texts), default=0) + 10)

    def set_instruction(self, ins) -> None:
        """Mark the constants `ins` reads (its `c[N]` operands); None: none."""
        used = frozenset(v for k, v in getattr(ins, "args", ()) if k == "const")
        if used == self.used:
            return
        old, self.used = self.used, used
        for i in old | used:
            self.refresh_content_line(i)
        if used and self.line_count:
            self.scroll_to_line(min(used))

    @property
    def has_rows(self) -> bool:
        return bool(self.texts)

    def line_state(self, index: int) -> tuple:
        return (index in self.used,)

    def line_text(self, index: int) -> str:
        if not self.texts:
            return _("no constants")
        return f"c[{index}] {self.texts[index]}" if index < len(self.texts) else ""

    def render_full_line(self, index: int, cursor: str):
        base = self.base_style
        if cursor:
            base = base + self.cursor_style(cursor)
        st = self.style
        if not self.texts:
            return [Segment(" " + _("no constants"), base + st("pane--dim"))], base
        used = index in self.used
        mark = self.glyphs.pc if used else " "
        row = base + st("constants--used") if used else base
        return [
            Segment(mark, row + st("constants--used")),
            Segment(f"c[{index}]".ljust(6), row + st("constants--index")),
            Segment(f" {self.texts[index]}", row + st("constants--text")),
        ], row


__all__ = ["ConstantPane", "constant_text"]
