"""The fast paths of `VirtualMachine.run()`: each function's handler table with blocks.

`fuse()` makes, once per function on the first `run()`, the table `run()` dispatches on:
whole regions of tensor code (`rvmdbg/vm/regions.py`), constant size + storage + tensor +
kernel call as one handler with a scalar kernel inlined where it can be, and runs of moves,
loads and kills. Every block keeps the contract of `rvmdbg/vm/blocks.py`; `step()` never
uses them.
"""
from __future__ import annotations

import operator
from sys import getrefcount as _refcount

import numpy as np

from rvmdbg.scalars import SCALAR_TYPES
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.blocks import MAX_BLOCK, Partial, one_by_one
from rvmdbg.vm.handlers import consti, jump_target, kernel_caller, within_max_bytes
from rvmdbg.vm.objects import ByteAccount, StorageObject, dtype_nbytes
from rvmdbg.vm.regions import region_at, storage_registers
from rvmdbg.vm.state import BOOL_OF, is_tensor, number_of


def _fuse_alloc_kernel(vm, fi, p, instructions, singles):
    """`load_const $s; alloc_storage $st $s; load_const $o; alloc_tensor $t $st $o;
    invoke_packed k (in: ..., out: $t)` as one handler, or None when the five instructions
    at `p` are not that shape. The storage size, offset and fit are checked here, once; the
    kernel's output goes straight into $t (its placeholder would be overwritten unseen)."""
    if p + 5 > len(instructions):
        return None
    lc1, ast, lc2, atn, ipk = instructions[p:p + 5]
    if not (type(lc1) is bc.LoadConst and type(ast) is bc.AllocStorage
            and type(lc2) is bc.LoadConst and type(atn) is bc.AllocTensor
            and type(ipk) is bc.InvokePacked):
        return None
    s, st, o, t = lc1.dst, ast.dst, lc2.dst, atn.dst
    constants, kernels = vm.constants, vm.exe.kernels
    # Registers may alias (reused registers): the writes below keep the instructions' order,
    # so the last one wins as it would; only `$o` must not replace the storage in `$st`.
    if not (ast.size == s and atn.storage == st and atn.offset == o and ipk.output_size == 1
            and len(ipk.args) >= 1 and ipk.args[-1] == t and o != st
            and 0 <= lc1.const_index < len(constants) and 0 <= lc2.const_index < len(constants)
            and 0 <= ipk.packed_index < len(kernels)):
        return None
    inputs = tuple(ipk.args[:-1])
    if set(inputs) & {s, st, o, t}:
        return None  # the kernel would read a register the block writes first
    kernel = kernels[ipk.packed_index]
    impl = kernel.impl
    if (kernel.builtin or impl is None or kernel.num_inputs != len(inputs)
            or kernel.num_outputs != 1):
        return None
    c_size, c_off = constants[lc1.const_index], constants[lc2.const_index]
    if not (is_tensor(c_size) and is_tensor(c_off)):
        return None
    try:
        size = operator.index(number_of(c_size))
        off = number_of(c_off)
    except (TypeError, ValueError):
        return None
    shape, dtype = tuple(atn.shape), np.dtype(atn.dtype)
    if size < 0 or type(off) is not int or off < 0 or off + dtype_nbytes(shape, dtype) > size:
        return None  # the single handlers report it
    # the block computes before it allocates the output's storage: both are counted first
    impl = within_max_bytes(vm, kernel, impl, also=size)
    compute = kernel_caller(impl, inputs)
    alignment, hint, nxt = ast.alignment, ast.dtype_hint, p + 5
    # A 0-d output is a NumPy scalar: its type alone says its dtype and shape.
    scalar_type = dtype.type if not shape and dtype.type in SCALAR_TYPES else None
    frames, max_bytes, pool = vm.frames, vm.limits.max_bytes, vm.pool
    # The two commonest kernels of scalar code, `x op constant` and `x op y`, are called
    # inline (as `compute` would): one Python call less per block.
    plan = getattr(impl, "scalar_fast", None)
    inline, fast, ra, rb, c = 0, None, 0, 0, None
    if plan is not None and len(inputs) <= 2:
        fast, operands = plan
        kinds = tuple(type(op) is int for op in operands)
        if kinds == (True, False) and len(inputs) == 1 and operands[0] == 0:
            inline, ra, c = 1, inputs[0], operands[1]
        elif kinds == (True, True) and len(inputs) == 2 and operands == (0, 1):
            inline, (ra, rb) = 2, inputs
    if scalar_type is not None and inline:
        branch = _branch_after(vm, fi, p + 5, instructions, t)
        width = 7 if branch is not None else 5
        replay = one_by_one(tuple(singles[p:p + width]))
        return _alloc_scalar_kernel(vm, impl, fast, inline, ra, rb, c, scalar_type, size,
                                    (s, c_size, st, alignment, hint, o, c_off, t), branch,
                                    replay, nxt), width
    width = 5
    replay = one_by_one(tuple(singles[p:p + width]))

    def alloc_kernel(regs):
        try:
            if inline == 1:
                a = regs[ra]
                out = impl([a]) if a.shape else fast(a, c)
            elif inline == 2:
                a = regs[ra]
                b = regs[rb]
                out = impl([a, b]) if a.shape or b.shape else fast(a, b)
            else:
                out = compute(regs)
        except Exception:
            return replay(regs)  # fails again, at the kernel, after the allocations
        live = vm.live_bytes + size
        if ((live + vm.orphan_bytes > max_bytes) if pool is None else
                (vm.live_bytes + vm.pool_slack + pool.growth(size) + vm.orphan_bytes
                 > max_bytes)) or (type(out) is not scalar_type if scalar_type is not None else
                                type(out) is not np.ndarray or out.dtype is not dtype
                                or out.shape != shape):
            return replay(regs)  # the limit, or an output the full check must look at
        owner = frames[-1]
        account = owner.account
        if account is None:
            owner.account = account = ByteAccount()
        vm.live_bytes = live
        account.owned_bytes += size
        buffer = None
        if pool is not None:
            account.pooled += pool.take(size)
            buffer = pool.last_buffer
        regs[s] = c_size
        regs[st] = StorageObject(size, alignment, hint, account, out, buffer)
        regs[o] = c_off
        regs[t] = out
        return nxt
    return alloc_kernel, width


