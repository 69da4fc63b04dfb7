"""Screen latency: startup to the first frame, and a step with a 20,000-instruction listing.

Run: `python3 benchmarks/bench_tui.py` (prints figures; targets: first frame < 1.0 s, every
key under 10 ms median and 25 ms p95 at 160x48). A key is timed from calling the screen's
action to the end of the screen refresh that shows it (`call_after_refresh`), not through
`pilot.press`, which adds about 60 ms of its own per key.

Keys are pressed as a user presses them: each after the screen has been idle for a frame
(Textual paces its refreshes at 60 a second, so a key sent within 16.7 ms of the last refresh
waits for the next frame; back-to-back keys measure that pacing, and are printed too). Beside
the wall-clock figures, which the machine's load inflates, each key's CPU time (the process's,
all threads) and the screen rows the compositor rendered for it count the work itself.
`--baseline DIR` measures the keys of another checkout (e.g. main before a change) in the same
run and prints both (on the big program, the model, or the ONNX network).

The big program is generated: `@main` is a chain of calls to `@inc` with an `if` every 50
lines, so its listing has jump arrows and source links all the way down.
"""
from __future__ import annotations

import time

PROCESS_START = time.perf_counter()  # before any import: the cold-start figure counts them

import argparse
import asyncio
import json
import os
import statistics
import sys
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# the checkout measured: this one, or the one `--baseline` names (in a subprocess)
ROOT = os.environ.get("RVMDBG_BENCH_ROOT") or os.path.dirname(HERE)
sys.path.insert(0, ROOT)
IDLE_BEFORE_KEY = 0.025   # > one frame (1/60 s): the screen is idle when the key comes
WARM_KEYS = 2


def big_program_text(lets: int) -> str:
    lines = ['#[version = "0.0.5"]', "// args: 0",
             "// Generated for bench_tui.py: a long straight-line @main.",
             "def @inc(%x: int32) -> int32 {", "  %x + 1", "}", "",
             "def @main(%x0: int32) -> int32 {"]
    for i in range(1, lets + 1):
        prev = f"%x{i - 1}"
        if i % 50 == 0:
            lines.append(f"  let %x{i} = if ({prev} < 1000000) {{ @inc({prev}) }} else {{ {prev} }};")
        else:
            lines.append(f"  let %x{i} = @inc({prev});")
    lines += [f"  %x{lets}", "}", ""]
    return "\n".join(lines)


CONFIG_DIR = tempfile.mkdtemp(prefix="bench_tui_config_")  # never the user's saved breakpoints


async def first_frame(program, size, origin: float | None = None,
                      args=()) -> tuple[float, float]:
    """Seconds from creating the app (or from `origin`) to its first frame on screen (listing
    and source drawn, the session still being built), and to the refresh that shows the
    first stop."""
    from rvmdbg.tui.app import DebuggerApp
    loop = asyncio.get_running_loop()
    painted = loop.create_future()
    stopped = loop.create_future()
    t0 = time.perf_counter() if origin is None else origin
    app = DebuggerApp(program, list(args), config_dir=CONFIG_DIR, freeze_heap=True)

    def mark(future):
        return lambda: future.done() or future.set_result(time.perf_counter())

    original_begin = app.begin

    def begin() -> None:
        # `begin` runs right after the first refresh: that refresh was the first frame
        mark(painted)()
        original_begin()
        app.call_after_refresh(mark(stopped))

    app.begin = begin
    async with app.run_test(size=size) as pilot:
        t1 = await painted
        t2 = await stopped
        await pilot.pause()
    return t1 - t0, t2 - t0


class RowCounter:
    """Counts the screen rows widgets render (the compositor's work per refresh)."""

    def __init__(self) -> None:
        from textual.widget import Widget
        self.rows = 0
        original = Widget.render_lines
        counter = self

        def render_lines(widget, crop):
            counter.rows += crop.height
            return original(widget, crop)
        Widget.render_lines = render_lines


