"""Execution history: sparse checkpoints of the VM plus deterministic replay.

Design (measured in benchmarks/bench_history.py). The program is deterministic, so every
past state can be recomputed; history only has to make that fast:

- Checkpoints are placed by the cost of what they save: while the program runs forward on the
  VM's fast path (`run(until_step=...)` in chunks that end where the next checkpoint is due), a
  checkpoint is taken once the running time since the last one reaches `min_seconds` (or what
  taking one costs, if more), or after `interval` steps, whichever comes first. Near heavy
  steps the run goes one step at a time, so a checkpoint lands right after each one. Going
  back to step t restores the newest checkpoint at or before t and replays at most that much
  work: tens of microseconds of cheap steps, so on a model whose heavy steps are kernel calls
  a reverse step never replays one, while a cheap loop still gets one every `interval` steps.
- A checkpoint is shallow. Register values are immutable (tensors are never written in
  place, ADT values and closures are frozen), so a frame is saved as a tuple of references.
  Frames form a persistent chain (`FrameNode.parent`): a checkpoint re-saves only the frames
  that can have changed since the previous one and shares the rest, so a stack a hundred
  thousand frames deep costs nothing per checkpoint once saved. Activations are identified by
  `Frame.serial` (the VM numbers pushes; the same activation has the same serial on every
  replay): if the frame at depth d+1 is the same activation at both times, the frames below
  it were suspended all along and are unchanged.
- The only mutable runtime objects are reference cells (and the released flag of storage
  buffers, saved with the frame that holds them). `RefJournal` wraps the `ref_create` and
  `ref_write` kernels: every creation and write is an entry (cell, old, new) on a timeline,
  a checkpoint records the journal position, and restoring moves the position, undoing or
  redoing cell writes. During replay `ref_create` hands back the cell created at that point
  the first time, so cells keep their identity across replays.
- A checkpoint's bytes are the tensors it keeps alive that the checkpoint before it did not
  already hold (so one per kernel call on a model costs the activations it saves, once).
- A memory budget (`budget` bytes, estimated from what each checkpoint holds) drops the oldest
  checkpoints when exceeded, which moves `start` (the earliest step one can go back to)
  forward; it never stops the program.
"""
from __future__ import annotations

import bisect
import copy
import gc
import time
from itertools import compress
from operator import is_not

import numpy as np

from rvmdbg.values import RefCell
from rvmdbg.vm.executable import Kernel
from rvmdbg.vm.objects import StorageObject

DEFAULT_INTERVAL = 2048
DEFAULT_BUDGET = 256 * 2 ** 20
# Running time after which a checkpoint is due, and how many times the cost of taking one the
# replay it saves must be worth (a frame of a thousand registers costs tens of microseconds).
DEFAULT_MIN_SECONDS = 0.00005
_TAKE_FACTOR = 1
# After a heavy step, how many steps run one at a time (a model calls a kernel every few).
_HEAVY_WINDOW = 64

# Estimated bytes of the Python objects behind one saved frame and one journal entry.
_NODE_BYTES = 200
_SLOT_BYTES = 8
_ENTRY_BYTES = 120
_CHECKPOINT_BYTES = 200

_CREATED = object()  # the "old value" of a journal entry that created its cell


def _tensor_bytes(values, free) -> int:
    """Bytes of the tensors among `values` a checkpoint keeps alive (constants excluded)."""
    return sum(v.nbytes for v in values
               if type(v) is np.ndarray and v.size > 8 and id(v) not in free)


