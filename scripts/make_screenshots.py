"""Screenshots of the debugger screen for the README, made from the real app.

Run from anywhere: `python3 scripts/make_screenshots.py` writes `screenshots/*.svg`
(`--lang zh_CN`: the Chinese interface, in `screenshots/zh_CN/`). Each
scene opens a program headless at a fixed size, drives it with keys, and saves the screen
with `app.save_screenshot` inside `run_test`.
"""
from __future__ import annotations

import asyncio
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# (file name, program, arguments, size, breakpoints, keys, options)
SCENES = [
    ("overview.svg", "programs/bst.relay", [], (160, 48), ["@insert:18"], ["c", "c", "c"], {}),
    ("heap.svg", "programs/bst.relay", [], (140, 40), ["@in_order"],
     ["c", "tab", "tab", "tab", "space", "down", "space", "down", "down", "down", "space"], {}),
    ("error.svg", "tests/tui/programs/empty_head.relay", [], (120, 36), [], ["c"], {}),
    ("narrow.svg", "programs/sum_up.relay", ["3"], (80, 24), ["@sum_up:15"], ["c", "s", "s"], {}),
    ("command_line.svg", "programs/fib.relay", ["6"], (120, 36), [],
     ["colon", *"break @fib:14 if $0 == 3", "enter", *"continue", "enter", *"backtrace", "enter",
      *"deps", "enter"], {}),
    ("ascii.svg", "programs/quicksort.relay", [], (100, 30), ["@qsort"],
     ["c", "c", "s", "s", "s", "s", "s"], {"ascii_only": True}),
    ("help.svg", "programs/sum_up.relay", [], (120, 40), [], ["question_mark"], {}),
    # the console: stops the keys made, a display shown at each, a search across functions,
    # and Tab completing a function name on the command line
    ("console.svg", "programs/fib.relay", ["6"], (140, 40), [],
     ["colon", *"display $0", "enter", "escape", "s", "s", "n", "s", "colon", *"search invoke",
      "enter", *"break @f", "tab"], {}),
    # swap?: pc 2 marked with m, the cursor on the if at pc 6: why not, drawn
    ("swap.svg", "programs/sum_up.relay", ["3"], (140, 40), [],
     ["s", "down", "down", "m", "down", "down", "down", "down"], {}),
    # registers reused by liveness (r): renamed listing and registers, live-range bars
    ("reused.svg", "programs/sum_up.relay", ["3"], (140, 40), ["@sum_up:6"], ["c", "c", "r"], {}),
    # fetch, decode, execute: p shows the strip, s s fetches and decodes the if at pc 6
    ("cycle.svg", "programs/sum_up.relay", ["3"], (140, 40), ["@sum_up:6"],
     ["c", "p", "s", "s"], {}),
    # the toy MiniVM on the same screen: stopped at ADD after CH jumped, its reads' writers
    ("minivm.svg", "programs/demo.mvm", [], (120, 30), ["@main:5"], ["c"], {}),
    # P: profiling on, c runs the CNN, P again: the kernel table of the run so far
    ("profile.svg", "programs/cnn.relay", [], (160, 48), [],
     ["P", "c", "P", "tab", "tab", "tab", "tab", "tab", "plus", "plus", "plus", "plus"], {}),
    # HL that leaves the pc where it is: the stop where a state repeats
    ("minivm_spin.svg", "programs/demo_spin.mvm", [], (120, 30), [], ["c"], {}),
    # TVM's Relax VM (apache-tvm): @fact two frames deep at its multiply Call; `relax:NAME`
    # is a TVMScript program of tests/relax/programs.py, written to a NAME.relax.py file
    ("relax.svg", "relax:fact", ["3"], (160, 48), ["multiply"], ["c"], {}),
    # an ONNX model (the onnx package's SqueezeNet, an all-ones image): the source pane is
    # the node listing, `break n12` stops at the kernel n12 and n13 were fused into
    ("onnx.svg", "onnx:squeezenet", ["@ones"], (160, 48), ["n12"], ["c"], {}),
]


def relax_program(path: str, directory: str) -> str | None:
    """The file of a `relax:NAME` scene (None without apache-tvm: the scene is skipped)."""
    try:
        import tvm  # noqa: F401
    except ImportError:
        return None
    from tests.relax import programs
    name = path.split(":", 1)[1]
    out = os.path.join(directory, f"{name}.relax.py")
    with open(out, "w", encoding="utf-8") as f:
        f.write(programs.source(name))
    return out


def onnx_program(path: str, directory: str):
    """The model file of an `onnx:NAME` scene (a network the onnx package ships in
    backend/test/data/light) and an all-ones input for it as a .npy in `directory`; None
    without the onnx package."""
    try:
        from rvmdbg.onnx import networks
    except ImportError:
        return None
    import numpy as np
    name = "light/" + path.split(":", 1)[1]
    net = next(n for n in networks.networks() if n.name == name)
    model, feeds, _expected = networks.load(net)
    ones = os.path.join(directory, "ones.npy")
    np.save(ones, np.ones_like(next(iter(feeds.values()))))
    return net.path, ones


async def shoot(name, path, args, size, breakpoints, keys, options, out_dir, config_dir) -> None:
    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui.program import load_program
    from textual.screen import ModalScreen
    if path.startswith("relax:"):
        path = relax_program(path, config_dir)
        if path is None:
            print(f"{name}: skipped (apache-tvm is not installed)")
            return
    if path.startswith("onnx:"):
        found = onnx_program(path, config_dir)
        if found is None:
            print(f"{name}: skipped (the onnx package is not installed)")
            return
        path, ones = found
        args = [f"@{ones}" if a == "@ones" else a for a in args]
    app = DebuggerApp(load_program(path), args, config_dir=config_dir, **options)
    async with app.run_test(size=size) as pilot:
        for _ in range(200):
            if app.session is not None or isinstance(app.screen, ModalScreen):
                break
            await pilot.pause()
        for spec in breakpoints:
            app.session.breakpoints.add(spec)
        app.screen_stack[0].refresh_breakpoints()
        for key in keys:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.pause()
        app.save_screenshot(filename=name, path=out_dir)
    print(f"{os.path.relpath(os.path.join(out_dir, name), ROOT)}: {path} at {size[0]}x{size[1]}")


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lang", default="en", choices=["en", "zh_CN"],
                    help="the interface's language (zh_CN writes screenshots/zh_CN/)")
    ap.add_argument("names", nargs="*", help="only these scenes (file names)")
    ns = ap.parse_args(argv)
    from rvmdbg import i18n
    i18n.set_language(ns.lang)
    os.chdir(ROOT)  # program paths are relative, as a user in the repository types them
    out_dir = os.path.join(ROOT, "screenshots", *([] if ns.lang == "en" else [ns.lang]))
    os.makedirs(out_dir, exist_ok=True)
    only = set(ns.names)
    for scene in SCENES:
        if not only or scene[0] in only:
            # a fresh config directory per scene: no breakpoints saved by another scene
            with tempfile.TemporaryDirectory() as config_dir:
                asyncio.run(shoot(*scene, out_dir, config_dir))


if __name__ == "__main__":
    main()
