"""`RelaxMachine`: TVM's Relax VM bytecode stepped one instruction at a time, behind the
debugger's `Machine` protocol (`rvmdbg.debug.machine`).

Each `Call` runs what TVM's VM would run: a VM function (a frame is pushed; the caller's pc
stays at the call until `Ret`), or a packed function by name: a kernel compiled by LLVM
(`tvm_exe.mod.get_function(name, query_imports=True)`) or a `vm.builtin.*` function
(`tvm.get_global_func`). The builtins that take the VM itself are done here:
`alloc_storage` (a fresh aligned NumPy buffer, handed to TVM through DLPack),
`alloc_tensor` on such storage (a view of it), `alloc_shape_heap`, and the closures
(`make_closure`, `invoke_closure`: a closure is a VM function and its captured values).

Kernels write their outputs in place (destination-passing), so a register's tensor can change
after it was written. Reverse stepping stays exact because every change a packed call makes to
a tensor argument is journaled (the session's `RefJournal`: old and new contents), which the
history undoes and redoes as it does reference cells.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.relax import require_tvm
from rvmdbg.relax.isa import FUNC_VM, DType, RCall, RGoto, RIf, RRet, Shape
from rvmdbg.vm.machine import RegisterWrite, StepInfo, VMError

ALIGN = 64   # TVM's kernels assume 64-byte aligned buffers (kAllocAlignment)


class RelaxFrame:
    """One activation: the function, its pc, its registers, where its result goes."""

    __slots__ = ("func_index", "pc", "registers", "serial", "owned_bytes",
                 "caller_return_register", "call_args")

    def __init__(self, func_index: int, registers: list, serial: int, ret_reg=None,
                 call_args=()):
        self.func_index = func_index
        self.pc = 0
        self.registers = registers
        self.serial = serial
        self.owned_bytes = 0
        self.caller_return_register = ret_reg
        self.call_args = call_args   # the Call's arguments (what the check mode reports on Ret)


class Storage:
    """What `vm.builtin.alloc_storage` returns here: an aligned byte buffer of `nbytes`."""

    __slots__ = ("buffer", "nbytes", "dtype_hint", "scope", "owner")

    def __init__(self, nbytes: int, dtype_hint: str, scope: str, owner: int = 0):
        raw = np.zeros(nbytes + ALIGN, dtype=np.uint8)
        skip = (-raw.ctypes.data) % ALIGN
        self.buffer = raw[skip:skip + nbytes]
        self.nbytes, self.dtype_hint, self.scope = nbytes, dtype_hint, scope
        self.owner = owner   # the serial of the frame that allocated it

    def __repr__(self) -> str:
        return f"<storage {self.nbytes} bytes>"


class Closure:
    """A VM function with captured values (`vm.builtin.make_closure`)."""

    __slots__ = ("func", "captured")

    def __init__(self, func: str, captured: tuple):
        self.func, self.captured = func, captured

    @property
    def name(self) -> str:
        return self.func

    def __repr__(self) -> str:
        return f"<closure @{self.func}, {len(self.captured)} captured>"


class VMToken:
    """The `%vm` operand: the machine itself, which only the builtins done here accept."""

    def __repr__(self) -> str:
        return "%vm"


VM = VMToken()


class _TensorCell:
    """A journal cell whose value is a tensor's contents (set: copied back into it)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    @property
    def value(self):
        return self.tensor.numpy()

    @value.setter
    def value(self, contents):
        self.tensor.copyfrom(contents)


