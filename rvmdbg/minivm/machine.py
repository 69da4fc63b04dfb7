"""The MiniVM's machine: fetch, decode, execute over a register file, one instruction a step.

`MiniMachine` implements the debugger's `Machine` protocol (`rvmdbg.debug.machine`), the
same one the Relay VM's `VirtualMachine` implements, so `DebugSession`, its history (time
travel), breakpoints, watchpoints and data dependencies, batch mode and the screen run a
`.mvm` program unchanged. It has one frame (the program is one function) that holds the pc
and the registers; halting pops it and keeps the final register file as the result.

A program that cannot halt is stopped. The machine is deterministic and its whole state is
the pc and the registers, so if a state comes back, everything from its first occurrence
repeats for ever. States are recorded where loops must pass (jump targets, an HL that
stays), and a repeat raises `VMError` with `stop_reason = "repeated state"`, naming the two
steps. The table is bounded (`MAX_STATES`); past it only the step limit stops a loop.
"""
from __future__ import annotations

from rvmdbg.i18n import _
from rvmdbg.wording import picture_controls
from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.minivm.isa import ADD, CH, HL, JM, LD, SUB, WORD_BITS, reg, wrap
from rvmdbg.vm.machine import RegisterWrite, StepInfo, VMError

MAX_STATES = 1 << 17   # loop-head states remembered for the repeated-state check (~25 MB)
REPEATED_STATE = "repeated state"


class MiniFrame:
    """The MiniVM's one activation: pc and registers (the fields the debugger's history
    saves and restores, as for the Relay VM's frames)."""

    __slots__ = ("func_index", "pc", "registers", "serial", "owned_bytes",
                 "caller_return_register")

    def __init__(self, registers: list):
        self.func_index = 0
        self.pc = 0
        self.registers = registers
        self.serial = 0
        self.owned_bytes = 0
        self.caller_return_register = None


def registers_text(regs) -> str:
    return " ".join(f"{reg(i)}={v}" for i, v in enumerate(regs))


