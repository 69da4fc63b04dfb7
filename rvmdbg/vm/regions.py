"""Straight-line regions of tensor code, each run by one handler in `VirtualMachine.run()`.

A model's bytecode is mostly long straight runs of `load_const`, `alloc_storage`,
`alloc_tensor`, `invoke_packed`, `kill_register`, `alloc_adt`, `get_field`, `alloc_closure`
and `move`, ended by a `goto`, an `if`, a call or a return (whose own handler then runs last):
an LSTM step is 70 of them around 7 small kernels,
and dispatching each one costs more than the kernels. `region_at` reads such a run once, at
decode time, by following what each register holds (a constant, the value it had on entry,
a storage or a tensor the run allocates, a value the run computes), and makes one handler
that has exactly the run's effect:

- it calls the run's kernels in order on their inputs, and makes its ADTs and closures;
- it writes every register the run writes with its final value, in one slice assignment;
- it creates only the storages and uninitialized tensors that are still in a register at the
  end (a placeholder a kernel overwrites, or a storage killed in the run, is never seen), and
  counts every storage's bytes against --max-bytes as the instructions would;
- it counts as its instructions' steps (`run()` enters it only when they all fit).

Anything the handler does not expect (a kernel that fails or returns an output of the wrong
type, shape or dtype, a `get_field` on a value with no such field, live bytes that might reach
--max-bytes within the run) makes it run the instructions' own handlers one by one from the
start instead (`one_by_one`): registers are written only after every kernel has succeeded,
so the state is still the entry state, and the failure then stops at the failing instruction
with the state stepping has there. Kernels are pure (the reference kernels, which are not,
end a region), so calling one twice on that slow path changes nothing. `step()` never uses
regions; the bytecode is unchanged.
"""
from __future__ import annotations

import operator
from sys import getrefcount as _refcount

import numpy as np

from rvmdbg.scalars import SCALAR_TYPES
from rvmdbg.values import ADTValue
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.blocks import Partial, RegionExit, one_by_one
from rvmdbg.vm.handlers import consti, jump_target, kernel_caller
from rvmdbg.vm.pool import round_to_page
from rvmdbg.vm.objects import ByteAccount, StorageObject, TensorPlaceholder, VMClosure, dtype_nbytes
from rvmdbg.vm.state import BOOL_OF, is_tensor, number_of

_shape = operator.attrgetter("shape")
_dtype = operator.attrgetter("dtype")

_new = object.__new__

# What a register holds at a point of the region, as (kind, index):
_CONST = 0     # statics[index]: a constant-pool value, a load_consti scalar, or None (killed)
_ENTRY = 1     # the value register `index` held when the region started
_VALUE = 2     # values[index]: a value the region computes (kernel output, ADT, closure, field)
_STORAGE = 3   # storages[index]: a storage the region allocates
_TENSOR = 4    # tensors[index]: an uninitialized tensor the region lays out


_UNKNOWN = object()  # no static value

# Instructions that push or pop a frame: one may end a region (its own handler runs last).
_CALLS = (bc.Invoke, bc.InvokeClosure, bc.Ret)


class _Branched(Exception):
    """A guard step's `if` went elsewhere than into the rest of its region."""


class _Recheck(Exception):
    """A kernel's output the fast path does not accept as it is: the handlers decide."""


