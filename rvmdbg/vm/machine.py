"""The Relay VM's dispatch loop: frames of registers, one handler per opcode, two ways to run.

Each function's bytecode is predecoded once into a list of closures, one per instruction,
made by `HANDLERS[opcode]`. A closure takes the current register file, performs exactly the
instruction's effect, and returns the next pc, or `CALL` when it pushed or popped a frame,
or `HALT` when the outermost frame returned. Both entry points run the same closures:

- `run()`: the fast path, a bare loop that keeps pc, registers and code in locals;
- `step()`: one instruction, reported as a `StepInfo` (reads, writes with old and new values,
  frame pushed or popped, jump taken, bytes allocated) that `unstep()` can undo.

Any failure (a `fatal`, a kernel error, a limit, a malformed operand) stops the machine at the
failing instruction with its state untouched and raises `VMError`, located by function, pc,
instruction and Relay span.
"""
from __future__ import annotations

import operator
from typing import Iterator, NamedTuple

import numpy as np

from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.values import ADTValue, format_value
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder, VMClosure, dtype_nbytes

# What a handler returns instead of a pc (pcs are never negative).
CALL = -1   # the frame stack changed: reload frame, registers and code
HALT = -2   # the outermost frame returned; the result is in `vm.result`
TRAP = -3   # a breakpoint: stop before executing the instruction

# Cached immutable 0-d tensors: `get_tag` and `load_consti` results are shared, never copied.
_TAG_CACHE = [np.array(t, dtype=np.int32) for t in range(256)]
for _a in _TAG_CACHE:
    _a.flags.writeable = False


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# ---------------------------------------------------------------- errors and frames

class VMError(Exception):
    """A run-time failure, located at the instruction that failed.

    `limit` names the limit (`"max_steps"`, `"max_depth"`, `"max_bytes"`) when one was hit.
    Location fields stay None for errors raised before any instruction (bad entry or args).
    """

    def __init__(self, message: str, limit: str | None = None):
        super().__init__(message)
        self.message = message
        self.limit = limit
        self.func_index: int | None = None
        self.func_name: str | None = None
        self.pc: int | None = None
        self.instruction: str | None = None
        self.span = None
        self.source_line: str | None = None
        self.backtrace: list[tuple[str, int]] = []  # (function, pc), innermost first

    def format(self) -> str:
        out = [f"error: {self.message}"]
        if self.func_name is not None:
            at = f"  at @{self.func_name} pc={self.pc}"
            out.append(at + (f": {self.instruction}" if self.instruction else ""))
        if self.span is not None:
            out.append(f"  from {self.span}")
            if self.source_line is not None:
                sp = self.span
                gutter = f"{sp.line:>6} | "
                text = self.source_line.expandtabs(1)
                out.append(gutter + text)
                width = (sp.end_col - sp.col) if sp.end_line == sp.line else len(text) - sp.col + 1
                out.append(" " * (len(gutter) + sp.col - 1) + "^" + "~" * (max(1, width) - 1))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.format()


def _limit_error(name: str, value: int, what: str) -> VMError:
    return VMError(f"{what} (limit {name}={value}; raise it with {Limits.flag_for(name)})",
                   limit=name)


class Frame:
    """One activation: the function, its pc, its register file and where its result goes.

    While a callee runs, the caller's `pc` is the pc of its invoke instruction; `Ret` moves
    it on by one. `owned_bytes` counts the live storage this frame allocated (None once the
    frame has returned and released it).
    """

    __slots__ = ("func_index", "pc", "registers", "caller_return_register", "owned_bytes")

    def __init__(self, func_index: int, pc: int, registers: list, caller_return_register=None):
        self.func_index = func_index
        self.pc = pc
        self.registers = registers
        self.caller_return_register = caller_return_register
        self.owned_bytes = 0

    def __repr__(self) -> str:
        return (f"Frame(func_index={self.func_index}, pc={self.pc}, "
                f"registers=<{len(self.registers)}>, ret=${self.caller_return_register})")


class RegisterWrite(NamedTuple):
    """One register write of a step: `depth` indexes `vm.frames` (0 = outermost)."""

    depth: int
    register: int
    old: object
    new: object


