"""The storage figures of one VM run, as `rvmdbg run --stats`, `bench_models.py` and View 2
print them: the pool's (allocated, reused, peak, held) and, for a program the static graph
executor can run, the VM's peak against the graph executor's memory plan."""
from __future__ import annotations

from rvmdbg.i18n import _


def graph_plan_bytes(module) -> int | None:
    """The graph executor's planned pool for kernel outputs, or None when the program is not
    one the graph executor runs (control flow, dynamic shapes, ...)."""
    from rvmdbg.graph import lower_to_graph, plan_memory
    try:
        return plan_memory(lower_to_graph(module)).intermediate_bytes()[0]
    except Exception:  # noqa: BLE001 (any refusal of the lowering means: no static plan)
        return None


def stepped_peak(vm, entry: str, args) -> int:
    """The most storage bytes the frames owned at once, one step at a time: the figure of the
    allocator without a pool (`pool=False`), which frees a storage's bytes at its kill."""
    vm.start(entry, list(args))
    peak = 0
    while not vm.halted:
        vm.step()
        if vm.live_bytes > peak:
            peak = vm.live_bytes
    return peak


def ratio_line(peak: int, plan: int) -> str:
    """`VM peak / graph plan: R.RRx` (scripts read this line: it is not translated)."""
    return f"VM peak / graph plan: {peak / plan:.2f}x" if plan else "VM peak / graph plan: -"


def stats_lines(stats: dict, steps: int, plan: int | None, unpooled_peak: int | None = None
                ) -> list[str]:
    """The lines `run --stats` prints after the result."""
    out = [_("steps: {n}").format(n=steps)]
    if stats.get("pooled"):
        out.append(_("storage pool: allocated {bytes} bytes in {n} buffers; reused {reused} "
                     "times ({rbytes} bytes); released {released}").format(
            bytes=stats["allocated"], n=stats["allocations"], reused=stats["reused"],
            rbytes=stats["reused_bytes"], released=stats["released"]))
        out.append(_("storage pool: peak {peak} bytes; holds {held} bytes ({free} free) at "
                     "the end").format(peak=stats["peak"], held=stats["held"],
                                       free=stats["free"]))
        peak = stats["peak"]
    else:
        peak = unpooled_peak or 0
        out.append(_("storage without a pool: peak {peak} bytes live").format(peak=peak))
    if plan is not None:
        out.append(_("graph executor's plan: {plan} bytes").format(plan=plan))
        out.append(ratio_line(peak, plan))
    return out
