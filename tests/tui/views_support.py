"""Shared by the screen tests of the teaching views: contexts from the engine-side helpers,
a demo app on them, and fixed measurements so nothing timed reaches the screen."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "views"))  # view_helpers

from view_helpers import context  # noqa: E402


def fixed_measurements(ctx) -> None:
    """Measurements and cost samples made up for tests and screenshots (never timed): the
    VM dearer per run but cheaper per dispatch, and faster to compile."""
    from rvmdbg.views.costmodel import CostSample, program_workload
    from rvmdbg.views.executors import ExecutorMeasurement
    ctx.measurements = {"VM": ExecutorMeasurement("VM", 20, 52e-6, 31e-6, 3, 28, 0.9e-3)}
    static = ctx.module is not None and _static(ctx)
    if static:
        ctx.measurements["graph"] = ExecutorMeasurement("graph", 3, 33e-6, 27e-6, 7, 264, 2.1e-3)
    workload = program_workload(ctx.module, ctx.entry, ctx.session_args(), static)
    samples = []
    for x, _args, runs in workload.points:
        kernel = runs * 2e-5
        n = 20 * runs if workload.fixed else 15 * x + 12
        samples.append(CostSample("VM", x, n, 0.9e-3, kernel + n * 1.05e-6, kernel))
        if static:
            samples.append(CostSample("graph", x, 3 * runs, 2.1e-3, kernel + 3 * runs * 2e-6,
                                      kernel))
    ctx.cost_samples, ctx.cost_workload = samples, workload


def _static(ctx) -> bool:
    from rvmdbg.graph import find_refusal
    return find_refusal(ctx.module, ctx.entry) is None


def demo_app(path: str, view: str = "flow", steps: int = 0, ascii_only: bool = False,
             measured: bool = False, args="default"):
    from rvmdbg.tui.views.demo import ViewsDemoApp
    ctx = context(path, args=args)
    for _ in range(steps):
        ctx.session.step()
    if measured:
        fixed_measurements(ctx)
    return ViewsDemoApp(ctx, view, ascii_only=ascii_only)


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


__all__ = ["context", "demo_app", "fixed_measurements", "settle"]
