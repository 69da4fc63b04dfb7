"""The VM's dispatch loop turned one phase at a time: fetch, decode, execute.

For the instruction about to run, `fetch` reads the pc and the instruction as an `.rvmx` file
stores it (the opcode number and the operand fields, `serialize.py`'s layout); `decode` looks
the opcode up in the machine's dispatch table (`HANDLERS`, at the end of
`rvmdbg/vm/handlers.py`, one handler per opcode in opcode order: the file to read next; the
factory, and the handler closure it made for this pc when the function was predecoded) and reads the operands
the instruction names, with their values; `execute` really steps the session once and reports
the effect: the registers written and where control goes next (the next pc, a jump target, a
new frame, the caller, the end).

`DispatchCycle` is the state a screen keeps: which phase was shown last for which step, so
that `s` can advance one phase at a time and any other motion starts the cycle afresh.
No Textual here: the debugger screen and View 1 draw `DispatchCycle.rows()`.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from rvmdbg.i18n import N_, _
from rvmdbg.values import value_summary
from rvmdbg.vm.handlers import HANDLERS
from rvmdbg.vm.machine import VirtualMachine

PHASES = ("fetch", "decode", "execute")
# the phases' names as the strip and the status line show them (through `_()`)
PHASE_LABELS = {"fetch": N_("fetch"), "decode": N_("decode"), "execute": N_("execute")}
VALUE_WIDTH = 24


class Fetched(NamedTuple):
    """The instruction at the pc, as stored."""

    step: int
    func_index: int
    func_name: str
    pc: int
    opcode: int
    fields: tuple
    text: str


class Decoded(NamedTuple):
    """The dispatch table's answer for the opcode, and the operands read."""

    name: str                 # the instruction class (TVM's opcode name)
    table: str                # where the opcode is looked up: `HANDLERS[4]`
    factory: str              # what the table gives: the function that made the handler
    handler: str              # the closure the predecoded function runs at this pc
    reads: tuple              # ((register, value text), ...)


class Executed(NamedTuple):
    """What the step did: registers written (register, value text, and `@f` when they are
    another frame's: a callee's parameters, a caller's result) and where control went."""

    step: int
    writes: tuple
    control: str
    error: str | None = None


def fetch(session) -> Fetched | None:
    """The instruction at the innermost frame's pc (None when nothing is left to run)."""
    loc = session.location()
    ins = session.current_instruction()
    if loc is None or ins is None:
        return None
    exe = session.exe
    fi, pc = loc
    return Fetched(session.step_count, fi, exe.functions[fi].name, pc, ins.opcode,
                   tuple(ins.fields()), ins.text(exe.function_names(), exe.kernel_names()))


def decode(session, fetched: Fetched) -> Decoded:
    """Look the opcode up in the dispatch table and read the operands (registers) it names."""
    exe = session.exe
    ins = exe.functions[fetched.func_index].instructions[fetched.pc]
    vm = session.vm
    if isinstance(vm, VirtualMachine):
        table = f"HANDLERS[{fetched.opcode}]"
        factory = HANDLERS.get(fetched.opcode)
        factory = factory.__name__ if factory is not None else _("(none)")
    else:  # another machine behind the same protocol (the MiniVM): no opcode table
        table = _("{machine} (no table: its decoder branches on the type)").format(
            machine=type(vm).__name__)
        factory = "_decode"
    handler = vm.handler_at(fetched.func_index, fetched.pc)
    frame = session.frame()
    reads = tuple((r, value_summary(frame.registers[r], VALUE_WIDTH))
                  for r in dict.fromkeys(ins.reads()) if 0 <= r < len(frame.registers))
    return Decoded(ins.name, table, factory, getattr(handler, "__name__", "?"), reads)


def execute(session, fetched: Fetched, step: Callable[[], object]) -> Executed:
    """Run `step()` (which steps the session once: directly or through a screen's driver)
    and describe its effect on the registers and the pc."""
    exe = session.exe
    ins = exe.functions[fetched.func_index].instructions[fetched.pc]
    depth_before = len(session.frames())
    step()
    err = session.error
    if err is not None:
        return Executed(session.step_count, (), _("stopped by an error"),
                        str(err).split("\n")[0])
    frames = session.frames()
    if session.finished and not frames:
        return Executed(session.step_count, (),
                        _("the outermost frame returned: result {value}").format(
                            value=value_summary(session.result, 40)))
    top = frames[-1]
    name = top.func_name
    if len(frames) > depth_before:          # a call: the callee's parameters are written
        nparams = len(top.params)
        writes = tuple((r, value_summary(top.registers[r], VALUE_WIDTH), f"@{name}")
                       for r in range(nparams))
        return Executed(session.step_count, writes,
                        _("call: a new frame for @{fn}, its pc 0").format(fn=name))
    if len(frames) < depth_before:          # a return: the caller's destination is written
        caller_fn = exe.functions[top.func_index]
        invoke = caller_fn.instructions[top.pc - 1] if top.pc > 0 else None
        dst = invoke.writes() if invoke is not None else ()
        writes = tuple((r, value_summary(top.registers[r], VALUE_WIDTH), f"@{name}")
                       for r in dst)
        return Executed(session.step_count, writes,
                        _("return: the frame is popped, @{fn} resumes at pc {pc}").format(
                            fn=name, pc=top.pc))
    writes = tuple((r, value_summary(top.registers[r], VALUE_WIDTH), "")
                   for r in dict.fromkeys(ins.writes()))
    nxt = top.pc
    if ins.is_jump:
        control = (_("jump to pc {pc}") if nxt != fetched.pc + 1
                   else _("no jump: on to pc {pc}")).format(pc=nxt)
    else:
        control = _("next pc {pc}").format(pc=nxt)
    return Executed(session.step_count, writes, control)


