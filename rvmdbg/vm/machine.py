"""The Relay VM's dispatch loop: frames of registers, one handler per opcode, two ways to run.

Each function's bytecode is predecoded once into a list of closures, one per instruction,
made by `HANDLERS[opcode]`. A closure takes the current register file, performs exactly the
instruction's effect, and returns the next pc, or `CALL` when it pushed or popped a frame,
or `HALT` when the outermost frame returned. Both entry points run the same closures:

- `run()`: the fast path, a bare loop that keeps pc, registers and code in locals, over a
  table where straight-line sequences are fused into one handler that counts as its
  instructions' steps: whole regions of tensor code (`rvmdbg/vm/regions.py`) and, in scalar
  code, constant size + storage + tensor + kernel call and runs of moves, loads and kills
  (see "fused blocks" below); a block may end with a jump, a call or a return;
- `step()`: one instruction, reported as a `StepInfo` (reads, writes with old and new values,
  frame pushed or popped, jump taken, bytes allocated) that `unstep()` can undo.

Any failure (a `fatal`, a kernel error, a limit, a malformed operand) stops the machine at the
failing instruction with its state untouched and raises `VMError`, located by function, pc,
instruction and Relay span.
"""
from __future__ import annotations

import gc
import operator
from sys import getrefcount as _refcount
from typing import Iterator, NamedTuple

import numpy as np

from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.scalars import SCALAR_TYPES, QuietSwitch, to_runtime
from rvmdbg.values import ADTValue, format_value, tensor_line
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.escaped import escaped_bytes
from rvmdbg.vm.kernels import NoRoom
from rvmdbg.vm.objects import (ByteAccount, StorageObject, TensorPlaceholder, VMClosure,
                                dtype_nbytes)
from rvmdbg.i18n import _, ngettext

# What a handler returns instead of a pc (pcs are never negative).
CALL = -1   # the frame stack changed: reload frame, registers and code
HALT = -2   # the outermost frame returned; the result is in `vm.result`
TRAP = -3   # a breakpoint: stop before executing the instruction
AFTER = -4  # a trap that ran its instruction and stops after it (a watched write)

# Scalars (`rvmdbg.scalars`): `get_tag` and `load_consti` results for small values are shared,
# so an `if` can recognise its operand by identity.
_TAG_CACHE = [np.int32(t) for t in range(256)]
_CONSTI_CACHE = {v: np.int64(v) for v in range(-1, 256)}

# The bool scalar an `if` on a bool test compares by identity, by the constant it compares with.
_BOOL_OF = {1: np.True_, 0: np.False_}

# A bound operand that no register value is (`is` never matches it).
_UNBOUND = object()


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _item(v):
    """The Python number a 0-d (or 1-element) tensor holds (NumPy scalars: without `.item()`,
    which costs ten times `int()`)."""
    t = type(v)
    if t in SCALAR_TYPES:
        kind = v.dtype.kind
        return float(v) if kind == "f" else bool(v) if kind == "b" else int(v)
    return v.item()


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
        out = [_("error: {message}").format(message=self.message)]
        if self.func_name is not None:
            at = "  " + _("at @{func} pc={pc}").format(func=self.func_name, pc=self.pc)
            out.append(at + (f": {self.instruction}" if self.instruction else ""))
        if self.span is not None:
            out.append("  " + _("from {place}").format(place=self.span))
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
    return VMError(_("{what} (limit {name}={value}; raise it with {flag})").format(
        what=what, name=name, value=value, flag=Limits.flag_for(name)), limit=name)


class Frame:
    """One activation: the function, its pc, its register file and where its result goes.

    While a callee runs, the caller's `pc` is the pc of its invoke instruction; `Ret` moves
    it on by one. `owned_bytes` counts the live storage this frame allocated (None once the
    frame has returned and released it); it lives in `account`, a `ByteAccount` made by the
    frame's first `alloc_storage` (None until then) that its storages point at. `serial`
    numbers activations in the order they were pushed (0 = the outermost): the same
    activation gets the same serial on every replay, which the debugger's history relies on.
    """

    __slots__ = ("func_index", "pc", "registers", "caller_return_register", "account",
                 "serial")

    def __init__(self, func_index: int, pc: int, registers: list, caller_return_register=None,
                 serial: int = 0):
        self.func_index = func_index
        self.pc = pc
        self.registers = registers
        self.caller_return_register = caller_return_register
        self.account = None
        self.serial = serial

    @property
    def owned_bytes(self) -> int | None:
        account = self.account
        return 0 if account is None else account.owned_bytes

    @owned_bytes.setter
    def owned_bytes(self, value: int | None) -> None:
        account = self.account
        if account is None:
            if not value:
                return  # no account yet means 0 bytes; a returned frame had none to release
            self.account = account = ByteAccount()
        account.owned_bytes = value

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
    """What one executed instruction did, enough for a debugger to show and undo it.

    Made once per `step()`: only the first seven fields are set for every step, the rest keep
    their class defaults unless the step did that (no `__slots__`, so they need not be)."""

    writes: tuple = ()              # RegisterWrite records
    pushed: Frame | None = None
    popped: Frame | None = None
    jump_target: int | None = None
    next_func_index: int | None = None  # the top frame after the step (None: halted)
    next_pc: int | None = None
    allocated_bytes = 0
    freed_bytes = 0
    halted = False
    result = None
    _undo = None

    def __init__(self, step, frame, depth, func_index, pc, instruction, reads):
        self.step = step                # instructions executed before this one
        self.frame = frame              # the Frame that executed it
        self.depth = depth              # its index in vm.frames
        self.func_index = func_index
        self.pc = pc
        self.instruction = instruction
        self.reads = reads              # register numbers read, in `frame`

    def __repr__(self) -> str:
        return f"<StepInfo step={self.step} fi={self.func_index} pc={self.pc} {self.instruction.text()}>"


_new_object = object.__new__


