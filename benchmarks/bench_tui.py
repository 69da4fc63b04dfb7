"""Screen latency: startup to the first frame, and a step with a 20,000-instruction listing.

Run: `python3 benchmarks/bench_tui.py` (prints figures; targets: first frame < 1.5 s, step
and refresh < 50 ms). The step is timed from calling the screen's step action to the end of
the screen refresh that shows it (`call_after_refresh`), not through `pilot.press`, which
adds about 60 ms of its own per key.

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
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


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


async def first_frame(program, size, origin: float | None = None) -> tuple[float, float]:
    """Seconds from creating the app (or from `origin`) to its first frame on screen (listing
    and source drawn, the session still being built), and to the refresh that shows the
    first stop."""
    from rvmdbg.tui.app import DebuggerApp
    loop = asyncio.get_running_loop()
    painted = loop.create_future()
    stopped = loop.create_future()
    t0 = time.perf_counter() if origin is None else origin
    app = DebuggerApp(program, [], config_dir=CONFIG_DIR, freeze_heap=True)

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


async def step_latency(program, size, steps: int, action: str) -> list[float]:
    """Seconds per step action, each from the action to the refresh after it."""
    from rvmdbg.tui.app import DebuggerApp
    app = DebuggerApp(program, [], config_dir=CONFIG_DIR, freeze_heap=True)
    times = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen_stack[0]
        loop = asyncio.get_running_loop()
        if action == "action_rstep":
            # go forward first, so there is history to step back through
            screen.drive("forward", lambda s: s.step(steps + 10), threaded=False)
            await pilot.pause()
        for _ in range(steps):
            done = loop.create_future()
            t0 = time.perf_counter()
            getattr(screen, action)()
            if action == "action_next":
                # next runs in the worker thread: wait for its stop to reach the screen
                await app.workers.wait_for_complete()
                while screen.running:
                    await asyncio.sleep(0)
            app.call_after_refresh(lambda: done.done() or done.set_result(time.perf_counter()))
            t1 = await done
            times.append(t1 - t0)
        assert screen.session.step_count > 0 or action != "action_step"
    return times


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


def report(name: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    print(f"{name:<44} median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   "
          f"max {ms[-1]:7.1f} ms   (n={len(ms)})")


def model_steps(layers: int, steps: int) -> None:
    """Step latency at 160x48 on a model with weights in #[metadata]: every stop shows tensor
    registers (summaries with statistics) rather than scalars."""
    from rvmdbg.tui.program import load_program
    from rvmdbg.workloads import build
    import rvmdbg.tui.app  # noqa: F401
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.relay")
        model = build("transformer_block", small=True, layers=layers)
        header, _, rest = model.text.partition("\n")
        args = " ".join(json.dumps(a.tolist()).replace(" ", "") for a in model.inputs)
        with open(path, "w") as f:
            f.write(f"{header}\n// args: {args}\n{rest}")
        t = time.perf_counter()
        program = load_program(path)
        load_s = time.perf_counter() - t
    import gc
    gc.collect()
    gc.freeze()
    kernels = sum(1 for fn in program.exe.functions for ins in fn.instructions
                  if type(ins).__name__ == "InvokePacked")
    print(f"transformer, {layers} layers: {kernels} kernel calls, load+check+compile "
          f"{load_s * 1000:.0f} ms")
    for action, label in (("action_step", "s"), ("action_rstep", "S"), ("action_next", "n")):
        times = asyncio.run(step_latency(program, (160, 48), steps, action))
        report(f"{label} on the {kernels}-kernel model, 160x48", times)
    print("each: the action until the screen refresh that shows it; target < 50 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lets", type=int, default=9000, help="let lines in the generated @main")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--quick", action="store_true",
                        help="a small program and a few steps (a smoke run, not a measurement)")
    parser.add_argument("--model-layers", type=int, metavar="N",
                        help="instead: step latency on a transformer of N layers printed as TVM "
                             "prints it (16 kernels a layer; 32 layers = 512 kernels)")
    parser.add_argument("--cold-start", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_start:
        cold_start(args.cold_start)
        return
    if args.model_layers:
        model_steps(args.model_layers, 20 if args.quick else args.steps)
        return
    if args.quick:
        args.lets, args.steps = 300, 5

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
    for size in ((160, 48), (80, 24)):
        times = asyncio.run(step_latency(big, size, args.steps, "action_step"))
        report(f"s (into @inc and out), {size[0]}x{size[1]}", times)
    times = asyncio.run(step_latency(big, (160, 48), args.steps, "action_rstep"))
    report("S (reverse step), 160x48", times)
    times = asyncio.run(step_latency(big, (160, 48), args.steps, "action_next"))
    report(f"n (next, staying in the {n}-instr @main), 160x48", times)
    print("each: the action until the screen refresh that shows it; target < 50 ms")


if __name__ == "__main__":
    try:
        main()
    finally:
        import shutil
        shutil.rmtree(CONFIG_DIR, ignore_errors=True)