class StepInfo:
    """What one executed instruction did, enough for a debugger to show and undo it."""

    __slots__ = ("step", "frame", "depth", "func_index", "pc", "instruction", "reads", "writes",
                 "pushed", "popped", "jump_target", "next_func_index", "next_pc",
                 "allocated_bytes",
                 "freed_bytes", "halted", "result", "_undo")

    def __init__(self, step, frame, depth, func_index, pc, instruction, reads):
        self.step = step                # instructions executed before this one
        self.frame = frame              # the Frame that executed it
        self.depth = depth              # its index in vm.frames
        self.func_index = func_index
        self.pc = pc
        self.instruction = instruction
        self.reads = reads              # register numbers read, in `frame`
        self.writes: tuple = ()         # RegisterWrite records
        self.pushed: Frame | None = None
        self.popped: Frame | None = None
        self.jump_target: int | None = None
        self.next_func_index: int | None = None  # the top frame after the step (None: halted)
        self.next_pc: int | None = None
        self.allocated_bytes = 0
        self.freed_bytes = 0
        self.halted = False
        self.result = None
        self._undo = None

    def __repr__(self) -> str:
        return f"<StepInfo step={self.step} fi={self.func_index} pc={self.pc} {self.instruction.text()}>"


# ---------------------------------------------------------------- handlers, one per opcode
#
# Each factory gets (vm, func_index, pc, instruction) and returns `handler(regs) -> next pc`.
# Operands, next pcs and constants are bound at decode time so the handler body does only the
# instruction's work. Handlers write registers last, so a failing one leaves state untouched.


class _Malformed(Exception):
    """An instruction that cannot run as decoded; it becomes a VMError when executed."""


def _raiser(message: str):
    def malformed(regs):
        raise VMError(message)
    return malformed


def _move(vm, fi, pc, ins):
    src, dst, nxt = ins.src, ins.dst, pc + 1

    def move(regs):
        regs[dst] = regs[src]
        return nxt
    return move


def _ret(vm, fi, pc, ins):
    result, frames = ins.result, vm.frames

    def ret(regs):
        value = regs[result]
        done = frames.pop()
        if done.owned_bytes:
            vm.live_bytes -= done.owned_bytes
            done.owned_bytes = None
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
        raise _Malformed(f"{what} of function index {func_index}, but there are "
                         f"{len(functions)} functions")
    return functions[func_index]


def _invoke(vm, fi, pc, ins):
    callee_index, args, dst = ins.func_index, tuple(ins.args), ins.dst
    callee = _callee(vm, callee_index, "invoke")
    if len(args) != len(callee.params):
        raise _Malformed(f"invoke passes {len(args)} arguments to @{callee.name}, "
                         f"which takes {len(callee.params)}")
    pad = [None] * (callee.register_file_size - len(args))
    frames, max_depth = vm.frames, vm.limits.max_depth
    depth_error = ("max_depth", max_depth, f"call depth exceeded {max_depth} frames "
                   f"calling @{callee.name}")

    if len(args) == 1:
        a0 = args[0]

        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
            frames[-1].pc = pc
            frames.append(Frame(callee_index, 0, [regs[a0]] + pad, dst))
            return CALL
    elif len(args) == 0:
        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
            frames[-1].pc = pc
            frames.append(Frame(callee_index, 0, pad[:], dst))
            return CALL
    else:
        gather = operator.itemgetter(*args)

        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
            frames[-1].pc = pc
            frames.append(Frame(callee_index, 0, [*gather(regs), *pad], dst))
            return CALL
    return invoke


def _invoke_closure(vm, fi, pc, ins):
    closure, args, dst = ins.closure, tuple(ins.args), ins.dst
    functions = vm.exe.functions
    frames, max_depth = vm.frames, vm.limits.max_depth
    sizes = [f.register_file_size for f in functions]
    arities = [len(f.params) for f in functions]

    def invoke_closure(regs):
        clo = regs[closure]
        if type(clo) is not VMClosure:
            raise VMError(f"invoke_closure: ${closure} holds {_summary(clo)}, not a closure")
        callee = clo.func_index
        values = [*clo.captured, *[regs[a] for a in args]]
        if len(values) != arities[callee]:
            raise VMError(f"closure @{clo.name} takes {arities[callee] - len(clo.captured)} "
                          f"arguments, called with {len(args)}")
        if len(frames) >= max_depth:
            raise _limit_error("max_depth", max_depth,
                               f"call depth exceeded {max_depth} frames calling @{clo.name}")
        values += [None] * (sizes[callee] - len(values))
        frames[-1].pc = pc
        frames.append(Frame(callee, 0, values, dst))
        return CALL
    return invoke_closure


def _single_output(kernel, res):
    """A kernel's result as its one output (kernels may return the array or a 1-sequence)."""
    if isinstance(res, (list, tuple)):
        if len(res) != 1:
            raise VMError(f"kernel {kernel.name} returned {len(res)} outputs, expected 1")
        res = res[0]
    if type(res) is not np.ndarray:
        if isinstance(res, np.generic):
            return np.asarray(res)
        raise VMError(f"kernel {kernel.name} returned {_summary(res)}, not a tensor")
    return res


