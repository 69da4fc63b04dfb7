"""The Relay VM's instruction set at work: one handler per opcode, in opcode order.

This is the "decode" and "execute" of the fetch-decode-execute cycle (View 1,
`rvmdbg/views/cycle.py`). The machine (`rvmdbg/vm/machine.py`) decodes each instruction
once by calling `HANDLERS[opcode](vm, func_index, pc, instruction)`, the table at the end of
this file; the factory checks the operands and returns `handler(regs) -> next pc`, a closure
that performs exactly the instruction's effect on the current register file and returns the
next pc, or `CALL` when it pushed or popped a frame, or `HALT` when the outermost frame
returned. A handler writes its registers last, so a failing one leaves the state untouched.

Shared with the fast paths (`rvmdbg/vm/fastpath.py`, `rvmdbg/vm/regions.py`): `consti`,
`jump_target`, `within_max_bytes` and `kernel_caller`; with the machine: `Malformed`, `raiser`.
"""
from __future__ import annotations

import operator
from sys import getrefcount as _refcount

import numpy as np

from rvmdbg.limits import FRAME_FLOOR, depth_stop, vm_frame_bytes
from rvmdbg.scalars import SCALAR_TYPES, to_runtime
from rvmdbg.values import ADTValue
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.escaped import escaped_bytes
from rvmdbg.vm.kernels import NoRoom
from rvmdbg.vm.objects import (ByteAccount, StorageObject, TensorPlaceholder, VMClosure,
                                dtype_nbytes)
from rvmdbg.vm.state import (BOOL_OF, CALL, HALT, Frame, VMError, is_tensor, limit_error,
                             number_of, summary)
from rvmdbg.i18n import _, ngettext

_new_object = object.__new__

# Scalars (`rvmdbg.scalars`): `get_tag` and `load_consti` results for small values are shared,
# so an `if` can recognise its operand by identity.
_TAG_CACHE = [np.int32(t) for t in range(256)]
_CONSTI_CACHE = {v: np.int64(v) for v in range(-1, 256)}

# A bound operand that no register value is (`is` never matches it).
_UNBOUND = object()


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _shape_text(shape, dtype) -> str:
    return f"[{', '.join(str(int(d)) for d in shape)}] {dtype}"


def _shape_from(v, reg: int, what: str) -> tuple:
    if type(v) is not np.ndarray or v.ndim != 1 or v.dtype.kind not in "iu":
        raise VMError(_("{op}: ${reg} holds {value}, not a 1-d integer shape tensor").format(
            op=what, reg=reg, value=summary(v)))
    shape = tuple(int(d) for d in v.tolist())
    if any(d < 0 for d in shape):
        raise VMError(_("{op}: negative dimension in shape {shape}").format(
            op=what, shape=list(shape)))
    return shape


# ---------------------------------------------------------------- handlers, one per opcode
#
# Each factory gets (vm, func_index, pc, instruction) and returns `handler(regs) -> next pc`.
# Operands, next pcs and constants are bound at decode time so the handler body does only the
# instruction's work. Handlers write registers last, so a failing one leaves state untouched.


class Malformed(Exception):
    """An instruction that cannot run as decoded; it becomes a VMError when executed."""


def raiser(message: str):
    def malformed(regs):
        raise VMError(message)
    return malformed


def _move(vm, fi, pc, ins):
    src, dst, nxt = ins.src, ins.dst, pc + 1

    def move(regs):
        regs[dst] = regs[src]
        return nxt
    return move


def within_max_bytes(vm, kernel, impl, also: int = 0):
    """`impl`, checking first that the intermediates a fused kernel holds at once fit under
    --max-bytes beside the live tensors (and a storage of `also` bytes about to be allocated,
    which the pool may serve without growing); a kernel without intermediates is left as it is."""
    held = getattr(impl, "intermediate_bytes", 0)
    if held is None and hasattr(impl, "run_within"):
        return _within_room(vm, kernel, impl, also)
    if not held:
        return impl
    max_bytes, pool, size = vm.limits.max_bytes, vm.pool, also

    def checked(values):
        also = size if pool is None or not size else pool.growth(size)
        live = vm.live_bytes + vm.pool_slack + vm.orphan_bytes + also + held
        if live > max_bytes and _still_over(vm, also + held):
            live = vm.live_bytes + vm.pool_slack + vm.orphan_bytes + also + held
            raise limit_error("max_bytes", max_bytes,
                               _("kernel {kernel} would hold {held} bytes of intermediates, "
                                 "bringing live memory to {live} bytes").format(
                                   kernel=kernel.name, held=held, live=live))
        return impl(values)
    checked.intermediate_bytes = held
    if hasattr(impl, "scalar_fast"):
        checked.scalar_fast = impl.scalar_fast
    return checked


