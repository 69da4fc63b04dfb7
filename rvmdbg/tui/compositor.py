"""A compositor whose partial updates render only the rows that changed.

Textual's compositor (8.2.8) answers a partial update by taking the rectangle around every
dirty region and asking each widget under that rectangle for all of its visible lines. A
stop dirties a row or two in the listing and the source, a few register rows and the status
line at the bottom: the rectangle around them is the whole screen, so every pane re-rendered
every line (styles, borders, line filters) at every key, the largest cost of a step.

`RowCompositor` does the same work for the rows that hold a dirty span only: a widget is
asked for the rows where a dirty span crosses it, in runs of consecutive rows. What reaches
the terminal is unchanged, since the update writes the dirty spans alone, and a chop inside a
span belongs to a widget that covers the span on that row, which is therefore rendered.
Full updates (a layout, a resize) are Textual's own. It relies on Textual's private
compositor structure, which is why `pyproject.toml` pins Textual's exact version;
`tests/tui/test_compositor.py` checks what the terminal shows against a full render.
"""
from __future__ import annotations

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region


class RowCompositor(Compositor):

    def render_partial_update(self) -> ChopsUpdate | None:
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        screen = self.size.region
        spans = list(self._regions_to_spans(r.intersection(screen) for r in update_regions
                                            if r.overlaps(screen)))
        if not spans:
            return None
        chops = self._render_rows(spans)
        chop_ends = [cut_set[1:] for cut_set in self.cuts]
        return ChopsUpdate(chops, spans, chop_ends)

    def _render_rows(self, spans: list[tuple[int, int, int]]) -> list[dict]:
        cuts = self.cuts
        chops: list[dict] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        by_row: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in spans:
            by_row.setdefault(y, []).append((x1, x2))
        rows = sorted(by_row)
        intersection = Region.intersection
        # front to back, as Textual paints: the first strip into a chop wins
        for widget, (region, clip) in self.visible_widgets.items():
            visible = intersection(region, clip)
            vx, vy, vwidth, vheight = visible
            if not vwidth or not vheight:
                continue
            vx2 = vx + vwidth
            wanted = [y for y in rows if vy <= y < vy + vheight
                      and any(x1 < vx2 and x2 > vx for x1, x2 in by_row[y])]
            if not wanted:
                continue
            first_cut, last_cut = visible.column_span
            wanted_set = set(wanted)
            for start, end in _runs(wanted):
                strips = widget.render_lines(
                    Region(vx - region.x, start - region.y, vwidth, end - start))
                for y, strip in zip(range(start, end), strips):
                    if y not in wanted_set:
                        continue   # a row in a short gap, rendered to save a call
                    line = chops[y]
                    final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                    pieces = strip.divide([cut - vx for cut in final_cuts[1:]])
                    for cut, piece in zip(final_cuts, pieces):
                        if line.get(cut) is None:
                            line[cut] = piece
        return chops


def _runs(rows: list[int], gap: int = 4):
    """(start, end) of the runs of the sorted `rows`, bridging gaps of up to `gap` rows
    (a widget's `render_lines` has a fixed cost per call, its rows are mostly cached)."""
    start = prev = rows[0]
    for y in rows[1:]:
        if y > prev + 1 + gap:
            yield start, prev + 1
            start = y
        prev = y
    yield start, prev + 1


__all__ = ["RowCompositor"]