class _Region:
    """What `region_at` learns by following the instructions: the plan the handler runs."""

    def __init__(self, vm, fi: int, storage_registers=frozenset()):
        self.vm, self.fi = vm, fi
        self.storage_registers = storage_registers  # the registers storages are put in
        self.regs: dict[int, tuple] = {}    # register -> what it holds now (absent: entry)
        self.statics: list = [None]         # static values (statics[0] is None, for kills)
        self.static_ids: dict = {}
        # the computing steps, in order: (kind, the values it computes, ..., holders it reads)
        self.steps: list = []
        self.values = 0                     # values the steps compute
        self.adt_fields: dict[int, tuple] = {}  # value index of an ADT -> its fields' holders
        self.storages: list[list] = []      # [size, alignment, dtype hint, released]
        self.tensors: list[tuple] = []      # (storage index, offset, shape, dtype)
        self.allocated = 0                  # bytes allocated so far
        self.freed = 0                      # bytes of the region's storages it killed
        self.peak = 0                       # most bytes allocated (plus a kernel's own) at once
        self.entry_kills: list[int] = []    # entry registers killed, in order
        self.pool_events: list[tuple] = []  # (True, size, k) per alloc_storage, (False, size, k)
        #                                      per kill, in order (a storage may be 0 bytes)
        self.tensor_kernels = 0             # kernels whose output is not 0-d
        # --max-bytes counts a killed storage's bytes again when its tensor lives on
        # (`rvmdbg.vm.escaped`): what each storage holds, and the bytes so counted
        self.storage_tensor: dict[int, tuple] = {}   # storage -> (value, is an array)
        self.closure_fields: dict[int, tuple] = {}   # value index of a closure -> captured
        self.orphaned = 0
        # values whose storage's kill counted them as referenced nowhere else: a kernel
        # output that is a view of one (its base) must be checked (value index -> kill step)
        self.unshared: dict[int, int] = {}

    def holder(self, r: int) -> tuple:
        return self.regs.get(r, (_ENTRY, r))

    def static(self, value) -> tuple:
        k = self.static_ids.get(id(value))
        if k is None:
            k = self.static_ids[id(value)] = len(self.statics)
            self.statics.append(value)
        return (_CONST, k)

    def static_value(self, r: int):
        """The static value register `r` holds, or raise LookupError."""
        kind, k = self.holder(r)
        if kind != _CONST:
            raise LookupError(r)
        return self.statics[k]

    def computed(self, n: int = 1) -> list[tuple]:
        first = self.values
        self.values += n
        return [(_VALUE, first + i) for i in range(n)]


def _readable(h: tuple) -> bool:
    """A holder a kernel, an ADT or a closure may read (not a storage or an uninitialized
    tensor of the region, which the instruction's handler reports or must see itself)."""
    return h[0] in (_CONST, _ENTRY, _VALUE)


def _follow(plan: _Region, ins, pc: int) -> bool:
    """Add `ins` (not a goto or if) to the plan; False when it cannot be part of a region."""
    vm, kind = plan.vm, type(ins)
    if kind is bc.Move:
        plan.regs[ins.dst] = plan.holder(ins.src)
    elif kind is bc.LoadConst:
        if not 0 <= ins.const_index < len(vm.constants):
            return False
        plan.regs[ins.dst] = plan.static(vm.constants[ins.const_index])
    elif kind is bc.LoadConsti:
        plan.regs[ins.dst] = plan.static(consti(ins.value))
    elif kind is bc.KillRegister:
        h = plan.holder(ins.dst)
        if h[0] == _STORAGE:
            storage = plan.storages[h[1]]
            if not storage[3]:
                storage[3] = True
                plan.freed += storage[0]
                plan.pool_events.append((False, storage[0], h[1]))
                written = plan.storage_tensor.get(h[1])
                plan.regs[ins.dst] = (_CONST, 0)
                if written is not None and written[1]:  # as kill_register counts it
                    if written[0] in _reachable(plan):
                        plan.orphaned += storage[0]
                    else:
                        plan.unshared[written[0][1]] = len(plan.steps)
        elif h[0] == _ENTRY:
            if ins.dst in plan.storage_registers:
                return False  # a storage from before: its kill's accounting is the handler's
            plan.entry_kills.append(h[1])
        plan.regs[ins.dst] = (_CONST, 0)
    elif kind is bc.AllocStorage:
        return _follow_alloc_storage(plan, ins)
    elif kind is bc.AllocTensor:
        return _follow_alloc_tensor(plan, ins)
    elif kind is bc.InvokePacked:
        return _follow_kernel(plan, ins)
    elif kind is bc.AllocADT:
        holders = [plan.holder(f) for f in ins.fields]
        if not all(_readable(h) for h in holders):
            return False
        con = (getattr(vm.exe, "adt_constructor", None) or {}).get((plan.fi, pc))
        if not holders:
            plan.regs[ins.dst] = plan.static(ADTValue(ins.tag, con, ()))
            return True
        (value,) = plan.computed()
        plan.steps.append(("adt", (value,), ins.tag, con, tuple(holders)))
        plan.adt_fields[value[1]] = tuple(holders)
        plan.regs[ins.dst] = value
    elif kind is bc.GetField:
        h = plan.holder(ins.object)
        fields = plan.adt_fields.get(h[1]) if h[0] == _VALUE else None
        if fields is not None:  # an ADT the region made: its field is known here
            if not 0 <= ins.field_index < len(fields):
                return False
            plan.regs[ins.dst] = fields[ins.field_index]
            return True
        if not _readable(h):
            return False
        (value,) = plan.computed()
        plan.steps.append(("field", (value,), ins.field_index, (h,)))
        plan.regs[ins.dst] = value
    elif kind is bc.AllocClosure:
        functions = vm.exe.functions
        if not 0 <= ins.func_index < len(functions):
            return False
        callee = functions[ins.func_index]
        holders = [plan.holder(r) for r in ins.free_vars]
        if len(holders) > len(callee.params) or not all(_readable(h) for h in holders):
            return False
        (value,) = plan.computed()
        plan.steps.append(("closure", (value,), ins.func_index, callee.name, tuple(holders)))
        plan.closure_fields[value[1]] = tuple(holders)
        plan.regs[ins.dst] = value
    else:
        return False
    return True


