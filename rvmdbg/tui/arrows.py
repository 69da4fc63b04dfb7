"""Arrow gutters beside the bytecode listing: jump arrows for If/Goto and dependency arrows.

The layout follows `objdump --visualize-jumps` and radare2: collect the edges, sort them by
span (shortest first), give each the innermost lane free along its whole span, and draw each
line of the gutter from the cells the edges leave on it. Lane 0 is the column next to the
instruction text; one extra column at the right holds the arrow heads.

A cell is a set of directions (up, down, left, right) it connects to, so crossings and shared
endpoints combine into the right box-drawing character. Edges that touch the pc are drawn
heavy (or with other ASCII characters): the active path reads without colour.

No Textual here: the listing widget turns `GutterLayout.line(...)` into styled segments.
"""
from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple, Sequence

from rvmdbg.tui.glyphs import DOWN, LEFT, RIGHT, UP

MAX_JUMP_LANES = 6
MAX_DEP_LANES = 4


class Edge(NamedTuple):
    """An arrow from line `src` to line `dst` (content line indices)."""

    src: int
    dst: int
    label: str = ""


# One cell of a gutter line: (column, direction flags, edge id).
Cell = tuple[int, int, int]


class GutterLayout:
    """Lanes for a set of edges and, per line, the cells they leave there.

    `precompute=True` (jump arrows: static per function) builds every line's cells and plain
    string once; otherwise (dependency arrows: a handful, rebuilt at every stop) a line's cells
    are computed on demand from the edges.
    """

    def __init__(self, edges: Sequence[Edge], max_lanes: int, precompute: bool = True):
        self.edges = list(edges)
        self.lane_of: list[int | None] = [None] * len(self.edges)
        self.lanes = 0
        self._assign_lanes(max_lanes)
        self.width = self.lanes + 1 if self.lanes else 0
        self.overflow = [i for i, lane in enumerate(self.lane_of) if lane is None]
        # Which edges start or end at a line: what the pc highlights.
        self.ends: dict[int, list[int]] = {}
        for i, e in enumerate(self.edges):
            self.ends.setdefault(e.src, []).append(i)
            if e.dst != e.src:
                self.ends.setdefault(e.dst, []).append(i)
        self._cells: dict[int, tuple[Cell, ...]] | None = None
        if precompute:
            self._cells = self._all_cells()

    # ------------------------------------------------------------ lanes

    def _assign_lanes(self, max_lanes: int) -> None:
        order = sorted(range(len(self.edges)),
                       key=lambda i: (abs(self.edges[i].dst - self.edges[i].src), self.edges[i].src))
        # Per lane, the disjoint closed intervals already placed there, sorted by start.
        starts: list[list[int]] = []
        spans: list[list[tuple[int, int]]] = []
        for i in order:
            e = self.edges[i]
            lo, hi = min(e.src, e.dst), max(e.src, e.dst)
            for lane in range(max_lanes):
                if lane == len(starts):
                    starts.append([])
                    spans.append([])
                k = bisect_left(starts[lane], lo)
                if k > 0 and spans[lane][k - 1][1] >= lo:
                    continue
                if k < len(starts[lane]) and starts[lane][k] <= hi:
                    continue
                starts[lane].insert(k, lo)
                spans[lane].insert(k, (lo, hi))
                self.lane_of[i] = lane
                self.lanes = max(self.lanes, lane + 1)
                break

    def column(self, lane: int) -> int:
        return self.lanes - 1 - lane

    # ------------------------------------------------------------ cells

    def _edge_cells(self, i: int, line: int) -> list[Cell]:
        """The cells edge i leaves on `line` (empty when it does not reach it)."""
        lane = self.lane_of[i]
        if lane is None:
            return []
        e = self.edges[i]
        lo, hi = (e.src, e.dst) if e.src <= e.dst else (e.dst, e.src)
        if line < lo or line > hi:
            return []
        col = self.column(lane)
        if lo < line < hi:
            return [(col, UP | DOWN, i)]
        if e.src == e.dst:
            vertical = 0
        elif line == lo:
            vertical = DOWN
        else:
            vertical = UP
        cells = [(col, vertical | RIGHT, i)]
        cells.extend((c, LEFT | RIGHT, i) for c in range(col + 1, self.lanes))
        # the head column: -1 marks an arrow head, a plain horizontal otherwise
        cells.append((self.lanes, -1 if line == e.dst else LEFT | RIGHT, i))
        return cells

    def _all_cells(self) -> dict[int, tuple[Cell, ...]]:
        out: dict[int, list[Cell]] = {}
        for i, lane in enumerate(self.lane_of):
            if lane is None:
                continue
            e = self.edges[i]
            lo, hi = min(e.src, e.dst), max(e.src, e.dst)
            col = self.column(lane)
            for line in (lo, hi) if lo != hi else (lo,):
                out.setdefault(line, []).extend(self._edge_cells(i, line))
            for line in range(lo + 1, hi):
                out.setdefault(line, []).append((col, UP | DOWN, i))
        return {line: tuple(cells) for line, cells in out.items()}

    def cells(self, line: int) -> tuple[Cell, ...]:
        if self._cells is not None:
            return self._cells.get(line, ())
        out: list[Cell] = []
        for i in range(len(self.edges)):
            out.extend(self._edge_cells(i, line))
        return tuple(out)

    def edges_on(self, line: int) -> frozenset[int]:
        """Ids of the edges that draw anything on `line`."""
        return frozenset(c[2] for c in self.cells(line))

    def active_edges(self, line: int | None) -> frozenset[int]:
        """The edges that start or end at `line` (the pc's line): drawn highlighted."""
        if line is None:
            return frozenset()
        return frozenset(self.ends.get(line, ()))

    # ------------------------------------------------------------ drawing

    def line(self, line: int, boxes: dict, heavy: dict | None, head: str,
             active: frozenset[int] = frozenset()) -> list[tuple[str, bool]]:
        """The gutter of `line` as runs of (text, drawn-active), exactly `width` cells."""
        if not self.width:
            return []
        dirs = [0] * self.width
        hot = [False] * self.width
        heads = [False] * self.width
        for col, d, i in self.cells(line):
            if d == -1:
                heads[col] = True
            else:
                dirs[col] |= d
            if i in active:
                hot[col] = True
        runs: list[tuple[str, bool]] = []
        for col in range(self.width):
            table = heavy if hot[col] and heavy is not None else boxes
            ch = head if heads[col] else table[dirs[col]]
            if runs and runs[-1][1] == hot[col]:
                runs[-1] = (runs[-1][0] + ch, hot[col])
            else:
                runs.append((ch, hot[col]))
        return runs

    def plain(self, line: int, boxes: dict, head: str) -> str:
        """The gutter of `line` with nothing highlighted, as one string."""
        return "".join(text for text, _ in self.line(line, boxes, None, head))


def jump_edges(instructions: Sequence) -> list[Edge]:
    """An edge per If/Goto target, leaving out an If's fall-through to the next line."""
    edges: list[Edge] = []
    for pc, ins in enumerate(instructions):
        if not ins.is_jump:
            continue
        for target in ins.jump_targets(pc):
            if target != pc + 1 and 0 <= target < len(instructions):
                edges.append(Edge(pc, target))
    return edges


__all__ = ["Edge", "GutterLayout", "jump_edges", "MAX_JUMP_LANES", "MAX_DEP_LANES"]
