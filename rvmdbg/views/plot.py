"""Line plots drawn with characters: braille dots (2x4 per cell), half blocks (1x2 per cell)
or plain ASCII marks, for the cost-model chart of view 2.

`draw_plot(series, width, height, mode)` returns rows of (text, role) pieces: a y axis with
three labelled ticks, the plot area, an x axis with its first, middle and last values, and a
legend. Each series is a line through its points, or marks at them; where series overlap, the
one drawn last owns the cell. Axes go logarithmic when asked (values spread over decades).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from rvmdbg.i18n import _

BRAILLE, BLOCK, ASCII = "braille", "block", "ascii"
# braille dot bits by (x within cell, y within cell from the top)
_DOTS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (0, 3): 0x40,
         (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (1, 3): 0x80}
_ASCII_MARKS = "*o+x#%"


@dataclass
class Series:
    name: str
    points: list            # [(x, y)]
    role: str = "series0"   # the screen's colour for it
    lines: bool = True      # joined by lines (else marks at the points only)
    mark: str | None = None  # the mark at each point (None: a dot / the ASCII mark)


def _scale(v: float, lo: float, hi: float, log: bool) -> float:
    if log:
        v, lo, hi = math.log10(max(v, 1e-300)), math.log10(max(lo, 1e-300)), \
            math.log10(max(hi, 1e-300))
    return 0.0 if hi == lo else (v - lo) / (hi - lo)


def _line(x0, y0, x1, y1):
    """The integer points of a segment (Bresenham)."""
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err = dx + dy
    while True:
        yield x0, y0
        if x0 == x1 and y0 == y1:
            return
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy


def format_number(v: float, unit: str = "") -> str:
    """Short labels: 1.5k, 20, 3.2M; seconds as ns/us/ms/s when unit == "s"."""
    if unit == "s":
        for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
            if abs(v) >= scale or scale == 1e-9:
                x = v / scale
                return (f"{x:.3g}" if x < 100 else f"{x:.0f}") + name
    a = abs(v)
    for scale, name in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return f"{v / scale:.3g}{name}"
    return f"{v:.3g}"


def draw_plot(series: list, width: int = 60, height: int = 12, mode: str = BRAILLE,
              logx: bool = False, logy: bool = False, x_unit: str = "", y_unit: str = "",
              x_label: str = "", y_label: str = "") -> list:
    """The chart as rows of (text, role) pieces; `width` and `height` are the plot area's
    size in cells (axes and legend come on top)."""
    pts = [p for s in series for p in s.points]
    if not pts:
        return [[(_("no measurements yet"), "axis")]]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    xlo, xhi = min(xs), max(xs)
    ylo, yhi = (min(ys), max(ys))
    if not logy:
        ylo = min(0.0, ylo)
    if yhi == ylo:
        yhi = ylo + (abs(ylo) or 1.0)
    if xhi == xlo:
        xhi = xlo + (abs(xlo) or 1.0)
    sub_x, sub_y = {BRAILLE: (2, 4), BLOCK: (1, 2), ASCII: (1, 1)}[mode]
    gw, gh = width * sub_x, height * sub_y
    # per cell: dot bits (braille) or half flags (block) or a mark, and the owning role
    bits = [[0] * width for _ in range(height)]
    owner = [[None] * width for _ in range(height)]
    marks = [[None] * width for _ in range(height)]

    def to_grid(x, y):
        gx = round(_scale(x, xlo, xhi, logx) * (gw - 1))
        gy = round((1 - _scale(y, ylo, yhi, logy)) * (gh - 1))
        return gx, gy

    def plot(gx, gy, role):
        if not (0 <= gx < gw and 0 <= gy < gh):
            return
        cx, cy = gx // sub_x, gy // sub_y
        if mode == BRAILLE:
            bits[cy][cx] |= _DOTS[(gx % 2, gy % 4)]
        elif mode == BLOCK:
            bits[cy][cx] |= 1 if gy % 2 == 0 else 2
        owner[cy][cx] = role

    for k, s in enumerate(series):
        grid = [to_grid(x, y) for x, y in sorted(s.points)]
        if s.lines and len(grid) > 1:
            for (x0, y0), (x1, y1) in zip(grid, grid[1:]):
                for gx, gy in _line(x0, y0, x1, y1):
                    if mode == ASCII:
                        marks[gy][gx] = "." if marks[gy][gx] is None else marks[gy][gx]
                        owner[gy][gx] = s.role
                    else:
                        plot(gx, gy, s.role)
        for gx, gy in grid:
            mark = s.mark or (_ASCII_MARKS[k % len(_ASCII_MARKS)] if mode == ASCII else None)
            if mark is not None:
                cx, cy = gx // sub_x, gy // sub_y
                marks[cy][cx] = mark
                owner[cy][cx] = s.role
            else:
                plot(gx, gy, s.role)

    def cell(r, c):
        if marks[r][c] is not None:
            return marks[r][c]
        b = bits[r][c]
        if mode == BRAILLE:
            return chr(0x2800 + b) if b else " "
        if mode == BLOCK:
            return {0: " ", 1: "▀", 2: "▄", 3: "█"}[b]
        return " "

    ticks = {0: yhi, height // 2: _inverse(0.5, ylo, yhi, logy), height - 1: ylo}
    labels = {r: format_number(v, y_unit) for r, v in ticks.items()}
    lw = max(len(t) for t in labels.values())
    vbar, corner, hbar = ("|", "+", "-") if mode == ASCII else ("│", "└", "─")
    rows = []
    if y_label:
        rows.append([(y_label, "axis")])
    for r in range(height):
        row = [(f"{labels.get(r, ''):>{lw}} {vbar}", "axis")]
        run_role, run = None, ""
        for c in range(width):
            ch, role = cell(r, c), owner[r][c] or "plot"
            if role != run_role and run:
                row.append((run, run_role))
                run = ""
            run_role = role
            run += ch
        if run:
            row.append((run, run_role))
        rows.append(row)
    rows.append([(" " * lw + " " + corner + hbar * width, "axis")])
    left = format_number(xlo, x_unit)
    mid = format_number(_inverse(0.5, xlo, xhi, logx), x_unit)
    right = format_number(xhi, x_unit)
    axis = [" "] * (width + 2)
    for pos, text in ((0, left), ((width - len(mid)) // 2, mid), (width - len(right), right)):
        for i, ch in enumerate(text):
            if 0 <= pos + i < len(axis):
                axis[pos + i] = ch
    rows.append([(" " * (lw + 2) + "".join(axis).rstrip() + (f"   {x_label}" if x_label else ""),
                  "axis")])
    legend = []
    for k, s in enumerate(series):
        sym = s.mark or (_ASCII_MARKS[k % len(_ASCII_MARKS)] if mode == ASCII else
                         ("⣿" if mode == BRAILLE else "█"))
        if legend:
            legend.append(("   ", "axis"))
        legend.append((f"{sym} {s.name}", s.role))
    rows.append([(" " * (lw + 2), "axis")] + legend)
    return rows


def _inverse(f: float, lo: float, hi: float, log: bool) -> float:
    if log and lo > 0 and hi > 0:
        return 10 ** (math.log10(lo) + f * (math.log10(hi) - math.log10(lo)))
    return lo + f * (hi - lo)


__all__ = ["Series", "draw_plot", "format_number", "BRAILLE", "BLOCK", "ASCII"]