class _Step(StepInfo):
    """The `StepInfo` that `VirtualMachine.step()` returns: the step's facts as one flat tuple
    `_r`, made in a fraction of what setting a dozen attributes and building `RegisterWrite`
    records costs; each field is computed from it when read (a trace line, a pane or `unstep`
    reads a few). Every value is captured at the step (old and new register values, the
    callee's parameters), so a field reads the same whatever ran since.

    `_r` = (step, frame, depth, meta, pc, nxt, old, new, live_before, live_after,
    owned_before, storages, other, caller_pc, orphan_before): `meta` is the instruction's
    decoded entry (kind, reads, writes, w0, instruction, handler), `nxt` what its handler
    returned, `old`
    and `new` the written values (one value when `w0 >= 0`, else lists over `writes`; for a
    return the caller's result register, for a call the callee's parameters), `other` the
    callee (a call) or the caller (a return), `caller_pc` the caller's pc before a return."""

    __slots__ = ("_r",)

    step = property(lambda self: self._r[0])
    frame = property(lambda self: self._r[1])
    depth = property(lambda self: self._r[2])
    pc = property(lambda self: self._r[4])
    func_index = property(lambda self: self._r[1].func_index)
    instruction = property(lambda self: self._r[3][4])
    reads = property(lambda self: self._r[3][1])

    @property
    def pushed(self):
        r = self._r
        return r[12] if r[3][0] == _CALL else None

    @property
    def popped(self):
        r = self._r
        return r[1] if r[3][0] == _RETURN else None

    @property
    def jump_target(self):
        r = self._r
        return r[5] if r[3][0] == _JUMP and r[5] >= 0 else None

    @property
    def halted(self):
        return self._r[5] == HALT

    @property
    def result(self):
        r = self._r
        return r[7] if r[5] == HALT else None

    @property
    def next_func_index(self):
        r = self._r
        if r[5] >= 0:
            return r[1].func_index
        return None if r[5] == HALT else r[12].func_index

    @property
    def next_pc(self):
        r = self._r
        nxt = r[5]
        if nxt >= 0:
            return nxt
        if nxt == HALT:
            return None
        return 0 if r[3][0] == _CALL else r[13] + 1  # `ret` moves the caller past its invoke

    @property
    def allocated_bytes(self):
        r = self._r
        return max(0, r[9] - r[8])

    @property
    def freed_bytes(self):
        r = self._r
        return max(0, r[8] - r[9])

    @property
    def writes(self):
        r = self._r
        depth, (kind, _reads, writes, w0, _ins, _h), nxt, old, new = r[2], r[3], r[5], r[6], r[7]
        if nxt >= 0:
            if w0 >= 0:
                return (_write(RegisterWrite, (depth, w0, old, new)),)
            return tuple([_write(RegisterWrite, (depth, reg, o, n))
                          for reg, o, n in zip(writes, old, new)]) if writes else ()
        if kind == _CALL:
            return tuple([_write(RegisterWrite, (depth + 1, reg, None, v))
                          for reg, v in enumerate(new)])
        if nxt == HALT:
            return ()
        return (_write(RegisterWrite, (depth - 1, r[1].caller_return_register, old, new)),)

    @property
    def _undo(self):
        r = self._r
        return r[8], r[14], r[10], r[11], r[13]


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