def _branch_after(vm, fi, q, instructions, out_reg):
    """(consti register, its value, its scalar, bool scalar it equals or None, true pc,
    false pc) when the instructions at `q` are `load_consti $k v; if $out $k` testing the
    kernel's output `$out` with sound targets; else None."""
    if q + 2 > len(instructions):
        return None
    lc, br = instructions[q], instructions[q + 1]
    if type(lc) is not bc.LoadConsti or type(br) is not bc.If:
        return None
    if br.target != lc.dst or br.test != out_reg or lc.dst == out_reg:
        return None
    fn = vm.exe.functions[fi]
    size = len(instructions)
    t_pc, t_bad = jump_target(fn.name, q + 1, q + 1 + br.true_offset, size)
    f_pc, f_bad = jump_target(fn.name, q + 1, q + 1 + br.false_offset, size)
    if t_bad is not None or f_bad is not None:
        return None
    return lc.dst, lc.value, consti(lc.value), BOOL_OF.get(lc.value), t_pc, f_pc


def _alloc_scalar_kernel(vm, impl, fast, inline, ra, rb, c, scalar_type, size, writes, branch,
                         replay, nxt):
    """The block of `_fuse_alloc_kernel` for a kernel with a scalar output and a scalar path
    (`x op constant`, inline 1, or `x op y`, inline 2), ending, when `branch` is given, with
    `load_consti $k v; if $out $k` on the output: the commonest blocks of scalar code,
    specialised (each test done once, no `if` per variant at run time)."""
    s, c_size, st, alignment, hint, o, c_off, t = writes
    frames, max_bytes, pool = vm.frames, vm.limits.max_bytes, vm.pool
    k, value, k_value, bool_value, t_pc, f_pc = branch or (0, 0, None, None, 0, 0)

    binary = inline == 2

    def alloc_scalar_kernel(regs):
        a = regs[ra]
        try:
            if binary:
                b = regs[rb]
                out = impl([a, b]) if a.shape or b.shape else fast(a, b)
            else:
                out = impl([a]) if a.shape else fast(a, c)
        except Exception:
            return replay(regs)  # fails again, at the kernel, after the allocations
        live = vm.live_bytes + size
        if ((live + vm.orphan_bytes > max_bytes) if pool is None else
                (vm.live_bytes + vm.pool_slack + pool.growth(size) + vm.orphan_bytes
                 > max_bytes)) or type(out) is not scalar_type:
            return replay(regs)  # the limit, or an output the full check must look at
        owner = frames[-1]
        account = owner.account
        if account is None:
            owner.account = account = ByteAccount()
        vm.live_bytes = live
        account.owned_bytes += size
        buffer = None
        if pool is not None:
            account.pooled += pool.take(size)
            buffer = pool.last_buffer
        regs[s] = c_size
        regs[st] = StorageObject(size, alignment, hint, account, out, buffer)
        regs[o] = c_off
        regs[t] = out
        if branch is None:
            return nxt
        regs[k] = k_value
        if type(out) is np.bool_:  # True and False are unique
            return t_pc if out is bool_value else f_pc
        return t_pc if out == value else f_pc
    return alloc_scalar_kernel