class MiniMachine:
    """Runs a `MiniProgram`: `start()`, then `step()` (one instruction, reported as a
    `StepInfo`) or `run(until_step, breakpoints)` (the fast path)."""

    def __init__(self, program, limits: Limits | None = None):
        self.exe = program
        self.limits = limits or DEFAULT_LIMITS
        self.frames: list[MiniFrame] = []
        self.steps = 0
        self.halted = False
        self.result = None       # the final register file (a tuple) once halted
        self.error: VMError | None = None
        self.live_bytes = 0      # no heap: kept for the protocol
        self.orphan_bytes = 0
        self.pushes = 0          # no calls: the one frame is activation 0
        self._code = program.instructions
        # pcs where every loop passes: jump targets (and an HL that stays, its own target)
        heads = set()
        for pc, ins in enumerate(self._code):
            heads.update(ins.jump_targets(pc))
        self._heads = frozenset(heads)
        self._is_head = [pc in heads for pc in range(len(self._code))]
        self._handlers = [_decode(ins, pc) for pc, ins in enumerate(self._code)]
        self._seen: dict[tuple, int] = {}
        self._full_at: int | None = None   # the step at which the table filled up

    # ------------------------------------------------------------ the protocol's state

    def start(self, name: str = "main", args=()) -> None:
        if name.lstrip("@") != "main":
            raise VMError(_("no function {name}: a MiniVM program is one function, @main").format(
                name="@" + name.lstrip("@")))
        if len(list(args)):
            raise VMError(_("@main takes no arguments, got {n}").format(n=len(list(args))))
        self.frames[:] = [MiniFrame([0] * self.exe.register_count)]
        self.steps = 0
        self.halted = False
        self.result = None
        self.error = None
        self._seen.clear()
        self._full_at = None

    def handler_at(self, func_index: int, pc: int):
        """The closure `_decode` made for the instruction at `pc` (what `step()` runs)."""
        return self._handlers[pc]

    @property
    def location(self) -> tuple[int, int] | None:
        return (0, self.frames[-1].pc) if self.frames else None

    def current_instruction(self):
        if not self.frames:
            return None
        pc = self.frames[-1].pc
        return self._code[pc] if 0 <= pc < len(self._code) else None

    def func_name(self, func_index: int) -> str:
        return "main"

    def blocks(self) -> list:
        """The Relay VM fuses straight-line runs here; the MiniVM has nothing to prepare."""
        return []

    def halt_text(self) -> str:
        """What the debugger says once the program halted."""
        return _("halted: {registers}").format(registers=registers_text(self.result or ()))

    def _check_runnable(self) -> None:
        if self.halted:
            raise VMError(_("the program has already halted"))
        if not self.frames:
            raise VMError("no program started: call start() first")  # not shown to users

    # ------------------------------------------------------------ one instruction

    def _fail(self, err: VMError, pc: int) -> VMError:
        ins = self._code[pc]
        err.func_index, err.func_name, err.pc = 0, "main", pc
        err.instruction = ins.text()
        err.span = self.exe.span_at(0, pc)
        if err.span is not None:
            lines = self.exe.source_lines(err.span.file)
            if lines and 1 <= err.span.line <= len(lines):
                err.source_line = picture_controls(lines[err.span.line - 1])
        err.backtrace = [("main", pc)]
        self.error = err
        return err

    def _repeat(self, first: int, pc: int, regs) -> VMError:
        ins = self._code[pc]
        period = self.steps - first
        if period == 1:
            msg = _("never halts: step {step} repeats the state of step {first} (pc={pc}, "
                    "{registers}), so this instruction repeats for ever")
        else:
            msg = _("never halts: step {step} repeats the state of step {first} (pc={pc}, "
                    "{registers}), so the {period} instructions from there repeat for ever")
        msg = msg.format(step=self.steps, first=first, pc=pc, registers=registers_text(regs),
                         period=period)
        if type(ins) is HL and ins.stays:
            msg += _("; HL here leaves the pc where it is (.hl stays), and the loop "
                     "`while pc < len(program)` never ends")
        err = VMError(msg)
        err.stop_reason = REPEATED_STATE
        return self._fail(err, pc)

    def _execute(self, frame: MiniFrame):
        """Execute the instruction at the frame's pc: (pc, instruction, writes, jump target)."""
        pc = frame.pc
        regs = frame.registers
        steps = self.steps
        if pc in self._heads and (self._full_at is None or steps < self._full_at):
            state = (pc, *regs)
            first = self._seen.get(state)
            if first is None:
                if len(self._seen) < MAX_STATES:
                    self._seen[state] = steps
                elif self._full_at is None:
                    self._full_at = steps
            elif first < steps:
                raise self._repeat(first, pc, regs)
        ins = self._code[pc]
        t = type(ins)
        writes = ()
        jump = None
        nxt = pc + 1
        if t is LD:
            d = ins.dst
            writes = ((d, regs[d], ins.value),)
            regs[d] = ins.value
        elif t is ADD or t is SUB:
            a, b = regs[ins.a], regs[ins.b]
            v = wrap(a + b if t is ADD else a - b)
            d = ins.dst
            writes = ((d, regs[d], v),)
            regs[d] = v
        elif t is CH:
            if regs[ins.test] >= 0:
                nxt = jump = ins.target
        elif t is JM:
            nxt = jump = ins.target
        elif t is HL:
            if ins.stays:
                nxt = jump = pc
            else:
                nxt = None
        self.steps = steps + 1
        if nxt is None or nxt >= len(self._code):
            # HL, or the pc ran past the last instruction: the loop `while pc < len` ends
            frame.pc = pc if nxt is None else nxt
            self.halted = True
            self.result = tuple(regs)
            self.frames.clear()
        else:
            frame.pc = nxt
        return pc, ins, writes, jump

    def step(self) -> StepInfo:
        self._check_runnable()
        if self.steps >= self.limits.max_steps:
            raise self._step_limit()
        frame = self.frames[-1]
        info = StepInfo(self.steps, frame, 0, 0, frame.pc, self._code[frame.pc],
                        self._code[frame.pc].reads())
        pc, ins, writes, jump = self._execute(frame)
        info.writes = tuple(RegisterWrite(0, r, old, new) for r, old, new in writes)
        info.jump_target = jump
        info.halted = self.halted
        if self.halted:
            info.result = self.result
        else:
            info.next_func_index, info.next_pc = 0, frame.pc
        return info

    def _step_limit(self) -> VMError:
        limit = self.limits.max_steps
        err = VMError(_("the program ran {n} instructions without halting (limit "
                        "max_steps={n}; raise it with {flag})").format(
                            n=limit, flag=Limits.flag_for("max_steps")), limit="max_steps")
        return self._fail(err, self.frames[-1].pc)

    # ------------------------------------------------------------ the fast path

    def run(self, until_step: int | None = None, breakpoints=None):
        """Execute until the program halts (returns the result), `steps == until_step`, or
        before an instruction at a (0, pc) in `breakpoints` other than the current one (both
        return None). The same effects as `step()`, over predecoded handlers."""
        self._check_runnable()
        limit = self.limits.max_steps
        end = limit if until_step is None else min(until_step, limit)
        bps = frozenset(pc for fi, pc in breakpoints if fi == 0) if breakpoints else None
        frame = self.frames[-1]
        regs = frame.registers
        code, is_head, seen = self._handlers, self._is_head, self._seen
        n = len(code)
        pc, steps = frame.pc, self.steps
        check_until = end if self._full_at is None else min(end, self._full_at)
        first = True
        try:
            while steps < end:
                if bps is not None and not first and pc in bps:
                    return None
                first = False
                if is_head[pc] and steps < check_until:
                    state = (pc, *regs)
                    seen_at = seen.get(state)
                    if seen_at is None:
                        if len(seen) < MAX_STATES:
                            seen[state] = steps
                        elif self._full_at is None:
                            self._full_at = check_until = steps
                    elif seen_at < steps:
                        frame.pc, self.steps = pc, steps
                        raise self._repeat(seen_at, pc, regs)
                nxt = code[pc](regs)
                steps += 1
                if nxt < 0 or nxt >= n:
                    # HL, or past the last instruction: the loop `while pc < len` ends
                    frame.pc = pc if nxt < 0 else nxt
                    self.steps = steps
                    self.halted = True
                    self.result = tuple(regs)
                    self.frames.clear()
                    return self.result
                pc = nxt
        finally:
            if not self.halted:
                frame.pc, self.steps = pc, steps
        if until_step is not None and until_step <= limit:
            return None
        raise self._step_limit()

    def invoke(self, name: str = "main", args=()):
        """Run from the start to the end; returns the final register file."""
        self.start(name, args)
        return self.run()