def _check_output(kernel, reg, out, slot):
    """Raise unless `out` fits the tensor allocated in the output register (`slot`)."""
    shape, dtype = getattr(slot, "shape", None), getattr(slot, "dtype", None)
    if shape is None or dtype is None:
        raise VMError(f"kernel {kernel.name}: output register ${reg} holds {_summary(slot)}, "
                      f"not an allocated tensor")
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype:
        raise VMError(f"kernel {kernel.name} produced {_shape_text(out.shape, out.dtype)} but "
                      f"output ${reg} was allocated as {_shape_text(shape, dtype)}")


def _invoke_packed(vm, fi, pc, ins):
    kernels = vm.exe.kernels
    if not 0 <= ins.packed_index < len(kernels):
        raise _Malformed(f"invoke_packed of kernel {ins.packed_index}, but there are "
                         f"{len(kernels)} kernels")
    kernel = kernels[ins.packed_index]
    nout = ins.output_size
    args = tuple(ins.args)
    inputs, outputs = args[:len(args) - nout], args[len(args) - nout:]
    if kernel.num_inputs != len(inputs) or kernel.num_outputs != nout:
        raise _Malformed(f"kernel {kernel.name} takes {kernel.num_inputs} inputs and "
                         f"{kernel.num_outputs} outputs, called with {len(inputs)} and {nout}")
    impl, nxt = kernel.impl, pc + 1
    if impl is None:
        raise _Malformed(f"kernel {kernel.name} has no implementation")

    if kernel.builtin:
        # References: inputs and outputs are any values, and outputs need no allocation.
        def invoke_builtin(regs):
            values = [regs[a] for a in inputs]
            for a, v in zip(inputs, values):
                if type(v) is TensorPlaceholder:
                    raise VMError(f"kernel {kernel.name} reads ${a}, an uninitialized tensor")
            res = impl(values)
            outs = res if isinstance(res, (list, tuple)) else (res,)
            if len(outs) != nout:
                raise VMError(f"kernel {kernel.name} returned {len(outs)} outputs, expected {nout}")
            for r, v in zip(outputs, outs):
                regs[r] = v
            return nxt
        return invoke_builtin

    if nout == 1 and len(inputs) in (1, 2):
        # The common shape of a fused scalar kernel: specialised to skip generic loops.
        o0 = outputs[0]
        if len(inputs) == 2:
            i0, i1 = inputs

            def invoke_packed(regs):
                out = impl([regs[i0], regs[i1]])
                if type(out) is not np.ndarray:
                    out = _single_output(kernel, out)
                slot = regs[o0]
                try:
                    if out.dtype is not slot.dtype or out.shape != slot.shape:
                        _check_output(kernel, o0, out, slot)
                except AttributeError:
                    _check_output(kernel, o0, out, slot)
                regs[o0] = out
                return nxt
        else:
            i0 = inputs[0]

            def invoke_packed(regs):
                out = impl([regs[i0]])
                if type(out) is not np.ndarray:
                    out = _single_output(kernel, out)
                slot = regs[o0]
                try:
                    if out.dtype is not slot.dtype or out.shape != slot.shape:
                        _check_output(kernel, o0, out, slot)
                except AttributeError:
                    _check_output(kernel, o0, out, slot)
                regs[o0] = out
                return nxt
        return invoke_packed

    def invoke_packed_n(regs):
        res = impl([regs[a] for a in inputs])
        if nout == 1:
            outs = (res if type(res) is np.ndarray else _single_output(kernel, res),)
        else:
            if not isinstance(res, (list, tuple)) or len(res) != nout:
                raise VMError(f"kernel {kernel.name} returned {_summary(res)}, "
                              f"expected {nout} outputs")
            outs = tuple(np.asarray(v) if isinstance(v, np.generic) else v for v in res)
        for r, v in zip(outputs, outs):
            if type(v) is not np.ndarray:
                raise VMError(f"kernel {kernel.name} returned {_summary(v)}, not a tensor")
            _check_output(kernel, r, v, regs[r])
        for r, v in zip(outputs, outs):
            regs[r] = v
        return nxt
    return invoke_packed_n