def _within_max_bytes(vm, kernel, impl, also: int = 0):
    """`impl`, checking first that the intermediates a fused kernel holds at once fit under
    --max-bytes beside the live tensors (and `also` bytes about to be allocated); a kernel
    without intermediates is left as it is."""
    held = getattr(impl, "intermediate_bytes", 0)
    if held is None and hasattr(impl, "run_within"):
        return _within_room(vm, kernel, impl, also)
    if not held:
        return impl
    max_bytes = vm.limits.max_bytes

    def checked(values):
        live = vm.live_bytes + vm.orphan_bytes + also + held
        if live > max_bytes and _still_over(vm, also + held):
            live = vm.live_bytes + vm.orphan_bytes + also + held
            raise _limit_error("max_bytes", max_bytes,
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
    run_within, max_bytes = impl.run_within, vm.limits.max_bytes

    def checked(values):
        while True:  # twice at most: the second time the escaped bytes are exact
            try:
                return run_within(values, max_bytes - vm.live_bytes - vm.orphan_bytes - also)
            except NoRoom as short:
                if _still_over(vm, also + short.needed):
                    live = vm.live_bytes + vm.orphan_bytes + also + short.needed
                    raise _limit_error("max_bytes", max_bytes, _(
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
    return vm.live_bytes + vm.orphan_bytes + size > vm.limits.max_bytes


def _ret(vm, fi, pc, ins):
    result, frames = ins.result, vm.frames

    def ret(regs):
        value = regs[result]
        done = frames.pop()
        account = done.account
        if account is not None and account.owned_bytes:
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
        raise _Malformed(_("{what} of function index {index}, but there are {n} "
                           "functions").format(what=what, index=func_index, n=len(functions)))
    return functions[func_index]


def _invoke(vm, fi, pc, ins):
    callee_index, args, dst = ins.func_index, tuple(ins.args), ins.dst
    callee = _callee(vm, callee_index, "invoke")
    if len(args) != len(callee.params):
        raise _Malformed(_("invoke passes {n} arguments to @{func}, which takes {m}").format(
            n=len(args), func=callee.name, m=len(callee.params)))
    pad = [None] * (callee.register_file_size - len(args))
    frames, max_depth = vm.frames, vm.limits.max_depth
    depth_error = ("max_depth", max_depth, _("call depth exceeded {n} frames calling "
                                             "@{func}").format(n=max_depth, func=callee.name))

    if len(args) == 1:
        a0 = args[0]

        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
            frames[-1].pc = pc
            vm.pushes = serial = vm.pushes + 1
            frames.append(Frame(callee_index, 0, [regs[a0]] + pad, dst, serial))
            return CALL
    elif len(args) == 0:
        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
            frames[-1].pc = pc
            vm.pushes = serial = vm.pushes + 1
            frames.append(Frame(callee_index, 0, pad[:], dst, serial))
            return CALL
    else:
        gather = operator.itemgetter(*args)

        def invoke(regs):
            if len(frames) >= max_depth:
                raise _limit_error(*depth_error)
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
    nargs = len(args)
    gather = (operator.itemgetter(*args) if nargs > 1
              else (lambda regs: (regs[args[0]],)) if args else (lambda regs: ()))

    def invoke_closure(regs):
        clo = regs[closure]
        if type(clo) is not VMClosure:
            raise VMError(_("invoke_closure: ${reg} holds {value}, not a closure").format(
                reg=closure, value=_summary(clo)))
        callee = clo.func_index
        captured = clo.captured
        if len(captured) + nargs != arities[callee]:
            takes = arities[callee] - len(captured)
            raise VMError(ngettext("closure @{func} takes {n} argument, called with {m}",
                                   "closure @{func} takes {n} arguments, called with {m}",
                                   takes).format(func=clo.name, n=takes, m=nargs))
        if len(frames) >= max_depth:
            raise _limit_error("max_depth", max_depth,
                               _("call depth exceeded {n} frames calling @{func}").format(
                                   n=max_depth, func=clo.name))
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
        kernel=kernel.name, value=_summary(v)))


def _check_output(kernel, reg, out, slot):
    """Raise unless `out` fits the tensor allocated in the output register (`slot`)."""
    shape, dtype = getattr(slot, "shape", None), getattr(slot, "dtype", None)
    if shape is None or dtype is None:
        raise VMError(_("kernel {kernel}: output register ${reg} holds {value}, not an "
                        "allocated tensor").format(kernel=kernel.name, reg=reg,
                                                   value=_summary(slot)))
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype:
        raise VMError(_("kernel {kernel} produced {made} but output ${reg} was allocated as "
                        "{allocated}").format(kernel=kernel.name, made=_shape_text(out.shape, out.dtype),
                                              reg=reg, allocated=_shape_text(shape, dtype)))


def _invoke_packed(vm, fi, pc, ins):
    kernels = vm.exe.kernels
    if not 0 <= ins.packed_index < len(kernels):
        raise _Malformed(_("invoke_packed of kernel {index}, but there are {n} kernels").format(
            index=ins.packed_index, n=len(kernels)))
    kernel = kernels[ins.packed_index]
    nout = ins.output_size
    args = tuple(ins.args)
    inputs, outputs = args[:len(args) - nout], args[len(args) - nout:]
    if kernel.num_inputs != len(inputs) or kernel.num_outputs != nout:
        raise _Malformed(_("kernel {kernel} takes {inputs} inputs and {outputs} outputs, "
                           "called with {given_inputs} and {given_outputs}").format(
            kernel=kernel.name, inputs=kernel.num_inputs, outputs=kernel.num_outputs,
            given_inputs=len(inputs), given_outputs=nout))
    impl, nxt = kernel.impl, pc + 1
    if impl is None:
        raise _Malformed(_("kernel {kernel} has no implementation").format(kernel=kernel.name))
    impl = _within_max_bytes(vm, kernel, impl)

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
                kernel=kernel.name, value=_summary(res), n=nout))
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
    """The handler of a one-output kernel: `_kernel_caller` computes the output (through the
    operator's 0-d function when the kernel has one and the inputs are 0-d, which is what the
    kernel would do), checked against the tensor allocated in `$o0`."""
    compute = _kernel_caller(impl, inputs)

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
            known_off = _item(const)
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
                    op="alloc_tensor", reg=storage, value=_summary(st)))
            if end > st.size:
                raise VMError(_("{op}: {n} bytes at offset {offset} do not fit in a storage of "
                                "{size} bytes").format(op="alloc_tensor", n=nbytes,
                                                        offset=known_off, size=st.size))
            regs[dst] = TensorPlaceholder(st, known_off, shape, dtype)
            return nxt
        off = _item(o)
        if type(st) is not StorageObject:
            raise VMError(_("{op}: ${reg} holds {value}, not a storage").format(
                op="alloc_tensor", reg=storage, value=_summary(st)))
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
        off = _item(regs[offset])
        shape = _shape_from(regs[shape_register], shape_register, "alloc_tensor_reg")
        if type(st) is not StorageObject:
            raise VMError(_("{op}: ${reg} holds {value}, not a storage").format(
                op="alloc_tensor_reg", reg=storage, value=_summary(st)))
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
        raise _Malformed(_("closure of @{func} captures {n} values but it takes {m} "
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
                    op="get_field", reg=obj, value=_summary(v))) from None
            raise VMError(_("get_field: ${reg} = {value} has {n} fields, no field {index}").format(
                reg=obj, value=_summary(v), n=len(v.fields), index=index)) from None
        return nxt
    return get_field


def _jump_target(fi_name, pc, target, size):
    if 0 <= target < size:
        return target, None
    return target, _("jump from pc {pc} to pc {target}, outside @{func} (pcs 0..{last})").format(
        pc=pc, target=target, func=fi_name, last=size - 1)


def _if(vm, fi, pc, ins):
    test, target = ins.test, ins.target
    fn = vm.exe.functions[fi]
    size = len(fn.instructions)
    t_pc, t_bad = _jump_target(fn.name, pc, pc + ins.true_offset, size)
    f_pc, f_bad = _jump_target(fn.name, pc, pc + ins.false_offset, size)

    if t_bad is None and f_bad is None:
        known, known_value = _consti_before(vm, fi, pc, target)
        if known is not _UNBOUND:
            bool_value = _BOOL_OF.get(known_value)

            def if_const(regs):
                # The target is (almost always) the `load_consti` just before: by identity.
                t = regs[target]
                x = regs[test]
                if t is known:
                    if type(x) is np.bool_:  # bools compare as 0/1: True and False are unique
                        return t_pc if x is bool_value else f_pc
                    if type(x) in SCALAR_TYPES:
                        return t_pc if x == known_value else f_pc
                return t_pc if _item(x) == _item(t) else f_pc
            return if_const

        def if_(regs):
            # compares 0-d (or 1-element) tensors of any dtype; bools as 0/1.
            return t_pc if _item(regs[test]) == _item(regs[target]) else f_pc
        return if_

    def if_checked(regs):
        taken = _item(regs[test]) == _item(regs[target])
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
        raise _Malformed(_("load_const of constant {index}, but there are {n} "
                           "constants").format(index=ins.const_index, n=len(constants)))
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
            raise VMError(_("{op}: ${reg} holds {value}, not an ADT value").format(
                op="get_tag", reg=obj, value=_summary(v))) from None
        regs[dst] = cache[tag] if tag < 256 else np.int32(tag)
        return nxt
    return get_tag


