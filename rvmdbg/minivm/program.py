"""A MiniVM program as an executable: one function `main` with no parameters, the source map
from each pc to its line of the `.mvm` file, and no constants or kernels.

It is an `rvmdbg.vm.executable.Executable`, so everything that reads an executable (the
listing, breakpoints by pc or by source line, the call stack, saved breakpoints, `list`)
reads it unchanged; `machine(limits)` makes the machine that runs it.
"""
from __future__ import annotations

from rvmdbg.vm.executable import Executable, VMFunction


class MiniProgram(Executable):
    """`hl_stays`: the broken-loop variant in which HL leaves the pc where it is."""

    # The screen names registers as the program text does: r0, r1, ...
    register_prefix = "r"
    kind = "minivm"

    def __init__(self, instructions, register_count: int, source_map=None,
                 source_text: str | None = None, source_name: str | None = None,
                 hl_stays: bool = False):
        fn = VMFunction("main", [], register_count, instructions)
        super().__init__([fn], [], [], source_map, source_text, source_name)
        self.hl_stays = hl_stays

    @property
    def instructions(self) -> list:
        return self.functions[0].instructions

    @property
    def register_count(self) -> int:
        return self.functions[0].register_file_size

    def machine(self, limits=None):
        """A fresh `MiniMachine` on this program (not started)."""
        from rvmdbg.minivm.machine import MiniMachine
        return MiniMachine(self, limits)

    def listing(self) -> str:
        """One line per instruction: `pc  TEXT`."""
        width = len(str(max(0, len(self.instructions) - 1)))
        return "".join(f"{pc:>{width}}  {ins.text()}\n" for pc, ins in enumerate(self.instructions))


__all__ = ["MiniProgram"]