def _fuse_simple_run(vm, fi, p, instructions, stops):
    """(handler, width) of a run of moves, constant loads and kills starting at `p`, ended
    by a `goto`, by `load_consti $r; if $x $r`, or before a pc in `stops` (where another
    block starts), 2..MAX_BLOCK instructions in all; else None. These instructions cannot
    fail once decoded, except the `if` reading its test."""
    constants, pool = vm.constants, vm.pool
    ops = []
    q = p
    while q < len(instructions) and len(ops) < MAX_BLOCK and (q == p or q not in stops):
        ins = instructions[q]
        kind = type(ins)
        if kind is bc.Move:
            ops.append((0, ins.src, ins.dst))
        elif kind is bc.LoadConst and 0 <= ins.const_index < len(constants):
            ops.append((1, constants[ins.const_index], ins.dst))
        elif kind is bc.LoadConsti:
            ops.append((1, consti(ins.value), ins.dst))
        elif kind is bc.KillRegister:
            ops.append((2, ins.dst, None))
        else:
            break
        q += 1
    # how the run ends: falling through, a goto, or a compare-and-branch
    fn = vm.exe.functions[fi]
    size = len(instructions)
    end_kind, end_info = None, None
    if q in stops:
        pass
    elif q < size and len(ops) < MAX_BLOCK and type(instructions[q]) is bc.Goto:
        target, bad = jump_target(fn.name, q, q + instructions[q].pc_offset, size)
        if bad is None:
            end_kind, end_info = "goto", target
    elif q < size and len(ops) < MAX_BLOCK and type(instructions[q]) in _CALLS:
        end_kind, end_info = "call", q
    elif (q < size and type(instructions[q]) is bc.If and ops and ops[-1][0] == 1
          and type(instructions[q - 1]) is bc.LoadConsti and len(ops) < MAX_BLOCK):
        br = instructions[q]
        t_pc, t_bad = jump_target(fn.name, q, q + br.true_offset, size)
        f_pc, f_bad = jump_target(fn.name, q, q + br.false_offset, size)
        if (br.target == instructions[q - 1].dst and br.test != br.target
                and t_bad is None and f_bad is None):
            value = instructions[q - 1].value
            end_kind, end_info = "if", (br.test, value, t_pc, f_pc)
    width = len(ops) + (end_kind is not None)
    if width < 2:
        return None
    nxt = p + len(ops)
    ops = tuple(ops)
    # where it goes: 0 falls through to nxt, 1 jumps to `target`, 2 branches on `test`,
    # 3 calls or returns (the instruction's own handler)
    ending = {None: 0, "goto": 1, "if": 2, "call": 3}[end_kind]
    target = end_info if ending == 1 else nxt
    call = vm._code[fi][end_info] if ending == 3 else None
    test, value, t_pc, f_pc = end_info if ending == 2 else (0, None, nxt, nxt)
    bool_value = BOOL_OF.get(value)

    def simple_run(regs):
        for kind, a, b in ops:
            if kind == 1:  # load_const, load_consti
                regs[b] = a
            elif kind == 2:  # kill_register (as its handler)
                v = regs[a]
                if type(v) is StorageObject and not v.released:
                    v.released = True
                    account = v.owner
                    if account.owned_bytes is not None:
                        account.owned_bytes -= v.size
                        vm.live_bytes -= v.size
                        if pool is not None:
                            account.pooled -= pool.give(v.size, v.buffer)
                        if type(v.tensor) is np.ndarray and _refcount(v.tensor) > 2:
                            vm.orphan_bytes += v.size
                regs[a] = None
            else:  # move
                regs[b] = regs[a]
        if ending < 2:
            return target
        if ending == 3:
            try:
                return call(regs)
            except Exception as exc:
                raise Partial(nxt - p, exc) from None
        x = regs[test]
        if type(x) is np.bool_:  # True and False are unique; `np.True_ == 1` costs 0.9 us
            return t_pc if x is bool_value else f_pc
        if type(x) not in SCALAR_TYPES:
            try:
                x = x.item()
            except Exception as exc:
                raise Partial(nxt - p, exc) from None
        return t_pc if x == value else f_pc
    return simple_run, width