_HALT = -1


def _decode(ins, pc: int):
    """The handler of one instruction: `h(registers) -> next pc` (`_HALT` to stop), its
    operands bound here once, so the fast loop does only the instruction's work."""
    nxt = pc + 1
    t = type(ins)
    if t is LD:
        d, v = ins.dst, ins.value

        def h(regs):
            regs[d] = v
            return nxt
    elif t is ADD or t is SUB:
        a, b, d = ins.a, ins.b, ins.dst
        lo, hi = -(1 << (WORD_BITS - 1)), 1 << (WORD_BITS - 1)
        if t is ADD:
            def h(regs):
                v = regs[a] + regs[b]
                regs[d] = v if lo <= v < hi else wrap(v)
                return nxt
        else:
            def h(regs):
                v = regs[a] - regs[b]
                regs[d] = v if lo <= v < hi else wrap(v)
                return nxt
    elif t is CH:
        r, target = ins.test, ins.target

        def h(regs):
            return target if regs[r] >= 0 else nxt
    elif t is JM:
        target = ins.target

        def h(regs):
            return target
    elif t is HL:
        stay = pc if ins.stays else _HALT

        def h(regs):
            return stay
    else:
        raise TypeError(f"not a MiniVM instruction: {ins!r}")  # not shown to users
    return h


def run_program(program, limits: Limits | None = None) -> tuple:
    """Run a `MiniProgram` to its end: (final registers, steps); VMError when it cannot halt."""
    m = MiniMachine(program, limits)
    result = m.invoke()
    return result, m.steps


__all__ = ["MiniMachine", "MiniFrame", "run_program", "registers_text", "REPEATED_STATE",
           "MAX_STATES"]
