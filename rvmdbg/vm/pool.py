"""The VM's pooled storage allocator (after TVM's `PooledAllocator`).

`alloc_storage` asks the pool for a buffer: its size is rounded up to whole pages (4096
bytes, TVM's page size; a request under a page keeps its size), and a buffer of that rounded size that an earlier storage gave back
is handed out again; only when none is free does the pool grow. Growing past the most it ever
held while it keeps free buffers of other sizes, the pool first gives free buffers back,
largest first, until it fits under that mark or has none (TVM's pool gives all of them back,
`ReleaseAll`, when the device refuses an allocation): so it never holds more at once than an
allocator without a pool whose storages have their rounded sizes. A storage goes back to the
pool when `kill_register` kills it (ManifestLifetimes and MemoryPlan kill a storage after the
last use of every tensor laid out in it). What it holds (in use + free) is the VM's storage
footprint, and its peak is the figure compared with the graph executor's plan. A frame that returns still owning storages (its result's
tensors live on in them) hands them out of the pool: those bytes are counted with the tensors
that outlived their storage (`rvmdbg.vm.escaped`), as without the pool.

Only sizes are real (kernels write fresh arrays), so a reused buffer never changes a tensor
made before: a past state shown by time travel keeps its values. Undoing a step and restoring
a checkpoint put back the pool's `state()` (one entry per distinct free size) and each
frame's `ByteAccount.pooled`.
"""
from __future__ import annotations

PAGE_SIZE = 4096


def round_to_page(nbytes: int) -> int:
    """The size the pool hands out for a request of `nbytes`: rounded up to whole pages as
    TVM rounds, except below one page, which is pooled at its own size (TVM rounds those up
    too; rvmdbg does not, so that --max-bytes still means bytes for scalar programs)."""
    if nbytes < PAGE_SIZE:
        return nbytes
    return (nbytes + PAGE_SIZE - 1) // PAGE_SIZE * PAGE_SIZE


class StoragePool:
    """Free buffers by rounded size, and the figures `memory_stats()` reports."""

    __slots__ = ("vm", "free", "in_use", "in_use_raw", "held", "peak", "allocated",
                 "allocations", "reused", "reused_bytes", "released", "escaped", "trimmed", "trims",
                 "buffers", "last_buffer")

    def __init__(self, vm=None):
        self.vm = vm              # its `pool_slack` is kept equal to held - in_use_raw
        self.free: dict[int, list] = {}  # rounded size -> numbers of the free buffers
        self.buffers = 0          # buffers numbered so far (s0, s1, ...)
        self.last_buffer = None   # the number of the buffer `take` handed out
        self.in_use = 0           # rounded bytes of the storages handed out
        self.in_use_raw = 0       # the bytes those storages asked for
        self.held = 0             # in use + free: what --max-bytes counts
        self.peak = 0             # the most the pool held at once
        self.allocated = 0        # bytes the pool allocated anew (it never frees)
        self.allocations = 0      # buffers allocated anew
        self.reused = 0           # requests served by a freed buffer
        self.reused_bytes = 0
        self.released = 0         # storages given back
        self.escaped = 0          # bytes handed out of the pool by returning frames
        self.trimmed = 0          # free bytes given back rather than grow past the peak
        self.trims = 0

    def reset(self) -> None:
        self.__init__(self.vm)
        if self.vm is not None:
            self.vm.pool_slack = 0

    # ------------------------------------------------------------ operations

    def reuses(self, size: int) -> bool:
        """Whether a request of `size` bytes would be served by a free buffer."""
        return self.free.get(round_to_page(size), 0) > 0

    def growth(self, size: int) -> int:
        """How much what the pool holds changes to serve `size` bytes (0 when a buffer of
        its rounded size is free; negative when it gives back its free buffers first)."""
        r = round_to_page(size)
        if self.free.get(r):
            return 0
        return r - self._trim(r, apply=False)

    def _trim(self, r: int, apply: bool) -> int:
        """Bytes of free buffers to give back (largest first) before growing by `r`."""
        over = self.held + r - self.peak
        if over <= 0 or self.held == self.in_use:
            return 0
        gone = 0
        for size in sorted(self.free, reverse=True):
            ids = self.free[size]
            n = len(ids)
            while n and gone < over:
                n -= 1
                gone += size
            if apply:
                if n:
                    self.free[size] = ids[:n]
                else:
                    del self.free[size]
            if gone >= over:
                break
        return gone

    def take(self, size: int) -> int:
        """Serve `size` bytes; the rounded size (what the frame's account holds)."""
        r = round_to_page(size)
        self._apply("reuse" if self.free.get(r) else "new", r, size)
        return r

    def give(self, size: int, buffer=None) -> int:
        r = round_to_page(size)
        self.last_buffer = buffer
        self._apply("give", r, size)
        return r

    def drop(self, rounded: int, raw: int) -> None:
        """A returning frame's storages leave the pool with the tensors in them."""
        if rounded or raw:
            self._apply("drop", rounded, raw)

    def _apply(self, kind: str, r: int, size: int) -> None:
        if kind == "reuse":
            ids = self.free[r]
            self.last_buffer = ids[-1]
            if len(ids) > 1:
                self.free[r] = ids[:-1]
            else:
                del self.free[r]
            self.reused += 1
            self.reused_bytes += r
            self.in_use += r
            self.in_use_raw += size
        elif kind == "new":
            gone = self._trim(r, apply=True)  # rather than grow past the peak
            if gone:
                self.trimmed += gone
                self.trims += 1
                self.held -= gone
            self.held += r
            self.last_buffer = self.buffers
            self.buffers += 1
            self.allocated += r
            self.allocations += 1
            self.in_use += r
            self.in_use_raw += size
            if self.held > self.peak:
                self.peak = self.held
        elif kind == "give":
            self.free[r] = self.free.get(r, []) + [self.last_buffer]
            self.released += 1
            self.in_use -= r
            self.in_use_raw -= size
        else:  # drop
            self.in_use -= r
            self.in_use_raw -= size
            self.held -= r
            self.escaped += r
        if self.vm is not None:
            self.vm.pool_slack = self.held - self.in_use_raw

    def state(self) -> tuple:
        """Everything the pool is, for a checkpoint (small: one entry per distinct size)."""
        return (dict(self.free), self.buffers, self.in_use, self.in_use_raw, self.held, self.peak,
                self.allocated, self.allocations, self.reused, self.reused_bytes,
                self.released, self.escaped, self.trimmed, self.trims)

    def restore(self, state: tuple) -> None:
        (free, self.buffers, self.in_use, self.in_use_raw, self.held, self.peak, self.allocated,
         self.allocations, self.reused, self.reused_bytes, self.released,
         self.escaped, self.trimmed, self.trims) = state
        self.free = dict(free)
        if self.vm is not None:
            self.vm.pool_slack = self.held - self.in_use_raw

    def stats(self) -> dict:
        """The figures `VirtualMachine.memory_stats()` returns."""
        return {"pooled": True, "allocated": self.allocated, "allocations": self.allocations,
                "reused": self.reused, "reused_bytes": self.reused_bytes,
                "released": self.released, "held": self.held, "in_use": self.in_use,
                "free": self.held - self.in_use, "peak": self.peak, "escaped": self.escaped,
                "trimmed": self.trimmed, "trims": self.trims,
                "page_size": PAGE_SIZE}