def _static_int(plan: _Region, r: int):
    """The non-negative int a register holds statically (a 0-d constant), or None."""
    try:
        v = plan.static_value(r)
        if not is_tensor(v):
            return None
        n = operator.index(number_of(v))
    except (LookupError, TypeError, ValueError):
        return None
    return n if n >= 0 else None


def _follow_alloc_storage(plan: _Region, ins) -> bool:
    size = _static_int(plan, ins.size)
    if size is None:
        return False
    plan.storages.append([size, ins.alignment, ins.dtype_hint, False])
    plan.allocated += size
    plan.pool_events.append((True, size, len(plan.storages) - 1))
    plan.peak = max(plan.peak, plan.allocated)
    plan.regs[ins.dst] = (_STORAGE, len(plan.storages) - 1)
    return True


def _follow_alloc_tensor(plan: _Region, ins) -> bool:
    h = plan.holder(ins.storage)
    offset = _static_int(plan, ins.offset)
    if h[0] != _STORAGE or offset is None:
        return False
    shape, dtype = tuple(ins.shape), np.dtype(ins.dtype)
    if offset + dtype_nbytes(shape, dtype) > plan.storages[h[1]][0]:
        return False  # the handler reports it
    plan.tensors.append((h[1], offset, shape, dtype))
    plan.regs[ins.dst] = (_TENSOR, len(plan.tensors) - 1)
    return True


def _follow_kernel(plan: _Region, ins) -> bool:
    kernels = plan.vm.exe.kernels
    if not 0 <= ins.packed_index < len(kernels):
        return False
    kernel = kernels[ins.packed_index]
    nout = ins.output_size
    args = tuple(ins.args)
    inputs, outputs = args[:len(args) - nout], args[len(args) - nout:]
    if (kernel.builtin or kernel.impl is None or kernel.num_inputs != len(inputs)
            or kernel.num_outputs != nout or nout < 1 or len(set(outputs)) != nout
            or getattr(kernel.impl, "run_within", None) is not None):
        # references have effects; intermediates of run-time shapes are checked against
        # --max-bytes as they are made (handlers.py's _within_room); the rest the handler reports
        return False
    holders = [plan.holder(r) for r in inputs]
    slots = [plan.holder(r) for r in outputs]
    if not all(_readable(h) for h in holders) or any(s[0] != _TENSOR for s in slots):
        return False
    layouts = tuple(plan.tensors[s[1]][2:] for s in slots)  # (shape, dtype) of each output
    held = getattr(kernel.impl, "intermediate_bytes", 0) or 0
    plan.peak = max(plan.peak, plan.allocated + held)
    plan.tensor_kernels += any(shape for shape, _ in layouts)
    values = plan.computed(nout)
    plan.steps.append(("kernel", tuple(values), kernel.impl, layouts, tuple(holders)))
    for r, v, s, (shape, dtype) in zip(outputs, values, slots, layouts):
        plan.regs[r] = v
        # written into its storage (a 0-d output of a scalar dtype is a scalar, not an array)
        plan.storage_tensor[plan.tensors[s[1]][0]] = (
            v, bool(shape) or dtype.type not in SCALAR_TYPES)
    return True


def _reachable(plan: _Region) -> set:
    """The holders the registers reach now, through the ADTs and closures the region made."""
    seen, stack = set(), list(plan.regs.values())
    while stack:
        h = stack.pop()
        if h in seen:
            continue
        seen.add(h)
        if h[0] == _VALUE:
            stack.extend(plan.adt_fields.get(h[1], ()))
            stack.extend(plan.closure_fields.get(h[1], ()))
    return seen