async def step_latency(program, size, steps: int, action: str, paced: bool = True,
                       counter: RowCounter | None = None, args=()) -> dict[str, list[float]]:
    """Per step action: seconds from the action to the refresh after it ("wall"), the
    process's CPU seconds over that time ("cpu") and the screen rows rendered ("rows").
    `paced`: each key comes after the screen has been idle for a frame."""
    from rvmdbg.tui.app import DebuggerApp
    app = DebuggerApp(program, list(args), config_dir=CONFIG_DIR, freeze_heap=True)
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "rows": []}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen_stack[0]
        loop = asyncio.get_running_loop()
        if action == "action_rstep":
            # go forward first, so there is history to step back through
            screen.drive("forward", lambda s: s.step(steps + 10 + WARM_KEYS), threaded=False)
            await pilot.pause()
        for _ in range(WARM_KEYS):
            # untimed: what the screen does once after its first stop (freezing the heap
            # out of the collector, making the VM's tables) is startup, not a key's cost
            getattr(screen, action)()
            await app.workers.wait_for_complete()
            await pilot.pause()
        for _ in range(steps):
            if paced:
                await asyncio.sleep(IDLE_BEFORE_KEY)
            done = loop.create_future()
            rows = counter.rows if counter is not None else 0
            c0 = time.process_time()
            t0 = time.perf_counter()
            getattr(screen, action)()
            if action == "action_next":
                # next runs in the worker thread: wait for its stop to reach the screen
                await app.workers.wait_for_complete()
                while screen.running:
                    await asyncio.sleep(0)
            app.call_after_refresh(lambda: done.done() or done.set_result(time.perf_counter()))
            t1 = await done
            out["wall"].append(t1 - t0)
            out["cpu"].append(time.process_time() - c0)
            out["rows"].append((counter.rows if counter is not None else 0) - rows)
        assert screen.session.step_count > 0 or action != "action_step"
    return out


def cold_start(path: str) -> None:
    """In this (fresh) process, as `rvmdbg PATH` does: import, load, check and compile the
    program, freeze it out of the collector, open the app; prints the seconds from the
    process's first line to the first frame and to the first stop on screen."""
    import gc
    from rvmdbg.tui.program import load_program
    import rvmdbg.tui.app  # noqa: F401
    program = load_program(path)
    loaded = time.perf_counter() - PROCESS_START
    gc.freeze()
    frame, stop = asyncio.run(first_frame(program, (160, 48), origin=PROCESS_START))
    print(f"{loaded:.4f} {frame:.4f} {stop:.4f}")


def cold_start_figures(path: str, runs: int) -> tuple[float, float, float]:
    """Medians of `cold_start` over `runs` fresh processes: (loaded, first frame, first stop)."""
    results = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--cold-start", path],
                             capture_output=True, text=True, check=True).stdout
        results.append([float(x) for x in out.split()[-3:]])
    return tuple(statistics.median(r[i] for r in results) for i in range(3))


def _ms(times: list[float]) -> tuple[float, float]:
    ms = sorted(t * 1000 for t in times)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.95))]


KEYS = (("action_step", "s"), ("action_rstep", "S"), ("action_next", "n"))


def key_figures(program, steps: int, sizes=((160, 48),), back_to_back: bool = True,
                keys=KEYS, args=()) -> dict:
    """{label: {"wall": [...], "cpu": [...], "rows": [...]}} for each key at each size
    (paced), and `s` back to back at the first size."""
    counter = RowCounter()
    figures = {}
    for size in sizes:
        for action, key in keys:
            label = f"{key} {size[0]}x{size[1]}"
            figures[label] = asyncio.run(step_latency(program, size, steps, action,
                                                      counter=counter, args=args))
    if back_to_back:
        size = sizes[0]
        figures[f"s {size[0]}x{size[1]} back to back"] = asyncio.run(
            step_latency(program, size, steps, "action_step", paced=False, counter=counter))
    return figures


