"""How many BLAS/OpenMP threads the kernels may use (`--threads N`), through threadpoolctl.

On a busy 2-core machine NumPy's BLAS threads spin against the other load: issue 30 measured
MobileNet on the VM at 48 ms with one thread and 546 ms with two. So the default never
oversubscribes: `min(2, cores)`, and 1 when the 1-minute load average already fills the cores
but one (other work is running). `limited(n)` holds the limit for a block and undoes it.
"""
from __future__ import annotations

import contextlib
import os

from rvmdbg.i18n import _


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads() -> int:
    """min(2, cores), or 1 when the load average says the cores are busy already."""
    n = cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    if n <= 1 or load >= n - 1:
        return 1
    return min(2, n)


def check_threads(n: int) -> int:
    """`n` if it is a thread count (1 to 1024), else ValueError with the message."""
    if not 1 <= n <= 1024:
        raise ValueError(_("the thread count must be between 1 and 1024, got {n}").format(n=n))
    return n


@contextlib.contextmanager
def limited(n: int | None):
    """Run the block with at most `n` threads in every BLAS and OpenMP pool threadpoolctl
    finds (`None`: the default above); yields the count in force."""
    count = default_threads() if n is None else n
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # no threadpoolctl: the pools keep what the environment set
        yield count
        return
    with threadpool_limits(limits=count):
        yield count


def hold(n: int | None):
    """Set the limit for as long as a session lives (the DAP adapter's): returns (the count
    in force, `release()` that puts the pools back as they were)."""
    count = default_threads() if n is None else n
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return count, lambda: None
    limiter = threadpool_limits(limits=count)
    return count, limiter.restore_original_limits