def _consti(value: int) -> np.int64:
    """The int64 scalar `load_consti value` loads (shared for small values)."""
    cached = _CONSTI_CACHE.get(value)
    return cached if cached is not None else np.int64(value)


def _load_consti(vm, fi, pc, ins):
    value, dst, nxt = _consti(ins.value), ins.dst, pc + 1

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
    frames, max_bytes = vm.frames, vm.limits.max_bytes
    known, known_size = _UNBOUND, 0
    const = _loaded_constant(vm, fi, pc, size_reg)
    if const is not None:
        try:
            known_size = operator.index(_item(const))
        except (TypeError, ValueError):
            known_size = -1
        if known_size >= 0:
            known = const  # else the general path reports it, as for any register value

    def size_in(v):
        size = operator.index(_item(v))
        if size < 0:
            raise VMError(_("alloc_storage: negative size {size} in ${reg}").format(
                size=size, reg=size_reg))
        return size

    def alloc_storage(regs):
        v = regs[size_reg]
        size = known_size if v is known else size_in(v)
        live = vm.live_bytes + size
        if live + vm.orphan_bytes > max_bytes and _still_over(vm, size):
            live += vm.orphan_bytes
            raise _limit_error("max_bytes", max_bytes,
                               _("allocating {size} bytes would bring live memory to {live} bytes").format(
                                   size=size, live=live))
        owner = frames[-1]
        account = owner.account
        if account is None:
            owner.account = account = ByteAccount()
        vm.live_bytes = live
        account.owned_bytes += size
        regs[dst] = StorageObject(size, alignment, hint, account)
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
                    and _is_tensor(constants[prev.const_index])):
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
                op="shape_of", reg=tensor, value=_summary(v)))
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
        if old is None or not _is_tensor(v) and type(v) is not TensorPlaceholder:
            raise VMError(_("{op}: ${reg} holds {value}, not a tensor").format(
                op="reshape_tensor", reg=tensor, value=_summary(v)))
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
        if not _is_tensor(v):
            raise VMError(_("{op}: ${reg} holds {value}, not a tensor").format(
                op="device_copy", reg=src, value=_summary(v)))
        size = v.nbytes
        live = vm.live_bytes + vm.orphan_bytes + size
        if live > max_bytes and _still_over(vm, size):
            raise _limit_error("max_bytes", max_bytes,
                               _("allocating {size} bytes would bring live memory to {live} bytes").format(
                                   size=size, live=vm.live_bytes + vm.orphan_bytes + size))
        out = v.copy()  # one device: the copy stays on it (a scalar copies itself)
        if type(out) is np.ndarray:
            vm.orphan_bytes += out.nbytes  # in no storage: counted as an escaped tensor
        regs[dst] = out
        return nxt
    return device_copy


def _kill_register(vm, fi, pc, ins):
    dst, nxt = ins.dst, pc + 1

    def kill_register(regs):
        v = regs[dst]
        if type(v) is StorageObject and not v.released:
            v.released = True
            account = v.owner
            if account.owned_bytes is not None:  # None: its frame returned, releasing it
                account.owned_bytes -= v.size
                vm.live_bytes -= v.size
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


class _Partial(Exception):
    """Raised by a block whose instruction `done` (counted from the block's start) failed
    with `error` after the ones before it completed."""

    def __init__(self, done: int, error: BaseException):
        super().__init__(done, error)
        self.done = done
        self.error = error


class _Exit(Exception):
    """Raised by a region (rvmdbg/vm/regions.py) whose `if` inside it branched away from the
    rest of it: only its first `done` instructions ran, and execution goes on at `pc`."""

    def __init__(self, done: int, pc: int):
        super().__init__(done, pc)
        self.done = done
        self.pc = pc


def _one_by_one(singles: tuple):
    """A block's slow path: its instructions' own handlers in order (the last one's result)."""
    def replay(regs):
        nxt = None
        for done, handler in enumerate(singles):
            try:
                nxt = handler(regs)
            except Exception as exc:
                raise _Partial(done, exc) from None
        return nxt
    return replay


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
    if not (_is_tensor(c_size) and _is_tensor(c_off)):
        return None
    try:
        size = operator.index(_item(c_size))
        off = _item(c_off)
    except (TypeError, ValueError):
        return None
    shape, dtype = tuple(atn.shape), np.dtype(atn.dtype)
    if size < 0 or type(off) is not int or off < 0 or off + dtype_nbytes(shape, dtype) > size:
        return None  # the single handlers report it
    # the block computes before it allocates the output's storage: both are counted first
    impl = _within_max_bytes(vm, kernel, impl, also=size)
    compute = _kernel_caller(impl, inputs)
    alignment, hint, nxt = ast.alignment, ast.dtype_hint, p + 5
    # A 0-d output is a NumPy scalar: its type alone says its dtype and shape.
    scalar_type = dtype.type if not shape and dtype.type in SCALAR_TYPES else None
    frames, max_bytes = vm.frames, vm.limits.max_bytes
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
        replay = _one_by_one(tuple(singles[p:p + width]))
        return _alloc_scalar_kernel(vm, impl, fast, inline, ra, rb, c, scalar_type, size,
                                    (s, c_size, st, alignment, hint, o, c_off, t), branch,
                                    replay, nxt), width
    width = 5
    replay = _one_by_one(tuple(singles[p:p + width]))

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
        if live + vm.orphan_bytes > max_bytes or (type(out) is not scalar_type if scalar_type is not None else
                                type(out) is not np.ndarray or out.dtype is not dtype
                                or out.shape != shape):
            return replay(regs)  # the limit, or an output the full check must look at
        owner = frames[-1]
        account = owner.account
        if account is None:
            owner.account = account = ByteAccount()
        vm.live_bytes = live
        account.owned_bytes += size
        regs[s] = c_size
        regs[st] = StorageObject(size, alignment, hint, account, out)
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
    t_pc, t_bad = _jump_target(fn.name, q + 1, q + 1 + br.true_offset, size)
    f_pc, f_bad = _jump_target(fn.name, q + 1, q + 1 + br.false_offset, size)
    if t_bad is not None or f_bad is not None:
        return None
    return lc.dst, lc.value, _consti(lc.value), _BOOL_OF.get(lc.value), t_pc, f_pc