def _within_room(vm, kernel, impl, also: int):
    """`impl`, a fused kernel whose intermediates have shapes known only at run time, run so
    that it checks before each operator that what it holds fits beside the live tensors."""
    run_within, max_bytes, pool, size = impl.run_within, vm.limits.max_bytes, vm.pool, also

    def checked(values):
        also = size if pool is None or not size else pool.growth(size)
        while True:  # twice at most: the second time the escaped bytes are exact
            try:
                return run_within(values, max_bytes - vm.live_bytes - vm.pool_slack
                                  - vm.orphan_bytes - also)
            except NoRoom as short:
                if _still_over(vm, also + short.needed):
                    live = vm.live_bytes + vm.pool_slack + vm.orphan_bytes + also + short.needed
                    raise limit_error("max_bytes", max_bytes, _(
                        "kernel {kernel} would hold {held} bytes of intermediates at {op}, "
                        "bringing live memory to {live} bytes").format(
                            kernel=kernel.name, held=short.needed, op=short.op,
                            live=live)) from None
    checked.intermediate_bytes = None
    if hasattr(impl, "scalar_fast"):
        checked.scalar_fast = impl.scalar_fast
    return checked


def _still_over(vm, size: int) -> bool:
    """Whether allocating `size` more bytes passes --max-bytes, once the estimate of the
    bytes of tensors that outlived their storage is made exact (`rvmdbg.vm.escaped`); called
    only when the estimate says it would."""
    if vm.orphan_bytes:
        vm.orphan_bytes = escaped_bytes(vm)
    return vm.live_bytes + vm.pool_slack + vm.orphan_bytes + size > vm.limits.max_bytes


def _ret(vm, fi, pc, ins):
    result, frames, pool = ins.result, vm.frames, vm.pool

    def ret(regs):
        value = regs[result]
        done = frames.pop()
        account = done.account
        if account is not None and account.owned_bytes:
            if pool is not None:  # its storages leave the pool with the tensors in them
                pool.drop(account.pooled, account.owned_bytes)
            # what the frame still owns may have escaped in `value`: an estimate until counted
            vm.live_bytes -= account.owned_bytes
            vm.orphan_bytes += account.owned_bytes
            account.owned_bytes = None
        if frames:
            caller = frames[-1]
            caller.registers[done.caller_return_register] = value
            caller.pc += 1
            return CALL
        vm.halted = True
        vm.result = value
        return HALT
    return ret


def _callee(vm, func_index, what):
    functions = vm.exe.functions
    if not 0 <= func_index < len(functions):
        raise Malformed(_("{what} of function index {index}, but there are {n} "
                           "functions").format(what=what, index=func_index, n=len(functions)))
    return functions[func_index]


def _invoke(vm, fi, pc, ins):
    callee_index, args, dst = ins.func_index, tuple(ins.args), ins.dst
    callee = _callee(vm, callee_index, "invoke")
    if len(args) != len(callee.params):
        raise Malformed(_("invoke passes {n} arguments to @{func}, which takes {m}").format(
            n=len(args), func=callee.name, m=len(callee.params)))
    pad = [None] * (callee.register_file_size - len(args))
    frames, max_depth = vm.frames, vm.limits.max_depth
    # frames count against --max-bytes beside the live tensors (rvmdbg/limits.py)
    max_bytes, cost = vm.limits.max_bytes, vm_frame_bytes(callee.register_file_size)

    def depth_error():
        return depth_stop(vm.limits, len(frames), cost, vm.live_bytes, callee.name)

    if len(args) == 1:
        a0 = args[0]

        def invoke(regs):
            if len(frames) >= max_depth or (len(frames) * cost > FRAME_FLOOR and
                                            len(frames) * cost > max_bytes - vm.live_bytes):
                raise limit_error(*depth_error())
            frames[-1].pc = pc
            vm.pushes = serial = vm.pushes + 1
            frames.append(Frame(callee_index, 0, [regs[a0]] + pad, dst, serial))
            return CALL
    elif len(args) == 0:
        def invoke(regs):
            if len(frames) >= max_depth or (len(frames) * cost > FRAME_FLOOR and
                                            len(frames) * cost > max_bytes - vm.live_bytes):
                raise limit_error(*depth_error())
            frames[-1].pc = pc
            vm.pushes = serial = vm.pushes + 1
            frames.append(Frame(callee_index, 0, pad[:], dst, serial))
            return CALL
    else:
        gather = operator.itemgetter(*args)

        def invoke(regs):
            if len(frames) >= max_depth or (len(frames) * cost > FRAME_FLOOR and
                                            len(frames) * cost > max_bytes - vm.live_bytes):
                raise limit_error(*depth_error())
            frames[-1].pc = pc
            vm.pushes = serial = vm.pushes + 1
            frames.append(Frame(callee_index, 0, [*gather(regs), *pad], dst, serial))
            return CALL
    return invoke


