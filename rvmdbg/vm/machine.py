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

from rvmdbg.heap import keep_freed_memory
from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.scalars import QuietSwitch, to_runtime
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.blocks import MAX_BLOCK, Partial, RegionExit
from rvmdbg.vm.fastpath import fuse
from rvmdbg.vm.handlers import HANDLERS, Malformed, raiser
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder
from rvmdbg.vm.pool import StoragePool
from rvmdbg.vm.state import (AFTER, CALL, HALT, TRAP, Frame, RegisterWrite, StepInfo, VMError,
                             is_tensor, limit_error, summary)
from rvmdbg.vm.trace import format_step, trace_lines
from rvmdbg.i18n import _, ngettext

_new_object = object.__new__

# ---------------------------------------------------------------- the machine

_PLAIN, _JUMP, _CALL, _RETURN, _KERNEL = range(5)  # _KERNEL: a plain invoke_packed

_QUIET = QuietSwitch()
# the instructions that change the storage pool: step() saves its state before them
_POOL_OPS = frozenset({bc.AllocStorage, bc.KillRegister, bc.Ret})
_write = tuple.__new__  # RegisterWrite(...) without its Python-level __new__: step() makes many


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

    @property
    def _pool_undo(self):
        return self._r[15]



class VirtualMachine:
    """Runs an `Executable`. State: `frames` (innermost last), `steps`, `halted`, `result`,
    `error`, `live_bytes`. `invoke(name, args)` runs a function to its result; `start` +
    `step`/`run` drive it one instruction, or many, at a time."""

    traps_with_checks = True   # run() takes `checks` and `scoped` (debug/machine.py)

    def __init__(self, exe, limits: Limits | None = None, pool: bool = True):
        self.exe = exe
        keep_freed_memory()   # freed arrays stay mapped for the next kernels (rvmdbg.heap)
        # The pooled storage allocator (rvmdbg.vm.pool); pool=False keeps the allocator
        # before it (every storage its own bytes, freed at its kill), for comparison.
        self.pool_slack = 0             # bytes the pool holds beyond the live storages' own
        self.pool = StoragePool(self) if pool else None
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
        self._plain_tables = None       # the tables `instrument` replaced, while it is on
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
            code.append(raiser(f"execution ran past the last instruction of @{fn.name}"))
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
                handlers, widths, blocks = fuse(self, fi, fn.instructions, self._code[fi],
                                                 fn.register_file_size)
                self._fused.append((handlers, widths))
                self._blocks.append(blocks)
            self._fused_ready = True
        finally:
            if gc_was_enabled:
                gc.enable()

    def instrument(self, wrap=None) -> None:
        """Run every instruction through `wrap(fi, pc, instruction, handler) -> handler` (a
        profiler's timers: `rvmdbg/vm/profile.py`), in `step()` and `run()` alike, with no
        fused blocks, so each instruction is timed on its own; `instrument(None)` puts the
        plain tables back. The tables are swapped, the loop is unchanged: nothing is paid
        while no one instruments."""
        plain = self._plain_tables
        if plain is None:
            self._fuse_all()
            plain = self._plain_tables = (self._code, self._meta, self._fused, self._blocks)
        self._trapped = {}
        self._block_start_of = {}
        if wrap is None:
            self._code, self._meta, self._fused, self._blocks = plain
            self._plain_tables = None
            return
        code, meta = [], []
        for fi, fn in enumerate(self.exe.functions):
            handlers = [wrap(fi, pc, ins, h) for pc, (ins, h)
                        in enumerate(zip(fn.instructions, plain[0][fi]))]
            handlers.append(plain[0][fi][-1])   # past the end: the report, untimed
            code.append(handlers)
            meta.append([m[:5] + (handlers[pc],) for pc, m in enumerate(plain[1][fi])])
        self._code, self._meta = code, meta
        self._fused = [(handlers, [1] * len(handlers)) for handlers in code]
        self._blocks = [[] for _fn in code]

    def _handler(self, fi: int, pc: int, ins, register_file_size: int):
        for r in ins.registers():
            if not 0 <= r < register_file_size:
                return raiser(f"register ${r} is outside the register file "
                               f"(size {register_file_size})")
        factory = HANDLERS.get(ins.opcode)
        if factory is None:
            return raiser(f"unknown opcode {ins.opcode}")
        try:
            return factory(self, fi, pc, ins)
        except Malformed as exc:
            return raiser(str(exc))

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
        if self.pool is not None:
            self.pool.reset()  # each run's pool starts empty, so its figures are the run's
        self.inputs = tuple(args)
        self.pushes = 0

    def memory_stats(self) -> dict:
        """The storage figures of the run so far: with the pool (the default) its
        `allocated`, `allocations`, `reused`, `reused_bytes`, `released`, `held`, `in_use`,
        `free`, `peak` (most held at once), `escaped` and `page_size`; without it
        (`pool=False`) `pooled` is False and only `live` is the allocator's own figure.
        `live` (bytes of storage the frames own now) is in both."""
        if self.pool is None:
            return {"pooled": False, "live": self.live_bytes}
        return {**self.pool.stats(), "live": self.live_bytes}

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
        err = limit_error("max_steps", limit, _("the program ran {n} instructions without finishing").format(
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
                except RegionExit as left:  # a region's branch went the other way: it ran less
                    steps += left.done
                    pc = left.pc
        except BaseException as exc:
            # pc names the failing block or instruction; a block says how far it got.
            if type(exc) is Partial:
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
            err = limit_error("max_steps", self.limits.max_steps,
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
        pool_undo = None
        if self.pool is not None and type(_ins) in _POOL_OPS:
            owners = [(a, a.pooled) for a in {id(a): a for a in (
                account, getattr(regs[w0], "owner", None) if w0 >= 0 else None)
                if a is not None}.values()]
            pool_undo = (self.pool.state(), owners, account)
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
                   owned_before, storages, other, caller_pc, orphan_before, pool_undo)
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
        pool_undo = getattr(info, "_pool_undo", None)
        if pool_undo is not None:
            state, owners, account = pool_undo
            self.pool.restore(state)
            for a, pooled in owners:
                a.pooled = pooled
            if account is None and info.frame.account is not None:
                info.frame.account.pooled = 0  # the account the step made holds nothing
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
                    if v is None or not is_tensor(v):
                        return _("{op}: ${reg} holds {value}, which it cannot use").format(
                            op=op, reg=r, value=summary(v))
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


__all__ = ["VirtualMachine", "VMError", "Frame", "StepInfo", "RegisterWrite", "HANDLERS",
           "MAX_BLOCK", "format_step", "trace_lines", "CALL", "HALT"]
