"""View 3's control flow: a VM function's basic blocks, the path an activation took through
them, and which way an `if` is about to go.

Blocks come from the instructions themselves (`jump_targets`, `falls_through`): a block starts
at pc 0, at every jump target and after every instruction control cannot fall out of (`if`,
`goto`, `ret`, `fatal`); it ends before the next start. Its edges are `fall` (into the next
block), `true`/`false` (an `if`) and `goto`.

The path taken so far is not in the debugger's state: `ActivationPath` replays the program on
a fresh VM (deterministic, like the debugger's own history) and records the pcs one activation
executed, continuing from where it stopped when asked again further on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rvmdbg.vm import bytecode as bc
from rvmdbg.i18n import N_, _

FALL, TRUE, FALSE, GOTO = N_("fall"), N_("true"), N_("false"), N_("goto")  # shown with _()


@dataclass(frozen=True)
class Edge:
    source: int     # block index
    target: int     # block index
    kind: str       # FALL, TRUE, FALSE or GOTO


@dataclass
class BasicBlock:
    index: int
    start: int      # first pc
    end: int        # last pc (inclusive)
    successors: list = field(default_factory=list)     # Edges out
    predecessors: list = field(default_factory=list)   # Edges in

    @property
    def pcs(self) -> range:
        return range(self.start, self.end + 1)

    @property
    def name(self) -> str:
        return f"B{self.index}"


@dataclass
class ControlFlowGraph:
    func_index: int
    name: str
    blocks: list
    block_of_pc: list       # pc -> block index
    instructions: list

    @property
    def edges(self) -> list:
        return [e for b in self.blocks for e in b.successors]

    def block_at(self, pc: int) -> BasicBlock:
        return self.blocks[self.block_of_pc[pc]]

    def edge(self, source: int, target: int) -> Edge | None:
        for e in self.blocks[source].successors:
            if e.target == target:
                return e
        return None


def leaders(instructions) -> list:
    """The sorted first pcs of the basic blocks."""
    n = len(instructions)
    starts = {0} if n else set()
    for pc, ins in enumerate(instructions):
        for t in ins.jump_targets(pc):
            if 0 <= t < n:
                starts.add(t)
        # after a jump (also one that may fall through, as the MiniVM's CH) a block ends
        if (not ins.falls_through or ins.is_jump) and pc + 1 < n:
            starts.add(pc + 1)
    return sorted(starts)


def build_cfg(fn, func_index: int = 0) -> ControlFlowGraph:
    """The basic blocks and edges of one VMFunction."""
    code = fn.instructions
    starts = leaders(code)
    blocks = []
    block_of_pc = [0] * len(code)
    for k, s in enumerate(starts):
        e = (starts[k + 1] - 1) if k + 1 < len(starts) else len(code) - 1
        blocks.append(BasicBlock(k, s, e))
        for pc in range(s, e + 1):
            block_of_pc[pc] = k
    for b in blocks:
        last = code[b.end]
        outs = []
        if isinstance(last, bc.If):
            t, f = last.jump_targets(b.end)
            outs = [(t, TRUE), (f, FALSE)]
        elif isinstance(last, bc.Goto):
            outs = [(last.jump_targets(b.end)[0], GOTO)]
        elif last.is_jump:
            # another machine's branch (the MiniVM's CH r t: to t when taken, else on)
            kind = TRUE if last.falls_through else GOTO
            outs = [(t, FALL if t == b.end + 1 and last.falls_through else kind)
                    for t in last.successors(b.end)]
        elif last.falls_through and b.end + 1 < len(code):
            outs = [(b.end + 1, FALL)]
        for target_pc, kind in outs:
            if 0 <= target_pc < len(code):
                edge = Edge(b.index, block_of_pc[target_pc], kind)
                b.successors.append(edge)
                blocks[edge.target].predecessors.append(edge)
    return ControlFlowGraph(func_index, fn.name, blocks, block_of_pc, list(code))


# ---------------------------------------------------------------- a branch about to run

@dataclass
class BranchOutcome:
    """An `if` evaluated on the current registers (before it runs)."""

    pc: int
    test_register: int
    target_register: int
    test_value: object
    target_value: object
    taken: bool | None          # True: to the true offset; None: values not comparable yet
    next_pc: int | None

    def describe(self) -> str:
        tv, gv = _scalar(self.test_value), _scalar(self.target_value)
        if self.taken is None:
            return (f"if ${self.test_register} ({tv}) == ${self.target_register} ({gv}): "
                    + _("not decidable yet"))
        rel = "==" if self.taken else "!="
        way = _(TRUE) if self.taken else _(FALSE)
        return (f"${self.test_register} = {tv} {rel} ${self.target_register} = {gv}: "
                + _("goes {way}, to pc {pc}").format(way=way, pc=self.next_pc))


def _scalar(v) -> str:
    if isinstance(v, (np.ndarray, np.generic)) and v.size == 1:
        item = v.reshape(-1)[0].item()
        if isinstance(item, bool):
            return "True" if item else "False"
        return str(item)
    if v is None:
        return "unset"
    from rvmdbg.debug.heap import value_text
    return value_text(v, 24)


def branch_outcome(ins, pc: int, registers) -> BranchOutcome:
    """Which way `ins` (an If at `pc`) goes with these registers, as the VM decides it:
    the two registers' scalar values compared with `==`."""
    test = registers[ins.test] if ins.test < len(registers) else None
    target = registers[ins.target] if ins.target < len(registers) else None
    taken = None
    try:
        taken = bool(test.item() == target.item())
    except (AttributeError, ValueError, TypeError):
        taken = None
    nxt = None if taken is None else pc + (ins.true_offset if taken else ins.false_offset)
    return BranchOutcome(pc, ins.test, ins.target, test, target, taken, nxt)