def _invoke_closure(vm, fi, pc, ins):
    closure, args, dst = ins.closure, tuple(ins.args), ins.dst
    functions = vm.exe.functions
    frames, max_depth = vm.frames, vm.limits.max_depth
    # per function, its parameter count and the None registers after its parameters
    pads = [[None] * max(0, f.register_file_size - len(f.params)) for f in functions]
    arities = [len(f.params) for f in functions]
    max_bytes, costs = vm.limits.max_bytes, [vm_frame_bytes(f.register_file_size)
                                             for f in functions]
    nargs = len(args)
    gather = (operator.itemgetter(*args) if nargs > 1
              else (lambda regs: (regs[args[0]],)) if args else (lambda regs: ()))

    def invoke_closure(regs):
        clo = regs[closure]
        if type(clo) is not VMClosure:
            raise VMError(_("invoke_closure: ${reg} holds {value}, not a closure").format(
                reg=closure, value=summary(clo)))
        callee = clo.func_index
        captured = clo.captured
        if len(captured) + nargs != arities[callee]:
            takes = arities[callee] - len(captured)
            raise VMError(ngettext("closure @{func} takes {n} argument, called with {m}",
                                   "closure @{func} takes {n} arguments, called with {m}",
                                   takes).format(func=clo.name, n=takes, m=nargs))
        n = len(frames)
        if n >= max_depth or (n * costs[callee] > FRAME_FLOOR and
                              n * costs[callee] > max_bytes - vm.live_bytes):
            raise limit_error(*depth_stop(vm.limits, n, costs[callee], vm.live_bytes,
                                          clo.name))
        frames[-1].pc = pc
        vm.pushes = serial = vm.pushes + 1
        # Frame(callee, 0, registers, dst, serial) without its Python-level __init__
        frame = _new_object(Frame)
        frame.func_index = callee
        frame.pc = 0
        frame.registers = [*captured, *gather(regs), *pads[callee]]
        frame.caller_return_register = dst
        frame.account = None
        frame.serial = serial
        frames.append(frame)
        return CALL
    return invoke_closure


def kernel_caller(impl, inputs: tuple):
    """`compute(regs) -> output` of a one-output kernel on its input registers, through the
    operator's 0-d function when the kernel has one and the inputs are 0-d (as
    `_invoke_one_output`)."""
    plan = getattr(impl, "scalar_fast", None)
    if plan is not None:
        fast, operands = plan
        if any(type(op) is int and not 0 <= op < len(inputs) for op in operands):
            plan = None
    if plan is None:
        if len(inputs) == 1:
            i0 = inputs[0]
            return lambda regs: impl([regs[i0]])
        gather = list(inputs)
        return lambda regs: impl([regs[r] for r in gather])
    kinds = tuple(type(op) is int for op in operands)
    if kinds == (True, True) and len(inputs) == 2:
        ra, rb = (inputs[op] for op in operands)
        i0, i1 = inputs

        def compute2(regs):
            a = regs[ra]
            b = regs[rb]
            if a.shape or b.shape:
                return impl([regs[i0], regs[i1]])
            return fast(a, b)
        return compute2
    if kinds in ((True, False), (False, True)) and len(inputs) == 1:
        r = inputs[0]
        if kinds[0]:
            c = operands[1]

            def compute_const_second(regs):
                a = regs[r]
                return impl([a]) if a.shape else fast(a, c)
            return compute_const_second
        c = operands[0]

        def compute_const_first(regs):
            a = regs[r]
            return impl([a]) if a.shape else fast(c, a)
        return compute_const_first
    if kinds == (True,) and len(inputs) == 1:
        r = inputs[0]

        def compute1(regs):
            a = regs[r]
            return impl([a]) if a.shape else fast(a)
        return compute1
    gather = list(inputs)
    return lambda regs: impl([regs[x] for x in gather])


