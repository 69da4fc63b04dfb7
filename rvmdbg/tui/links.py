"""The link between Relay source lines and bytecode instructions, and their shared colours.

As in Compiler Explorer, every source line that produced instructions gets a colour from a
small palette, and each of its instructions shows the same colour, so the eye can pair them.
Neighbouring lines get different colours. Built once per program from the source map.
No Textual here.
"""
from __future__ import annotations

PALETTE_SIZE = 8


class SourceLinks:
    def __init__(self, exe, source_file: str | None):
        self.source_file = source_file
        # (func_index, pc) -> line in the program's own file (prelude spans are left out)
        self.line_at: dict[tuple[int, int], int] = {}
        self.locations_by_line: dict[int, list[tuple[int, int]]] = {}
        for (fi, pc), span in exe.source_map.items():
            if source_file is not None and span.file != source_file:
                continue
            self.line_at[(fi, pc)] = span.line
            self.locations_by_line.setdefault(span.line, []).append((fi, pc))
        for locs in self.locations_by_line.values():
            locs.sort()
        self.colour_of_line = {line: i % PALETTE_SIZE
                               for i, line in enumerate(sorted(self.locations_by_line))}

    def line_of(self, func_index: int, pc: int) -> int | None:
        return self.line_at.get((func_index, pc))

    def colour_at(self, func_index: int, pc: int) -> int | None:
        line = self.line_at.get((func_index, pc))
        return None if line is None else self.colour_of_line[line]

    def locations(self, line: int) -> list[tuple[int, int]]:
        """The (func_index, pc) of every instruction made from `line`, in order."""
        return self.locations_by_line.get(line, [])

    def pcs_in(self, line: int, func_index: int) -> list[int]:
        return [pc for fi, pc in self.locations(line) if fi == func_index]

    def best_location(self, line: int, prefer_func: int | None = None) -> tuple[int, int] | None:
        """Where `line` starts in the bytecode: in `prefer_func` if it has any, else the first."""
        locs = self.locations(line)
        if not locs:
            return None
        if prefer_func is not None:
            for loc in locs:
                if loc[0] == prefer_func:
                    return loc
        return locs[0]


__all__ = ["SourceLinks", "PALETTE_SIZE"]