class DispatchCycle:
    """Which phases have been shown for the instruction at the pc.

    `phase` counts the phases done for the instruction about to run (0: none yet, 1: fetched,
    2: decoded); executing steps the VM and leaves `last` (the turn just completed, all three
    phases) on show until the next fetch. `step` is the session's step the state belongs to:
    a motion made elsewhere (continue, a reverse step) makes it stale and it starts afresh.
    """

    def __init__(self) -> None:
        self.phase = 0
        self.step: int | None = None
        self.fetched: Fetched | None = None
        self.decoded: Decoded | None = None
        self.last: tuple | None = None    # (Fetched, Decoded, Executed) of the turn just made

    def reset(self) -> None:
        self.phase = 0
        self.step = None
        self.fetched = self.decoded = None
        self.last = None

    def sync(self, session) -> None:
        """Start afresh when the session moved other than by this cycle's execute."""
        if session is None or session.step_count != self.step:
            self.reset()
            self.step = session.step_count if session is not None else None

    def advance(self, session, step: Callable[[], object]) -> str:
        """One phase: fetch, decode, or execute (which calls `step()`); returns the phase
        done ("" when there is nothing left to run)."""
        self.sync(session)
        if self.phase == 0:
            fetched = fetch(session)
            if fetched is None:
                return ""
            self.fetched, self.decoded, self.last = fetched, None, None
            self.phase = 1
            return "fetch"
        if self.phase == 1:
            self.decoded = decode(session, self.fetched)
            self.phase = 2
            return "decode"
        fetched, decoded = self.fetched, self.decoded
        executed = execute(session, fetched, step)
        self.last = (fetched, decoded, executed)
        self.phase = 0
        self.fetched = self.decoded = None
        self.step = session.step_count
        return "execute"

    def rows(self, session) -> list[tuple[str, str, str]]:
        """The strip: (phase, text, state) per phase, state "done", "next" or "later" (a
        stale state shows as a fresh start; nothing changes here)."""
        stale = session is None or session.step_count != self.step
        if stale:
            fetched = decoded = executed = None
            nxt = "fetch"
        elif self.last is not None:
            fetched, decoded, executed = self.last
            nxt = "fetch"
        else:
            fetched, decoded, executed = self.fetched, self.decoded, None
            nxt = PHASES[self.phase]
        here = session.location() if session is not None else None
        prefix = getattr(getattr(session, "exe", None), "register_prefix", "$")
        out = []
        out.append(("fetch", fetch_text(fetched) if fetched is not None else
                    (_("@{fn} pc={pc}: s fetches the instruction").format(
                        fn=session.func_name(here[0]), pc=here[1]) if here is not None
                     else _("nothing left to run")),
                    "done" if fetched is not None and nxt != "fetch" or executed is not None
                    else "next"))
        out.append(("decode", decode_text(decoded, fetched, prefix) if decoded is not None else
                    _("s looks the opcode up in the dispatch table (HANDLERS)"),
                    "done" if decoded is not None else ("next" if nxt == "decode" else "later")))
        out.append(("execute", execute_text(executed, prefix) + "   " + _("(s: fetch the next)")
                    if executed is not None else
                    _("s runs the handler: the VM steps once"),
                    "done" if executed is not None else ("next" if nxt == "execute" else "later")))
        return out


def fetch_text(f: Fetched) -> str:
    fields = " ".join(str(x) for x in f.fields)
    return _("@{fn} pc={pc}  stored: opcode {opcode}, fields [{fields}]  =  {text}").format(
        fn=f.func_name, pc=f.pc, opcode=f.opcode, fields=fields, text=f.text)


def decode_text(d: Decoded, f: Fetched | None, prefix: str = "$") -> str:
    reads = ", ".join(f"{prefix}{r} = {v}" for r, v in d.reads) or _("none")
    return _("{table} = {factory} ({name}) -> handler {handler}; reads: {reads}").format(
        table=d.table, factory=d.factory, name=d.name, handler=d.handler, reads=reads)


def execute_text(e: Executed, prefix: str = "$") -> str:
    if e.error is not None:
        return _("step {step}: {control}: {error}").format(step=e.step, control=e.control,
                                                            error=e.error)
    if not e.writes:
        return _("step {step} done: writes no register; {control}").format(
            step=e.step, control=e.control)
    writes = ", ".join(f"{(frame + ' ') if frame else ''}{prefix}{r} = {v}"
                       for r, v, frame in e.writes)
    return _("step {step} done: writes {writes}; {control}").format(
        step=e.step, writes=writes, control=e.control)


__all__ = ["PHASES", "PHASE_LABELS", "DispatchCycle", "Fetched", "Decoded", "Executed", "fetch", "decode",
           "execute", "fetch_text", "decode_text", "execute_text"]