def _single_output(kernel, res):
    """A kernel's result as its one output (kernels may return the value or a 1-sequence),
    a 0-d one as its scalar."""
    if isinstance(res, (list, tuple)):
        if len(res) != 1:
            raise VMError(_("kernel {kernel} returned {n} outputs, expected {m}").format(
                kernel=kernel.name, n=len(res), m=1))
        res = res[0]
    return _tensor_output(kernel, res)


def _tensor_output(kernel, v):
    """A kernel output as a runtime tensor: an array, or a scalar for 0-d (a NumPy scalar of
    another type, a float64 for a float32 say, stays as it is for the output check to refuse)."""
    if type(v) is np.ndarray:
        return to_runtime(v)
    if isinstance(v, np.generic):
        return v
    raise VMError(_("kernel {kernel} returned {value}, not a tensor").format(
        kernel=kernel.name, value=summary(v)))


def _check_output(kernel, reg, out, slot):
    """Raise unless `out` fits the tensor allocated in the output register (`slot`)."""
    shape, dtype = getattr(slot, "shape", None), getattr(slot, "dtype", None)
    if shape is None or dtype is None:
        raise VMError(_("kernel {kernel}: output register ${reg} holds {value}, not an "
                        "allocated tensor").format(kernel=kernel.name, reg=reg,
                                                   value=summary(slot)))
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype:
        raise VMError(_("kernel {kernel} produced {made} but output ${reg} was allocated as "
                        "{allocated}").format(kernel=kernel.name, made=_shape_text(out.shape, out.dtype),
                                              reg=reg, allocated=_shape_text(shape, dtype)))


def _invoke_packed(vm, fi, pc, ins):
    kernels = vm.exe.kernels
    if not 0 <= ins.packed_index < len(kernels):
        raise Malformed(_("invoke_packed of kernel {index}, but there are {n} kernels").format(
            index=ins.packed_index, n=len(kernels)))
    kernel = kernels[ins.packed_index]
    nout = ins.output_size
    args = tuple(ins.args)
    inputs, outputs = args[:len(args) - nout], args[len(args) - nout:]
    if kernel.num_inputs != len(inputs) or kernel.num_outputs != nout:
        raise Malformed(_("kernel {kernel} takes {inputs} inputs and {outputs} outputs, "
                           "called with {given_inputs} and {given_outputs}").format(
            kernel=kernel.name, inputs=kernel.num_inputs, outputs=kernel.num_outputs,
            given_inputs=len(inputs), given_outputs=nout))
    impl, nxt = kernel.impl, pc + 1
    if impl is None:
        raise Malformed(_("kernel {kernel} has no implementation").format(kernel=kernel.name))
    impl = within_max_bytes(vm, kernel, impl)

    if kernel.builtin:
        # References: inputs and outputs are any values, and outputs need no allocation.
        def invoke_builtin(regs):
            values = [regs[a] for a in inputs]
            for a, v in zip(inputs, values):
                if type(v) is TensorPlaceholder:
                    raise VMError(_("kernel {kernel} reads ${reg}, an uninitialized "
                                    "tensor").format(kernel=kernel.name, reg=a))
            res = impl(values)
            outs = res if isinstance(res, (list, tuple)) else (res,)
            if len(outs) != nout:
                raise VMError(_("kernel {kernel} returned {n} outputs, expected {m}").format(
                    kernel=kernel.name, n=len(outs), m=nout))
            for r, v in zip(outputs, outs):
                regs[r] = v
            return nxt
        return invoke_builtin

    if nout == 1:
        return _invoke_one_output(vm, kernel, impl, inputs, outputs[0], nxt)

    def invoke_packed_n(regs):  # several outputs (or none)
        res = impl([regs[a] for a in inputs])
        if not isinstance(res, (list, tuple)) or len(res) != nout:
            raise VMError(_("kernel {kernel} returned {value}, expected {n} outputs").format(
                kernel=kernel.name, value=summary(res), n=nout))
        outs = tuple(_tensor_output(kernel, v) for v in res)
        for r, v in zip(outputs, outs):
            _check_output(kernel, r, v, regs[r])
        for r, v in zip(outputs, outs):
            slot = regs[r]
            if type(slot) is TensorPlaceholder:
                slot.storage.tensor = v
            elif type(v) is np.ndarray:
                vm.orphan_bytes += v.nbytes  # written over a tensor: in no storage
            regs[r] = v
        return nxt
    return invoke_packed_n