def _alloc_scalar_kernel(vm, impl, fast, inline, ra, rb, c, scalar_type, size, writes, branch,
                         replay, nxt):
    """The block of `_fuse_alloc_kernel` for a kernel with a scalar output and a scalar path
    (`x op constant`, inline 1, or `x op y`, inline 2), ending, when `branch` is given, with
    `load_consti $k v; if $out $k` on the output: the commonest blocks of scalar code,
    specialised (each test done once, no `if` per variant at run time)."""
    s, c_size, st, alignment, hint, o, c_off, t = writes
    frames, max_bytes = vm.frames, vm.limits.max_bytes
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
        if live + vm.orphan_bytes > max_bytes or type(out) is not scalar_type:
            return replay(regs)  # the limit, or an output the full check must look at
        owner = frames[-1]
        account = owner.account
        if account is None:
            owner.account = account = ByteAccount()
        vm.live_bytes = live
        account.owned_bytes += size
        regs[s] = c_size
        regs[st] = StorageObject(size, alignment, hint, account, out)
        regs[o] = c_off
        regs[t] = out
        if branch is None:
            return nxt
        regs[k] = k_value
        if type(out) is np.bool_:  # True and False are unique
            return t_pc if out is bool_value else f_pc
        return t_pc if out == value else f_pc
    return alloc_scalar_kernel


def _kernel_caller(impl, inputs: tuple):
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


def _fuse_simple_run(vm, fi, p, instructions, stops):
    """(handler, width) of a run of moves, constant loads and kills starting at `p`, ended
    by a `goto`, by `load_consti $r; if $x $r`, or before a pc in `stops` (where another
    block starts), 2..MAX_BLOCK instructions in all; else None. These instructions cannot
    fail once decoded, except the `if` reading its test."""
    constants = vm.constants
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
            ops.append((1, _consti(ins.value), ins.dst))
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
        target, bad = _jump_target(fn.name, q, q + instructions[q].pc_offset, size)
        if bad is None:
            end_kind, end_info = "goto", target
    elif q < size and len(ops) < MAX_BLOCK and type(instructions[q]) in _CALLS:
        end_kind, end_info = "call", q
    elif (q < size and type(instructions[q]) is bc.If and ops and ops[-1][0] == 1
          and type(instructions[q - 1]) is bc.LoadConsti and len(ops) < MAX_BLOCK):
        br = instructions[q]
        t_pc, t_bad = _jump_target(fn.name, q, q + br.true_offset, size)
        f_pc, f_bad = _jump_target(fn.name, q, q + br.false_offset, size)
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
    bool_value = _BOOL_OF.get(value)

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
                raise _Partial(nxt - p, exc) from None
        x = regs[test]
        if type(x) is np.bool_:  # True and False are unique; `np.True_ == 1` costs 0.9 us
            return t_pc if x is bool_value else f_pc
        if type(x) not in SCALAR_TYPES:
            try:
                x = x.item()
            except Exception as exc:
                raise _Partial(nxt - p, exc) from None
        return t_pc if x == value else f_pc
    return simple_run, width


# Instructions that push or pop a frame: one may end a block (its handler runs last).
_CALLS = (bc.Invoke, bc.InvokeClosure, bc.Ret)


def _fuse(vm, fi, instructions, singles, register_file_size):
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


# ---------------------------------------------------------------- helpers for messages

def _summary(v, width: int = 60) -> str:
    """A one-line, truncated human form of a register value."""
    if v is None:
        return "nothing"
    if type(v) is np.ndarray:
        return tensor_line(v, width)
    try:
        text = format_value(v)
    except Exception:  # a value a kernel made up: describe it rather than fail on it
        text = f"<{type(v).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _is_tensor(v) -> bool:
    """An array, or a NumPy scalar (a 0-d tensor, `rvmdbg.scalars`)."""
    return type(v) is np.ndarray or isinstance(v, np.generic)


def _shape_text(shape, dtype) -> str:
    return f"[{', '.join(str(int(d)) for d in shape)}] {dtype}"


def _shape_from(v, reg: int, what: str) -> tuple:
    if type(v) is not np.ndarray or v.ndim != 1 or v.dtype.kind not in "iu":
        raise VMError(_("{op}: ${reg} holds {value}, not a 1-d integer shape tensor").format(
            op=what, reg=reg, value=_summary(v)))
    shape = tuple(int(d) for d in v.tolist())
    if any(d < 0 for d in shape):
        raise VMError(_("{op}: negative dimension in shape {shape}").format(
            op=what, shape=list(shape)))
    return shape


# ---------------------------------------------------------------- the machine

_PLAIN, _JUMP, _CALL, _RETURN, _KERNEL = range(5)  # _KERNEL: a plain invoke_packed

_QUIET = QuietSwitch()
_write = tuple.__new__  # RegisterWrite(...) without its Python-level __new__: step() makes many