def print_key_figures(figures: dict, baseline: dict | None = None,
                      baseline_name: str = "") -> None:
    """One line per key: wall median/p95, CPU median/p95, rows per key; with a baseline,
    its figures first and then these."""
    def cells(f: dict) -> str:
        wm, wp = _ms(f["wall"])
        cm, cp = _ms(f["cpu"])
        rows = statistics.median(f["rows"])
        return f"{wm:6.1f} /{wp:6.1f} ms  cpu {cm:5.1f} /{cp:5.1f} ms  {rows:5.0f} rows"
    width = max(len(label) for label in figures)
    if baseline is not None:
        print(f"{'':<{width}} {'before (' + baseline_name + ')':<48} after (this checkout)")
    for label, f in figures.items():
        before = f"{cells(baseline[label])}   " if baseline and label in baseline else ""
        print(f"{label:<{width}} {before}{cells(f)}")
    print("each: wall median / p95 from the action to the refresh that shows it, the CPU time "
          "and the screen rows rendered per key; target: every key < 10 ms median, "
          "< 25 ms p95 at 160x48")


def baseline_figures(root: str, argv: list[str]) -> dict:
    """`key_figures` of the checkout at `root`, measured by this script in a subprocess."""
    env = dict(os.environ, RVMDBG_BENCH_ROOT=os.path.abspath(root),
               PYTHONPATH=os.path.abspath(root))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--keys-json"] + argv,
                         capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.splitlines()[-1])


def load_big(lets: int):
    from rvmdbg.tui.program import load_program
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.relay")
        with open(path, "w") as f:
            f.write(big_program_text(lets))
        return load_program(path)


def load_model(layers: int):
    from rvmdbg.tui.program import load_program
    from rvmdbg.workloads import build
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.relay")
        model = build("transformer_block", small=True, layers=layers)
        header, _, rest = model.text.partition("\n")
        args = " ".join(json.dumps(a.tolist()).replace(" ", "") for a in model.inputs)
        with open(path, "w") as f:
            f.write(f"{header}\n// args: {args}\n{rest}")
        return load_program(path)


def model_steps(layers: int, steps: int, baseline: str | None = None) -> None:
    """Step latency at 160x48 on a model with weights in #[metadata]: every stop shows tensor
    registers (summaries with statistics) rather than scalars."""
    import rvmdbg.tui.app  # noqa: F401
    t = time.perf_counter()
    program = load_model(layers)
    load_s = time.perf_counter() - t
    import gc
    gc.collect()
    gc.freeze()
    kernels = sum(1 for fn in program.exe.functions for ins in fn.instructions
                  if type(ins).__name__ == "InvokePacked")
    print(f"transformer, {layers} layers: {kernels} kernel calls, load+check+compile "
          f"{load_s * 1000:.0f} ms")
    before = (baseline_figures(baseline, ["--model-layers", str(layers), "--steps", str(steps)])
              if baseline else None)
    figures = key_figures(program, steps, back_to_back=False)
    print_key_figures({f"{k} on the {kernels}-kernel model": v for k, v in figures.items()},
                      {f"{k} on the {kernels}-kernel model": v for k, v in before.items()}
                      if before else None, baseline or "")


def onnx_model_path(path: str | None) -> str:
    """The ONNX network measured: PATH, or ResNet-50 as the onnx package ships it."""
    if path:
        return path
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        "light_resnet50.onnx")


def onnx_inputs(program, tmp: str) -> list[str]:
    """`@FILE.npy` arguments for @main's parameters: seeded random tensors (unknown dims 1)."""
    import numpy as np
    from rvmdbg.args import param_types
    texts = []
    for i, ty in enumerate(param_types(program.module.functions["main"])):
        shape = [d if isinstance(d, int) else 1 for d in ty.shape]
        arr = np.random.default_rng(i).standard_normal(shape).astype(ty.dtype)
        np.save(os.path.join(tmp, f"in{i}.npy"), arr)
        texts.append("@" + os.path.join(tmp, f"in{i}.npy"))
    return texts