def _invoke_one_output(vm, kernel, impl, inputs, o0, nxt):
    """The handler of a one-output kernel: `kernel_caller` computes the output (through the
    operator's 0-d function when the kernel has one and the inputs are 0-d, which is what the
    kernel would do), checked against the tensor allocated in `$o0`."""
    compute = kernel_caller(impl, inputs)

    def invoke_packed(regs):
        out = compute(regs)
        if type(out) not in SCALAR_TYPES and (type(out) is not np.ndarray or not out.shape):
            out = _single_output(kernel, out)
        slot = regs[o0]
        try:
            if out.dtype is not slot.dtype or out.shape != slot.shape:
                _check_output(kernel, o0, out, slot)
        except AttributeError:
            _check_output(kernel, o0, out, slot)
        if type(slot) is TensorPlaceholder:
            slot.storage.tensor = out
        elif type(out) is np.ndarray:
            vm.orphan_bytes += out.nbytes  # written over a tensor: in no storage
        regs[o0] = out
        return nxt
    return invoke_packed


def _alloc_tensor(vm, fi, pc, ins):
    storage, offset, dst, nxt = ins.storage, ins.offset, ins.dst, pc + 1
    shape, dtype = tuple(ins.shape), np.dtype(ins.dtype)
    nbytes = dtype_nbytes(shape, dtype)
    # An offset from the constant pool is recognised by identity: its value and end are ready.
    known, known_off = _UNBOUND, 0
    const = _loaded_constant(vm, fi, pc, offset)
    if const is not None:
        try:
            known_off = number_of(const)
        except ValueError:
            known_off = -1
        if type(known_off) is int and known_off >= 0:
            known = const
    end = known_off + nbytes if known is not _UNBOUND else 0

    def alloc_tensor(regs):
        st = regs[storage]
        o = regs[offset]
        if o is known:
            if type(st) is not StorageObject:
                raise VMError(_("{op}: ${reg} holds {value}, not a storage").format(
                    op="alloc_tensor", reg=storage, value=summary(st)))
            if end > st.size:
                raise VMError(_("{op}: {n} bytes at offset {offset} do not fit in a storage of "
                                "{size} bytes").format(op="alloc_tensor", n=nbytes,
                                                        offset=known_off, size=st.size))
            regs[dst] = TensorPlaceholder(st, known_off, shape, dtype)
            return nxt
        off = number_of(o)
        if type(st) is not StorageObject:
            raise VMError(_("{op}: ${reg} holds {value}, not a storage").format(
                op="alloc_tensor", reg=storage, value=summary(st)))
        if off < 0 or off + nbytes > st.size:
            raise VMError(_("{op}: {n} bytes at offset {offset} do not fit in a storage of "
                            "{size} bytes").format(op="alloc_tensor", n=nbytes, offset=off,
                                                    size=st.size))
        regs[dst] = TensorPlaceholder(st, off, shape, dtype)
        return nxt
    return alloc_tensor


def _alloc_tensor_reg(vm, fi, pc, ins):
    storage, offset, shape_register, dst, nxt = (ins.storage, ins.offset, ins.shape_register,
                                                 ins.dst, pc + 1)
    dtype = np.dtype(ins.dtype)

    def alloc_tensor_reg(regs):
        st = regs[storage]
        off = number_of(regs[offset])
        shape = _shape_from(regs[shape_register], shape_register, "alloc_tensor_reg")
        if type(st) is not StorageObject:
            raise VMError(_("{op}: ${reg} holds {value}, not a storage").format(
                op="alloc_tensor_reg", reg=storage, value=summary(st)))
        nbytes = dtype_nbytes(shape, dtype)
        if off < 0 or off + nbytes > st.size:
            raise VMError(_("{op}: {n} bytes at offset {offset} do not fit in a storage of "
                            "{size} bytes").format(op="alloc_tensor_reg", n=nbytes, offset=off,
                                                    size=st.size))
        regs[dst] = TensorPlaceholder(st, off, shape, dtype)
        return nxt
    return alloc_tensor_reg


