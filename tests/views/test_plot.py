"""Character plots: braille, half blocks and ASCII, with axes and a legend."""
from __future__ import annotations

from rvmdbg.views.plot import ASCII, BLOCK, BRAILLE, Series, draw_plot, format_number
from rvmdbg.views.text import rows_text


def _plot_area(rows, width):
    # rows after the (optional) y label and before the axis line
    lines = [rows_text([r]) for r in rows]
    body = [l for l in lines if "│" in l or "|" in l]
    return [l.split("│" if "│" in l else "|", 1)[1][:width].ljust(width) for l in body]


def test_a_rising_line_goes_from_bottom_left_to_top_right():
    s = Series("y = x", [(0, 0), (10, 10)])
    rows = draw_plot([s], width=20, height=5, mode=ASCII)
    area = _plot_area(rows, 20)
    assert len(area) == 5
    assert area[-1][0] != " " and area[0][-1] != " "     # both ends drawn
    assert area[0][0] == " " and area[-1][-1] == " "     # the other corners empty


def test_braille_and_block_cells():
    s = Series("flat", [(0, 1), (1, 1)])
    rows = draw_plot([s], width=10, height=3, mode=BRAILLE)
    chars = "".join(_plot_area(rows, 10))
    assert all(c == " " or 0x2800 <= ord(c) <= 0x28FF for c in chars)
    rows = draw_plot([s], width=10, height=3, mode=BLOCK)
    chars = "".join(_plot_area(rows, 10))
    assert set(chars) <= {" ", "▀", "▄", "█"} and chars.strip()


def test_marks_axes_and_legend():
    a = Series("a", [(1, 1), (100, 1000)], role="series0")
    b = Series("b", [(1, 10), (100, 10)], role="series1", lines=False, mark="o")
    rows = draw_plot([a, b], width=30, height=6, mode=ASCII, logx=True, logy=True,
                     x_label="size")
    text = rows_text(rows)
    assert "1k" in text and "100" in text and "size" in text
    assert "* a" in text and "o b" in text
    roles = {role for row in rows for _, role in row}
    assert {"series0", "series1", "axis"} <= roles


def test_no_points():
    assert rows_text(draw_plot([Series("x", [])])) == "no measurements yet"


def test_format_number():
    assert format_number(1500) == "1.5k"
    assert format_number(2.5e-6, "s") == "2.5us"
    assert format_number(0.0123, "s") == "12.3ms"
    assert format_number(3, "s") == "3s"
    assert format_number(0, "s") == "0ns"