class VirtualMachine:
    """Runs an `Executable`. State: `frames` (innermost last), `steps`, `halted`, `result`,
    `error`, `live_bytes`. `invoke(name, args)` runs a function to its result; `start` +
    `step`/`run` drive it one instruction, or many, at a time."""

    traps_with_checks = True   # run() takes `checks` and `scoped` (debug/machine.py)

    def __init__(self, exe, limits: Limits | None = None):
        self.exe = exe
        self.limits = limits or DEFAULT_LIMITS
        # The constant pool as runtime values: 0-d constants as scalars (`rvmdbg.scalars`).
        self.constants = [to_runtime(c) for c in exe.constants]
        self.frames: list[Frame] = []   # the handlers hold this list: never rebind it
        self.steps = 0
        self.halted = False
        self.result = None
        self.error: VMError | None = None
        self.live_bytes = 0             # storage the live frames own (exact)
        self.orphan_bytes = 0           # tensors that outlived it: an upper bound (vm/escaped.py)
        self.inputs: tuple = ()         # the arguments: not allocated by the program
        self.pushes = 0                 # frames pushed since start (the newest one's serial)
        self._trap_checks: dict = {}    # (func_index, pc) -> check, for the traps of one run()
        self._decode()

    # ------------------------------------------------------------ decoding

    def _decode(self) -> None:
        """Build each function's handler list plus, for `step()`, each instruction's kind,
        read set and write set."""
        self._code: list[list] = []
        self._meta: list[list] = []
        self._arity: list[int] = []     # per function, its parameter count (step() of a call)
        self._fused: list[tuple] = []   # per function (handlers, widths), for run()
        self._blocks: list[list] = []   # per function [(start pc, width)] of its blocks
        self._fused_ready = False       # the two above are made on the first run()
        self._trapped: dict = {}
        self._block_start_of: dict[int, list[int]] = {}   # see _block_starts
        # Tens of thousands of small closures: no cyclic collection passes meanwhile.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._decode_functions()
        finally:
            if gc_was_enabled:
                gc.enable()

    def _decode_functions(self) -> None:
        for fi, fn in enumerate(self.exe.functions):
            code, meta = [], []
            for pc, ins in enumerate(fn.instructions):
                code.append(self._handler(fi, pc, ins, fn.register_file_size))
                kind = (_CALL if ins.is_call else _RETURN if ins.is_return
                        else _JUMP if ins.is_jump
                        else _KERNEL if type(ins) is bc.InvokePacked else _PLAIN)
                writes = tuple(ins.writes())
                # w0: the one register a plain instruction writes (-1: none or several)
                w0 = writes[0] if len(writes) == 1 and kind in (_PLAIN, _KERNEL, _JUMP) else -1
                meta.append((kind, tuple(ins.reads()), writes, w0, ins, code[-1]))
            # Falling off the end lands on a handler that reports it.
            code.append(_raiser(f"execution ran past the last instruction of @{fn.name}"))
            self._code.append(code)
            self._meta.append(meta)
            self._arity.append(len(fn.params))

    def handler_at(self, func_index: int, pc: int):
        """The handler closure `HANDLERS[opcode]` made for this instruction when the function
        was predecoded (what `step()` calls there)."""
        return self._code[func_index][pc]

    def blocks(self) -> list[list[tuple[int, int]]]:
        """Per function, the (start pc, width) of every block run() executes as one handler."""
        self._fuse_all()
        return self._blocks

    def _fuse_all(self) -> None:
        """Make run()'s fused tables (once: a session that only steps never needs them)."""
        if self._fused_ready:
            return
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for fi, fn in enumerate(self.exe.functions):
                handlers, widths, blocks = _fuse(self, fi, fn.instructions, self._code[fi],
                                                 fn.register_file_size)
                self._fused.append((handlers, widths))
                self._blocks.append(blocks)
            self._fused_ready = True
        finally:
            if gc_was_enabled:
                gc.enable()

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

    def _code_with_traps(self, breakpoints: frozenset,
                         keep_blocks: bool = True) -> tuple[list, list]:
        """The single-handler table and the fused table with breakpoint locations replaced
        by traps, and no block spanning one (cached per set). With `keep_blocks`, a trap at
        the start of a block runs the whole block when its check lets it go on (its checks
        never ask to stop after the instruction: see `run`)."""
        key = (breakpoints, keep_blocks)
        trapped = self._trapped
        tables = trapped.pop(key, None)
        if tables is None:
            self._fuse_all()
            traps = [(fi, pc) for fi, pc in breakpoints
                     if 0 <= fi < len(self._code) and 0 <= pc < len(self._code[fi]) - 1]
            # only the functions with a trap get copies: a stop's trap set (a few writers of
            # one function) costs that function's table, never the whole program's
            table = list(self._code)
            fused = list(self._fused)
            for fi in {fi for fi, _ in traps}:
                table[fi] = list(self._code[fi])
                fused[fi] = (list(self._fused[fi][0]), list(self._fused[fi][1]))
            frames = self.frames
            for fi, pc in traps:
                table[fi][pc] = _make_trap(self, frames, fi, pc, self._code[fi][pc])
            for fi, pc in traps:
                handlers, widths = fused[fi]
                start = self._block_starts(fi)[pc]
                if start < pc:  # the block would run over the trap
                    handlers[start], widths[start] = table[fi][start], 1
                handlers[pc], widths[pc] = table[fi][pc], 1
            if keep_blocks:
                for fi, pc in traps:
                    block, width = self._fused[fi][0][pc], self._fused[fi][1][pc]
                    if width > 1 and not any((fi, q) in breakpoints
                                             for q in range(pc + 1, pc + width)):
                        handlers, widths = fused[fi]
                        handlers[pc] = _make_trap(self, frames, fi, pc, self._code[fi][pc],
                                                  block)
                        widths[pc] = width
            tables = (table, fused)
            # the least recently used set goes: the debugger's own sets (every call, for
            # `push_step`) come back at every stop and are dear to make for a big program
            while len(trapped) >= 16:
                trapped.pop(next(iter(trapped)))
        trapped[key] = tables
        return tables

    def _block_starts(self, fi: int) -> list[int]:
        """Per pc of function `fi`, the start of the fused block that holds it (the pc itself
        outside a block); made once per function."""
        starts = self._block_start_of.get(fi)
        if starts is None:
            starts = list(range(len(self._code[fi])))
            for start, width in self._blocks[fi]:
                starts[start:start + width] = [start] * width
            self._block_start_of[fi] = starts
        return starts

    # ------------------------------------------------------------ starting

    def start(self, name: str, args=()) -> None:
        """Set up the first frame: `args` in registers 0..n-1 of function `name`, pc 0."""
        try:
            fi = self.exe.func_index(name)
        except KeyError as exc:
            raise VMError(exc.args[0] if exc.args else _("no function @{func}").format(
                func=name)) from None
        fn = self.exe.functions[fi]
        args = [to_runtime(a) for a in args]
        if len(args) != len(fn.params):
            raise VMError(ngettext("@{func} takes {n} argument, got {m}",
                                   "@{func} takes {n} arguments, got {m}", len(fn.params)).format(
                func=fn.name, n=len(fn.params), m=len(args)))
        self.frames.clear()
        self.frames.append(Frame(fi, 0, args + [None] * (fn.register_file_size - len(args))))
        self.steps = 0
        self.halted = False
        self.result = None
        self.error = None
        self.live_bytes = 0
        self.orphan_bytes = 0
        self.inputs = tuple(args)
        self.pushes = 0

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
            raise VMError(_("the program has already halted"))
        if not self.frames:
            raise VMError(_("no program started: call start() first"))

    # ------------------------------------------------------------ the fast path

    def run(self, until_step: int | None = None, breakpoints=None, checks=None, scoped=None):
        """Execute from the current state until the program halts (returns the result), or
        until `steps == until_step`, or before an instruction at a (func_index, pc) in
        `breakpoints` other than the current one (both return None; check `halted`).

        `checks` maps some of those locations to `check(registers)`, called by the trap in
        the loop itself (the run does not stop to ask): a false result runs the instruction
        and goes on; True stops before it; a callable runs the instruction, then stops after
        it when that callable returns true (a watched write; only for instructions that
        neither call nor return). A location without a check always stops.

        `scoped` = (serials, locations): more traps, armed only in the activations whose
        `Frame.serial` is in `serials` (a watchpoint's frame); every other activation of the
        same functions runs their untrapped, fused code. Only there may a check return a
        callable: a trap at `breakpoints` runs the fused block it starts when it goes on, so
        one that asks to stop after its instruction stops there whatever the callable says."""
        self._check_runnable()
        limit = self.limits.max_steps
        end = limit if until_step is None else min(until_step, limit)
        if self.steps >= end and until_step is not None and until_step <= limit:
            return None
        # The VM makes no reference cycles (storages point at a ByteAccount, not their frame),
        # and on a deep stack the cyclic collector would rescan every live frame again and
        # again (a third of a 100,000-deep run): pause it, as the interpreter does.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        # Scalar arithmetic wraps around without NumPy's overflow warnings (`rvmdbg.scalars`).
        quiet = _QUIET.enter()
        try:
            self._fuse_all()
            table, fused = self._code, self._fused
            breakpoints = frozenset(breakpoints) if breakpoints else frozenset()
            scope = scope_table = None
            if scoped is not None and scoped[0] and scoped[1]:
                scoped_locations = breakpoints | frozenset(scoped[1])
                scope_table, scope_fused = self._code_with_traps(scoped_locations, False)
                scope = (frozenset(scoped[0]), scope_fused)
                scope_table = (scope[0], scope_table)
            else:
                scoped_locations = breakpoints
            if scoped_locations:
                if self.location in scoped_locations and self.steps < end:
                    # Leave the breakpoint we are stopped at before arming the traps.
                    if self._loop(table, self.steps + 1) == HALT:
                        return self.result
                if breakpoints:
                    table, fused = self._code_with_traps(breakpoints)
            self._trap_checks = checks or {}
            stop = self._run_blocks(fused, end, scope)
            if stop == 0:  # the last few steps before `end`, one instruction at a time
                stop = self._loop(table, end, scope_table)
        finally:
            self._trap_checks = {}
            _QUIET.leave(quiet)
            if gc_was_enabled:
                gc.enable()
        if stop == HALT:
            return self.result
        if stop == TRAP:
            return None
        return self._stopped_at_end(end, limit, until_step)

    def _stopped_at_end(self, end, limit, until_step):
        if until_step is not None and until_step <= limit:
            return None
        top = self.frames[-1]
        err = _limit_error("max_steps", limit, _("the program ran {n} instructions without finishing").format(
            n=limit))
        raise self._fail(err, top, top.pc)

    def _loop(self, table: list, end: int, scope=None) -> int:
        """Execute until HALT, TRAP or `steps == end` (returns 0 for the last); `scope`:
        (serials, table) for the activations that run another table (see `run`)."""
        frames = self.frames
        frame = frames[-1]
        regs = frame.registers
        serials, scoped = scope if scope is not None else ((), None)
        code = (scoped if scoped is not None and frame.serial in serials
                else table)[frame.func_index]
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
                        if scoped is not None and frame.serial in serials:
                            code = scoped[frame.func_index]
                        pc = frame.pc
                    elif pc == HALT:
                        self.steps = steps + 1
                        return HALT
                    else:  # TRAP or AFTER: the trap set the frame's pc
                        self.steps = steps if pc == TRAP else steps + 1
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

    def _run_blocks(self, fused: list, end: int, scope=None) -> int:
        """Like `_loop` over the fused table, while a whole block fits before `end`:
        returns HALT, TRAP, or 0 with fewer than MAX_BLOCK steps left (or none)."""
        frames = self.frames
        frame = frames[-1]
        regs = frame.registers
        serials, scoped = scope if scope is not None else ((), None)
        code, widths = (scoped if scoped is not None and frame.serial in serials
                        else fused)[frame.func_index]
        pc = frame.pc
        steps = self.steps
        safe = end - MAX_BLOCK
        try:
            while steps <= safe:
                try:
                    while steps <= safe:
                        nxt = code[pc](regs)
                        if nxt >= 0:
                            steps += widths[pc]
                            pc = nxt
                        elif nxt == CALL:  # a call or return, alone or ending a block
                            steps += widths[pc]
                            frame = frames[-1]
                            regs = frame.registers
                            code, widths = fused[frame.func_index]
                            if scoped is not None and frame.serial in serials:
                                code, widths = scoped[frame.func_index]
                            pc = frame.pc
                        elif nxt == HALT:
                            self.steps = steps + widths[pc]
                            return HALT
                        else:  # TRAP: not executed; AFTER: executed (a trap is one instruction)
                            self.steps = steps if nxt == TRAP else steps + 1
                            return TRAP
                except _Exit as left:  # a region's branch went the other way: it ran less
                    steps += left.done
                    pc = left.pc
        except BaseException as exc:
            # pc names the failing block or instruction; a block says how far it got.
            if type(exc) is _Partial:
                pc += exc.done
                steps += exc.done
                exc = exc.error
            frame.pc = pc
            self.steps = steps
            if isinstance(exc, Exception):
                raise self._fail(exc, frame, pc) from (None if isinstance(exc, VMError) else exc)
            raise exc
        frame.pc = pc
        self.steps = steps
        return 0

    # ------------------------------------------------------------ one step at a time

    def step(self) -> StepInfo:
        """Execute exactly one instruction and report what it did (a `StepInfo` whose fields
        are computed from a flat record when asked: see `_Step`)."""
        frames = self.frames
        if self.halted or not frames:
            self._check_runnable()
        frame = frames[-1]
        pc = frame.pc
        steps = self.steps
        if steps >= self.limits.max_steps:
            err = _limit_error("max_steps", self.limits.max_steps,
                               _("the program ran {n} instructions without finishing").format(
                                   n=self.limits.max_steps))
            raise self._fail(err, frame, pc)
        regs = frame.registers
        try:
            meta = self._meta[frame.func_index][pc]
        except IndexError:  # past the end: the handler there reports it
            meta = (_PLAIN, (), (), -1, None, self._code[frame.func_index][-1])
        kind, _reads, writes, w0, _ins, handler = meta
        depth = len(frames) - 1
        live_before = self.live_bytes
        orphan_before = self.orphan_bytes
        account = frame.account
        owned_before = 0 if account is None else account.owned_bytes
        storages = ()
        other = caller_pc = old = None
        if w0 >= 0:  # the common case: one register written
            old = regs[w0]
            if type(old) is StorageObject:
                storages = ((old, old.released, old.owner, old.owner.owned_bytes),)
        elif kind == _RETURN:
            if depth > 0:
                other = frames[-2]
                old = other.registers[frame.caller_return_register]
                caller_pc = other.pc
        elif kind != _CALL and writes:
            old = [regs[r] for r in writes]
            storages = tuple([(v, v.released, v.owner, v.owner.owned_bytes)
                              for v in old if type(v) is StorageObject])
        try:
            if kind == _KERNEL:  # scalar arithmetic wraps around without NumPy's warnings
                nxt = _QUIET.call(handler, regs)
            else:
                nxt = handler(regs)
        except Exception as exc:
            raise self._fail(exc, frame, pc) from None if isinstance(exc, VMError) else exc
        self.steps = steps + 1
        if nxt >= 0:
            frame.pc = nxt
            new = regs[w0] if w0 >= 0 else [regs[r] for r in writes] if writes else None
        elif kind == _CALL:
            other = frames[-1]
            new = other.registers[:self._arity[other.func_index]]
        elif nxt == HALT:
            new = self.result
        else:
            new = other.registers[frame.caller_return_register]
        info = _new_object(_Step)
        info._r = (steps, frame, depth, meta, pc, nxt, old, new, live_before, self.live_bytes,
                   owned_before, storages, other, caller_pc, orphan_before)
        return info

    def unstep(self, info: StepInfo) -> None:
        """Undo `info`, which must be the most recent step not yet undone."""
        live_before, orphan_before, owned_before, storages, caller_pc = info._undo
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
            self.pushes = info.pushed.serial - 1
        for storage, released, owner, owned in storages:
            storage.released = released
            owner.owned_bytes = owned
        info.frame.pc = info.pc
        info.frame.owned_bytes = owned_before
        self.live_bytes = live_before
        self.orphan_bytes = orphan_before
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
        source_line = getattr(self.exe, "source_line", None)
        err.source_line = source_line(err.span) if source_line else None
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
                    return _("kernel {kernel} reads ${reg}, an uninitialized tensor").format(
                        kernel=kernel.name, reg=r)
            if _is_kernel_error(exc):
                text = str(exc)
                op, sep, rest = text.partition(": ")
                base = kernel.name.removeprefix("vm_mod_").removeprefix("fused_")
                if sep and base == op:
                    text = rest  # a one-op kernel is named after its op: name it once
                return _("kernel {kernel}: {message}").format(kernel=kernel.name, message=text)
            return _("kernel {kernel} failed: {error}").format(
                kernel=kernel.name, error=f"{type(exc).__name__}: {exc}")
        if isinstance(exc, MemoryError):
            return _("out of memory")
        op = ins.text().split(" ")[0] if ins is not None else "instruction"
        if ins is not None and isinstance(exc, (AttributeError, TypeError)):
            # Mostly a register that holds the wrong kind of value: name it.
            for r in ins.reads():
                if r < len(frame.registers):
                    v = frame.registers[r]
                    if v is None or not _is_tensor(v):
                        return _("{op}: ${reg} holds {value}, which it cannot use").format(
                            op=op, reg=r, value=_summary(v))
        return _("{op} failed: {error}").format(op=op, error=f"{type(exc).__name__}: {exc}")


