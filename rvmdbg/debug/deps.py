"""Data dependencies of bytecode: read and write sets, reaching definitions, swappability.

Static facts about one function, computed once per function and cached by the session:

- `read_write_sets(ins)`: the registers an instruction reads and writes (calls write their
  destination, which the callee's return fills in);
- `static_def_use(fn)`: for each pc, each register it reads -> the pcs whose writes may reach
  it along some path of the control-flow graph (reaching definitions); `ENTRY` (-1) stands for
  the function's parameters, set by the call;
- `swap_verdict(fn, a, b)`: whether two instructions of one basic block can trade places
  without changing what the program computes, and every reason they cannot (the register
  and kind of a data dependence, or the control dependence); `may_swap` is its bool.

The dynamic half (which step last wrote a register) needs the history and lives in the
session; `DepRead` and `Deps` are the shapes it answers in.
"""
from __future__ import annotations

import copy
from typing import NamedTuple

from rvmdbg.i18n import _
from rvmdbg.vm.executable import VMFunction

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


def _side_effect_kernel(ins, exe) -> str | None:
    """The name of the built-in kernel (ref_create, ref_read, ref_write) an instruction calls,
    whose effect on a reference cell orders it; None for anything else."""
    if exe is None or not getattr(ins, "is_kernel_call", False):
        return None
    kernels = exe.kernels
    if 0 <= ins.packed_index < len(kernels) and kernels[ins.packed_index].builtin:
        return kernels[ins.packed_index].name
    return None


def _barrier_kind(ins, exe=None) -> str | None:
    """Why an instruction never moves: "jump", "call", "return", "halt" (does not fall
    through) or "effect" (a reference-cell kernel); None when it may."""
    if ins.is_jump:
        return "jump"
    if ins.is_call:
        return "call"
    if ins.is_return:
        return "return"
    if not ins.falls_through:
        return "halt"
    if _side_effect_kernel(ins, exe) is not None:
        return "effect"
    return None


def _is_barrier(ins, exe=None) -> bool:
    """Control transfers, calls and effects on reference cells never move."""
    return _barrier_kind(ins, exe) is not None


def conflict(a, b) -> str | None:
    """"RAW", "WAR" or "WAW" when instruction `b` (after `a`) depends on `a`, else None."""
    found = conflicts(a, b)
    return found[0][0] if found else None


def _kernel_outputs(ins) -> frozenset:
    """The output registers of a kernel call: in TVM the kernel is passed the tensor object
    each holds (a read of the register) and writes that tensor's memory, not the register."""
    if getattr(ins, "is_kernel_call", False):
        return frozenset(ins.outputs)
    return frozenset()


def conflicts(a, b) -> list[tuple[str, int]]:
    """Every (kind, register) by which instruction `b` (after `a`) depends on `a`: read
    after write, write after read, write after write, in that order, registers ascending.
    A kernel call's output register is read (the tensor it is passed), so a write of it
    followed by the kernel call (`alloc_tensor $4` then `invoke_packed (out: $4)`) is a RAW
    of the register (the kernel then writes the tensor's memory), not a WAW."""
    ra, wa = read_write_sets(a)
    rb, wb = read_write_sets(b)
    out_b = _kernel_outputs(b)
    out = [("RAW", r) for r in sorted(set(wa) & (set(rb) | out_b))]
    out += [("WAR", r) for r in sorted(set(ra) & set(wb))]
    out += [("WAW", r) for r in sorted(set(wa) & set(wb) - out_b)]
    return out


def inplace_conflicts(a, b) -> list[tuple[str, int]]:
    """The Relax VM's in-place writes: (kind, register) when `a` (earlier) or `b` is a call
    that may write the tensor a register holds (`inplace`) and the other uses that tensor;
    the register-level `conflicts` do not see these (the register itself is not written).
    RAW: `a` may write it, `b` reads it (or may write it too); WAR: `a` reads it, `b` may
    write it."""
    ma, mb = frozenset(getattr(a, "inplace", ())), frozenset(getattr(b, "inplace", ()))
    if not (ma or mb):
        return []
    out = [("RAW", r) for r in sorted(ma & frozenset(b.reads()))]
    out += [("WAR", r) for r in sorted(mb & (frozenset(a.reads()) - ma))]
    return out


