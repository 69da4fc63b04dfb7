"""Register numbering, live: the program in TVM's numbering (every value its own register) and
in reused numbering (registers shared by values whose lifetimes do not overlap, as
`rvmdbg compile --reuse-registers` computes with `vm.regalloc`), one debug session per
numbering, and switching between them at the same step.

Register reuse renames registers and changes nothing else (same functions, pcs, kernels,
spans), so step N of one numbering is step N of the other: switching makes (or reuses) the
other numbering's session and travels it to the step the current one is at. Breakpoints
without a condition follow the switch both ways; a condition names registers, so a
conditional breakpoint and the watchpoints stay with the numbering they were set in.

`LiveRanges` is what the screen draws beside the listing: per pc and register, whether the
register is written there, live across, or read for the last time.
"""
from __future__ import annotations

import copy

from rvmdbg.i18n import N_, _
from rvmdbg.vm.regalloc import liveness, reuse_registers

NUMBERINGS = ("tvm", "reused")
TITLES = {"tvm": N_("TVM's numbering"), "reused": N_("reused numbering")}  # shown through _()


class NumberingError(ValueError):
    """A program whose registers `regalloc` cannot renumber (not Relay VM bytecode)."""


def reused_executable(exe):
    """(a copy of `exe` with registers reused by liveness, {function: (before, after)});
    the original is untouched."""
    if hasattr(exe, "machine"):   # a program for another machine (the MiniVM)
        raise NumberingError(_("register reuse is a pass over Relay VM bytecode; this "
                               "program runs on its own machine"))
    out = copy.copy(exe)
    out.functions = list(exe.functions)
    report = reuse_registers(out)
    return out, report


class Numberings:
    """The sessions of one program in each numbering; `switch(name)` moves to the other.

    `make_session(exe, like)` builds a session on `exe` with the arguments and settings of
    the session `like` (the screen and batch mode each know how they make sessions).
    """

    def __init__(self, session, make_session=None) -> None:
        self.current = "tvm"
        self.sessions = {"tvm": session}
        self.exes = {"tvm": session.original_exe}
        self.report: dict | None = None
        self._make = make_session or default_session

    @property
    def session(self):
        return self.sessions[self.current]

    def exe(self, name: str):
        """The executable in numbering `name` (the reused one made on first use)."""
        if name not in self.exes:
            self.exes[name], self.report = reused_executable(self.exes["tvm"])
        return self.exes[name]

    def sizes(self, func_name: str) -> tuple[int, int]:
        """The function's register file size in TVM's numbering and reused."""
        self.exe("reused")
        return self.report[func_name]

    def totals(self) -> tuple[int, int]:
        self.exe("reused")
        return (sum(b for b, _ in self.report.values()),
                sum(a for _, a in self.report.values()))

    def switch(self, name: str):
        """Make numbering `name` current, at the current session's step; returns its
        session."""
        if name not in NUMBERINGS:
            raise ValueError(_("numbering is tvm or reused, not {name}").format(name=repr(name)))
        old = self.session
        if name == self.current:
            return old
        new = self.sessions.get(name)
        if new is None:
            new = self.sessions[name] = self._make(self.exe(name), old)
        _follow_breakpoints(old, new)
        step = old.step_count
        if new.step_count != step:
            new.goto(step)
        self.current = name
        return new

    def toggle(self):
        return self.switch("reused" if self.current == "tvm" else "tvm")


def default_session(exe, like):
    """A session on `exe` with `like`'s arguments, entry, limits and history budget (no
    saved breakpoints: those belong to the program's own numbering)."""
    from rvmdbg.debug.session import DebugSession
    return DebugSession(exe, like.arguments(), entry=like.entry, limits=like.limits,
                        history_bytes=like.history.budget, config_dir=like.config_dir,
                        names=like.names)


def _plain(bp) -> bool:
    return bp.condition is None and bp.hit_condition is None and bp.log_message is None


def _follow_breakpoints(old, new) -> None:
    """Unconditional breakpoints of `old` become `new`'s (places are the same in both
    numberings); `new`'s conditional ones, which name its own registers, stay."""
    wanted = {bp.spec: bp.enabled for bp in old.breakpoints if _plain(bp)}
    for bp in list(new.breakpoints):
        if _plain(bp) and bp.spec not in wanted:
            new.breakpoints.delete(bp.id)
    have = {bp.spec for bp in new.breakpoints if _plain(bp)}
    for spec, enabled in wanted.items():
        if spec not in have:
            try:
                new.breakpoints.add(spec, enabled=enabled)
            except Exception:
                pass  # a spec the other numbering cannot resolve: none exist, same places


class LiveRanges:
    """Per pc of one function, a mark per register: "def" (written here and live after),
    "live" (live across), "end" (read here for the last time), "point" (written and dead
    at once), or absent."""

    def __init__(self, fn, kernels) -> None:
        uses, defs, live_in, live_out = liveness(fn, kernels)
        self.registers = fn.register_file_size
        self.marks: list[dict[int, str]] = []
        for pc in range(len(fn.instructions)):
            row: dict[int, str] = {}
            for r in live_in[pc] | live_out[pc] | defs[pc]:
                born = r in defs[pc]
                after = r in live_out[pc]
                if born and after:
                    row[r] = "def"
                elif born:
                    row[r] = "point"
                elif after:
                    row[r] = "live"
                else:
                    row[r] = "end"
            self.marks.append(row)


__all__ = ["NUMBERINGS", "TITLES", "Numberings", "NumberingError", "LiveRanges", "reused_executable",
           "default_session"]