def storage_registers(instructions: list) -> frozenset:
    """The registers of a function that `alloc_storage` writes, or a `move` copies one to."""
    regs = {ins.dst for ins in instructions if type(ins) is bc.AllocStorage}
    moves = [(ins.src, ins.dst) for ins in instructions if type(ins) is bc.Move]
    grew = True
    while grew:
        grew = False
        for src, dst in moves:
            if src in regs and dst not in regs:
                regs.add(dst)
                grew = True
    return frozenset(regs)


def region_at(vm, fi: int, p: int, instructions: list, singles: list, sound: list,
              max_width: int, targets=frozenset(), guard: bool = True,
              tensors_only: bool = True, storages=frozenset()):
    """((handler, width), end) of the region starting at `p` and ending before `end`, or
    (None, end) when the straight-line code there, up to `end`, holds no kernel with a tensor
    (not 0-d) output (with `tensors_only`) or is shorter than 2 instructions. `sound[q]`:
    instruction q's registers are inside the register file; a region ends before a pc in
    `targets` (a jump target) and before a kill of a register in `storages`
    (`storage_registers`) that it did not write. With `guard`, the region may run on through
    one `if` into the instructions after it (the loop body after a loop's test): when the
    `if` goes elsewhere, the region runs only up to it (see `_guarded_replay`)."""
    plan = _Region(vm, fi, storages)
    fn = vm.exe.functions[fi]
    size = len(instructions)
    q, ending, guard_at = p, None, None
    while q < size and q - p < max_width and sound[q] and (q == p or q not in targets):
        ins = instructions[q]
        kind = type(ins)
        if kind is bc.Goto or kind is bc.If or kind in _CALLS:
            if q - p + 1 > max_width:
                break
            ending = (("call", singles[q]) if kind in _CALLS
                      else _ending(plan, fn, q, ins, size, jump_target))
            if ending is not None and ending[0] == "if" and guard and guard_at is None and (
                    q + 1 in ending[3:]):
                known = (plan.statics[ending[2][1]] if ending[2][0] == _CONST
                         else _UNKNOWN)
                plan.steps.append(("guard", (), (ending[3], ending[4], q + 1), known,
                                   (ending[1], ending[2])))
                guard_at, ending = q, None
                q += 1
                continue
            if ending is not None:
                q += 1
            break
        if not _follow(plan, ins, q):
            break
        q += 1
    if guard_at is not None and q - guard_at <= 2:  # nothing worth running on into
        return region_at(vm, fi, p, instructions, singles, sound, max_width, targets, False,
                         tensors_only, storages)
    width = q - p
    if width < 2 or (tensors_only and not plan.tensor_kernels):
        return None, q
    replay = one_by_one(tuple(singles[p:q]))
    if guard_at is None:
        return (_handler(vm, plan, fn.register_file_size, ending, q, width, replay), width), q
    (prefix, prefix_width), _ = region_at(vm, fi, p, instructions, singles, sound, max_width,
                                          targets, False, False, storages)
    assert prefix_width == guard_at + 1 - p
    replay = _guarded_replay(one_by_one(tuple(singles[p:guard_at + 1])),
                             one_by_one(tuple(singles[guard_at + 1:q])), guard_at + 1,
                             prefix_width)
    handler = _handler(vm, plan, fn.register_file_size, ending, q, width, replay,
                       (prefix, prefix_width))
    return (handler, width), q


def _guarded_replay(first, rest, onward: int, first_width: int):
    """The slow path of a region running on through an `if`: the instructions' own handlers
    up to the `if`, then, if it went on to `onward`, the rest."""

    def replay(regs):
        nxt = first(regs)
        if nxt != onward:
            raise RegionExit(first_width, nxt)
        try:
            return rest(regs)
        except Partial as part:
            raise Partial(first_width + part.done, part.error) from None
    return replay


def _ending(plan: _Region, fn, q: int, ins, size: int, jump_target):
    """("goto", target) or ("if", test holder, target holder, true pc, false pc) for the
    instruction ending the region, or None when its targets are unsound."""
    if type(ins) is bc.Goto:
        target, bad = jump_target(fn.name, q, q + ins.pc_offset, size)
        return None if bad is not None else ("goto", target)
    t_pc, t_bad = jump_target(fn.name, q, q + ins.true_offset, size)
    f_pc, f_bad = jump_target(fn.name, q, q + ins.false_offset, size)
    test, target = plan.holder(ins.test), plan.holder(ins.target)
    if t_bad is not None or f_bad is not None or not (_readable(test) and _readable(target)):
        return None
    return ("if", test, target, t_pc, f_pc)