class RefJournal:
    """The timeline of reference-cell creations and writes, with a movable position.

    `entries[i - base]` is the i-th cell operation since the program started; `cursor` is the
    number of operations performed in the current state. Positions before `base` were trimmed
    with the checkpoints that needed them.
    """

    def __init__(self):
        self.entries: list[tuple] = []
        self.base = 0
        self.cursor = 0

    def __len__(self) -> int:
        return self.base + len(self.entries)

    def seek(self, target: int) -> None:
        """Undo or redo cell operations until `cursor == target`."""
        entries, base = self.entries, self.base
        if target < base or target > base + len(entries):
            raise ValueError(f"journal position {target} outside {base}..{base + len(entries)}")
        while self.cursor > target:
            self.cursor -= 1
            cell, old, _new = entries[self.cursor - base]
            if old is not _CREATED:
                cell.value = old
        while self.cursor < target:
            cell, _old, new = entries[self.cursor - base]
            cell.value = new
            self.cursor += 1

    def trim(self, position: int) -> None:
        """Forget the entries before `position` (no checkpoint can go back past it)."""
        drop = min(position, self.cursor) - self.base
        if drop > 0:
            del self.entries[:drop]
            self.base += drop

    def reset(self) -> None:
        self.entries.clear()
        self.base = 0
        self.cursor = 0

    def _next_logged(self, is_create: bool):
        """The logged entry at the cursor when replaying it, else None (new territory)."""
        i = self.cursor - self.base
        if i < len(self.entries):
            entry = self.entries[i]
            if (entry[1] is _CREATED) == is_create:
                return entry
            # A replay that does not match the log cannot happen for a deterministic program;
            # if it ever did, the rest of the log is stale.
            del self.entries[i:]
        return None

    def wrap(self, name: str, impl):
        """The journaled version of the built-in kernel `name` (`impl` for the others)."""
        journal = self
        if name == "ref_create":
            def ref_create(values):
                entry = journal._next_logged(True)
                if entry is not None:
                    cell = entry[0]
                    cell.value = values[0]
                else:
                    cell = RefCell(values[0])
                    journal.entries.append((cell, _CREATED, values[0]))
                journal.cursor += 1
                return (cell,)
            return ref_create
        if name == "ref_write":
            def ref_write(values):
                cell = values[0]
                if type(cell) is not RefCell:
                    return impl(values)  # raises the kernel's own error
                old = cell.value
                result = impl(values)
                if journal._next_logged(False) is None:
                    journal.entries.append((cell, old, values[1]))
                journal.cursor += 1
                return result
            return ref_write
        return impl


def instrument(exe, journal: RefJournal):
    """A shallow copy of `exe` whose reference kernels log to `journal` (or `exe` itself
    when it has none). Functions, constants and the source map are shared."""
    own = getattr(exe, "journaled", None)
    if callable(own):   # a machine whose values change in place journals them itself (Relax)
        return own(journal)
    kernels = []
    changed = False
    for k in exe.kernels:
        if k.builtin and k.name in ("ref_create", "ref_write") and k.impl is not None:
            kernels.append(Kernel(k.name, k.source, k.num_inputs, k.num_outputs, True,
                                  journal.wrap(k.name, k.impl)))
            changed = True
        else:
            kernels.append(k)
    if not changed:
        return exe
    clone = copy.copy(exe)
    clone.kernels = kernels
    return clone


class FrameNode:
    """One saved frame: its state at a checkpoint, linked to the saved frame below it."""

    __slots__ = ("parent", "depth", "frame", "serial", "pc", "regs", "owned", "storages", "held")

    def __init__(self, parent, depth, frame, serial, pc, regs, owned, storages, held=0):
        self.parent = parent
        self.depth = depth
        self.frame = frame        # the Frame object: restored in place, so storages' owners hold
        self.serial = serial
        self.pc = pc
        self.regs = regs          # tuple: register values are immutable
        self.owned = owned        # (owned_bytes, pooled) of the frame's account
        self.storages = storages  # ((StorageObject, released), ...) held in the registers
        self.held = held          # bytes of the (non-constant) tensors in `regs`


class Checkpoint:
    """The VM state at step `step`: the frame chain and the scalar machine state."""

    __slots__ = ("step", "top", "nframes", "halted", "result", "live_bytes", "orphan_bytes",
                 "pushes", "cursor", "cost", "shared", "pool")

    def __init__(self, step, top, nframes, halted, result, live_bytes, orphan_bytes, pushes,
                 cursor, cost, shared=0):
        self.step = step
        self.top = top
        self.nframes = nframes
        self.halted = halted
        self.result = result
        self.live_bytes = live_bytes
        self.orphan_bytes = orphan_bytes
        self.pushes = pushes
        self.cursor = cursor
        self.cost = cost
        self.shared = shared    # tensor bytes also held by the checkpoint before (not in cost)
        self.pool = None        # the storage pool's state (rvmdbg.vm.pool), when it has one

    def frame_nodes(self) -> list[FrameNode]:
        """The saved frames, outermost first (walks the whole chain)."""
        out = []
        node = self.top
        while node is not None:
            out.append(node)
            node = node.parent
        out.reverse()
        return out

    def node_at(self, depth: int) -> FrameNode | None:
        node = self.top
        while node is not None and node.depth > depth:
            node = node.parent
        return node if node is not None and node.depth == depth else None


