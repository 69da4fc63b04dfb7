"""What a fused block is: the contract between `VirtualMachine.run()` and its fast paths.

A block (`rvmdbg/vm/fastpath.py`: scalar runs and kernel calls; `rvmdbg/vm/regions.py`:
whole regions of tensor code) is one handler standing for up to `MAX_BLOCK` instructions.
When it cannot finish it raises `Partial` (instruction `done` failed) or, for a region whose
`if` branched away, `RegionExit`; `one_by_one` is every block's slow path.
"""
from __future__ import annotations

# ---------------------------------------------------------------- fused blocks, for run() only
#
# `run()` may execute straight-line instruction sequences as one handler (a "block"),
# which saves dispatches and the tensor placeholders a kernel overwrites at once. A block
# has exactly the effect of its instructions in order and counts as that many steps: the
# loop only enters one when all of it fits before `end` and no breakpoint lies inside it,
# and a block that cannot finish re-runs its instructions' own handlers one by one, so a
# failure stops at the failing instruction with the state it would have had. `step()`
# never uses blocks. The bytecode is unchanged.

MAX_BLOCK = 128  # instructions in the longest block (a region: rvmdbg/vm/regions.py)


class Partial(Exception):
    """Raised by a block whose instruction `done` (counted from the block's start) failed
    with `error` after the ones before it completed."""

    def __init__(self, done: int, error: BaseException):
        super().__init__(done, error)
        self.done = done
        self.error = error


class RegionExit(Exception):
    """Raised by a region (rvmdbg/vm/regions.py) whose `if` inside it branched away from the
    rest of it: only its first `done` instructions ran, and execution goes on at `pc`."""

    def __init__(self, done: int, pc: int):
        super().__init__(done, pc)
        self.done = done
        self.pc = pc


def one_by_one(singles: tuple):
    """A block's slow path: its instructions' own handlers in order (the last one's result)."""
    def replay(regs):
        nxt = None
        for done, handler in enumerate(singles):
            try:
                nxt = handler(regs)
            except Exception as exc:
                raise Partial(done, exc) from None
        return nxt
    return replay