def _alloc_adt(vm, fi, pc, ins):
    tag, fields, dst, nxt = ins.tag, tuple(ins.fields), ins.dst, pc + 1
    # The bytecode carries only the tag; the compiler's side table gives the constructor name
    # (None for a tuple), which the value's printed and JSON forms need.
    con = (getattr(vm.exe, "adt_constructor", None) or {}).get((fi, pc))

    if not fields:
        value = ADTValue(tag, con, ())  # nullary values are immutable: share one

        def alloc_adt(regs):
            regs[dst] = value
            return nxt
    elif len(fields) == 1:
        f0 = fields[0]

        def alloc_adt(regs):
            regs[dst] = ADTValue(tag, con, (regs[f0],))
            return nxt
    else:
        gather = operator.itemgetter(*fields)

        def alloc_adt(regs):
            regs[dst] = ADTValue(tag, con, gather(regs))
            return nxt
    return alloc_adt


def _alloc_closure(vm, fi, pc, ins):
    callee_index, free_vars, dst, nxt = ins.func_index, tuple(ins.free_vars), ins.dst, pc + 1
    callee = _callee(vm, callee_index, "alloc_closure")
    if len(free_vars) > len(callee.params):
        raise Malformed(_("closure of @{func} captures {n} values but it takes {m} "
                           "parameters").format(func=callee.name, n=len(free_vars),
                                                m=len(callee.params)))
    name = callee.name

    def alloc_closure(regs):
        regs[dst] = VMClosure(callee_index, name, tuple([regs[r] for r in free_vars]))
        return nxt
    return alloc_closure


def _get_field(vm, fi, pc, ins):
    obj, index, dst, nxt = ins.object, ins.field_index, ins.dst, pc + 1

    def get_field(regs):
        v = regs[obj]
        try:
            regs[dst] = v.fields[index]
        except (AttributeError, IndexError, TypeError):
            if type(v) is not ADTValue:
                raise VMError(_("{op}: ${reg} holds {value}, not an ADT value").format(
                    op="get_field", reg=obj, value=summary(v))) from None
            raise VMError(_("get_field: ${reg} = {value} has {n} fields, no field {index}").format(
                reg=obj, value=summary(v), n=len(v.fields), index=index)) from None
        return nxt
    return get_field


def jump_target(fi_name, pc, target, size):
    if 0 <= target < size:
        return target, None
    return target, _("jump from pc {pc} to pc {target}, outside @{func} (pcs 0..{last})").format(
        pc=pc, target=target, func=fi_name, last=size - 1)


def _if(vm, fi, pc, ins):
    test, target = ins.test, ins.target
    fn = vm.exe.functions[fi]
    size = len(fn.instructions)
    t_pc, t_bad = jump_target(fn.name, pc, pc + ins.true_offset, size)
    f_pc, f_bad = jump_target(fn.name, pc, pc + ins.false_offset, size)

    if t_bad is None and f_bad is None:
        known, known_value = _consti_before(vm, fi, pc, target)
        if known is not _UNBOUND:
            bool_value = BOOL_OF.get(known_value)

            def if_const(regs):
                # The target is (almost always) the `load_consti` just before: by identity.
                t = regs[target]
                x = regs[test]
                if t is known:
                    if type(x) is np.bool_:  # bools compare as 0/1: True and False are unique
                        return t_pc if x is bool_value else f_pc
                    if type(x) in SCALAR_TYPES:
                        return t_pc if x == known_value else f_pc
                return t_pc if number_of(x) == number_of(t) else f_pc
            return if_const

        def if_(regs):
            # compares 0-d (or 1-element) tensors of any dtype; bools as 0/1.
            return t_pc if number_of(regs[test]) == number_of(regs[target]) else f_pc
        return if_

    def if_checked(regs):
        taken = number_of(regs[test]) == number_of(regs[target])
        bad = t_bad if taken else f_bad
        if bad is not None:
            raise VMError(bad)
        return t_pc if taken else f_pc
    return if_checked


def _consti_before(vm, fi, pc, reg):
    """(tensor, value) of the nearest `load_consti` before `pc` writing `reg` when its tensor
    is a shared one, else (_UNBOUND, None): a guess compared by identity, like
    `_loaded_constant`."""
    instructions = vm.exe.functions[fi].instructions
    for prev in reversed(instructions[max(0, pc - 8):pc]):
        if reg in prev.writes():
            if isinstance(prev, bc.LoadConsti) and prev.value in _CONSTI_CACHE:
                return _CONSTI_CACHE[prev.value], prev.value
            break
    return _UNBOUND, None


