"""Screenshots of the three teaching views, made from the real debugger app.

Run from anywhere: `python3 scripts/make_view_screenshots.py [--png DIR] [NAME...]` writes
`screenshots/view_*.svg` (`--lang zh_CN`: in Chinese, in `screenshots/zh_CN/`). Each scene
opens a program headless at a fixed size, drives the
debugger with keys, opens a view (1, 2 or 3) and saves the screen with
`app.save_screenshot` inside `run_test`. View 2's figures are measured for real (`m`), so
they change from run to run. With `--png DIR`, each SVG is also converted to PNG with
`rsvg-convert` when it is installed (spaces kept as they are on screen).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# (file name, program, size, breakpoints, keys before the view, keys in the view, options)
SCENES = [
    ("view_flow.svg", "tests/examples/list_length.relay", (160, 44), ["@length:9"],
     ["c"], ["1", "e", "right", "right", "right", "right", "right"], {}),
    ("view_flow_narrow.svg", "tests/examples/list_length.relay", (80, 24), ["@length:9"],
     ["c"], ["1", "e", *["right"] * 10], {}),
    # the fetch-decode-execute strip in View 1: the if at pc 6 fetched, decoded, executed
    ("view_flow_cycle.svg", "programs/sum_up.relay", (160, 44), ["@sum_up:6"],
     ["c"], ["1", "p", "s", "s", "s"], {}),
    ("view_executors_static.svg", "programs/mlp.relay", (160, 44), [],
     ["s", "s", "s", "s"], ["2", "m"], {}),
    ("view_executors_dynamic.svg", "tests/examples/list_length.relay", (160, 44), [],
     ["s", "s", "s", "s", "s", "s"], ["2", "m"], {}),
    ("view_control.svg", "programs/bst.relay", (160, 44), ["@insert:11"],
     ["c", "c", "c"], ["3"], {}),
    ("view_control_ascii.svg", "programs/bst.relay", (110, 32), ["@in_order:3"],
     ["c", "c"], ["3"], {"ascii_only": True}),
    # the quiz (Q) over the debugger after its third answer; View 1's misconception list (M)
    ("quiz.svg", "programs/sum_up.relay", (120, 36), [], [],
     ["Q", "1", "enter", "1", "enter", "2"], {}),
    ("misconceptions.svg", "programs/sum_up.relay", (140, 44), [], [],
     ["1", "M", "down", "down"], {}),
]


async def settle(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def shoot(name, path, size, breakpoints, keys, view_keys, options, out_dir,
                config_dir) -> None:
    from textual.screen import ModalScreen

    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.program import load_program
    app = DebuggerApp(load_program(path), [], config_dir=config_dir, **options)
    async with app.run_test(size=size) as pilot:
        for _ in range(200):
            if app.session is not None or isinstance(app.screen, ModalScreen):
                break
            await pilot.pause()
        for spec in breakpoints:
            app.session.breakpoints.add(spec)
        app.screen_stack[0].refresh_breakpoints()
        for key in keys + view_keys:
            await pilot.press(key)
            await settle(app, pilot)
        app.save_screenshot(filename=name, path=out_dir)
    print(f"{os.path.relpath(os.path.join(out_dir, name), ROOT)}: {path} at {size[0]}x{size[1]}")


def to_png(svg: str, png_dir: str) -> str | None:
    """A PNG of the SVG via rsvg-convert (None when it is not installed)."""
    tool = shutil.which("rsvg-convert")
    if tool is None:
        return None
    os.makedirs(png_dir, exist_ok=True)
    with open(svg, encoding="utf-8") as f:
        text = f.read()
    # Textual writes leading spaces as no-break spaces; librsvg collapses them unless told
    fixed = text.replace("<svg ", '<svg xml:space="preserve" ', 1)
    png = os.path.join(png_dir, os.path.basename(svg)[:-4] + ".png")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as tmp:
        tmp.write(fixed)
    try:
        subprocess.run([tool, tmp.name, "-o", png], check=True)
    finally:
        os.unlink(tmp.name)
    return png


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--png", metavar="DIR", help="also write PNGs there (needs rsvg-convert)")
    ap.add_argument("--lang", default="en", choices=["en", "zh_CN"],
                    help="the interface's language (zh_CN writes screenshots/zh_CN/)")
    ap.add_argument("names", nargs="*", help="only these scenes (file names)")
    ns = ap.parse_args(argv)
    from rvmdbg import i18n
    i18n.set_language(ns.lang)
    os.chdir(ROOT)  # program paths are relative, as a user in the repository types them
    out_dir = os.path.join(ROOT, "screenshots", *([] if ns.lang == "en" else [ns.lang]))
    os.makedirs(out_dir, exist_ok=True)
    for scene in SCENES:
        if ns.names and scene[0] not in ns.names:
            continue
        with tempfile.TemporaryDirectory() as config_dir:
            asyncio.run(shoot(*scene, out_dir, config_dir))
        if ns.png:
            png = to_png(os.path.join(out_dir, scene[0]), ns.png)
            if png:
                print(f"  {png}")


if __name__ == "__main__":
    main()