def _layout(plan: _Region, finals: dict, lo: int, hi: int, ending):
    """Where each value lives in the handler's working list `d`: `d[:hi - lo]` are the final
    values of registers lo..hi-1 (written to the register file in one slice at the end), the
    rest is scratch. Returns (position of each holder, the template `d` starts as, the entry
    registers to read and their positions, the copies (from, to) to make before writing)."""
    n = hi - lo
    template = [None] * n
    at: dict[tuple, int] = {}
    # statics sit wherever a final register holds them (the template has them there)
    for r, h in finals.items():
        if h[0] == _CONST:
            template[r - lo] = plan.statics[h[1]]
            at.setdefault(h, r - lo)
    # the outputs of a kernel with several outputs are written as one slice of scratch
    for step in plan.steps:
        if step[0] == "kernel" and len(step[1]) > 1:
            for h in step[1]:
                at[h] = len(template)
                template.append(None)
    # other computed values and made objects: at a final register holding them, or scratch
    unwritten = [r for r in range(lo, hi) if r not in finals]
    for r, h in sorted(finals.items()):
        if h[0] != _CONST and h[0] != _ENTRY:
            at.setdefault(h, r - lo)
    reads = [h for step in plan.steps for h in step[-1]]
    if ending is not None and ending[0] == "if":
        reads += [ending[1], ending[2]]
    needed = reads + [h for r, h in sorted(finals.items())]
    needed += [(_VALUE, v[1]) for step in plan.steps for v in step[1]]
    needed += [(_ENTRY, r) for r in unwritten]
    # the entry values read are one slice of scratch, copied from the registers at once
    needed = sorted({h for h in needed if h[0] == _ENTRY}) + needed
    for h in needed:
        if h not in at:
            at[h] = len(template)
            template.append(plan.statics[h[1]] if h[0] == _CONST else None)
    entries = sorted({h[1] for h in at if h[0] == _ENTRY})
    copies = [(at[h], r - lo) for r, h in sorted(finals.items())
              if h[0] != _CONST and at[h] != r - lo]
    copies += [(at[(_ENTRY, r)], r - lo) for r in unwritten if at[(_ENTRY, r)] != r - lo]
    return at, template, entries, copies