def _load_const(vm, fi, pc, ins):
    constants = vm.constants
    if not 0 <= ins.const_index < len(constants):
        raise Malformed(_("load_const of constant {index}, but there are {n} "
                           "constants").format(index=ins.const_index, n=len(constants)))
    value, dst, nxt = constants[ins.const_index], ins.dst, pc + 1

    def load_const(regs):
        regs[dst] = value
        return nxt
    return load_const


def _goto(vm, fi, pc, ins):
    fn = vm.exe.functions[fi]
    target, bad = jump_target(fn.name, pc, pc + ins.pc_offset, len(fn.instructions))
    if bad is not None:
        raise Malformed(bad)

    def goto(regs):
        return target
    return goto


def _get_tag(vm, fi, pc, ins):
    obj, dst, nxt = ins.object, ins.dst, pc + 1
    cache = _TAG_CACHE

    def get_tag(regs):
        v = regs[obj]
        try:
            tag = v.tag
        except AttributeError:
            raise VMError(_("{op}: ${reg} holds {value}, not an ADT value").format(
                op="get_tag", reg=obj, value=summary(v))) from None
        regs[dst] = cache[tag] if tag < 256 else np.int32(tag)
        return nxt
    return get_tag


def consti(value: int) -> np.int64:
    """The int64 scalar `load_consti value` loads (shared for small values)."""
    cached = _CONSTI_CACHE.get(value)
    return cached if cached is not None else np.int64(value)


def _load_consti(vm, fi, pc, ins):
    value, dst, nxt = consti(ins.value), ins.dst, pc + 1

    def load_consti(regs):
        regs[dst] = value
        return nxt
    return load_consti


def _fatal(vm, fi, pc, ins):
    def fatal(regs):
        raise VMError(_("match? found no matching clause"))
    return fatal


def _alloc_storage(vm, fi, pc, ins):
    size_reg, alignment, hint, dst, nxt = ins.size, ins.alignment, ins.dtype_hint, ins.dst, pc + 1
    frames, max_bytes, pool = vm.frames, vm.limits.max_bytes, vm.pool
    known, known_size = _UNBOUND, 0
    const = _loaded_constant(vm, fi, pc, size_reg)
    if const is not None:
        try:
            known_size = operator.index(number_of(const))
        except (TypeError, ValueError):
            known_size = -1
        if known_size >= 0:
            known = const  # else the general path reports it, as for any register value

    def size_in(v):
        size = operator.index(number_of(v))
        if size < 0:
            raise VMError(_("alloc_storage: negative size {size} in ${reg}").format(
                size=size, reg=size_reg))
        return size

    def alloc_storage(regs):
        v = regs[size_reg]
        size = known_size if v is known else size_in(v)
        live = vm.live_bytes + size
        grows = size if pool is None else pool.growth(size)  # --max-bytes: what the pool holds
        if (vm.live_bytes + vm.pool_slack + grows + vm.orphan_bytes > max_bytes
                and _still_over(vm, grows)):
            live = vm.live_bytes + vm.pool_slack + grows + vm.orphan_bytes
            raise limit_error("max_bytes", max_bytes,
                               _("allocating {size} bytes would bring live memory to {live} bytes").format(
                                   size=size, live=live))
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
        regs[dst] = StorageObject(size, alignment, hint, account, None, buffer)
        return nxt
    return alloc_storage


def _loaded_constant(vm, fi, pc, reg):
    """The constant-pool tensor that the nearest `load_const` before `pc` writing `reg` loads,
    or None. A guess a handler may compare register values against by identity (constants
    are read-only), never an assumption: another path may have written the register."""
    instructions = vm.exe.functions[fi].instructions
    constants = vm.constants
    for prev in reversed(instructions[max(0, pc - 8):pc]):  # the compiler loads it just before
        if reg in prev.writes():
            if (isinstance(prev, bc.LoadConst) and 0 <= prev.const_index < len(constants)
                    and is_tensor(constants[prev.const_index])):
                return constants[prev.const_index]
            return None
    return None


