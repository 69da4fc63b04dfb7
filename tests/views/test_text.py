"""Arrow lanes and gutters shared by the drawings."""
from __future__ import annotations

from rich.cells import cell_len

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


def test_wrap_never_starts_a_line_with_closing_punctuation():
    from rvmdbg.views.text import NO_LINE_START, wrap
    text = "一个固定的内核列表：控制流、递归、ADT 和闭包都需要 VM，它在运行时逐条决定下一步。"
    for width in range(6, 40):
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")   # nothing lost
        assert all(line[0] not in NO_LINE_START for line in lines), (width, lines)
        assert all(cell_len(line) <= width for line in lines), (width, lines)


def test_table_keeps_a_gap_or_stacks():
    from rvmdbg.views.text import table
    rows = [["this program", "VM", "graph executor"],
            ["memory", "50845576 B = 602112+14156808+36086656", "76760960 B = 602112+"],
            ["allocations", "3 个存储/每次运行", "7 个池块，一次"]]
    wide = table(rows, 100)
    assert len(wide) == 3 and "36086656  76760960" in wide[1]
    assert "运行" in wide[2] and "运行  " in wide[2]
    narrow = table(rows, 50, names=["VM", "graph"])
    assert narrow[0] == "memory" and all(cell_len(x) <= 50 for x in narrow)
    assert "  VM     50845576 B = 602112+14156808+36086656" in narrow
    narrower = table(rows, 36, names=["VM", "graph"])   # a figure too long wraps at its spaces
    assert narrower[1:3] == ["  VM     50845576 B =", "         602112+14156808+36086656"]
    assert "  graph  76760960 B = 602112+" in narrow