class RelaxMachine:
    """Runs a `RelaxExecutable`: `start(name, args)`, then `step()` or `run()`."""

    def __init__(self, exe, limits: Limits | None = None):
        tvm = require_tvm()
        self.tvm = tvm
        self.exe = exe
        self.limits = limits or DEFAULT_LIMITS
        self.journal = getattr(exe, "journal", None)
        self.frames: list[RelaxFrame] = []
        self.steps = 0
        self.halted = False
        self.result = None
        self.error: VMError | None = None
        self.pushes = 0
        self.live_bytes = 0
        self.orphan_bytes = 0
        self.on_call = None      # callable(name, args, before, ret): the check mode's hook
        self._tensor_type = tvm.runtime.Tensor
        self._index = {f.name: i for i, f in enumerate(exe.functions)}
        self._vm_funcs = {g.name for g in exe.table if g.kind == FUNC_VM}
        self._packed: dict = {}
        self._consts: dict = {}
        self._consts_by_id: dict = {}   # id -> the constant tensor (kept alive by _consts)
        # Allocations by the step that made them: a replay (the history's checkpoint and
        # replay) gets the very objects the first run made, so registers saved in checkpoints
        # and journal entries name the memory the program is using now.
        self._made: dict = {}
        self._storage_of: dict = {}   # id(tensor) -> (tensor, the Storage it is a view of)
        self._special = {
            "vm.builtin.alloc_storage": self._alloc_storage,
            "vm.builtin.alloc_tensor": self._alloc_tensor,
            "vm.builtin.alloc_shape_heap": self._alloc_shape_heap,
            "vm.builtin.make_closure": self._make_closure,
        }

    # ------------------------------------------------------------ protocol state

    def start(self, name: str = "main", args=()) -> None:
        name = name.lstrip("@")
        if name not in self._index:
            raise VMError(_("no function @{name}").format(name=name))
        fi = self._index[name]
        fn = self.exe.functions[fi]
        types = getattr(self.exe, "param_types", {}).get(name) or []
        # host values take the entry's declared dtypes (the screen's ARGs arrive untyped)
        args = [self.to_device(np.asarray(a).astype(t[0]) if t is not None and isinstance(
                    a, (np.ndarray, np.generic)) else a)
                for a, t in zip(list(args), types + [None] * len(list(args)))]
        if len(args) != len(fn.params):
            raise VMError(_("@{name} takes {n} arguments, got {m}").format(
                name=name, n=len(fn.params), m=len(args)))
        regs = [None] * fn.register_file_size
        regs[:len(args)] = args
        self.frames[:] = [RelaxFrame(fi, regs, 0)]
        self.steps = 0
        self.pushes = 0
        self.halted = False
        self.result = None
        self.error = None
        self.live_bytes = 0
        self.orphan_bytes = 0

    @property
    def location(self):
        if not self.frames:
            return None
        f = self.frames[-1]
        return (f.func_index, f.pc)

    def current_instruction(self):
        if not self.frames:
            return None
        f = self.frames[-1]
        return self.exe.functions[f.func_index].instructions[f.pc]

    def func_name(self, func_index: int) -> str:
        return self.exe.functions[func_index].name

    def blocks(self) -> list:
        return []

    # ------------------------------------------------------------ values

    def to_device(self, v):
        """A host value (NumPy array, tuple) as the TVM object the VM holds."""
        if isinstance(v, np.ndarray) or isinstance(v, np.generic):
            return self.tvm.runtime.tensor(np.asarray(v))
        if isinstance(v, tuple) and not isinstance(v, Shape):
            return tuple(self.to_device(x) for x in v)
        return v

    def _const(self, i: int):
        c = self._consts.get(i)
        if c is None:
            v = self.exe.constants[i]
            if isinstance(v, np.ndarray):
                c = self.tvm.runtime.tensor(v)
            elif isinstance(v, Shape):
                import tvm_ffi
                c = tvm_ffi.Shape(list(v))
            elif isinstance(v, DType):
                c = self.tvm.DataType(str(v))
            else:
                c = v
            self._consts[i] = c
            if isinstance(c, self._tensor_type):
                self._consts_by_id[id(c)] = c
        return c

    def _operands(self, ins: RCall, regs: list) -> list:
        out = []
        for kind, v in ins.args:
            if kind == "reg":
                out.append(regs[v])
            elif kind == "imm":
                out.append(v)
            elif kind == "const":
                out.append(self._const(v))
            elif kind == "func":   # a VM function as a value: TVM's VM passes it as a closure
                out.append(Closure(v, ()))
            elif kind == "vm":
                out.append(VM)
            else:
                out.append(None)
        return out

    def _packed_func(self, name: str):
        f = self._packed.get(name)
        if f is None:
            f = None
            mod = getattr(self.exe.tvm_exe, "mod", None)
            if mod is not None:
                try:
                    f = mod.get_function(name, query_imports=True)
                except Exception:  # TVM raises its own error type for a missing name
                    f = None
            if f is None:
                f = self.tvm.get_global_func(name, allow_missing=True)
            if f is None:
                raise VMError(_("no kernel or builtin named {name}").format(name=name))
            self._packed[name] = f
        return f

    # ------------------------------------------------------------ builtins done here

    def _made_at_this_step(self, kind, make):
        key = (self.steps, kind)
        obj = self._made.get(key)
        if obj is None:
            obj = self._made[key] = make()
        return obj

    def _alloc_storage(self, args):
        _vm, size, _dev, dtype_hint, scope = args
        nbytes = int(np.prod([int(d) for d in size], dtype=np.int64))
        limit = self.limits.max_bytes
        if nbytes < 0 or self.live_bytes + self.orphan_bytes + nbytes > limit:
            from rvmdbg.vm.state import limit_error
            raise limit_error("max_bytes", limit, _(
                "alloc_storage of {size} bytes would bring live memory to {live} bytes").format(
                    size=nbytes, live=self.live_bytes + self.orphan_bytes + nbytes))
        frame = self.frames[-1]
        storage = self._made_at_this_step(
            "storage", lambda: Storage(nbytes, str(dtype_hint), str(scope), frame.serial))
        if storage.nbytes != nbytes:   # cannot happen in a deterministic replay
            storage = self._made[(self.steps, "storage")] = Storage(
                nbytes, str(dtype_hint), str(scope), frame.serial)
        # the bytes count while the frame that allocated them lives (TVM frees a storage when
        # its last reference goes; a frame's storages go with it unless its result is in one)
        frame.owned_bytes += nbytes
        self.live_bytes += nbytes
        return storage

    def _alloc_tensor(self, args):
        storage, offset, shape, dtype = args
        if not isinstance(storage, Storage):   # TVM's own would crash on a non-storage
            raise VMError(_("alloc_tensor: its first operand is {what}, not a storage that "
                            "alloc_storage made").format(what=type(storage).__name__))
        made = self._made.get((self.steps, "tensor"))
        if made is not None and made[0] is storage and made[1] == (offset, tuple(shape), str(dtype)):
            return made[2]
        np_dtype = np.dtype("bool" if str(dtype) == "bool" else str(dtype))
        dims = [int(d) for d in shape]
        n = int(np.prod(dims, dtype=np.int64)) * np_dtype.itemsize
        if offset < 0 or offset + n > storage.nbytes:
            raise VMError(_("alloc_tensor: {n} bytes at offset {offset} do not fit in a storage "
                            "of {size} bytes").format(n=n, offset=offset, size=storage.nbytes))
        import tvm_ffi
        view = storage.buffer[offset:offset + n].view(np_dtype).reshape(dims)
        tensor = tvm_ffi.from_dlpack(view)
        self._made[(self.steps, "tensor")] = (storage, (offset, tuple(shape), str(dtype)), tensor)
        self._storage_of[id(tensor)] = (tensor, storage)
        return tensor

    def _alloc_shape_heap(self, args):
        _vm, size = args
        return self._made_at_this_step(
            "heap", lambda: self.tvm.runtime.tensor(np.zeros(int(size), dtype=np.int64)))

    def _release(self, frame: RelaxFrame, value) -> None:
        """A returning frame's storages are freed, but for those its result lives in: they
        count in the caller's bytes from now on (outside every frame once the program ends)."""
        kept = 0
        seen = set()
        for t in _tensors_in(value):
            entry = self._storage_of.get(id(t))
            if entry is None or entry[0] is not t:
                continue
            st = entry[1]
            # allocated by this frame or by a callee whose result it was (pushed later)
            if st.owner >= frame.serial and id(st) not in seen:
                seen.add(id(st))
                kept += st.nbytes
        kept = min(kept, frame.owned_bytes)
        self.live_bytes -= frame.owned_bytes - kept
        if self.frames:
            self.frames[-1].owned_bytes += kept
        else:
            self.live_bytes -= kept
            self.orphan_bytes += kept
        frame.owned_bytes = 0

    def _make_closure(self, args):
        func, *captured = args
        return Closure(func.func if isinstance(func, Closure) else str(func),
                       (func.captured if isinstance(func, Closure) else ()) + tuple(captured))

    # ------------------------------------------------------------ one instruction

    def _fail(self, err: VMError, frame) -> VMError:
        ins = self.exe.functions[frame.func_index].instructions[frame.pc]
        err.func_index, err.pc = frame.func_index, frame.pc
        err.func_name = self.func_name(frame.func_index)
        err.instruction = ins.text()
        err.backtrace = [(self.func_name(f.func_index), f.pc) for f in self.frames]
        self.error = err
        return err

    def _push(self, func: str, args: list, ret_reg, frame, call_args=None) -> RelaxFrame:
        fi = self._index[func]
        fn = self.exe.functions[fi]
        if len(args) != len(fn.params):
            raise VMError(_("@{name} takes {n} arguments, got {m}").format(
                name=func, n=len(fn.params), m=len(args)))
        if len(self.frames) >= self.limits.max_depth:
            raise VMError(_("call depth limit reached (max_depth={n}; raise it with {flag})").format(
                n=self.limits.max_depth, flag=Limits.flag_for("max_depth")), limit="max_depth")
        regs = [None] * fn.register_file_size
        regs[:len(args)] = args
        self.pushes += 1
        callee = RelaxFrame(fi, regs, self.pushes, ret_reg, args if call_args is None else call_args)
        self.frames.append(callee)
        return callee

    def _call_packed(self, name: str, args: list):
        special = self._special.get(name)
        if special is not None:
            try:
                return special(args)
            except (TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
                # operands of the wrong kind (a damaged executable): a located VM error
                raise VMError(_("{name} failed: {why}").format(name=name, why=exc)) from None
        f = self._packed_func(name)
        if any(a is VM for a in args):
            raise VMError(_("{name} needs the VM itself, which this machine does not give it yet")
                          .format(name=name))
        journal = self.journal
        # only a session that can step back needs the old contents (a plain run copies nothing);
        # constant-pool tensors (a network's weights) are never a kernel's output: not copied
        consts = self._consts_by_id
        tensors = [a for a in args if isinstance(a, self._tensor_type) and id(a) not in consts] \
            if journal is not None else []
        before = [t.numpy() for t in tensors]
        try:
            ret = f(*args)
        except Exception as exc:  # TVM's kernels and builtins raise their own error types
            raise VMError(_("{name} failed: {why}").format(name=name, why=str(exc).strip()))
        for t, old in zip(tensors, before):
            new = t.numpy()
            if old.shape != new.shape or not np.array_equal(old, new, equal_nan=True) \
                    or old.tobytes() != new.tobytes():
                if journal is not None:
                    entry = (_TensorCell(t), old, new)
                    if journal._next_logged(False) is None:
                        journal.entries.append(entry)
                    else:   # a replay: the entry names the tensor this run writes
                        journal.entries[journal.cursor - journal.base] = entry
                    journal.cursor += 1
        return ret

    def _execute(self, frame: RelaxFrame):
        """Run the instruction at the frame's pc: (writes, pushed, popped, jump)."""
        ins = self.exe.functions[frame.func_index].instructions[frame.pc]
        regs = frame.registers
        t = type(ins)
        if t is RCall:
            args = self._operands(ins, regs)
            name = ins.func
            if name in self._vm_funcs:
                if self.on_call:
                    self.on_call(name, args, True, None)
                return (), self._push(name, args, ins.dst, frame), None, None
            if name == "vm.builtin.invoke_closure":   # (vm, closure, args...): captured last
                clo, rest = args[1], args[2:]
                if isinstance(clo, Closure):
                    if self.on_call:
                        self.on_call(name, args, True, None)
                    return (), self._push(clo.func, rest + list(clo.captured), ins.dst, frame,
                                          args), None, None
            if self.on_call:
                self.on_call(name, args, True, None)
            ret = self._call_packed(name, args)
            if self.on_call:
                self.on_call(name, args, False, ret)
            writes = ()
            if ins.dst is not None:
                writes = ((ins.dst, regs[ins.dst], ret),)
                regs[ins.dst] = ret
            frame.pc += 1
            return writes, None, None, None
        if t is RRet:
            value = regs[ins.result]
            self.frames.pop()
            if frame.owned_bytes:
                self._release(frame, value)
            if not self.frames:
                self.halted = True
                self.result = to_result(value)
                return (), None, frame, None
            caller = self.frames[-1]
            call = self.exe.functions[caller.func_index].instructions[caller.pc]
            if self.on_call:
                self.on_call(call.func, frame.call_args, False, value)
            writes = ()
            if frame.caller_return_register is not None:
                d = frame.caller_return_register
                writes = ((d, caller.registers[d], value),)
                caller.registers[d] = value
            caller.pc += 1
            return writes, None, frame, None
        if t is RGoto:
            frame.pc += ins.offset
            return (), None, None, frame.pc
        if t is RIf:
            cond = regs[ins.cond]
            if _truth(cond):
                frame.pc += 1
                return (), None, None, None
            frame.pc += ins.false_offset
            return (), None, None, frame.pc
        raise VMError(f"unknown instruction {ins!r}")  # not shown to users: the reader refuses it

    def _check_runnable(self) -> None:
        if self.halted:
            raise VMError(_("the program has already halted"))
        if not self.frames:
            raise VMError("no program started: call start() first")  # not shown to users

    def _step_limit(self) -> VMError:
        n = self.limits.max_steps
        return self._fail(VMError(_("the program ran {n} instructions without halting (limit "
                                    "max_steps={n}; raise it with {flag})").format(
                                        n=n, flag=Limits.flag_for("max_steps")), limit="max_steps"),
                          self.frames[-1])

    def step(self) -> StepInfo:
        self._check_runnable()
        if self.steps >= self.limits.max_steps:
            raise self._step_limit()
        frame = self.frames[-1]
        depth = len(self.frames) - 1
        ins = self.exe.functions[frame.func_index].instructions[frame.pc]
        info = StepInfo(self.steps, frame, depth, frame.func_index, frame.pc, ins, ins.reads())
        try:
            writes, pushed, popped, jump = self._execute(frame)
        except VMError as err:
            raise self._fail(err, frame) from None
        self.steps += 1
        wdepth = depth - 1 if popped is not None else depth
        info.writes = tuple(RegisterWrite(wdepth, r, old, new) for r, old, new in writes)
        info.pushed, info.popped, info.jump_target = pushed, popped, jump
        info.halted = self.halted
        if self.halted:
            info.result = self.result
        else:
            top = self.frames[-1]
            info.next_func_index, info.next_pc = top.func_index, top.pc
        return info

    def run(self, until_step: int | None = None, breakpoints=None):
        """Execute until the end (returns the result), `steps == until_step`, or before a
        location in `breakpoints` other than the current one (returns None)."""
        self._check_runnable()
        limit = self.limits.max_steps
        end = limit if until_step is None else min(until_step, limit)
        bps = frozenset(breakpoints) if breakpoints else None
        first = True
        while self.steps < end:
            frame = self.frames[-1]
            if bps is not None and not first and (frame.func_index, frame.pc) in bps:
                return None
            first = False
            try:
                self._execute(frame)
            except VMError as err:
                raise self._fail(err, frame) from None
            self.steps += 1
            if self.halted:
                return self.result
        if until_step is not None and until_step <= limit:
            return None
        raise self._step_limit()

    def invoke(self, name: str = "main", args=()):
        self.start(name, args)
        return self.run()


def _tensors_in(v):
    if isinstance(v, (tuple, list)) or type(v).__name__ == "Array":
        for x in v:
            yield from _tensors_in(x)
    elif hasattr(v, "numpy"):
        yield v


def _truth(v) -> bool:
    if hasattr(v, "numpy"):
        return bool(v.numpy())
    return bool(int(v))


def to_result(v):
    """A result as rvmdbg's values show it: tensors as NumPy arrays, tuples as tuple
    `ADTValue`s, shape tuples as `Shape`."""
    from rvmdbg.values import ADTValue
    h = to_host(v)

    def conv(x):
        if isinstance(x, tuple) and not isinstance(x, Shape):
            return ADTValue(0, None, tuple(conv(y) for y in x))
        return x
    return conv(h)


def to_host(v):
    """A value the VM holds as NumPy / Python: tensors as arrays, tuples as tuples."""
    if hasattr(v, "numpy") and callable(v.numpy):
        return v.numpy()
    cls = type(v).__name__
    if cls == "Shape" or isinstance(v, Shape):
        return Shape(int(d) for d in v)
    if cls in ("Array", "list", "tuple") or isinstance(v, (tuple, list)):
        return tuple(to_host(x) for x in v)
    if cls == "ADTValue":
        return tuple(to_host(x) for x in v.fields)
    return v


__all__ = ["RelaxMachine", "RelaxFrame", "Storage", "Closure", "to_host", "to_result"]