# Instructions that push or pop a frame: one may end a block (its handler runs last).
_CALLS = (bc.Invoke, bc.InvokeClosure, bc.Ret)


def fuse(vm, fi, instructions, singles, register_file_size):
    """(handlers, widths, blocks) of function `fi` for run(): `handlers[p]` is a block's
    handler where one starts (`widths[p]` its length), else the single handler (width 1);
    `blocks` lists (start, width) of every block."""
    from rvmdbg.vm.regions import region_at, storage_registers
    handlers, widths, blocks = list(singles), [1] * len(singles), []
    size = len(instructions)
    # A block may only hold instructions whose registers the decoder accepted.
    sound = [all(0 <= r < register_file_size for r in ins.registers()) for ins in instructions]
    # Tensor code runs as whole straight-line regions (rvmdbg/vm/regions.py); the blocks
    # below serve scalar code and whatever lies between regions.
    # A jump into a block runs its instructions one by one: blocks start at jump targets.
    # (An if's fall-through does not count: a region may run on through it, see regions.py.)
    targets = {t for pc, ins in enumerate(instructions) for t in ins.jump_targets(pc)
               if t != pc + 1 or type(ins) is not bc.If}
    regions, covered = {}, set()
    storages = storage_registers(instructions)
    p = 0
    while p < size:
        made, stop = region_at(vm, fi, p, instructions, singles, sound, MAX_BLOCK, targets,
                               storages=storages)
        if made is not None:
            regions[p] = made
            covered.update(range(p, stop))
        p = max(p + 1, stop)  # no region starts inside a span that made none
    alloc_kernels = {}
    for p in range(size):
        if (type(instructions[p]) is bc.LoadConst and all(sound[p:p + 5])
                and p not in covered):
            fused = _fuse_alloc_kernel(vm, fi, p, instructions, singles)
            if fused is not None:
                alloc_kernels[p] = fused
    stops = targets | alloc_kernels.keys() | regions.keys()
    p = 0
    while p < size:
        if p in regions:
            made = regions[p]
        elif p in alloc_kernels:
            made = alloc_kernels[p]
        else:
            made = _fuse_simple_run(vm, fi, p, instructions, stops)
        if made is not None and p not in regions and covered.intersection(range(p, p + made[1])):
            made = None  # a block stops where a region starts
        if made is not None and all(sound[p:p + made[1]]):
            handlers[p], widths[p] = made
            blocks.append((p, made[1]))
            p += made[1]
        else:
            p += 1
    return handlers, widths, blocks