ONNX_KEYS = (("action_step", "s"), ("action_next", "n"))


def onnx_key_figures(program, steps: int, tmp: str) -> dict:
    main_fn = program.exe.function("main")
    steps = min(steps, max(1, len(main_fn.instructions) - WARM_KEYS - 2))
    return key_figures(program, steps, back_to_back=False, args=onnx_inputs(program, tmp),
                       keys=ONNX_KEYS)


def onnx_screen(path: str | None, steps: int, quick: bool, baseline: str | None = None) -> None:
    """The screen on an ONNX network (`rvmdbg resnet50.onnx`, issue 26): import + check +
    compile, first frame and first stop at 160x48, then `s` and `n` (kernel by kernel: each
    step of an invoke_packed runs that node's kernel, a convolution of 224x224 images).
    `baseline`: the keys of that checkout too, measured in a subprocess of the same run."""
    import gc
    path = onnx_model_path(path)
    import rvmdbg.tui.app  # noqa: F401
    from rvmdbg.tui.program import load_program
    t = time.perf_counter()
    program = load_program(path)
    load_s = time.perf_counter() - t
    gc.collect()
    gc.freeze()
    main_fn = program.exe.function("main")
    kernels = sum(1 for ins in main_fn.instructions if type(ins).__name__ == "InvokePacked")
    name = os.path.basename(path)
    before = (baseline_figures(baseline, ["--onnx", path, "--steps", str(steps)])
              if baseline else None)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{name}: {len(main_fn.instructions)} instructions, {kernels} "
              f"kernel calls; import+check+compile {load_s * 1000:.0f} ms")
        texts = onnx_inputs(program, tmp)
        runs = [asyncio.run(first_frame(program, (160, 48), args=texts))
                for _ in range(1 if quick else 3)]
        first = statistics.median(r[0] for r in runs) * 1000
        stop = statistics.median(r[1] for r in runs) * 1000
        print(f"{name:<30} first frame {first:6.0f} ms, first stop shown "
              f"{stop:6.0f} ms   (target < 2000 ms; after the load above)")
        figures = onnx_key_figures(program, steps, tmp)
    print_key_figures({f"{k} on {name}": v for k, v in figures.items()},
                      {f"{k} on {name}": v for k, v in before.items()} if before else None,
                      baseline or "")