_KIND_WORDS = {"RAW": "read after write", "WAR": "write after read",
               "WAW": "write after write"}


class SwapReason(NamedTuple):
    """One thing that forbids a swap. `first` and `second` are the pcs it joins, earlier
    first (the same pc for a property of one instruction); `register` names the register of
    a data dependence (RAW, WAR, WAW); `kind` is one of RAW WAR WAW jump target call return
    halt effect alloc same outside. A RAW whose `detail` is "out": pc `second` is a kernel
    call passed the tensor in the register as its output, whose memory it writes."""

    kind: str
    first: int
    second: int
    register: int | None = None
    detail: str = ""

    @property
    def control(self) -> bool:
        return self.kind not in _KIND_WORDS

    def text(self, prefix: str = "$") -> str:
        """In words, in the language in use; `prefix` names registers (`$` for the Relay VM,
        `r` for the MiniVM)."""
        a, b, r = self.first, self.second, f"{prefix}{self.register}"
        k = self.kind
        if self.detail == "inplace":
            text = _("{kind} of the tensor in {r}: pc {a} and pc {b} both use it and a call "
                     "may write it in place (the bytecode does not say which arguments a "
                     "kernel writes)").replace("{kind}", k)
        elif k == "RAW" and self.detail == "out":
            text = _("read after write of {r}: pc {a} writes {r}, pc {b} reads it (the "
                     "kernel is passed the tensor in {r} as its output); the kernel then "
                     "writes the tensor's memory, not the register")
        elif k == "RAW":
            text = _("read after write of {r}: pc {a} writes {r}, pc {b} reads it")
        elif k == "WAR":
            text = _("write after read of {r}: pc {a} reads {r}, pc {b} overwrites it")
        elif k == "WAW":
            text = _("write after write of {r}: pc {a} and pc {b} both write {r}; "
                     "the later value must stay")
        elif k == "jump":
            text = _("pc {a} is a jump ({detail}): control leaves the straight line there")
        elif k == "target":
            text = _("pc {b} is a branch target (the jump at pc {a} lands there): "
                     "another path enters between them")
        elif k == "call":
            text = _("pc {a} is a call ({detail}): the callee may do anything, so it keeps "
                     "its place")
        elif k == "return":
            text = _("pc {a} returns: nothing moves across the end of the function")
        elif k == "halt":
            text = _("pc {a} ({detail}) stops the function: control never falls through")
        elif k == "effect":
            text = _("pc {a} calls {detail}, a kernel with a side effect on a reference "
                     "cell: ordered through the cell")
        elif k == "alloc":
            text = _("allocation order: pc {a} frees the storage in {r} before pc {b} "
                     "allocates; swapped, both would be held at once (peak memory grows)")
        elif k == "same":
            text = _("an instruction cannot swap with itself")
        else:
            text = _("pc {a} is outside the function (pcs 0..{detail})")
        return text.format(a=a, b=b, r=r, detail=self.detail)


class SwapVerdict(NamedTuple):
    """Whether the instructions at `pc_a` and `pc_b` may trade places, and every reason not."""

    pc_a: int
    pc_b: int
    reasons: tuple

    @property
    def ok(self) -> bool:
        return not self.reasons

    def __bool__(self) -> bool:
        return self.ok


def _barrier_reason(ins, pc: int, exe) -> SwapReason | None:
    kind = _barrier_kind(ins, exe)
    if kind is None:
        return None
    detail = ins.text().split(" ")[0]
    if kind == "effect":
        detail = _side_effect_kernel(ins, exe)
    return SwapReason(kind, pc, pc, None, detail)


def _storage_registers(code) -> frozenset:
    """The registers an `alloc_storage` of the function writes (what a kill may free)."""
    return frozenset(r for ins in code if ins.name == "AllocStorage" for r in ins.writes())


