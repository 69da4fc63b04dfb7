"""Every text colour on the screen reaches 4.5:1 contrast (WCAG AA) against its background,
in the default theme in true colour, in 256 colours, in 16 colours and with NO_COLOR.

The screen is rendered in scenes that show every kind of row (the pc, a caller, an error,
breakpoints, changed and read registers, the cursor in a pane, the heap, the console, the
status line), and every cell that holds text is checked: its foreground and background as
Textual composes them, brought down to each colour system the way the terminal gets them
(Rich's downgrade to the 256-colour cube or the 16 ANSI colours, with those colours' usual
RGB; Textual's monochrome filter under NO_COLOR). Box drawing, block and arrow glyphs of the
frames and gutters are not text and are left out, as WCAG leaves out such graphics.
"""
from __future__ import annotations

import pytest
from rich.color import ColorSystem
from textual.color import Color as TextualColor

from conftest import set_scene

SYSTEMS = ["truecolor", "256", "16", "no-color"]
GRAPHICS = set(range(0x2500, 0x2600)) | set(range(0x2190, 0x2200)) | set(range(0x25A0, 0x2600))


def luminance(rgb) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a, b) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def as_shown(color, system: str):
    """The RGB a terminal shows for a Rich colour under `system`."""
    if system == "256":
        color = color.downgrade(ColorSystem.EIGHT_BIT)
    elif system == "16":
        color = color.downgrade(ColorSystem.STANDARD)
    t = color.get_truecolor()
    if system == "no-color":
        grey = TextualColor(t.red, t.green, t.blue).monochrome
        return grey.r, grey.g, grey.b
    return t.red, t.green, t.blue


def is_text(text: str) -> bool:
    return any(not c.isspace() and ord(c) not in GRAPHICS for c in text)


def low_contrast_cells(app, system: str) -> list[tuple[float, str, str, str]]:
    """(ratio, text, foreground, background) of each text segment under 4.5:1."""
    bad = set()
    for strip in app.screen._compositor.render_strips():
        for seg in strip:
            style = seg.style
            if style is None or not is_text(seg.text):
                continue
            fg, bg = style.color, style.bgcolor
            if fg is None or bg is None:
                continue
            if style.reverse:
                fg, bg = bg, fg
            ratio = contrast(as_shown(fg, system), as_shown(bg, system))
            if ratio < 4.5:
                bad.add((round(ratio, 2), seg.text.strip()[:20], fg.name, bg.name))
    return sorted(bad)


SCENES = {
    # the listing focused at a breakpoint in a callee: pc, caller rows, jump and dependency
    # arrows, breakpoint marks, changed/read/written registers, the console open
    "stop": ("programs/bst.relay", ["@insert:18"], ["c", "c", "c", "o"]),
    # the heap open with a tree, the registers pane focused
    "heap": ("programs/bst.relay", ["@in_order"], ["c", "tab", "tab", "tab", "space", "down",
                                                   "space", "shift+tab", "shift+tab"]),
    # an error stop, the source focused
    "error": ("tests/tui/programs/empty_head.relay", [], ["c", "shift+tab"]),
    # the VM's ideas: registers reused with live-range bars, the fetch-decode-execute strip
    # half turned, a swap? mark with the arrows and notes of what forbids it
    "ideas": ("programs/sum_up.relay", ["@sum_up:6"], ["c", "r", "p", "s", "s", "m", "up",
                                                     "up"]),
}


@pytest.mark.parametrize("scene", SCENES)
@pytest.mark.parametrize("system", SYSTEMS)
async def test_every_text_colour_reaches_4_5_to_1(app_factory, monkeypatch, scene, system):
    path, breakpoints, keys = SCENES[scene]
    if system == "16":
        monkeypatch.setenv("TEXTUAL_COLOR_SYSTEM", "standard")
    if system == "no-color":
        monkeypatch.setenv("NO_COLOR", "1")
    app = app_factory(path)
    async with app.run_test(size=(160, 48)) as pilot:
        await set_scene(app, pilot, breakpoints, keys)
        assert low_contrast_cells(app, system) == []
