"""Keep freed tensor memory in the process, as TVM's pooled allocator keeps freed buffers.

TVM's VM allocates storage through a pooled allocator (`memory_manager`'s `kPooled`): a freed
buffer goes back to a pool of its size and the next allocation of that size takes it, so a
model run after the first maps no new memory. rvmdbg's kernels are NumPy's, and NumPy takes
each array from the C allocator. glibc's defaults give every array of 128 KiB and more back
to the system when it is freed (a `mmap` threshold that grows only as far as the largest
array freed so far, and a top of heap trimmed past twice that), so the next kernel's output
is new memory again, and writing it faults every 4 KiB page in. Whether it does depends on
what the process freed before: a script that built ShuffleNet and ran it on the VM took 1,684
page faults a run, 16.7 ms a run against 13.0 ms with none (best of 10, 2 threads), while in
`rvmdbg profile` the import's large arrays had already raised glibc's moving threshold, and
the runs took the same time with it or without.

`keep_freed_memory()` sets glibc's two thresholds once per process (`mallopt`): arrays up to
32 MiB come from the heap, and up to 64 MiB of freed heap stays mapped for the next arrays.
So the process keeps at most 64 MiB more than it uses, the pool's price in TVM too. The
environment's own settings win (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`,
`GLIBC_TUNABLES`): then nothing is set. Other C libraries (musl, macOS) are left alone.
"""
from __future__ import annotations

import functools
import os

MMAP_THRESHOLD = 32 << 20    # glibc's own ceiling for its moving threshold on 64-bit systems
TRIM_THRESHOLD = 64 << 20    # freed heap kept mapped, at most
_M_TRIM_THRESHOLD = -1       # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")

@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's thresholds once (see the module's docstring); True when they are set (now
    or before), False when this process's C library is not glibc or the environment sets
    its own."""
    return _set_thresholds()


def _set_thresholds() -> bool:
    if any(name in os.environ for name in _ENVIRONMENT):
        return False
    try:
        import ctypes
        import platform
        if platform.libc_ver()[0] != "glibc":
            return False
        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, ValueError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # both or neither: setting one alone stops glibc moving the mmap threshold, and every
    # array above 128 KiB is mapped afresh (measured: 5,292 faults a ShuffleNet run)
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1:
        return False
    return mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