# ---------------------------------------------------------------- the path taken so far

@dataclass
class PathSoFar:
    """The pcs one activation executed up to a step, and the blocks and edges they cover."""

    serial: int
    func_index: int
    pcs: list                       # in execution order (the last `limit` only)
    truncated: bool                 # older pcs were dropped
    blocks: list                    # block indices in the order first entered
    edge_counts: dict               # (source block, target block) -> times taken
    block_counts: dict              # block index -> times entered


class ActivationPath:
    """Replays the program on a fresh VM to learn which pcs an activation executed.

    `path(serial, func_index, until_step)` answers for the activation numbered `serial`
    (the VM's `Frame.serial`) up to (not including) step `until_step`. Asked again for the
    same activation at a later step, it continues the replay; earlier, it cuts the recorded
    pcs. `max_steps` bounds a replay (the path then starts later: `truncated`)."""

    def __init__(self, exe, entry: str, args, limit: int = 100_000, max_steps: int = 2_000_000):
        self.exe = exe
        self.entry = entry
        self.args = args
        self.limit = limit
        self.max_steps = max_steps
        self._vm = None
        self._serial = None
        self._record: list = []         # (step, pc) pairs of the activation
        self._dropped = False

    def _fresh_vm(self):
        from rvmdbg.debug.machine import machine_for
        from rvmdbg.views.context import copy_args as _copy_args
        vm = machine_for(self.exe)   # the Relay VM, or the MiniVM for a .mvm
        vm.start(self.entry, _copy_args(self.args))
        return vm

    def _seek_push(self, serial: int, until_step: int):
        """A VM stopped just after the push of activation `serial` (or at step 0 for 0)."""
        vm = self._fresh_vm()
        if serial == 0:
            return vm
        chunk = 4096
        before = 0
        while vm.pushes < serial and not vm.halted and vm.steps < until_step:
            before = vm.steps
            vm.run(until_step=min(until_step, vm.steps + chunk))
        vm = self._fresh_vm()
        if before:
            vm.run(until_step=before)
        while vm.pushes < serial and not vm.halted and vm.steps < until_step:
            vm.step()
        return vm

    def path(self, serial: int, func_index: int, until_step: int, cfg: ControlFlowGraph,
             arrive: int | None = None) -> PathSoFar:
        """The activation's path up to until_step; `arrive` is the pc it is at then (the
        edge into it counts as taken, though that instruction has not run)."""
        if self._serial != serial or self._vm is None or self._vm.steps > until_step:
            if self._serial == serial and self._vm is not None:
                # going back: cut what was recorded after `until_step`
                self._record = [(s, pc) for s, pc in self._record if s < until_step]
            else:
                self._serial = serial
                self._record = []
                self._dropped = False
                self._vm = self._seek_push(serial, until_step)
        vm = self._vm
        record = self._record
        budget = self.max_steps
        frames = vm.frames
        depth = next((d for d, f in enumerate(frames) if f.serial == serial), None)
        while vm.steps < until_step and not vm.halted and budget > 0:
            top = frames[-1]
            if top.serial == serial:
                record.append((vm.steps, top.pc))
                depth = len(frames) - 1
            elif depth is not None and (len(frames) <= depth or frames[depth].serial != serial):
                break  # the activation has returned
            try:
                vm.step()
            except Exception:
                break
            budget -= 1
        if len(record) > self.limit:
            del record[:len(record) - self.limit]
            self._dropped = True
        pcs = [pc for s, pc in record if s < until_step]
        return summarize_path(serial, func_index, pcs, cfg, self._dropped, arrive)


def summarize_path(serial: int, func_index: int, pcs: list, cfg: ControlFlowGraph,
                   truncated: bool = False, arrive: int | None = None) -> PathSoFar:
    """The blocks entered and edges taken by an activation that executed `pcs` in order
    and is now at pc `arrive` (a call returns to the next pc of the same block: that is no
    block change)."""
    blocks: list = []
    block_counts: dict = {}
    edge_counts: dict = {}
    prev_block, prev_pc = None, None
    n = len(cfg.block_of_pc)
    # a caller waits on a call it already executed: that pc is no new arrival
    seq = pcs if arrive is None or (pcs and pcs[-1] == arrive) else [*pcs, arrive]
    for pc in seq:
        if not 0 <= pc < n:
            continue
        b = cfg.block_of_pc[pc]
        entered = prev_block is None or b != prev_block or pc == cfg.blocks[b].start and \
            prev_pc != pc - 1
        if entered:
            if prev_block is not None:
                key = (prev_block, b)
                edge_counts[key] = edge_counts.get(key, 0) + 1
            if b not in block_counts:
                blocks.append(b)
            block_counts[b] = block_counts.get(b, 0) + 1
        prev_block, prev_pc = b, pc
    return PathSoFar(serial, func_index, pcs, truncated, blocks, edge_counts, block_counts)