def _handler(vm, plan: _Region, nregs: int, ending, end_pc: int, width: int, replay,
             prefix=None):
    """The region's handler (see the module's docstring), working on one list `d` laid out
    by `_layout`. `prefix`: (handler, width) of the region up to the `if` a guard step
    stands for, which runs instead when that `if` goes elsewhere."""
    prefix_handler, prefix_width = prefix or (None, 0)
    finals = dict(plan.regs)
    lo, hi = min(finals), max(finals) + 1
    # storages and tensors still held at the end are made; the others are only counted
    kept_tensors = sorted({h[1] for h in finals.values() if h[0] == _TENSOR})
    kept_storages = sorted({h[1] for h in finals.values() if h[0] == _STORAGE}
                           | {plan.tensors[t][0] for t in kept_tensors})
    for k in kept_storages:
        finals.setdefault(("storage", k), (_STORAGE, k))  # made even when no register holds it
    held = {r: h for r, h in finals.items() if type(r) is int}
    at, template, entries, copies = _layout(plan, held, lo, hi, ending)
    for k in kept_storages:
        if (_STORAGE, k) not in at:
            at[(_STORAGE, k)] = len(template)
            template.append(None)
    n = hi - lo
    entry_at = [at[(_ENTRY, r)] for r in entries]
    read_entries = _getter(entries)
    contiguous = entry_at == list(range(entry_at[0], entry_at[0] + len(entry_at))) \
        if entry_at else True
    e0, e1 = (entry_at[0], entry_at[0] + len(entry_at)) if entry_at else (0, 0)
    steps = tuple(_with_drops(plan, set(held.values()) | (
        {ending[1], ending[2]} if ending is not None and ending[0] == "if" else set()) | {
        plan.storage_tensor[k][0] for k in kept_storages if k in plan.storage_tensor}, at))
    # each storage made with the tensor written into it (rvmdbg.vm.escaped reads it)
    made_storages = tuple((at[(_STORAGE, k)], *plan.storages[k],
                           at[plan.storage_tensor[k][0]] if k in plan.storage_tensor else -1, k)
                          for k in kept_storages)
    made_tensors = tuple((at[(_TENSOR, t)], at[(_STORAGE, plan.tensors[t][0])],
                          *plan.tensors[t][1:]) for t in kept_tensors)
    allocates = bool(plan.storages)
    net = plan.allocated - plan.freed
    # --max-bytes: what the region allocates at most at once, beside what its kills count
    # again as living on (both before the first allocation, an upper bound)
    peak = plan.peak + plan.orphaned
    pool, events = vm.pool, tuple(plan.pool_events)
    if pool is not None:  # the pool grows by at most what rounding adds to each allocation
        peak += sum(round_to_page(e) - e for takes, e, _ in events if takes)
    orphaned = plan.orphaned
    entry_kills = tuple(plan.entry_kills)
    copies = tuple(copies)
    scratch = len(template) > n
    frames, max_bytes = vm.frames, vm.limits.max_bytes
    branch, target_pc, call = False, end_pc, None
    if ending is not None and ending[0] == "goto":
        target_pc = ending[1]
    elif ending is not None and ending[0] == "call":
        call = ending[1]
    elif ending is not None:
        branch = True
        _, test_h, target_h, t_pc, f_pc = ending
        test_i, target_i = at[test_h], at[target_h]
        # `load_consti $k v; if $x $k`: a bool test is compared by identity (as the if's
        # handler), any other through its Python number
        known = plan.statics[target_h[1]] if target_h[0] == _CONST else _UNKNOWN
        value = number_of(known) if type(known) in SCALAR_TYPES else _UNKNOWN
        bool_value = {1: np.True_, 0: np.False_}.get(value) if value is not _UNKNOWN else None

    def region(regs):
        if (vm.live_bytes + vm.pool_slack + vm.orphan_bytes + peak > max_bytes
                or len(regs) != nregs):
            return replay(regs)  # the handlers check each allocation and kernel
        for r in entry_kills:
            if type(regs[r]) is StorageObject:
                return replay(regs)  # a storage from before: its kill's accounting
        d = template.copy()
        if contiguous:
            d[e0:e1] = read_entries(regs)
        else:
            for p, v in zip(entry_at, read_entries(regs)):
                d[p] = v
        try:
            for step in steps:
                step(d)
        except _Branched:  # nothing written yet: the instructions up to the if run alone
            raise RegionExit(prefix_width, prefix_handler(regs)) from None
        except Exception:
            return replay(regs)  # nothing written yet: the handlers fail where stepping does
        if allocates:
            owner = frames[-1]
            account = owner.account
            if account is None:
                owner.account = account = ByteAccount()
            buffers = {}
            if pool is not None:  # in the region's order, so a kill's buffer is reused
                for takes, e, k in events:
                    if takes:
                        account.pooled += pool.take(e)
                        buffers[k] = pool.last_buffer
                    else:
                        account.pooled -= pool.give(e, buffers[k])
            for p, size, alignment, hint, released, written, k in made_storages:
                # StorageObject(...) without its Python-level __init__ (8 per LSTM step)
                st = d[p] = _new(StorageObject)
                st.size = size
                st.alignment = alignment
                st.dtype_hint = hint
                st.owner = account
                st.released = released
                st.tensor = d[written] if written >= 0 else None
                st.buffer = buffers.get(k)
            for p, s, offset, shape, dtype in made_tensors:
                d[p] = TensorPlaceholder(d[s], offset, shape, dtype)
            account.owned_bytes += net
            vm.live_bytes += net
        vm.orphan_bytes += orphaned  # (entry kills left only values that are no storage)
        for src, dst in copies:
            d[dst] = d[src]
        if branch:
            test, target = d[test_i], d[target_i]
        if scratch:
            del d[n:]
        regs[lo:hi] = d
        if not branch:
            if call is None:
                return target_pc
            try:
                return call(regs)
            except Exception as exc:
                raise Partial(width - 1, exc) from None
        if type(test) is np.bool_ and bool_value is not None:
            return t_pc if test is bool_value else f_pc
        try:
            return t_pc if number_of(test) == number_of(target) else f_pc
        except Exception as exc:
            raise Partial(width - 1, exc) from None
    return region


