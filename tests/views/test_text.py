"""Arrow lanes and gutters shared by the drawings."""
from __future__ import annotations

from rvmdbg.views.text import ASCII, Arrow, assign_lanes, draw_gutter, rows_text


def test_overlapping_arrows_get_different_lanes():
    arrows = [Arrow(0, 10), Arrow(2, 4), Arrow(5, 8), Arrow(3, 6)]
    n = assign_lanes(arrows)
    for a in arrows:
        for b in arrows:
            if a is not b and a.lane == b.lane:
                lo1, hi1 = sorted((a.start, a.end))
                lo2, hi2 = sorted((b.start, b.end))
                assert hi1 < lo2 or hi2 < lo1
    assert n == 3
    assert arrows[0].lane == n - 1          # the longest goes outermost


def test_gutter_draws_heads_and_lanes():
    rows = draw_gutter([Arrow(0, 3), Arrow(5, 1, role="taken", heavy=True)], 6, ASCII)
    text = rows_text(rows).split("\n")
    assert len(text) == 6
    assert text[3].endswith(">") and text[1].endswith(">")
    assert any("#" in line or "=" in line for line in text)   # the heavy arrow
    assert {r for row in rows for _, r in row} >= {"plain", "taken"}
