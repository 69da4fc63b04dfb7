"""What a debugging session answers with: the `StopEvent` every motion returns (where
execution stopped and why, and the stop line that says it), the `FrameView` of one frame,
and `DebugError`, the session's refusal of a request. session.py re-exports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rvmdbg.debug.heap import value_type
from rvmdbg.i18n import N_, _


class DebugError(Exception):
    """A request the session cannot carry out (bad register, no such frame, nothing running)."""


# ------------------------------------------------------------------ what the session answers

# a stop's reason as the stop line says it (translated there; `reason` itself stays English)
STOP_REASONS = (N_("breakpoint"), N_("watchpoint"), N_("step"), N_("finished"), N_("error"),
                N_("start of history"), N_("interrupted"), N_("limit"), N_("restarted"),
                N_("start"), N_("repeated state"))

# what a backward motion's stop line says instead of "step" (which reads as a forward step)
BACK_MOTIONS = {"rstep": N_("reverse step"), "rnext": N_("reverse next"),
                "rfinish": N_("reverse finish"), "back": N_("back to an earlier step"),
                "last-write": N_("back to the last write")}


def step_tag(step: int) -> str:
    """`[step 42]`, the stop line's first word, in the language in use."""
    return _("[step {step}]").format(step=step)


@dataclass
class StopEvent:
    """Where and why execution stopped.

    `reason`: "breakpoint", "watchpoint", "step", "finished", "error", "start of history",
    "interrupted", "limit", "repeated state" (a machine that detected it can never halt)
    or "restarted"; `number`: the breakpoint or watchpoint id; `func_name`, `pc`,
    `text`: the instruction about to run (pc None once the program finished, `text` then
    says what it returned); `message`: extra lines (the error, a watchpoint's old and new
    values, a condition that failed to evaluate); `motion`: for a "step" stop reached going
    back, which motion (a key of `BACK_MOTIONS`: the stop line says it instead of "step")."""

    reason: str
    number: int | None
    step: int
    func_name: str | None
    pc: int | None
    text: str
    message: str | None = None
    span: object = None
    place: str | None = None   # the program kind's name for the line (an ONNX node)
    motion: str | None = None

    def line(self) -> str:
        """`[step 42] @sum_up pc=7: invoke $5 VMFunc[0]($4)    (breakpoint 1)`; with a named
        line, `[step 42] @main pc=7 [Conv_12]: ...`."""
        where = f"@{self.func_name}" if self.func_name is not None else "?"
        if self.pc is not None:
            where += f" pc={self.pc}"
        if self.place is not None:
            where += f" [{self.place}]"
        reason = self.reason
        if reason == "step" and self.motion in BACK_MOTIONS:
            reason = BACK_MOTIONS[self.motion]
        why = _(reason) if self.number is None else f"{_(reason)} {self.number}"
        return f"{step_tag(self.step)} {where}: {self.text}    ({why})"

    def __str__(self) -> str:
        return self.line()


@dataclass
class FrameView:
    """One frame: `depth` 0 is the outermost; `pc` is the next instruction (for a caller, the
    invoke it waits on); `registers` a copy of the register file (None = empty)."""

    depth: int
    func_index: int
    func_name: str
    pc: int
    registers: list
    instruction: object
    serial: int = 0
    span: object = None
    params: list = field(default_factory=list)

    @property
    def types(self) -> list[str]:
        """The type of each register's value ("" when empty)."""
        return [value_type(v) for v in self.registers]