class History:
    """Checkpoints of one VM (see the module docstring).

    `take()` saves the current state (once per step), `restore(cp)` puts a saved state back,
    `at_or_before(step)` finds the checkpoint to replay from; `start` is the earliest step
    history can reach and `bytes_used` the estimate the budget is checked against. Running
    forward, `chunk_end(step)` says where to stop next, `ran(...)` reports how long a chunk
    took, and `due(step)` whether a checkpoint should be taken there (see the module
    docstring); `min_seconds=None` places them by step count alone.
    """

    def __init__(self, vm, journal: RefJournal, interval: int = DEFAULT_INTERVAL,
                 budget: int = DEFAULT_BUDGET, min_seconds: float | None = DEFAULT_MIN_SECONDS):
        if interval < 1:
            raise ValueError("the checkpoint interval must be at least 1")
        self.vm = vm
        self.journal = journal
        self.interval = interval
        self.budget = budget
        self.min_seconds = min_seconds
        self._since = 0.0           # seconds run forward past the newest checkpoint
        self._chunk = 1             # steps the next forward chunk may run (see chunk_end)
        self._heavy_until = 0       # run one step at a time up to here (heavy steps seen)
        self._take_seconds = 0.0    # what taking a checkpoint costs (smoothed, see take)
        self.checkpoints: list[Checkpoint] = []
        self._steps: list[int] = []
        self.bytes_used = 0
        self.dropped = 0
        self._free_ids = {id(c) for c in vm.exe.constants}

    # ------------------------------------------------------------ queries

    @property
    def start(self) -> int:
        return self._steps[0] if self._steps else 0

    def __len__(self) -> int:
        return len(self.checkpoints)

    def at_or_before(self, step: int) -> Checkpoint | None:
        i = bisect.bisect_right(self._steps, step)
        return self.checkpoints[i - 1] if i else None

    def before(self, step: int) -> Checkpoint | None:
        """The newest checkpoint strictly before `step`."""
        i = bisect.bisect_left(self._steps, step)
        return self.checkpoints[i - 1] if i else None

    def has(self, step: int) -> bool:
        i = bisect.bisect_left(self._steps, step)
        return i < len(self._steps) and self._steps[i] == step

    def newest(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None

    # ------------------------------------------------------------ placing

    def _threshold(self) -> float:
        return max(self.min_seconds, _TAKE_FACTOR * self._take_seconds)

    def chunk_end(self, step: int) -> int:
        """Where a forward run from `step` should stop next: the next checkpoint when there is
        one ahead, else where a new one is due by steps, or sooner while steps are measured
        (one at a time near heavy steps, then in chunks that double while they stay cheap)."""
        i = bisect.bisect_right(self._steps, step)
        if i < len(self._steps):
            return self._steps[i]
        newest = self._steps[-1] if self._steps else 0
        end = newest + self.interval
        if self.min_seconds is not None:
            end = min(end, step + self._chunk)
        return max(end, step + 1)

    def ran(self, start: int, end: int, seconds: float) -> None:
        """A forward run went from step `start` to `end` in `seconds`."""
        if (self.min_seconds is None or end <= start or not self._steps
                or start < self._steps[-1]):
            return  # by step count only, or a replay of history whose checkpoints are placed
        self._since += seconds
        if seconds / (end - start) >= self._threshold() / 2:
            # A heavy step (a kernel call on a model): go one step at a time for a while, so
            # that a checkpoint lands right after each one and a reverse step never replays it.
            self._chunk = 1
            self._heavy_until = end + _HEAVY_WINDOW
        elif end >= self._heavy_until:
            self._chunk = min(self._chunk * 2, self.interval)

    def due(self, step: int) -> bool:
        """Whether a checkpoint should be taken at `step` (past the newest one)."""
        newest = self._steps[-1] if self._steps else -1
        if step <= newest:
            return False
        if newest < 0 or step - newest >= self.interval:
            return True
        return self.min_seconds is not None and self._since >= self._threshold()

    # ------------------------------------------------------------ saving

    def take(self) -> Checkpoint:
        """Save the VM's current state (returns the existing checkpoint at this step if any)."""
        vm = self.vm
        step = vm.steps
        i = bisect.bisect_right(self._steps, step)
        if i and self._steps[i - 1] == step:
            return self.checkpoints[i - 1]
        began = time.perf_counter()
        base = self.checkpoints[i - 1] if i else None
        frames = vm.frames
        n = len(frames)
        node = base.top if base is not None else None
        while node is not None and node.depth >= n:
            node = node.parent
        while node is not None and frames[node.depth].serial != node.serial:
            node = node.parent
        # `node` is the highest frame that is the same activation at both times: it may have
        # run since, the frames below it cannot have.
        if node is not None:
            parent, low = node.parent, node.depth
            # the base's saved frames from `low` up, by depth: tensors they hold are not new
            held = {}
            top = base.top
            while top is not None and top.depth >= low:
                held[top.depth] = top
                top = top.parent
        else:
            parent, low, held = None, 0, {}
        cost = _CHECKPOINT_BYTES
        shared = 0
        free = self._free_ids
        for d in range(low, n):
            f = frames[d]
            regs = tuple(f.registers)
            old = held.get(d)
            storages = tuple((v, v.released) for v in regs if type(v) is StorageObject)
            if old is not None and old.serial == f.serial and len(old.regs) == len(regs):
                # the same activation: only the slots written since can hold new tensors
                old_regs = old.regs
                changed = list(compress(range(len(regs)), map(is_not, regs, old_regs)))
                gone = _tensor_bytes([old_regs[j] for j in changed], free)
                fresh = _tensor_bytes([regs[j] for j in changed], free)
                shared += old.held - gone
                held_bytes = old.held - gone + fresh
                cost += fresh
            else:
                held_bytes = _tensor_bytes(regs, free)
                cost += held_bytes
            account = getattr(f, "account", None)  # (the MiniVM's frames keep none)
            owned = (f.owned_bytes, 0 if account is None else account.pooled)
            parent = FrameNode(parent, d, f, f.serial, f.pc, regs, owned, storages,
                               held_bytes)
            cost += _NODE_BYTES + _SLOT_BYTES * len(regs)
        prev_cursor = base.cursor if base is not None else self.journal.base
        cost += _ENTRY_BYTES * max(0, self.journal.cursor - prev_cursor)
        cp = Checkpoint(step, parent, n, vm.halted, vm.result, vm.live_bytes, vm.orphan_bytes,
                        vm.pushes,
                        self.journal.cursor, cost, shared)
        if getattr(vm, "pool", None) is not None:
            cp.pool = vm.pool.state()
        self.checkpoints.insert(i, cp)
        self._steps.insert(i, step)
        self.bytes_used += cost
        if i == len(self._steps) - 1:
            self._since = 0.0
            # Falls at once, rises slowly: one take slowed down by a busy machine must not
            # space the next checkpoints out past the heavy steps they are for.
            took = time.perf_counter() - began
            prev = self._take_seconds
            self._take_seconds = took if prev == 0 or took < prev else prev + (took - prev) / 16
        self._enforce_budget()
        return cp

    def _enforce_budget(self) -> None:
        while self.bytes_used > self.budget and len(self.checkpoints) > 1:
            old = self.checkpoints.pop(0)
            self._steps.pop(0)
            self.bytes_used -= old.cost
            self.dropped += 1
            # the new oldest now holds alone what it shared with the one dropped
            heir = self.checkpoints[0]
            heir.cost += heir.shared
            self.bytes_used += heir.shared
            heir.shared = 0
        if self.checkpoints:
            self.journal.trim(self.checkpoints[0].cursor)

    # ------------------------------------------------------------ restoring

    def restore(self, cp: Checkpoint) -> None:
        """Put the VM back in the state saved in `cp` (frames, counters, reference cells)."""
        vm = self.vm
        frames = vm.frames
        n_cur = len(frames)
        install = []
        node = cp.top
        while node is not None:
            install.append(node)
            d = node.depth
            if d < n_cur and frames[d].serial == node.serial:
                break  # frames below d are the same, unchanged activations
            node = node.parent
        low = install[-1].depth if install else 0
        del frames[low:]
        for node in reversed(install):
            f = node.frame
            f.pc = node.pc
            f.registers = list(node.regs)
            f.owned_bytes = node.owned[0]
            account = getattr(f, "account", None)
            if account is not None:
                account.pooled = node.owned[1]
            for storage, released in node.storages:
                storage.released = released
            frames.append(f)
        if len(install) > 4096:
            # Thousands of fresh register lists sit in the young GC generations; collect them
            # now, as part of this long jump, rather than during the next short move.
            gc.collect(1)
        vm.steps = cp.step
        vm.halted = cp.halted
        vm.result = cp.result
        vm.error = None
        vm.live_bytes = cp.live_bytes
        vm.orphan_bytes = cp.orphan_bytes
        if cp.pool is not None:
            vm.pool.restore(cp.pool)  # reused buffers: sizes only, no tensor was changed
        vm.pushes = cp.pushes
        self.journal.seek(cp.cursor)

    def reset(self) -> None:
        """Forget every checkpoint (a fresh start)."""
        self.checkpoints.clear()
        self._steps.clear()
        self.bytes_used = 0
        self._since = 0.0

    def checkpoint_for_push(self, serial: int) -> Checkpoint | None:
        """The newest checkpoint taken before activation `serial` was pushed."""
        lo, hi = 0, len(self.checkpoints)
        while lo < hi:  # first checkpoint with pushes >= serial
            mid = (lo + hi) // 2
            if self.checkpoints[mid].pushes >= serial:
                hi = mid
            else:
                lo = mid + 1
        return self.checkpoints[lo - 1] if lo else None


__all__ = ["History", "Checkpoint", "FrameNode", "RefJournal", "instrument",
           "DEFAULT_INTERVAL", "DEFAULT_BUDGET", "DEFAULT_MIN_SECONDS"]