__all__ = ["BasicBlock", "Edge", "ControlFlowGraph", "build_cfg", "leaders", "BranchOutcome",
           "branch_outcome", "ActivationPath", "PathSoFar", "summarize_path",
           "FALL", "TRUE", "FALSE", "GOTO"]


# ---------------------------------------------------------------- drawing

def _edge_text(cfg: ControlFlowGraph, e: Edge, symbols) -> str:
    return f"{_(e.kind)} {symbols.arrow} {cfg.blocks[e.target].name}"


def draw_cfg(cfg: ControlFlowGraph, func_names=None, kernel_names=None, path: PathSoFar | None = None,
             current_pc: int | None = None, outcome: BranchOutcome | None = None,
             symbols=None) -> tuple[list, dict]:
    """The blocks top to bottom with their instructions, and If/Goto edges between blocks
    that are not adjacent drawn as arrows in a left gutter. Returns (rows, pc -> row).

    Roles: "header", "current" (the pc about to run), "visited" (executed by the activation),
    "dim" (not executed), "taken" (an edge the path took), "next" (the edge the `if` about to
    run will take), "plain"."""
    from rvmdbg.views.text import UNICODE, Arrow, draw_gutter
    symbols = symbols or UNICODE
    executed = set(path.pcs) if path is not None else set()
    taken_edges = path.edge_counts if path is not None else {}
    entered = path.block_counts if path is not None else {}
    next_edge = None
    if outcome is not None and outcome.taken is not None and outcome.next_pc is not None:
        b = cfg.block_of_pc[outcome.pc]
        if 0 <= outcome.next_pc < len(cfg.block_of_pc):
            next_edge = (b, cfg.block_of_pc[outcome.next_pc])
    content: list = []
    row_of_pc: dict = {}
    header_row: dict = {}
    footer_row: dict = {}
    for b in cfg.blocks:
        header_row[b.index] = len(content)
        head = f"{b.name}  pc {b.start}" + (f"-{b.end}" if b.end != b.start else "")
        if b.index in entered:
            head += "  " + _("entered {n}x").format(n=entered[b.index])
        if b.predecessors:
            head += "  " + _("from {blocks}").format(blocks=", ".join(
                f"{cfg.blocks[e.source].name} ({_(e.kind)})" for e in b.predecessors))
        content.append([(head, "header" if (not path or b.index in entered) else "dim")])
        for pc in b.pcs:
            row_of_pc[pc] = len(content)
            text = cfg.instructions[pc].text(func_names, kernel_names)
            if pc == current_pc:
                content.append([(f"{symbols.current} {pc:>4}  {text}", "current")])
            else:
                role = "visited" if pc in executed else ("dim" if path is not None else "plain")
                content.append([(f"  {pc:>4}  {text}", role)])
        last = cfg.instructions[b.end]
        footer_row[b.index] = len(content)
        if b.successors:
            parts = []
            for e in b.successors:
                role = ("next" if next_edge == (e.source, e.target)
                        else "taken" if (e.source, e.target) in taken_edges else "plain")
                count = taken_edges.get((e.source, e.target))
                label = _edge_text(cfg, e, symbols) + (f" ({count}x)" if count else "")
                if role == "next":
                    label = f"{symbols.current}{label}"
                parts.append((label, role))
            row = [("      ", "plain")]
            for k, piece in enumerate(parts):
                if k:
                    row.append(("   ", "plain"))
                row.append(piece)
            if outcome is not None and outcome.pc == b.end and current_pc == b.end:
                row.append(("    " + outcome.describe(), "next"))
            content.append(row)
        else:
            end = _("returns") if last.is_return else _("fails (no clause matched)") \
                if isinstance(last, bc.Fatal) else _("ends")
            content.append([(f"      {end}", "plain")])
        content.append([])
    arrows = []
    for e in cfg.edges:
        if e.target == e.source + 1:
            continue  # adjacent: the footer names it, no arrow needed
        key = (e.source, e.target)
        role = "next" if next_edge == key else "taken" if key in taken_edges else "plain"
        arrows.append(Arrow(footer_row[e.source], header_row[e.target], role,
                            heavy=role != "plain"))
    gutters = draw_gutter(arrows, len(content), symbols)
    rows = [g + [(" ", "plain")] + c for g, c in zip(gutters, content)]
    return rows, row_of_pc


__all__ += ["draw_cfg"]
