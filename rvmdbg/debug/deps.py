"""Data dependencies of bytecode: read and write sets, reaching definitions, swappability.

Static facts about one function, computed once per function and cached by the session:

- `read_write_sets(ins)`: the registers an instruction reads and writes (calls write their
  destination, which the callee's return fills in);
- `static_def_use(fn)`: for each pc, each register it reads -> the pcs whose writes may reach
  it along some path of the control-flow graph (reaching definitions); `ENTRY` (-1) stands for
  the function's parameters, set by the call;
- `may_swap(fn, a, b)`: whether two instructions of one basic block can trade places without
  changing what the program computes.

The dynamic half (which step last wrote a register) needs the history and lives in the
session; `DepRead` and `Deps` are the shapes it answers in.
"""
from __future__ import annotations

from typing import NamedTuple

ENTRY = -1  # the definition of a parameter: made by the caller before pc 0


class DepRead(NamedTuple):
    """A register the current instruction reads, its value and where that value came from.

    `write_step` is the step at which the writing instruction executed (None: an argument of
    the entry function, set before step 0, or a write older than the history); `write_func`
    and `write_pc` name that instruction (the invoke, for a value a call returned or for a
    parameter the call passed); `write_text` is its text.
    """

    register: int
    value: object
    write_step: int | None
    write_func: int | None
    write_pc: int | None
    write_text: str


class Deps(NamedTuple):
    """The current instruction's reads (with their writers) and the registers it writes."""

    reads: list
    writes: list


def read_write_sets(ins) -> tuple[tuple, tuple]:
    """(registers read, registers written) of one instruction."""
    return tuple(ins.reads()), tuple(ins.writes())


def successors(fn, pc: int) -> tuple:
    """The pcs control can reach next inside the function (none after ret or fatal)."""
    ins = fn.instructions[pc]
    n = len(fn.instructions)
    return tuple(s for s in ins.successors(pc) if 0 <= s < n)


def jump_targets(fn) -> set[int]:
    """Every pc some instruction of the function jumps to."""
    targets: set[int] = set()
    for pc, ins in enumerate(fn.instructions):
        targets.update(ins.jump_targets(pc))
    return targets


def reaching_definitions(fn) -> list[dict[int, list[int]]]:
    """For each pc: register -> sorted pcs of the definitions that reach it (ENTRY = a parameter).

    Classic forward data flow over bit sets: one bit per (pc, register) definition, a
    definition kills every other definition of its register, iterate to a fixed point.
    """
    code = fn.instructions
    n = len(code)
    defs: list[tuple[int, int]] = [(ENTRY, r) for r in range(len(fn.params))]
    gen = [0] * n
    reg_bits: dict[int, int] = {}
    for r in range(len(fn.params)):
        reg_bits[r] = reg_bits.get(r, 0) | (1 << r)
    for pc, ins in enumerate(code):
        for r in ins.writes():
            bit = 1 << len(defs)
            defs.append((pc, r))
            gen[pc] |= bit
            reg_bits[r] = reg_bits.get(r, 0) | bit
    # A write kills every definition of its register (its own earlier ones included).
    kill = [0] * n
    for pc, ins in enumerate(code):
        for r in ins.writes():
            kill[pc] |= reg_bits[r]
    preds: list[list[int]] = [[] for _ in range(n)]
    for pc in range(n):
        for s in successors(fn, pc):
            preds[s].append(pc)
    entry_bits = (1 << len(fn.params)) - 1
    inn = [0] * n
    out = [0] * n
    work = list(range(n - 1, -1, -1))
    queued = [True] * n
    while work:
        pc = work.pop()
        queued[pc] = False
        bits = entry_bits if pc == 0 else 0
        for p in preds[pc]:
            bits |= out[p]
        inn[pc] = bits
        new_out = (bits & ~kill[pc]) | gen[pc]
        if new_out != out[pc]:
            out[pc] = new_out
            for s in successors(fn, pc):
                if not queued[s]:
                    queued[s] = True
                    work.append(s)
    result = []
    for pc in range(n):
        bits = inn[pc]
        table: dict[int, list[int]] = {}
        for r in code[pc].reads():
            mask = bits & reg_bits.get(r, 0)
            table[r] = sorted(defs[i][0] for i in _bit_indexes(mask))
        result.append(table)
    return result


def _bit_indexes(mask: int):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def static_def_use(fn) -> dict[int, dict[int, list[int]]]:
    """pc -> {register read at pc: [pcs that may have produced its value]} (ENTRY = parameter)."""
    return {pc: table for pc, table in enumerate(reaching_definitions(fn))}


def _is_barrier(ins, exe=None) -> bool:
    """Control transfers, calls and effects on reference cells never move."""
    if ins.is_jump or ins.is_call or ins.is_return or not ins.falls_through:
        return True
    if exe is not None and getattr(ins, "is_kernel_call", False):
        kernels = exe.kernels
        if 0 <= ins.packed_index < len(kernels) and kernels[ins.packed_index].builtin:
            return True  # ref_read / ref_write / ref_create: ordered through the cell
    return False


def conflict(a, b) -> str | None:
    """"RAW", "WAR" or "WAW" when instruction `b` (after `a`) depends on `a`, else None."""
    ra, wa = read_write_sets(a)
    rb, wb = read_write_sets(b)
    if set(wa) & set(rb):
        return "RAW"
    if set(ra) & set(wb):
        return "WAR"
    if set(wa) & set(wb):
        return "WAW"
    return None


def may_swap(fn, pc_a: int, pc_b: int, exe=None) -> bool:
    """True when the instructions at `pc_a` and `pc_b` can trade places.

    Both must lie in one straight-line stretch (no jump lands strictly after the first of them
    up to the second, no control instruction from one to the other), neither may be a jump,
    call, return or reference-cell operation, and exchanging them must not reorder a
    dependency: no RAW, WAR or WAW between the two, nor between either and any instruction
    that lies between them (which each of them would move across).
    """
    code = fn.instructions
    if pc_a == pc_b:
        return False
    lo, hi = min(pc_a, pc_b), max(pc_a, pc_b)
    if lo < 0 or hi >= len(code):
        return False
    if _is_barrier(code[lo], exe) or _is_barrier(code[hi], exe):
        return False
    targets = jump_targets(fn)
    for pc in range(lo + 1, hi + 1):
        if pc in targets:
            return False
    for pc in range(lo + 1, hi):
        if _is_barrier(code[pc], exe):
            return False
    if conflict(code[lo], code[hi]):
        return False
    for pc in range(lo + 1, hi):
        mid = code[pc]
        if conflict(code[lo], mid) or conflict(mid, code[hi]):
            return False
    return True


def writer_pcs(fn, register: int) -> list[int]:
    """The pcs of the function whose instruction writes `register`."""
    return [pc for pc, ins in enumerate(fn.instructions) if register in ins.writes()]


def writers_by_register(fn) -> dict[int, list[int]]:
    """register -> the pcs of the function that write it (`writer_pcs` of every register at
    once, in one pass over the function)."""
    out: dict[int, list[int]] = {}
    for pc, ins in enumerate(fn.instructions):
        for r in ins.writes():
            pcs = out.setdefault(r, [])
            if not pcs or pcs[-1] != pc:
                pcs.append(pc)
    return out


__all__ = ["ENTRY", "DepRead", "Deps", "read_write_sets", "successors", "jump_targets",
           "reaching_definitions", "static_def_use", "may_swap", "conflict", "writer_pcs",
           "writers_by_register"]