def keys_json(args) -> None:
    """The `--baseline` subprocess: key figures of the checkout on sys.path, as JSON."""
    import gc
    import rvmdbg.tui.app  # noqa: F401
    if args.onnx is not None:
        from rvmdbg.tui.program import load_program
        program = load_program(onnx_model_path(args.onnx or None))
    else:
        program = load_model(args.model_layers) if args.model_layers else load_big(args.lets)
    gc.collect()
    gc.freeze()
    if args.onnx is not None:
        with tempfile.TemporaryDirectory() as tmp:
            figures = onnx_key_figures(program, args.steps, tmp)
    elif args.model_layers:
        figures = key_figures(program, args.steps, back_to_back=False)
    else:
        figures = key_figures(program, args.steps, sizes=((160, 48), (80, 24)))
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lets", type=int, default=9000, help="let lines in the generated @main")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--quick", action="store_true",
                        help="a small program and a few steps (a smoke run, not a measurement)")
    parser.add_argument("--model-layers", type=int, metavar="N",
                        help="instead: step latency on a transformer of N layers printed as TVM "
                             "prints it (15 kernels a layer; 34 layers = 510 kernels)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also measure the keys of the checkout in DIR (e.g. /work/main), "
                             "in a subprocess of the same run, and print both")
    parser.add_argument("--keys-only", action="store_true",
                        help="only the keys' figures (no startup and cold start)")
    parser.add_argument("--onnx", nargs="?", const="", metavar="MODEL.onnx",
                        help="instead: the screen on an ONNX network (default: onnx's "
                             "light_resnet50.onnx), first frame and s/n at 160x48")
    parser.add_argument("--cold-start", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--keys-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_start:
        cold_start(args.cold_start)
        return
    if args.quick:
        args.steps = 5 if not args.model_layers else 20
        args.lets = 300
    if args.keys_json:
        keys_json(args)
        return
    if args.onnx is not None:
        onnx_screen(args.onnx or None, args.steps, args.quick, args.baseline)
        return
    if args.model_layers:
        model_steps(args.model_layers, args.steps, args.baseline)
        return
    if args.keys_only:
        big_keys(args)
        return

    t = time.perf_counter()
    from rvmdbg.tui.program import load_program
    import rvmdbg.tui.app  # noqa: F401 - Textual's import time counts towards startup
    import_s = time.perf_counter() - t

    t = time.perf_counter()
    small = load_program(os.path.join(ROOT, "programs", "sum_up.relay"))
    small_load = time.perf_counter() - t

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.relay")
        with open(path, "w") as f:
            f.write(big_program_text(args.lets))
        t = time.perf_counter()
        big = load_program(path)
        big_load = time.perf_counter() - t
    # as `run_screen` does: the loaded programs are frozen out of the collector's scans
    import gc
    gc.collect()
    gc.freeze()
    main_fn = big.exe.function("main")
    n = len(main_fn.instructions)

    print(f"import rvmdbg.tui.app (Textual included)     {import_s * 1000:7.0f} ms")
    print(f"load+check+compile programs/sum_up.relay     {small_load * 1000:7.0f} ms")
    print(f"load+check+compile big program ({n} instrs) {big_load * 1000:7.0f} ms")
    for label, program in (("sum_up.relay", small), (f"{n}-instruction @main", big)):
        runs = [asyncio.run(first_frame(program, (160, 48))) for _ in range(1 if args.quick else 3)]
        first = statistics.median(r[0] for r in runs) * 1000
        stop = statistics.median(r[1] for r in runs) * 1000
        print(f"{label:<30} first frame {first:6.0f} ms, first stop shown {stop:6.0f} ms"
              f"   (target < 1500 ms; after the load above)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.relay")
        with open(path, "w") as f:
            f.write(big_program_text(args.lets))
        small_path = os.path.join(ROOT, "programs", "sum_up.relay")
        for label, program_path in (("sum_up.relay", small_path),
                                    (f"{n}-instruction @main", path)):
            loaded, frame, stop = cold_start_figures(program_path, 1 if args.quick else 3)
            print(f"{label:<30} cold start: loaded {loaded * 1000:5.0f} ms, first frame "
                  f"{frame * 1000:5.0f} ms, first stop shown {stop * 1000:5.0f} ms   (target < "
                  f"1500 ms; from a fresh process's first line, imports included)")
    big_keys(args, big)


def big_keys(args, big=None) -> None:
    """The keys' figures on the big program (and the baseline's, with `--baseline`)."""
    import gc
    if big is None:
        import rvmdbg.tui.app  # noqa: F401
        big = load_big(args.lets)
        gc.collect()
        gc.freeze()
    n = len(big.exe.function("main").instructions)
    before = (baseline_figures(args.baseline, ["--lets", str(args.lets), "--steps", str(args.steps)])
              if args.baseline else None)
    figures = key_figures(big, args.steps, sizes=((160, 48), (80, 24)))
    print(f"keys on the {n}-instruction @main: s steps (into @inc and out), S is a reverse "
          f"step, n a next (staying in @main); {args.steps} each")
    print_key_figures(figures, before, args.baseline or "")


if __name__ == "__main__":
    try:
        main()
    finally:
        import shutil
        shutil.rmtree(CONFIG_DIR, ignore_errors=True)