def _alloc_tensor(vm, fi, pc, ins):
    storage, offset, dst, nxt = ins.storage, ins.offset, ins.dst, pc + 1
    shape, dtype = tuple(ins.shape), np.dtype(ins.dtype)
    nbytes = dtype_nbytes(shape, dtype)

    def alloc_tensor(regs):
        st = regs[storage]
        off = regs[offset].item()
        if type(st) is not StorageObject:
            raise VMError(f"alloc_tensor: ${storage} holds {_summary(st)}, not a storage")
        if off < 0 or off + nbytes > st.size:
            raise VMError(f"alloc_tensor: {nbytes} bytes at offset {off} do not fit in a "
                          f"storage of {st.size} bytes")
        regs[dst] = TensorPlaceholder(st, off, shape, dtype)
        return nxt
    return alloc_tensor


def _alloc_tensor_reg(vm, fi, pc, ins):
    storage, offset, shape_register, dst, nxt = (ins.storage, ins.offset, ins.shape_register,
                                                 ins.dst, pc + 1)
    dtype = np.dtype(ins.dtype)

    def alloc_tensor_reg(regs):
        st = regs[storage]
        off = regs[offset].item()
        shape = _shape_from(regs[shape_register], shape_register, "alloc_tensor_reg")
        if type(st) is not StorageObject:
            raise VMError(f"alloc_tensor_reg: ${storage} holds {_summary(st)}, not a storage")
        nbytes = dtype_nbytes(shape, dtype)
        if off < 0 or off + nbytes > st.size:
            raise VMError(f"alloc_tensor_reg: {nbytes} bytes at offset {off} do not fit in a "
                          f"storage of {st.size} bytes")
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
        raise _Malformed(f"closure of @{callee.name} captures {len(free_vars)} values but it "
                         f"takes {len(callee.params)} parameters")
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
                raise VMError(f"get_field: ${obj} holds {_summary(v)}, not an ADT value") from None
            raise VMError(f"get_field: ${obj} = {_summary(v)} has {len(v.fields)} fields, "
                          f"no field {index}") from None
        return nxt
    return get_field


def _jump_target(fi_name, pc, target, size):
    if 0 <= target < size:
        return target, None
    return target, f"jump from pc {pc} to pc {target}, outside @{fi_name} (pcs 0..{size - 1})"


def _if(vm, fi, pc, ins):
    test, target = ins.test, ins.target
    fn = vm.exe.functions[fi]
    size = len(fn.instructions)
    t_pc, t_bad = _jump_target(fn.name, pc, pc + ins.true_offset, size)
    f_pc, f_bad = _jump_target(fn.name, pc, pc + ins.false_offset, size)

    if t_bad is None and f_bad is None:
        def if_(regs):
            # .item() compares 0-d (or 1-element) tensors of any dtype; bools as 0/1.
            return t_pc if regs[test].item() == regs[target].item() else f_pc
        return if_

    def if_checked(regs):
        taken = regs[test].item() == regs[target].item()
        bad = t_bad if taken else f_bad
        if bad is not None:
            raise VMError(bad)
        return t_pc if taken else f_pc
    return if_checked


def _load_const(vm, fi, pc, ins):
    constants = vm.exe.constants
    if not 0 <= ins.const_index < len(constants):
        raise _Malformed(f"load_const of constant {ins.const_index}, but there are "
                         f"{len(constants)} constants")
    value, dst, nxt = constants[ins.const_index], ins.dst, pc + 1

    def load_const(regs):
        regs[dst] = value
        return nxt
    return load_const


def _goto(vm, fi, pc, ins):
    fn = vm.exe.functions[fi]
    target, bad = _jump_target(fn.name, pc, pc + ins.pc_offset, len(fn.instructions))
    if bad is not None:
        raise _Malformed(bad)

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
            raise VMError(f"get_tag: ${obj} holds {_summary(v)}, not an ADT value") from None
        regs[dst] = cache[tag] if tag < 256 else _readonly(np.array(tag, dtype=np.int32))
        return nxt
    return get_tag


def _load_consti(vm, fi, pc, ins):
    value, dst, nxt = _readonly(np.array(ins.value, dtype=np.int64)), ins.dst, pc + 1

    def load_consti(regs):
        regs[dst] = value
        return nxt
    return load_consti


def _fatal(vm, fi, pc, ins):
    def fatal(regs):
        raise VMError("match? found no matching clause")
    return fatal


def _alloc_storage(vm, fi, pc, ins):
    size_reg, alignment, hint, dst, nxt = ins.size, ins.alignment, ins.dtype_hint, ins.dst, pc + 1
    frames, max_bytes = vm.frames, vm.limits.max_bytes

    def alloc_storage(regs):
        size = operator.index(regs[size_reg].item())
        if size < 0:
            raise VMError(f"alloc_storage: negative size {size} in ${size_reg}")
        live = vm.live_bytes + size
        if live > max_bytes:
            raise _limit_error("max_bytes", max_bytes,
                               f"allocating {size} bytes would bring live memory to {live} bytes")
        owner = frames[-1]
        vm.live_bytes = live
        owner.owned_bytes += size
        regs[dst] = StorageObject(size, alignment, hint, owner)
        return nxt
    return alloc_storage