def _alloc_order(x, y, pc_x: int, pc_y: int, storages) -> list[SwapReason]:
    """A kill that frees a storage, then a storage allocation: swapped, both are held."""
    if x.name == "KillRegister" and y.name == "AllocStorage" and x.dst in storages:
        return [SwapReason("alloc", pc_x, pc_y, x.dst)]
    return []


def swap_verdict(fn, pc_a: int, pc_b: int, exe=None) -> SwapVerdict:
    """Whether the instructions at `pc_a` and `pc_b` can trade places, with every reason
    they cannot (`may_swap` is its bool).

    Both must lie in one straight-line stretch (no jump lands strictly after the first of them
    up to the second, no control instruction from one to the other), neither may be a jump,
    call, return or reference-cell operation, and exchanging them must not reorder a
    dependency: no RAW, WAR or WAW between the two, nor between either and any instruction
    that lies between them (which each of them would move across); a `kill` and a later
    `alloc_storage` keep their order (peak memory).
    """
    code = fn.instructions
    n = len(code)
    if pc_a == pc_b:
        return SwapVerdict(pc_a, pc_b, (SwapReason("same", pc_a, pc_a),))
    lo, hi = min(pc_a, pc_b), max(pc_a, pc_b)
    outside = [pc for pc in (lo, hi) if not 0 <= pc < n]
    if outside:
        return SwapVerdict(pc_a, pc_b, tuple(SwapReason("outside", pc, pc, None, str(n - 1))
                                             for pc in outside))
    reasons: list[SwapReason] = []
    for pc in range(lo, hi + 1):
        r = _barrier_reason(code[pc], pc, exe)
        if r is not None:
            reasons.append(r)
    for src, ins in enumerate(code):
        if ins.is_jump:
            for t in ins.jump_targets(src):
                if lo < t <= hi:
                    reasons.append(SwapReason("target", src, t))
    # every pair whose order the exchange reverses: (lo, hi), (lo, mid), (mid, hi)
    storages = _storage_registers(code)
    pairs = [(lo, hi)] + [(lo, m) for m in range(lo + 1, hi)] + [(m, hi) for m in range(lo + 1, hi)]
    for x, y in pairs:
        outputs = _kernel_outputs(code[y])
        for kind, reg in conflicts(code[x], code[y]):
            detail = "out" if kind == "RAW" and reg in outputs else ""
            reasons.append(SwapReason(kind, x, y, reg, detail))
        reasons.extend(_alloc_order(code[x], code[y], x, y, storages))
        for kind, reg in inplace_conflicts(code[x], code[y]):
            reasons.append(SwapReason(kind, x, y, reg, "inplace"))
    seen = set()
    unique = [r for r in reasons if not (r in seen or seen.add(r))]
    return SwapVerdict(pc_a, pc_b, tuple(unique))


def may_swap(fn, pc_a: int, pc_b: int, exe=None) -> bool:
    """True when the instructions at `pc_a` and `pc_b` can trade places (`swap_verdict`)."""
    return swap_verdict(fn, pc_a, pc_b, exe).ok


def swapped(exe, func_index: int, pc_a: int, pc_b: int):
    """A copy of the executable with two instructions of one function exchanged (their source
    spans and constructor names go with them); the original is untouched."""
    out = copy.copy(exe)
    fn = exe.functions[func_index]
    code = list(fn.instructions)
    code[pc_a], code[pc_b] = code[pc_b], code[pc_a]
    out.functions = list(exe.functions)
    out.functions[func_index] = VMFunction(fn.name, fn.params, fn.register_file_size, code,
                                           fn.param_device_indexes)
    a, b = (func_index, pc_a), (func_index, pc_b)
    for table in ("source_map", "adt_constructor"):
        moved = dict(getattr(exe, table))
        va, vb = moved.pop(a, None), moved.pop(b, None)
        if vb is not None:
            moved[a] = vb
        if va is not None:
            moved[b] = va
        setattr(out, table, moved)
    return out


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
           "reaching_definitions", "static_def_use", "may_swap", "swap_verdict", "swapped",
           "SwapReason", "SwapVerdict", "conflict", "conflicts", "writer_pcs",
           "writers_by_register"]