def _is_kernel_error(exc: Exception) -> bool:
    try:
        from rvmdbg.relay.ops import KernelError
    except ImportError:  # the operator library is optional for hand-built executables
        return type(exc).__name__ == "KernelError"
    return isinstance(exc, KernelError)


def _make_trap(vm, frames: list, fi: int, pc: int, instruction, block=None):
    """The handler that replaces `instruction` (a handler) at a trap location; it asks the
    location's check in `vm._trap_checks`, if any (see `VirtualMachine.run`). With `block`
    (the fused block starting there), going on runs the whole block; a check that asks to
    stop after the instruction then stops after it even when its callable says no (the
    caller finds no stop decided and goes on)."""
    key = (fi, pc)
    go_on = instruction if block is None else block

    def trap(regs):
        check = vm._trap_checks.get(key)
        if check is not None:
            verdict = check(regs)
            if not verdict:
                return go_on(regs)
            if verdict is not True:
                nxt = instruction(regs)
                if nxt < 0 or (not verdict() and block is None):
                    return nxt
                frames[-1].pc = nxt
                return AFTER
        frames[-1].pc = pc
        return TRAP
    return trap


# ---------------------------------------------------------------- tracing

def format_step(vm: VirtualMachine, info: StepInfo, width: int = 40) -> str:
    """`[step 12] @main pc=3: load_consti $5 1    $5=1`: one executed instruction."""
    fn = vm.exe.functions[info.func_index]
    text = info.instruction.text() if info.instruction is not None else "?"
    # the stop line's step label, in the language in use (as the debugger's)
    head = _("[step {step}]").format(step=info.step) + f" @{fn.name} pc={info.pc}: {text}"
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
