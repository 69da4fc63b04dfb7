"""The static memory planner: storage ids for a graph's entries, as TVM's GraphPlanMemory.

TVM's planner (`src/relay/backend/graph_plan_memory.cc`, `StorageAllocator`):

- a first walk counts each entry's uses: one per appearance as a kernel input, plus one per
  appearance among the heads (outputs must outlive the run);
- inputs and constants get a block each that is never freed;
- walking the kernels in execution order, each output asks for a block of its size: among the
  free blocks of size in [size/16, size*16] it takes the smallest that is big enough, else the
  largest smaller one (grown to the size), else a new block;
- the inputs are claimed before the kernel's outputs are requested, so a kernel never writes
  into a block it reads; then an output nobody uses is freed at once, and each input's count
  drops by one, its block returning to the free list at zero;
- a reshape-only kernel takes no block: its output aliases its input's block, which stays
  busy until the uses of both are done.

`MemoryPlan.check(graph)` verifies a plan independently of how it was made: every entry fits
its block, and no two entries that are live at the same time share one (aliases excepted).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from rvmdbg.graph.nodes import KERNEL
from rvmdbg.i18n import _

# `Graph` in the annotations is rvmdbg.graph.graph.Graph, named but not imported: the graph
# plans itself with this module, so importing it back would make a circle.

# TVM's match_range_: blocks within this factor of the request may be reused
MATCH_RANGE = 16


class PlanError(Exception):
    """A memory plan that would let two live tensors share memory, or not fit a tensor."""


@dataclass
class MemoryPlan:
    """Storage ids per entry and the size of each storage block."""

    storage_ids: list                 # per entry
    block_sizes: list                 # per storage id, in bytes
    entry_bytes: list                 # per entry, in bytes
    aliased: dict = field(default_factory=dict)  # entry -> the entry whose storage it reuses
    block_kinds: list = field(default_factory=list)  # per storage id: input/constant/kernel

    @property
    def pool_bytes(self) -> int:
        """Bytes the executor allocates: the sum of all blocks."""
        return sum(self.block_sizes)

    @property
    def tensor_bytes(self) -> int:
        """Bytes one buffer per entry would take (the plan without any reuse)."""
        return sum(self.entry_bytes)

    @property
    def reuse_ratio(self) -> float:
        return self.tensor_bytes / self.pool_bytes if self.pool_bytes else 1.0

    @property
    def num_blocks(self) -> int:
        return len(self.block_sizes)

    def intermediate_bytes(self) -> tuple[int, int]:
        """(pool bytes, tensor bytes) of kernel outputs only: what planning can save."""
        pool = sum(s for s, k in zip(self.block_sizes, self.block_kinds) if k == KERNEL)
        tensors = sum(b for e, b in enumerate(self.entry_bytes)
                      if self.block_kinds[self.storage_ids[e]] == KERNEL)
        return pool, tensors

    def summary(self) -> str:
        inter_pool, inter_tensors = self.intermediate_bytes()
        # the labels are padded in each language so that the figures line up
        lines = [
            _("memory plan: {blocks} storage blocks for {entries} entries").format(
                blocks=self.num_blocks, entries=len(self.storage_ids)),
            _("  pool bytes:        {n}").format(n=self.pool_bytes),
            _("  sum of tensors:    {n}").format(n=self.tensor_bytes),
            _("  reuse ratio:       {ratio}x (saves {n} bytes)").format(
                ratio=f"{self.reuse_ratio:.2f}", n=self.tensor_bytes - self.pool_bytes),
            _("  kernel outputs:    {blocks} bytes of blocks for {tensors} bytes of "
              "tensors").format(blocks=inter_pool, tensors=inter_tensors),
        ]
        if self.aliased:
            lines.append(_("  aliased entries:   {n} (reshape-only kernels)").format(
                n=len(self.aliased)))
        return "\n".join(lines)

    # ---- verification ----

    def live_ranges(self, graph: Graph) -> list:
        """Per entry, [first, last] node positions during which its storage must hold it.
        Inputs and constants live from before the first node; heads to after the last."""
        end = len(graph.nodes)
        first = [0] * graph.num_entries
        last = [0] * graph.num_entries
        for nid, node in enumerate(graph.nodes):
            for i in range(node.num_outputs):
                eid = graph.entry_id(nid, i)
                first[eid] = -1 if node.kind != KERNEL else nid
                last[eid] = end if node.kind != KERNEL else nid
            for src, idx in node.inputs:
                eid = graph.entry_id(src, idx)
                last[eid] = max(last[eid], nid)
        for src, idx in graph.heads:
            last[graph.entry_id(src, idx)] = end
        return [[f, l] for f, l in zip(first, last)]

    def check(self, graph: Graph) -> None:
        """Raise PlanError if an entry does not fit its block or two live entries share one."""
        n = graph.num_entries
        if len(self.storage_ids) != n:
            raise PlanError(f"the plan has {len(self.storage_ids)} storage ids for {n} entries")
        ranges = self.live_ranges(graph)
        # an alias and what it aliases are one value: its range is the union of theirs
        root = list(range(n))

        def find(e):
            while root[e] != e:
                root[e] = root[root[e]]
                e = root[e]
            return e
        for e, target in self.aliased.items():
            root[find(e)] = find(target)
        groups: dict = {}
        for e in range(n):
            sid = self.storage_ids[e]
            if not 0 <= sid < len(self.block_sizes):
                raise PlanError(f"entry {e} has storage id {sid}, outside the pool")
            if graph.entry_bytes(e) > self.block_sizes[sid]:
                raise PlanError(f"entry {e} needs {graph.entry_bytes(e)} bytes but storage "
                                f"{sid} has {self.block_sizes[sid]}")
            g = find(e)
            if g in groups:
                lo, hi, _sid = groups[g]
                if self.storage_ids[g] != sid:
                    raise PlanError(f"entry {e} aliases entry {g} but has another storage")
                groups[g] = [min(lo, ranges[e][0]), max(hi, ranges[e][1]), sid]
            else:
                groups[g] = [ranges[e][0], ranges[e][1], sid]
        by_block: dict = {}
        for g, (lo, hi, sid) in groups.items():
            by_block.setdefault(sid, []).append((lo, hi, g))
        for sid, spans in by_block.items():
            spans.sort()
            for (lo1, hi1, g1), (lo2, hi2, g2) in zip(spans, spans[1:]):
                if lo2 <= hi1:
                    raise PlanError(f"entries {g1} (live {lo1}..{hi1}) and {g2} (live "
                                    f"{lo2}..{hi2}) share storage {sid} while both are live")


class _Block:
    __slots__ = ("sid", "max_bytes", "refs", "kind")

    def __init__(self, sid: int, size: int, kind: str):
        self.sid = sid
        self.max_bytes = size
        self.refs = 0
        self.kind = kind


class _FreeList:
    """Free blocks ordered by size, equal sizes in the order they were freed (a multimap)."""

    def __init__(self):
        self.keys: list = []     # (max_bytes, sequence)
        self.blocks: list = []
        self.seq = 0

    def insert(self, block: _Block) -> None:
        key = (block.max_bytes, self.seq)
        self.seq += 1
        i = bisect.bisect_right(self.keys, key)
        self.keys.insert(i, key)
        self.blocks.insert(i, block)

    def take(self, size: int) -> _Block | None:
        """The smallest free block in [size, size*16], else the largest in [size/16, size)."""
        mid = bisect.bisect_left(self.keys, (size, -1))
        end = bisect.bisect_right(self.keys, (size * MATCH_RANGE, self.seq))
        if mid < end:
            i = mid
        else:
            begin = bisect.bisect_left(self.keys, (size // MATCH_RANGE, -1))
            if begin >= mid:
                return None
            i = mid - 1
        del self.keys[i]
        return self.blocks.pop(i)


def plan_memory(graph: Graph) -> MemoryPlan:
    """TVM's static plan for graph: see the module docstring."""
    n = graph.num_entries
    entry_bytes = [graph.entry_bytes(e) for e in range(n)]
    uses = [0] * n
    for node in graph.nodes:
        for src, idx in node.inputs:
            uses[graph.entry_id(src, idx)] += 1
    for src, idx in graph.heads:
        uses[graph.entry_id(src, idx)] += 1

    blocks: list = []
    token: list = [None] * n
    free = _FreeList()
    aliased: dict = {}

    def new_block(size: int, kind: str) -> _Block:
        b = _Block(len(blocks), size, kind)
        blocks.append(b)
        return b

    def release_if_unused(b: _Block) -> None:
        if b.refs == 0:
            free.insert(b)

    for nid, node in enumerate(graph.nodes):
        base = graph.entry_id(nid)
        if node.kind != KERNEL:
            # inputs and constants: their own block, never returned to the free list
            b = new_block(entry_bytes[base], node.kind)
            b.refs = uses[base] + 1
            token[base] = b
            continue
        args = [token[graph.entry_id(src, idx)] for src, idx in node.inputs]
        if node.reshape_only:
            src = graph.entry_id(*node.inputs[0])
            b = args[0]
            b.refs += uses[base]
            token[base] = b
            aliased[base] = src
        else:
            for i in range(node.num_outputs):
                eid = base + i
                size = entry_bytes[eid]
                b = free.take(size)
                if b is None:
                    b = new_block(size, KERNEL)
                else:
                    b.max_bytes = max(b.max_bytes, size)
                b.refs = uses[eid]
                token[eid] = b
        for i in range(node.num_outputs):
            release_if_unused(token[base + i])
        for b in args:
            b.refs -= 1
            release_if_unused(b)

    return MemoryPlan(storage_ids=[t.sid for t in token],
                      block_sizes=[b.max_bytes for b in blocks],
                      entry_bytes=entry_bytes, aliased=aliased,
                      block_kinds=[b.kind for b in blocks])