# A large tensor the region computes and no register holds at the end is let go after its
# last use, as its kill would (small ones live until the handler returns: cheaper).
_DROP_BYTES = 1 << 16


def _with_drops(plan: _Region, kept: set, at: dict):
    """The steps as `run(d)` callables, each followed, where one is due, by a step that
    drops the large values no later step reads (`kept`: the values read at the end)."""
    last_use = {}
    for i, step in enumerate(plan.steps):
        if step[0] == "kernel":
            for h, (shape, dtype) in zip(step[1], step[3]):
                if h not in kept and dtype_nbytes(shape, dtype) >= _DROP_BYTES:
                    last_use[h] = i
        for h in step[-1]:
            if h in last_use:
                last_use[h] = i
    due: dict[int, list] = {}
    for h, i in last_use.items():
        due.setdefault(i, []).append(at[h])
    for i, step in enumerate(plan.steps):
        checks = None
        if step[0] == "kernel" and plan.unshared:
            # an output counted as referenced nowhere else must be a new object, and no
            # output may be a view of one before its storage's kill (stepping's refcount)
            fresh = tuple(k for k, h in enumerate(step[1]) if h[1] in plan.unshared)
            watch = tuple(at[h] for h in step[-1]
                          if h[0] == _VALUE and plan.unshared.get(h[1], -1) > i)
            if fresh or watch:
                checks = (fresh, watch)
        yield _step(step, at, checks)
        if i in due:
            yield _dropper(tuple(due[i]))


def _dropper(positions: tuple):
    def drop(d):
        for p in positions:
            d[p] = None
    return drop


def _getter(indices: list):
    """`get(values) -> tuple` of the values at `indices` (a tuple even of one or none)."""
    if not indices:
        return lambda values: ()
    if len(indices) == 1:
        i0 = indices[0]
        return lambda values: (values[i0],)
    return operator.itemgetter(*indices)


def _step(step: tuple, at: dict, checks=None):
    """One computing step as `run(d)`, writing the values it computes into `d`."""
    kind, outs, reads = step[0], [at[h] for h in step[1]], [at[h] for h in step[-1]]
    if kind == "guard":
        return _guard(step, reads)
    o = outs[0]
    if kind == "kernel":
        return _kernel_step(step[2], tuple(reads), step[3], outs, *(checks or ((), ())))
    if kind == "adt":
        tag, con = step[2], step[3]
        gather = _getter(reads)

        def adt(d):
            d[o] = ADTValue(tag, con, gather(d))
        return adt
    if kind == "field":
        field_index, a = step[2], reads[0]

        def field(d):
            d[o] = d[a].fields[field_index]
        return field
    func_index, name = step[2], step[3]
    gather = _getter(reads)

    def closure(d):
        d[o] = VMClosure(func_index, name, gather(d))
    return closure


def _view_check(watch: tuple):
    """`viewed(outs, d)`: whether any of `outs` is one of the values at `watch` in `d`, or a
    view of one (its base, its base's base...); one call per kernel, specialised for the
    commonest one or two watched values."""
    if len(watch) == 1:
        w0 = watch[0]

        def viewed(outs, d):
            x = d[w0]
            for v in outs:
                while v is not None:
                    if v is x:
                        return True
                    v = getattr(v, "base", None)
            return False
    elif len(watch) == 2:
        w0, w1 = watch

        def viewed(outs, d):
            x, y = d[w0], d[w1]
            for v in outs:
                while v is not None:
                    if v is x or v is y:
                        return True
                    v = getattr(v, "base", None)
            return False
    else:
        def viewed(outs, d):
            xs = [d[w] for w in watch]
            for v in outs:
                while v is not None:
                    for x in xs:
                        if v is x:
                            return True
                    v = getattr(v, "base", None)
            return False
    return viewed


def _guard(step: tuple, reads: list):
    """The step standing for an `if` a region runs on through: raises _Branched unless the
    `if` goes on to the next instruction (its test compared as the if's handler does)."""
    (t_pc, f_pc, onward), known = step[2], step[3]
    test_i, target_i = reads
    # the comparison goes on when it is true (false) and the true (false) target is onward
    want = None if t_pc == f_pc else t_pc == onward
    value = number_of(known) if type(known) in SCALAR_TYPES else None
    bool_value = BOOL_OF.get(value) if type(value) is int else None

    def guard(d):
        x = d[test_i]
        if type(x) is np.bool_ and bool_value is not None:  # True and False are unique
            taken = x is bool_value
        else:
            taken = number_of(x) == number_of(d[target_i])
        if taken != want and want is not None:
            raise _Branched
    return guard


