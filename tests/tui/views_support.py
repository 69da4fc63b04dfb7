"""Shared by the screen tests of the teaching views: contexts from the engine-side helpers,
a demo app on them, and fixed measurements so nothing timed reaches the screen."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "views"))  # view_helpers

from view_helpers import context  # noqa: E402


def fixed_measurements(ctx) -> None:
    """Measurements and cost samples made up for tests and screenshots (never timed)."""
    from rvmdbg.views.costmodel import CostSample
    from rvmdbg.views.executors import ExecutorMeasurement
    ctx.measurements = {"VM": ExecutorMeasurement("VM", 20, 52e-6, 31e-6, 3, 28, 2.1e-3)}
    if ctx.module is not None and _static(ctx):
        ctx.measurements["graph"] = ExecutorMeasurement("graph", 3, 33e-6, 27e-6, 7, 264, 0.9e-3)
    chain = []
    for size in (10, 100, 1000, 10_000, 100_000):
        kernel = 2e-5 + size * 4e-9
        chain.append(CostSample("VM", size, 13, 2.0e-3, kernel + 13 * 0.8e-6, kernel))
        chain.append(CostSample("graph", size, 2, 3.1e-3, kernel + 2 * 2.5e-6, kernel))
    lists = [CostSample("VM", n, 15 * n + 12, 1.9e-3, (15 * n + 12) * 0.45e-6, 0.0)
             for n in (10, 40, 160, 640, 2560)]
    ctx.cost_samples = {"chain": chain, "list": lists}


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