def _shape_of(vm, fi, pc, ins):
    tensor, dst, nxt = ins.tensor, ins.dst, pc + 1

    def shape_of(regs):
        v = regs[tensor]
        shape = getattr(v, "shape", None)
        if shape is None or isinstance(v, np.generic):
            raise VMError(f"shape_of: ${tensor} holds {_summary(v)}, not a tensor")
        regs[dst] = _readonly(np.array(shape, dtype=np.int64))
        return nxt
    return shape_of


def _reshape_tensor(vm, fi, pc, ins):
    tensor, newshape, dst, nxt = ins.tensor, ins.newshape, ins.dst, pc + 1

    def reshape_tensor(regs):
        v = regs[tensor]
        shape = _shape_from(regs[newshape], newshape, "reshape_tensor")
        old = getattr(v, "shape", None)
        if old is None or not isinstance(v, (np.ndarray, TensorPlaceholder)):
            raise VMError(f"reshape_tensor: ${tensor} holds {_summary(v)}, not a tensor")
        if int(np.prod(old, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
            raise VMError(f"reshape_tensor: cannot reshape {_shape_text(old, v.dtype)} "
                          f"to {list(shape)}")
        if type(v) is TensorPlaceholder:
            regs[dst] = TensorPlaceholder(v.storage, v.offset, shape, v.dtype)
        else:
            regs[dst] = v.reshape(shape)  # a view: tensors are never mutated
        return nxt
    return reshape_tensor


def _device_copy(vm, fi, pc, ins):
    src, dst, nxt = ins.src, ins.dst, pc + 1

    def device_copy(regs):
        v = regs[src]
        if type(v) is not np.ndarray:
            raise VMError(f"device_copy: ${src} holds {_summary(v)}, not a tensor")
        regs[dst] = v.copy()  # one device: the copy stays on it
        return nxt
    return device_copy


def _kill_register(vm, fi, pc, ins):
    dst, nxt = ins.dst, pc + 1

    def kill_register(regs):
        v = regs[dst]
        if type(v) is StorageObject and not v.released:
            _release_storage(vm, v)
        regs[dst] = None
        return nxt
    return kill_register


def _release_storage(vm, storage: StorageObject) -> None:
    storage.released = True
    owner = storage.owner
    if owner.owned_bytes is not None:  # None: its frame returned and released it already
        owner.owned_bytes -= storage.size
        vm.live_bytes -= storage.size


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


# ---------------------------------------------------------------- helpers for messages

def _summary(v, width: int = 60) -> str:
    """A one-line, truncated human form of a register value."""
    if v is None:
        return "nothing"
    try:
        text = format_value(v)
    except Exception:  # a value a kernel made up: describe it rather than fail on it
        text = f"<{type(v).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _shape_text(shape, dtype) -> str:
    return f"[{', '.join(str(int(d)) for d in shape)}] {dtype}"


def _shape_from(v, reg: int, what: str) -> tuple:
    if type(v) is not np.ndarray or v.ndim != 1 or v.dtype.kind not in "iu":
        raise VMError(f"{what}: ${reg} holds {_summary(v)}, not a 1-d integer shape tensor")
    shape = tuple(int(d) for d in v.tolist())
    if any(d < 0 for d in shape):
        raise VMError(f"{what}: negative dimension in shape {list(shape)}")
    return shape


# ---------------------------------------------------------------- the machine

_PLAIN, _JUMP, _CALL, _RETURN = range(4)


class VirtualMachine:
    """Runs an `Executable`. State: `frames` (innermost last), `steps`, `halted`, `result`,
    `error`, `live_bytes`. `invoke(name, args)` runs a function to its result; `start` +
    `step`/`run` drive it one instruction, or many, at a time."""

    def __init__(self, exe, limits: Limits | None = None):
        self.exe = exe
        self.limits = limits or DEFAULT_LIMITS
        self.frames: list[Frame] = []   # the handlers hold this list: never rebind it
        self.steps = 0
        self.halted = False
        self.result = None
        self.error: VMError | None = None
        self.live_bytes = 0
        self._decode()

    # ------------------------------------------------------------ decoding

    def _decode(self) -> None:
        """Build each function's handler list plus, for `step()`, each instruction's kind,
        read set and write set."""
        self._code: list[list] = []
        self._meta: list[list] = []
        self._trapped: dict = {}
        for fi, fn in enumerate(self.exe.functions):
            code, meta = [], []
            for pc, ins in enumerate(fn.instructions):
                code.append(self._handler(fi, pc, ins, fn.register_file_size))
                kind = (_CALL if ins.is_call else _RETURN if ins.is_return
                        else _JUMP if ins.is_jump else _PLAIN)
                meta.append((kind, tuple(ins.reads()), tuple(ins.writes())))
            # Falling off the end lands on a handler that reports it.
            code.append(_raiser(f"execution ran past the last instruction of @{fn.name}"))
            self._code.append(code)
            self._meta.append(meta)

    def _handler(self, fi: int, pc: int, ins, register_file_size: int):
        for r in ins.registers():
            if not 0 <= r < register_file_size:
                return _raiser(f"register ${r} is outside the register file "
                               f"(size {register_file_size})")
        factory = HANDLERS.get(ins.opcode)
        if factory is None:
            return _raiser(f"unknown opcode {ins.opcode}")
        try:
            return factory(self, fi, pc, ins)
        except _Malformed as exc:
            return _raiser(str(exc))

    def _code_with_traps(self, breakpoints: frozenset) -> list:
        """The handler lists with breakpoint locations replaced by traps (cached per set)."""
        table = self._trapped.get(breakpoints)
        if table is None:
            table = [list(code) for code in self._code]
            frames = self.frames
            for fi, pc in breakpoints:
                if 0 <= fi < len(table) and 0 <= pc < len(table[fi]) - 1:
                    table[fi][pc] = _make_trap(frames, pc)
            if len(self._trapped) > 16:
                self._trapped.clear()
            self._trapped[breakpoints] = table
        return table

    # ------------------------------------------------------------ starting

    def start(self, name: str, args=()) -> None:
        """Set up the first frame: `args` in registers 0..n-1 of function `name`, pc 0."""
        try:
            fi = self.exe.func_index(name)
        except KeyError as exc:
            raise VMError(exc.args[0] if exc.args else f"no function @{name}") from None
        fn = self.exe.functions[fi]
        args = list(args)
        if len(args) != len(fn.params):
            raise VMError(f"@{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
        self.frames.clear()
        self.frames.append(Frame(fi, 0, args + [None] * (fn.register_file_size - len(args))))
        self.steps = 0
        self.halted = False
        self.result = None
        self.error = None
        self.live_bytes = 0

    def invoke(self, name: str, args=()):
        """Run function `name` on `args` to its result (raises VMError on failure)."""
        self.start(name, args)
        self.run()
        return self.result

    def func_name(self, func_index: int) -> str:
        return self.exe.functions[func_index].name

    @property
    def location(self) -> tuple[int, int] | None:
        """(function index, pc) of the next instruction, or None when halted."""
        if not self.frames:
            return None
        top = self.frames[-1]
        return top.func_index, top.pc

    def current_instruction(self):
        loc = self.location
        if loc is None:
            return None
        instructions = self.exe.functions[loc[0]].instructions
        return instructions[loc[1]] if 0 <= loc[1] < len(instructions) else None

    def _check_runnable(self) -> None:
        if self.halted:
            raise VMError("the program has already halted")
        if not self.frames:
            raise VMError("no program started: call start() first")

    # ------------------------------------------------------------ the fast path

    def run(self, until_step: int | None = None, breakpoints=None):
        """Execute from the current state until the program halts (returns the result), or
        until `steps == until_step`, or before an instruction at a (func_index, pc) in
        `breakpoints` other than the current one (both return None; check `halted`)."""
        self._check_runnable()
        limit = self.limits.max_steps
        end = limit if until_step is None else min(until_step, limit)
        if self.steps >= end and until_step is not None and until_step <= limit:
            return None
        table = self._code
        if breakpoints:
            breakpoints = frozenset(breakpoints)
            if self.location in breakpoints and self.steps < end:
                # Leave the breakpoint we are stopped at before arming the traps.
                if self._loop(table, self.steps + 1) == HALT:
                    return self.result
            table = self._code_with_traps(breakpoints)
        stop = self._loop(table, end)
        if stop == HALT:
            return self.result
        if stop == TRAP:
            return None
        return self._stopped_at_end(end, limit, until_step)

    def _stopped_at_end(self, end, limit, until_step):
        if until_step is not None and until_step <= limit:
            return None
        top = self.frames[-1]
        err = _limit_error("max_steps", limit, f"the program ran {limit} instructions "
                           "without finishing")
        raise self._fail(err, top, top.pc)

    def _loop(self, table: list, end: int) -> int:
        """Execute until HALT, TRAP or `steps == end` (returns 0 for the last)."""
        frames = self.frames
        frame = frames[-1]
        regs = frame.registers
        code = table[frame.func_index]
        pc = frame.pc
        steps = self.steps
        try:
            for steps in range(steps, end):
                pc = code[pc](regs)
                if pc < 0:
                    if pc == CALL:
                        frame = frames[-1]
                        regs = frame.registers
                        code = table[frame.func_index]
                        pc = frame.pc
                    elif pc == HALT:
                        self.steps = steps + 1
                        return HALT
                    else:  # TRAP: the trap set the frame's pc
                        self.steps = steps
                        return TRAP
        except BaseException as exc:
            # pc still names the failing instruction: the assignment above never happened.
            frame.pc = pc
            self.steps = steps
            if isinstance(exc, Exception):
                raise self._fail(exc, frame, pc) from (None if isinstance(exc, VMError) else exc)
            raise
        frame.pc = pc
        self.steps = max(self.steps, end)
        return 0

    # ------------------------------------------------------------ one step at a time

    def step(self) -> StepInfo:
        """Execute exactly one instruction and report what it did."""
        self._check_runnable()
        frames = self.frames
        frame = frames[-1]
        fi, pc = frame.func_index, frame.pc
        depth = len(frames) - 1
        if self.steps >= self.limits.max_steps:
            err = _limit_error("max_steps", self.limits.max_steps,
                               f"the program ran {self.limits.max_steps} instructions "
                               "without finishing")
            raise self._fail(err, frame, pc)
        meta = self._meta[fi]
        regs = frame.registers
        try:
            kind, reads, writes = meta[pc]
            instruction = self.exe.functions[fi].instructions[pc]
        except IndexError:
            kind, reads, writes, instruction = _PLAIN, (), (), None
        info = StepInfo(self.steps, frame, depth, fi, pc, instruction, reads)
        live_before, owned_before = self.live_bytes, frame.owned_bytes
        old = caller_old = caller_pc = None
        storages = ()
        if kind == _PLAIN or kind == _JUMP:
            old = [regs[r] for r in writes]
            if any(type(v) is StorageObject for v in old):
                storages = [(v, v.released, v.owner, v.owner.owned_bytes)
                            for v in old if type(v) is StorageObject]
        elif kind == _RETURN and depth > 0:
            caller = frames[-2]
            caller_old = caller.registers[frame.caller_return_register]
            caller_pc = caller.pc
        try:
            nxt = self._code[fi][pc](regs)
        except Exception as exc:
            raise self._fail(exc, frame, pc) from (None if isinstance(exc, VMError) else exc)
        self.steps += 1

        if frames:
            info.next_func_index = frames[-1].func_index
        if nxt >= 0:
            frame.pc = nxt
            info.next_pc = nxt
            if kind == _JUMP:
                info.jump_target = nxt
            info.writes = tuple(RegisterWrite(depth, r, o, regs[r]) for r, o in zip(writes, old))
        elif kind == _CALL:
            callee = frames[-1]
            info.pushed = callee
            info.next_pc = 0
            nparams = len(self.exe.functions[callee.func_index].params)
            info.writes = tuple(RegisterWrite(depth + 1, r, None, callee.registers[r])
                                for r in range(nparams))
        else:  # a return
            info.popped = frame
            if nxt == HALT:
                info.halted = True
                info.result = self.result
            else:
                caller = frames[-1]
                r = frame.caller_return_register
                info.next_pc = caller.pc
                info.writes = (RegisterWrite(depth - 1, r, caller_old, caller.registers[r]),)
        delta = self.live_bytes - live_before
        if delta > 0:
            info.allocated_bytes = delta
        else:
            info.freed_bytes = -delta
        info._undo = (live_before, owned_before, storages, caller_pc)
        return info

    def unstep(self, info: StepInfo) -> None:
        """Undo `info`, which must be the most recent step not yet undone."""
        live_before, owned_before, storages, caller_pc = info._undo
        frames = self.frames
        if info.popped is not None:
            if info.halted:
                self.halted = False
                self.result = None
            elif caller_pc is not None:
                frames[-1].pc = caller_pc
            frames.append(info.popped)
        for w in reversed(info.writes):
            frames[w.depth].registers[w.register] = w.old
        if info.pushed is not None:
            frames.pop()
        for storage, released, owner, owned in storages:
            storage.released = released
            owner.owned_bytes = owned
        info.frame.pc = info.pc
        info.frame.owned_bytes = owned_before
        self.live_bytes = live_before
        self.steps = info.step
        self.error = None

    # ------------------------------------------------------------ errors

    def _fail(self, exc: Exception, frame: Frame, pc: int) -> VMError:
        """Turn `exc`, raised by the instruction at `pc` of `frame`, into a located VMError."""
        err = exc if isinstance(exc, VMError) else VMError(self._describe(exc, frame, pc))
        fi = frame.func_index
        fn = self.exe.functions[fi]
        err.func_index, err.func_name, err.pc = fi, fn.name, pc
        if 0 <= pc < len(fn.instructions):
            err.instruction = fn.instructions[pc].text()
        else:
            err.instruction = None
        span_at = getattr(self.exe, "span_at", None)
        err.span = span_at(fi, pc) if span_at else None
        err.source_line = None
        text = getattr(self.exe, "source_text", None)
        if err.span is not None and text is not None:
            name = getattr(self.exe, "source_name", None)
            if name is None or err.span.file == name:
                lines = text.split("\n")
                if 1 <= err.span.line <= len(lines):
                    err.source_line = lines[err.span.line - 1].rstrip("\r")
        err.backtrace = [(self.exe.functions[f.func_index].name, f.pc)
                         for f in reversed(self.frames[-32:])]
        self.error = err
        return err

    def _describe(self, exc: Exception, frame: Frame, pc: int) -> str:
        """The message for a Python exception an instruction raised."""
        fn = self.exe.functions[frame.func_index]
        ins = fn.instructions[pc] if 0 <= pc < len(fn.instructions) else None
        if isinstance(ins, bc.InvokePacked) and 0 <= ins.packed_index < len(self.exe.kernels):
            kernel = self.exe.kernels[ins.packed_index]
            for r in ins.inputs:
                if r < len(frame.registers) and type(frame.registers[r]) is TensorPlaceholder:
                    return f"kernel {kernel.name} reads ${r}, an uninitialized tensor"
            if _is_kernel_error(exc):
                return f"kernel {kernel.name}: {exc}"
            return f"kernel {kernel.name} failed: {type(exc).__name__}: {exc}"
        if isinstance(exc, MemoryError):
            return "out of memory"
        op = ins.text().split(" ")[0] if ins is not None else "instruction"
        if ins is not None and isinstance(exc, (AttributeError, TypeError)):
            # Mostly a register that holds the wrong kind of value: name it.
            for r in ins.reads():
                if r < len(frame.registers):
                    v = frame.registers[r]
                    if v is None or not isinstance(v, np.ndarray):
                        return f"{op}: ${r} holds {_summary(v)}, which it cannot use"
        return f"{op} failed: {type(exc).__name__}: {exc}"


def _is_kernel_error(exc: Exception) -> bool:
    try:
        from rvmdbg.relay.ops import KernelError
    except ImportError:  # the operator library is optional for hand-built executables
        return type(exc).__name__ == "KernelError"
    return isinstance(exc, KernelError)


def _make_trap(frames: list, pc: int):
    def trap(regs):
        frames[-1].pc = pc
        return TRAP
    return trap


# ---------------------------------------------------------------- tracing

def format_step(vm: VirtualMachine, info: StepInfo, width: int = 40) -> str:
    """`[step 12] @main pc=3: load_consti $5 1    $5=1`: one executed instruction."""
    fn = vm.exe.functions[info.func_index]
    text = info.instruction.text() if info.instruction is not None else "?"
    head = f"[step {info.step}] @{fn.name} pc={info.pc}: {text}"
    if info.halted:
        effect = f"halt: {_summary(info.result, width)}"
    elif info.pushed is not None:
        callee = vm.exe.functions[info.pushed.func_index].name
        params = ", ".join(f"${w.register}={_summary(w.new, width)}" for w in info.writes)
        effect = f"call @{callee}({params})"
    elif info.popped is not None:
        caller = vm.exe.functions[info.next_func_index].name
        w = info.writes[0]
        effect = f"return to @{caller} ${w.register}={_summary(w.new, width)}"
    else:
        parts = [f"${w.register}={_summary(w.new, width)}" for w in info.writes]
        if info.jump_target is not None:
            parts.append(f"-> pc={info.jump_target}")
        effect = ", ".join(parts)
    return f"{head}    {effect}" if effect else head


def trace_lines(vm: VirtualMachine, width: int = 40) -> Iterator[str]:
    """Step a started machine to the end, yielding one line per executed instruction.

    A VMError propagates after the lines of the instructions that completed."""
    while not vm.halted:
        yield format_step(vm, vm.step(), width)


__all__ = ["VirtualMachine", "VMError", "Frame", "StepInfo", "RegisterWrite", "HANDLERS",
           "format_step", "trace_lines", "CALL", "HALT"]
