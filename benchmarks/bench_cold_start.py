"""Cold start of the debugger screen: from starting a fresh Python to its first frame.

Run: `python3 benchmarks/bench_cold_start.py [--baseline DIR] [--runs N]` (prints figures;
targets from issue 15: first frame < 0.5 s on programs/sum_up.relay and < 1.0 s on the
20,160-instruction program of bench_tui.py, on a quiet machine).

Each run is a new process doing what `rvmdbg PROGRAM` does before the screen is up: the
command line's imports, load + check + compile, the keys file, `gc.freeze`, the app (headless,
160x48). The wall time counts from just before the process is started to the first frame (the
first refresh, source and listing drawn) and to the refresh that shows the first stop; the CPU
time is the process's own until the first frame, less noisy on a busy machine.

Two settings, because they differ by the compiling of rvmdbg's own modules: "bytecode cached"
(`__pycache__` written by a first run, as an installed package has it) and "no bytecode
cache" (PYTHONDONTWRITEBYTECODE=1 and no `__pycache__` under rvmdbg/, as in an environment
that sets that variable; the installed libraries keep theirs).

`--baseline DIR` also measures another checkout (e.g. `git archive main | tar -x -C DIR`),
runs alternating with this one's, and prints both: before and after in one run. The
`__pycache__` folders under DIR/rvmdbg and this checkout's rvmdbg/ are deleted for the
no-cache setting (they are regenerated).
"""
from __future__ import annotations

import time

SPAWNED_AT = time.time()  # the child's own start, for the record (the parent's clock counts)

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZE = (160, 48)


def child(path: str) -> None:
    """In a fresh process (the checkout on sys.path first): as `rvmdbg PATH` until the first
    stop is on screen; prints `epoch_at_first_frame epoch_at_first_stop cpu_at_first_frame`."""
    import asyncio
    import gc
    import rvmdbg.cli  # noqa: F401  (what `python -m rvmdbg` imports first)
    from rvmdbg.tui.app import DebuggerApp
    from rvmdbg.tui import program as loading
    from rvmdbg.tui.keymap import load_keymap
    config = tempfile.mkdtemp(prefix="bench_cold_start_")
    keymap = load_keymap(None, config)
    if hasattr(loading, "load_program_kept"):  # what run_screen calls
        program = loading.load_program_kept(path)
    else:  # a checkout from before it (--baseline): run_screen loaded, then froze
        program = loading.load_program(path)
        gc.freeze()
    marks: dict[str, float] = {}

    async def run() -> None:
        app = DebuggerApp(program, [], config_dir=config, freeze_heap=True, keymap=keymap)
        loop = asyncio.get_running_loop()
        stopped = loop.create_future()
        begin = app.begin

        def first_frame_then_begin() -> None:
            # the screen calls `begin` right after its first refresh: that was the first frame
            marks["frame"], marks["cpu"] = time.time(), time.process_time()
            begin()
            app.call_after_refresh(lambda: stopped.done() or stopped.set_result(time.time()))
        app.begin = first_frame_then_begin
        async with app.run_test(size=SIZE):
            marks["stop"] = await stopped
    asyncio.run(run())
    shutil.rmtree(config, ignore_errors=True)
    print(f"{marks['frame']:.6f} {marks['stop']:.6f} {marks['cpu']:.6f}")


def drop_bytecode(root: str) -> None:
    for folder, dirs, _ in os.walk(os.path.join(root, "rvmdbg")):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(folder, "__pycache__"), ignore_errors=True)
            dirs.remove("__pycache__")


def one_run(root: str, path: str, cached: bool) -> tuple[float, float, float]:
    """(first frame, first stop, CPU to the first frame) in seconds, for the checkout `root`."""
    env = dict(os.environ, PYTHONPATH=root)
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        drop_bytecode(root)
    started = time.time()
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path],
                         capture_output=True, text=True, env=env, cwd=root)
    if out.returncode != 0:
        raise SystemExit(f"the run in {root} failed:\n{out.stderr[-3000:]}")
    frame, stop, cpu = (float(x) for x in out.stdout.split()[-3:])
    return frame - started, stop - started, cpu


def figures(roots: list[str], path: str, cached: bool, runs: int) -> list[tuple]:
    """Per root, the medians over `runs` runs that alternate between the roots."""
    if cached:
        for root in roots:  # a first run writes the caches
            one_run(root, path, cached=True)
    results: list[list] = [[] for _ in roots]
    for _ in range(runs):
        for i, root in enumerate(roots):
            results[i].append(one_run(root, path, cached))
    return [tuple(statistics.median(r[k] for r in rs) for k in range(3)) for rs in results]


def big_program(folder: str) -> str:
    sys.path.insert(0, HERE)
    from bench_tui import big_program_text  # the 20,160-instruction program of issue 15
    path = os.path.join(folder, "big.relay")
    with open(path, "w") as f:
        f.write(big_program_text(9000))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", metavar="DIR", help="another checkout to measure as well")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median; default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="sum_up.relay only (with --runs 1: a smoke run, not a measurement)")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    roots = ([os.path.abspath(args.baseline)] if args.baseline else []) + [ROOT]
    names = (["before", "after"] if args.baseline else ["this checkout"])
    runs = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        programs = [("sum_up.relay", os.path.join(ROOT, "programs", "sum_up.relay"), 0.5)]
        if not args.quick:
            programs.append(("20,160-instr @main", big_program(tmp), 1.0))
        print(f"median of {runs} runs, {SIZE[0]}x{SIZE[1]}; wall from process start "
              f"(CPU of the process to the first frame)")
        for cached in (False, True):
            setting = "bytecode cached" if cached else "no bytecode cache"
            for label, path, target in programs:
                for name, (frame, stop, cpu) in zip(names, figures(roots, path, cached, runs)):
                    print(f"{label:<20} {setting:<18} {name:<14} first frame {frame * 1000:6.0f} ms "
                          f"(CPU {cpu * 1000:5.0f} ms), first stop {stop * 1000:6.0f} ms   "
                          f"(target < {target * 1000:.0f} ms)")
    print(relay_path_imports_tvm(os.path.join(ROOT, "programs", "sum_up.relay")))
    print("load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


def relay_path_imports_tvm(path: str) -> str:
    """Whether opening a Relay program for the screen imports apache-tvm (it must not: tvm is
    imported only when a Relax executable is opened, issue 31), and what `import tvm` alone
    costs in a fresh process (what the Relay path's start-up is spared)."""
    code = ("import sys, rvmdbg.cli\n"
            "from rvmdbg.tui import program\n"
            f"program.load_program({path!r})\n"
            "print('tvm' in sys.modules, 'rvmdbg.relax' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"the import check failed:\n{out.stderr[-3000:]}")
    tvm_in, relax_in = out.stdout.split()[-2:]
    t = time.time()
    probe = subprocess.run([sys.executable, "-c", "import tvm"], capture_output=True, env=env)
    cost = (f"{(time.time() - t) * 1000:.0f} ms for `import tvm` in a fresh process"
            if probe.returncode == 0 else "apache-tvm is not installed")
    return (f"Relay path imports tvm: {'yes' if tvm_in == 'True' else 'no'}, rvmdbg.relax: "
            f"{'yes' if relax_in == 'True' else 'no'} (spared: {cost})")


if __name__ == "__main__":
    main()