def _shape_of(vm, fi, pc, ins):
    tensor, dst, nxt = ins.tensor, ins.dst, pc + 1

    def shape_of(regs):
        v = regs[tensor]
        shape = getattr(v, "shape", None)
        if shape is None or not isinstance(v, (np.ndarray, np.generic, TensorPlaceholder)):
            raise VMError(_("{op}: ${reg} holds {value}, not a tensor").format(
                op="shape_of", reg=tensor, value=summary(v)))
        out = regs[dst] = _readonly(np.array(shape, dtype=np.int64))
        vm.orphan_bytes += out.nbytes  # in no storage (a few bytes, counted for the bound)
        return nxt
    return shape_of


def _reshape_tensor(vm, fi, pc, ins):
    tensor, newshape, dst, nxt = ins.tensor, ins.newshape, ins.dst, pc + 1

    def reshape_tensor(regs):
        v = regs[tensor]
        shape = _shape_from(regs[newshape], newshape, "reshape_tensor")
        old = getattr(v, "shape", None)
        if old is None or not is_tensor(v) and type(v) is not TensorPlaceholder:
            raise VMError(_("{op}: ${reg} holds {value}, not a tensor").format(
                op="reshape_tensor", reg=tensor, value=summary(v)))
        if int(np.prod(old, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
            raise VMError(_("reshape_tensor: cannot reshape {old} to {new}").format(
                old=_shape_text(old, v.dtype), new=list(shape)))
        if type(v) is TensorPlaceholder:
            regs[dst] = TensorPlaceholder(v.storage, v.offset, shape, v.dtype)
        else:
            regs[dst] = to_runtime(np.reshape(v, shape))  # a view: tensors are never mutated
        return nxt
    return reshape_tensor


def _device_copy(vm, fi, pc, ins):
    src, dst, nxt = ins.src, ins.dst, pc + 1
    max_bytes = vm.limits.max_bytes

    def device_copy(regs):
        v = regs[src]
        if not is_tensor(v):
            raise VMError(_("{op}: ${reg} holds {value}, not a tensor").format(
                op="device_copy", reg=src, value=summary(v)))
        size = v.nbytes
        live = vm.live_bytes + vm.orphan_bytes + size
        if live > max_bytes and _still_over(vm, size):
            raise limit_error("max_bytes", max_bytes,
                               _("allocating {size} bytes would bring live memory to {live} bytes").format(
                                   size=size, live=vm.live_bytes + vm.orphan_bytes + size))
        out = v.copy()  # one device: the copy stays on it (a scalar copies itself)
        if type(out) is np.ndarray:
            vm.orphan_bytes += out.nbytes  # in no storage: counted as an escaped tensor
        regs[dst] = out
        return nxt
    return device_copy


def _kill_register(vm, fi, pc, ins):
    dst, nxt, pool = ins.dst, pc + 1, vm.pool

    def kill_register(regs):
        v = regs[dst]
        if type(v) is StorageObject and not v.released:
            v.released = True
            account = v.owner
            if account.owned_bytes is not None:  # None: its frame returned, releasing it
                account.owned_bytes -= v.size
                vm.live_bytes -= v.size
                if pool is not None:  # back to the pool, to be handed out again
                    account.pooled -= pool.give(v.size, v.buffer)
                if type(v.tensor) is np.ndarray and _refcount(v.tensor) > 2:
                    vm.orphan_bytes += v.size  # its tensor lives on elsewhere
        regs[dst] = None
        return nxt
    return kill_register


HANDLERS = {
    bc.Move.opcode: _move,
    bc.Ret.opcode: _ret,
    bc.Invoke.opcode: _invoke,
    bc.InvokeClosure.opcode: _invoke_closure,
    bc.InvokePacked.opcode: _invoke_packed,
    bc.AllocTensor.opcode: _alloc_tensor,
    bc.AllocTensorReg.opcode: _alloc_tensor_reg,
    bc.AllocADT.opcode: _alloc_adt,
    bc.AllocClosure.opcode: _alloc_closure,
    bc.GetField.opcode: _get_field,
    bc.If.opcode: _if,
    bc.LoadConst.opcode: _load_const,
    bc.Goto.opcode: _goto,
    bc.GetTag.opcode: _get_tag,
    bc.LoadConsti.opcode: _load_consti,
    bc.Fatal.opcode: _fatal,
    bc.AllocStorage.opcode: _alloc_storage,
    bc.ShapeOf.opcode: _shape_of,
    bc.ReshapeTensor.opcode: _reshape_tensor,
    bc.DeviceCopy.opcode: _device_copy,
    bc.KillRegister.opcode: _kill_register,
}
assert len(HANDLERS) == len(bc.OPCODES)