def _scalar_caller(impl, at: tuple):
    """`compute(d)` of a kernel with a 0-d output: through the operator's 0-d function when
    it has one for these inputs (as the kernel's handler), else the kernel itself."""
    plan = getattr(impl, "scalar_fast", None)
    if plan is not None and len(at) <= 2 and all(
            type(op) is not int or 0 <= op < len(at) for op in plan[1]):
        return kernel_caller(impl, at)
    if len(at) == 1:
        a0 = at[0]
        return lambda d: impl([d[a0]])
    if len(at) == 2:
        a0, a1 = at
        return lambda d: impl([d[a0], d[a1]])
    gather = _getter(list(at))
    return lambda d: impl([*gather(d)])


def _kernel_step(impl, at: tuple, layouts: tuple, outs: list, fresh=(), watch=()):
    """A kernel call on `d[at]` writing `d[outs]`, its outputs checked against the tensors
    laid out for them (type, shape and dtype; anything else raises _Recheck for the handlers
    to decide). `fresh`: the outputs (by index) that must be new objects, `watch`: the
    positions of values no output may be or view (see `_with_drops`)."""
    ndarray = np.ndarray
    if len(layouts) > 1:
        gather, nout = _getter(list(at)), len(layouts)
        o0, o1 = outs[0], outs[0] + nout  # contiguous (see _layout)

        types, shapes = (ndarray,) * nout, tuple(shape for shape, _ in layouts)
        dtypes = tuple(dtype for _, dtype in layouts)
        viewed = _view_check(watch) if watch else None

        def kernel_n(d):
            res = impl([*gather(d)])
            if type(res) is not tuple or len(res) != nout:
                raise _Recheck
            # dtypes compare by identity first, then by value (as `out.dtype != dtype`)
            if (tuple(map(type, res)) != types or tuple(map(_shape, res)) != shapes
                    or tuple(map(_dtype, res)) != dtypes):
                raise _Recheck
            if viewed is not None and viewed(res, d):
                raise _Recheck
            for k in fresh:
                if _refcount(res[k]) != 2:  # the tuple and the argument
                    raise _Recheck
            d[o0:o1] = res
        return kernel_n
    o = outs[0]
    shape, dtype = layouts[0]
    scalar = dtype.type if not shape and dtype.type in SCALAR_TYPES else None
    if scalar is not None:
        compute = _scalar_caller(impl, at)

        def scalar_kernel(d):
            out = compute(d)
            if type(out) is not scalar:
                raise _Recheck
            d[o] = out
        return scalar_kernel
    if fresh or watch:  # (a 0-d output is a scalar: never a view, never counted)
        gather = _getter(list(at))

        viewed = _view_check(watch) if watch else None

        def kernel_checked(d):
            out = impl([*gather(d)])
            if type(out) is not ndarray or out.shape != shape or (
                    out.dtype is not dtype and out.dtype != dtype):
                raise _Recheck
            if fresh and _refcount(out) != 2:  # `out` and the argument: a new object
                raise _Recheck
            if viewed is not None and viewed((out,), d):
                raise _Recheck
            d[o] = out
        return kernel_checked
    if len(at) == 1:
        a0 = at[0]

        def kernel1(d):
            out = impl([d[a0]])
            if type(out) is not ndarray or out.shape != shape or (
                    out.dtype is not dtype and out.dtype != dtype):
                raise _Recheck
            d[o] = out
        return kernel1
    if len(at) == 2:
        a0, a1 = at

        def kernel2(d):
            out = impl([d[a0], d[a1]])
            if type(out) is not ndarray or out.shape != shape or (
                    out.dtype is not dtype and out.dtype != dtype):
                raise _Recheck
            d[o] = out
        return kernel2
    gather = _getter(list(at))

    def kernel(d):
        out = impl([*gather(d)])
        if type(out) is not ndarray or out.shape != shape or (
                out.dtype is not dtype and out.dtype != dtype):
            raise _Recheck
        d[o] = out
    return kernel
