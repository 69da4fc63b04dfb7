"""The debugger's command language (gdb-like), for batch mode and the screen's command line.

`CommandInterpreter(session).execute(line) -> str` runs one command and returns what it
prints: a motion prints the stop line (plus the error, a watchpoint's old and new values,
...); an inspection prints its table or tree. A mistake in a command comes back as text
starting with `error:`; nothing is raised, so a batch script goes on.

Commands (short forms in brackets): break [b] SPEC [if EXPR], tbreak-free; delete [d] [N...],
disable N..., enable N..., condition N [EXPR]; step [s, si, stepi] [K], next [n, ni],
finish [f], continue [c], run-to [until, advance] SPEC; rstep [rs, reverse-step] [K],
rnext [rn, reverse-next], rfinish [rf, reverse-finish], rcontinue [rc, reverse-continue],
goto [g] STEP, last-write $N; info registers|frame|breakpoints|watchpoints|history|profile;
backtrace [bt, where] [N]; frame N, up [N], down [N]; print [p] $N; heap; deps;
swap? [@f:]PC1 PC2 (may the two instructions trade places, and if not, why);
numbering [tvm|reused|toggle] (registers as TVM numbers them, or reused by liveness: the
session switches at the same step);
watch [-c|-r] $N [change|read], rwatch $N; list [l] [@f[:PC]]; source; restart [run]; display EXPR,
undisplay [N...], info display; search TEXT; set logging ...; set profile on|off; help [h].
`complete(text)` gives the completions of a partial line (commands, @functions, $registers).
`run_batch(session, lines, write)` runs a script, echoing each command.
"""
from __future__ import annotations

import re

import numpy as np

from rvmdbg.debug.breakpoints import BreakpointError, Condition, ConditionError
from rvmdbg.debug.machine import register_name
from rvmdbg.debug.profiling import motion_timer, profile_of, stop_notes, stop_profile
from rvmdbg.debug.heap import format_heap, heap_of, value_text, value_tree, value_type
from rvmdbg.debug.indexing import (
    IndexSyntaxError, apply_index, index_text, parse_index, split_indexed,
)
from rvmdbg.debug.session import DebugError, DebugSession, StopEvent
from rvmdbg.debug.transcript import Transcript, TranscriptError
from rvmdbg.values import format_value, full_form_stats, host_form
from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.wording import picture_controls

HELP = N_("""\
Forward:   step|s [K]   next|n   finish|f   continue|c   run-to SPEC
Backward:  rstep|rs [K]   rnext|rn   rfinish|rf   rcontinue|rc   goto STEP   last-write $N
Stops:     break|b SPEC [if EXPR]   watch $N [change|read]   delete|d [N...]   disable N   enable N
           condition N [EXPR]      SPEC: @f  @f:PC  LINE  op:AllocADT   EXPR: $3 == 0 and $1 != Nil
Inspect:   info registers|frame|breakpoints|history|profile   backtrace|bt [N]   print|p $N   heap
           deps   list|l   source   frame N   up [N]   down [N]   print $N[0, :, 3] (NumPy's indexing)
           swap? [@f:]PC1 PC2 (may these two instructions trade places? if not, which dependence)
Registers: numbering [tvm|reused|toggle] (TVM's numbering, or reused by liveness, same step)
Display:   display EXPR (shown at every stop)   undisplay [N...]   info display
Find:      search TEXT (every function's bytecode)   list @f[:PC]
Other:     restart   set logging on [FILE] | off | file FILE   set profile on|off   help
Backward moves replay recorded history; `rcontinue` stops at the last breakpoint or watchpoint
hit before now, or at the start of history.""")

_INT = re.compile(r"^-?\d+$")
BREAKPOINT_NUMBER = N_("breakpoint number")
# what `deps` says of a register with no recorded writer (session.deps), shown translated
WRITE_NOTES = (N_("never written"), N_("before the start of history"), N_("not written in this frame"))


class CommandError(Exception):
    """A command that cannot be read (unknown word, missing or bad argument)."""


# no step, register or breakpoint number has more digits; Python's int() of 4300+ raises
_MAX_DIGITS = 18


def _number(text: str, what: str = N_("number")) -> int:
    """A whole number from the command line, refused with a message when it is too long."""
    digits = text.lstrip("-")
    if len(digits) > _MAX_DIGITS:
        raise CommandError(_("{what} too large: {text}... ({n} digits)").format(
            what=_(what), text=text[:12], n=len(digits)))
    return int(text)


def _register(text: str, prefix: str = "$") -> int:
    """`$3` (or `3`; `r3` as a MiniVM program names it; `%3` as the Relax VM does, when the
    executable's `prefix` is `%`)."""
    t = text.strip()
    if prefix == "%" and re.fullmatch(r"%\d+", t):
        t = t[1:]
    if not re.fullmatch(r"(?:\$|[rR])?\d+", t):
        raise CommandError(_("expected a register like $3, got {text}").format(text=repr(text)))
    return _number(t.lstrip("$rR"), N_("register number"))


def _count(args: list[str], default: int = 1) -> int:
    if not args:
        return default
    if len(args) > 1 or not _INT.match(args[0]):
        raise CommandError(_("expected a count, got {text}").format(text=repr(' '.join(args))))
    return _number(args[0], N_("count"))


def _repeat(rest: str) -> int:
    """The count of a motion command (`next 3`): at least 1."""
    n = _count(rest.split())
    if n < 1:
        raise CommandError(_("the count must be at least 1, got {n}").format(n=n))
    return n


def _numbers(args: list[str], known) -> list[int]:
    """The numbers `1 3-5,7` name, as gdb reads them: a single number as written (the caller
    reports one that names nothing), a range only the `known` numbers inside it, so a range
    never becomes a list of its own (`delete 1-100000000000`)."""
    known = sorted(set(known))
    out: list[int] = []
    for a in args:
        for part in a.split(","):
            if not part:
                continue
            m = re.fullmatch(r"(\d+)-(\d+)", part)
            if m:
                lo, hi = _number(m.group(1), BREAKPOINT_NUMBER), _number(m.group(2),
                                                                         BREAKPOINT_NUMBER)
                if lo > hi:
                    raise CommandError(_("the range {range} runs backwards").format(range=part))
                inside = [n for n in known if lo <= n <= hi]
                if not inside:
                    raise CommandError(_("nothing is numbered {lo} to {hi}").format(lo=lo, hi=hi))
                out.extend(n for n in inside if n not in out)
            elif re.fullmatch(r"\d+", part):
                n = _number(part, BREAKPOINT_NUMBER)
                if n not in out:
                    out.append(n)
            else:
                raise CommandError(_("expected breakpoint numbers, got {text}").format(text=repr(a)))
    return out


class CommandInterpreter:
    """Runs commands against one DebugSession; `selected` is the frame depth that `info`,
    `print`, `heap`, `deps` and `watch` look at (reset to the innermost at every stop)."""

    def __init__(self, session: DebugSession):
        self.session = session
        self.selected: int | None = None  # None: the innermost frame
        self.displays: list[tuple[int, str]] = []   # (number, expression), shown at every stop
        self._display_ids = 0
        self.transcript = Transcript()
        self.last_error: str | None = None          # the last command's failure, or None
        self.command_names: list[str] = []          # each command's full name, for completion
        self._handlers = {}
        self.numberings = None                      # made by the first `numbering`
        # `numbering` replaces the session: a client that holds the session itself (the
        # DAP adapter) turns this off; the screen and batch mode follow `self.session`
        self.may_switch_session = True
        for names, handler in [
            (("break", "b", "br"), self.cmd_break),
            (("delete", "d"), self.cmd_delete),
            (("disable",), self.cmd_disable),
            (("enable",), self.cmd_enable),
            (("condition",), self.cmd_condition),
            (("step", "s", "si", "stepi"), self.cmd_step),
            (("next", "n", "ni", "nexti"), self.cmd_next),
            (("finish", "f", "fin"), self.cmd_finish),
            (("continue", "c", "cont"), self.cmd_continue),
            (("rstep", "rs", "reverse-step", "reverse-stepi", "rsi"), self.cmd_rstep),
            (("rnext", "rn", "reverse-next", "reverse-nexti"), self.cmd_rnext),
            (("rfinish", "rf", "reverse-finish"), self.cmd_rfinish),
            (("rcontinue", "rc", "reverse-continue"), self.cmd_rcontinue),
            (("goto", "g"), self.cmd_goto),
            (("run-to", "until", "advance"), self.cmd_run_to),
            (("info", "i"), self.cmd_info),
            (("backtrace", "bt", "where"), self.cmd_backtrace),
            (("print", "p"), self.cmd_print),
            (("heap",), self.cmd_heap),
            (("deps",), self.cmd_deps),
            (("swap?",), self.cmd_swap),
            (("numbering",), self.cmd_numbering),
            (("last-write", "lw"), self.cmd_last_write),
            (("watch",), self.cmd_watch),
            (("rwatch",), self.cmd_rwatch),
            (("list", "l"), self.cmd_list),
            (("source",), self.cmd_source),
            (("frame", "fr"), self.cmd_frame),
            (("up",), self.cmd_up),
            (("down",), self.cmd_down),
            (("restart", "run", "r"), self.cmd_restart),
            (("display",), self.cmd_display),
            (("undisplay",), self.cmd_undisplay),
            (("search",), self.cmd_search),
            (("set",), self.cmd_set),
            (("help", "h", "?"), self.cmd_help),
        ]:
            for name in names:
                self._handlers[name] = handler
            self.command_names.append(names[0])

    # ------------------------------------------------------------ entry point

    def execute(self, line: str) -> str:
        """Run one command; returns its output (errors as `error: ...` text)."""
        text = line.strip()
        if not text or text.startswith("#"):
            return ""
        self.last_error = None
        out = self._run(text)
        self.transcript.write(f"(rvmdbg) {text}\n{out}" if out else f"(rvmdbg) {text}")
        return out

    def _run(self, text: str) -> str:
        word, _sep, rest = text.partition(" ")
        handler = self._handlers.get(word.lower())
        if handler is None:
            return self._error(_("unknown command {word} (try `help`)").format(word=repr(word)))
        try:
            return handler(rest.strip())
        except (CommandError, DebugError, BreakpointError, TranscriptError) as exc:
            return self._error(str(exc))
        except RecursionError:
            return self._error(_("the value is nested too deeply to show"))

    def _error(self, message: str) -> str:
        """A command's failure as printed (`error: ...`, translated); `last_error` keeps the
        message so callers never parse the text."""
        self.last_error = message
        return _("error: {message}").format(message=message)

    def complete(self, text: str) -> tuple[int, list[str]]:
        """(where the word being completed starts in `text`, its completions)."""
        from rvmdbg.debug.completion import complete
        return complete(self, text)

    @property
    def depth(self) -> int | None:
        return self.selected

    def _stopped(self, ev: StopEvent, covered: str | None = None) -> str:
        self.selected = None
        out = [ev.line()]
        if ev.message:
            out.extend("  " + m for m in ev.message.splitlines())
        # profiling on: the kernel the last step called, the time the motion covered
        out.extend("  " + line for line in stop_notes(self.session, covered))
        out.extend(self.display_lines())
        return "\n".join(out)

    # ------------------------------------------------------------ display

    def display_lines(self) -> list[str]:
        """`N: EXPR = value` for each display, in the selected frame (the stop's)."""
        if not self.displays:
            return []
        s = self.session
        regs = s.frame(self.selected).registers if s.vm.frames else None
        return [f"{n}: {expr} = {self._display_value(expr, regs)}" for n, expr in self.displays]

    def _display_value(self, expr: str, regs) -> str:
        if regs is None:
            return "<" + _("no frame: the program has finished") + ">"
        m = re.fullmatch(r"(?:\$|[rR])(\d+)", expr)
        if m:
            r = int(m.group(1)) if len(m.group(1)) <= _MAX_DIGITS else len(regs)
            if not 0 <= r < len(regs):
                return "<" + _("not in this frame: {n} registers").format(n=len(regs)) + ">"
            return "<" + _("empty") + ">" if regs[r] is None else value_text(regs[r], 70)
        try:
            cond = Condition(expr)
            value = cond._eval(cond.tree, regs)
        except (ConditionError, BreakpointError) as exc:
            return f"<{exc}>"
        return str(value)

    def cmd_display(self, rest: str) -> str:
        if not rest:
            return "\n".join(self.display_lines()) or _("no displays (display EXPR adds one)")
        if not re.fullmatch(r"(?:\$|[rR])\d+", rest):
            Condition(rest)  # a mistake is reported now, not at every stop
        self._display_ids += 1
        self.displays.append((self._display_ids, rest))
        regs = self.session.frame(self.selected).registers if self.session.vm.frames else None
        return f"{self._display_ids}: {rest} = {self._display_value(rest, regs)}"

    def cmd_undisplay(self, rest: str) -> str:
        if not rest:
            n = len(self.displays)
            self.displays.clear()
            return (ngettext("deleted {n} display", "deleted {n} displays", n).format(n=n) if n
                    else _("no displays to delete"))
        known = {n for n, _ in self.displays}
        numbers = _numbers(rest.split(), known)
        missing = [n for n in numbers if n not in known]
        if missing:
            raise CommandError(_("no display {n} (info display lists them)").format(n=missing[0]))
        self.displays = [(n, e) for n, e in self.displays if n not in numbers]
        return _("deleted display {numbers}").format(numbers=', '.join(map(str, numbers)))

    def info_display(self) -> str:
        if not self.displays:
            return _("no displays")
        return "\n".join(f"{n}: {expr}" for n, expr in self.displays)

    # ------------------------------------------------------------ search and settings

    def cmd_search(self, rest: str) -> str:
        if not rest:
            raise CommandError(_("usage: {forms}").format(forms="search TEXT"))
        matches = search_bytecode(self.session.exe, rest)
        if not matches:
            return _("no match for {text} in any function").format(text=repr(rest))
        funcs = len({fi for fi, _, _ in matches})
        exe = self.session.exe
        out = [ngettext("{n} match for {text}", "{n} matches for {text}", len(matches)).format(
                   n=len(matches), text=repr(rest)) + " "
               + ngettext("in {n} function", "in {n} functions", funcs).format(n=funcs)]
        out.extend(f"  @{exe.functions[fi].name}:{pc}: {text}" for fi, pc, text in matches[:200])
        if len(matches) > 200:
            out.append("  ... " + _("{n} more").format(n=len(matches) - 200))
        return "\n".join(out)

    def cmd_set(self, rest: str) -> str:
        args = rest.split()
        if args[:1] == ["logging"]:
            return self.transcript.command(args[1:])
        if args[:1] == ["profile"] and args[1:] in (["on"], ["off"]):
            if args[1] == "off":
                stop_profile(self.session)
                return _("profiling is off")
            prof = profile_of(self.session, start=True)
            return _("profiling is on from step {step}: kernel calls are timed from here "
                     "(`set profile off` stops it)").format(step=prof.since)
        raise CommandError(_("usage: {forms}").format(
            forms="set logging on [FILE] | off | file FILE | FILE; set profile on | off"))

    # ------------------------------------------------------------ breakpoints

    def cmd_break(self, rest: str) -> str:
        spec, cond = rest, None
        m = re.search(r"(?:^|\s)if\s+(.*)$", rest)
        if m:
            spec, cond = rest[:m.start()].strip(), m.group(1)
        s = self.session
        before = {b.id for b in s.breakpoints}
        bp = s.breakpoints.add(spec, cond, current=s.location())
        out = _("breakpoint {n} at {where}").format(n=bp.id, where=bp.where(s.exe))
        if bp.condition:
            out += " " + _("if {condition}").format(condition=bp.condition)
        if bp.kind in ("line", "opcode", "kernel"):
            n = len(bp.locations)
            out += " " + ngettext("({n} location)", "({n} locations)", n).format(n=n)
        if bp.id in before:
            out += " " + _("(already set)")
        return out

    def cmd_delete(self, rest: str) -> str:
        s = self.session
        args = rest.split()
        if args and args[0] in ("breakpoints", "watchpoints", "display"):
            args = args[1:]
        if not args:
            nb, nw = len(s.breakpoints), len(s.watches)
            s.breakpoints.clear()
            s.watches.clear()
            if nb + nw == 0:
                return _("no breakpoints or watchpoints to delete")
            parts = [text for n, text in (
                (nb, ngettext("{n} breakpoint", "{n} breakpoints", nb).format(n=nb)),
                (nw, ngettext("{n} watchpoint", "{n} watchpoints", nw).format(n=nw))) if n]
            return _("deleted {what}").format(what=_(" and ").join(parts))
        done = []
        for n in _numbers(args, self._ids()):
            s.delete(n)
            done.append(str(n))
        return _("deleted {what}").format(what=', '.join(done))

    def _ids(self) -> list[int]:
        s = self.session
        return [b.id for b in s.breakpoints] + [w.id for w in s.watches]

    def cmd_disable(self, rest: str) -> str:
        return self._set_enabled(rest, False)

    def cmd_enable(self, rest: str) -> str:
        return self._set_enabled(rest, True)

    def _set_enabled(self, rest: str, enabled: bool) -> str:
        s = self.session
        nums = _numbers(rest.split(), self._ids())
        if not nums:
            nums = self._ids()
        for n in nums:
            s.enable(n, enabled)
        if not nums:
            return _("nothing to enable") if enabled else _("nothing to disable")
        numbers = ', '.join(str(n) for n in nums)
        return (_("enabled {numbers}") if enabled else _("disabled {numbers}")).format(numbers=numbers)

    def cmd_condition(self, rest: str) -> str:
        num, _sep, expr = rest.partition(" ")
        if not _INT.match(num or ""):
            raise CommandError(_("usage: {forms}").format(forms="condition N [EXPR]"))
        bp = self.session.breakpoints.set_condition(_number(num, BREAKPOINT_NUMBER),
                                                    expr or None)
        return (_("breakpoint {n} stops if {condition}").format(n=bp.id, condition=bp.condition)
                if bp.condition else _("breakpoint {n} is now unconditional").format(n=bp.id))

    def cmd_watch(self, rest: str) -> str:
        args = rest.split()
        on = "write"
        if "-c" in args or "change" in args:
            on = "change"
            args = [a for a in args if a not in ("-c", "change")]
        if "-r" in args or "read" in args:
            if on == "change":
                raise CommandError("usage: watch $N [change|read] (one of the two)")
            on = "read"
            args = [a for a in args if a not in ("-r", "read")]
        if len(args) != 1:
            raise CommandError(_("usage: {forms}").format(forms="watch $N [change|read]"))
        wp = self.session.watch(_register(args[0], self._prefix()), self.selected, on)
        return _("watchpoint {n}: {where}").format(n=wp.id, where=wp.where())

    def cmd_rwatch(self, rest: str) -> str:
        """gdb's read watchpoint: stop before each instruction that reads the register."""
        return self.cmd_watch(rest + " read")

    # ------------------------------------------------------------ motion

    def cmd_step(self, rest: str) -> str:
        return self._stopped(self.session.step(_repeat(rest)))

    def cmd_next(self, rest: str) -> str:
        n = _repeat(rest)
        ev = None
        timer = motion_timer(self.session)
        for _round in range(n):
            ev = self.session.next()
            if ev.reason != "step":
                break
        return self._stopped(ev, timer())

    def cmd_finish(self, rest: str) -> str:
        timer = motion_timer(self.session)
        return self._stopped(self.session.finish(), timer())

    def cmd_continue(self, rest: str) -> str:
        n = _repeat(rest)
        ev = None
        for _round in range(n):
            ev = self.session.cont()
            if ev.reason not in ("breakpoint", "watchpoint"):
                break
        return self._stopped(ev)

    def cmd_rstep(self, rest: str) -> str:
        return self._stopped(self.session.rstep(_repeat(rest)))

    def cmd_rnext(self, rest: str) -> str:
        n = _repeat(rest)
        ev = None
        for _round in range(n):
            ev = self.session.rnext()
            if ev.reason != "step":
                break
        return self._stopped(ev)

    def cmd_rfinish(self, rest: str) -> str:
        return self._stopped(self.session.rfinish())

    def cmd_rcontinue(self, rest: str) -> str:
        return self._stopped(self.session.rcontinue())

    def cmd_goto(self, rest: str) -> str:
        args = rest.split()
        if len(args) != 1 or not _INT.match(args[0]):
            raise CommandError(_("usage: {forms}").format(forms="goto STEP"))
        return self._stopped(self.session.goto(_number(args[0], N_("step"))))

    def cmd_run_to(self, rest: str) -> str:
        if not rest:
            raise CommandError(_("usage: {forms}").format(forms="run-to @f:PC (@f, LINE, op:NAME)"))
        s = self.session
        fields = s.breakpoints.resolve(rest)
        if not fields["locations"]:
            raise CommandError(_("{spec} matches no instruction").format(spec=rest))
        return self._stopped(s.run_to_locations(fields["locations"]))

    def cmd_last_write(self, rest: str) -> str:
        return self._stopped(self.session.last_write(_register(rest, self._prefix()), self.selected))

    def cmd_restart(self, rest: str) -> str:
        return self._stopped(self.session.restart())

    # ------------------------------------------------------------ frames

    def _frame(self):
        return self.session.frame(self.selected)

    def cmd_frame(self, rest: str) -> str:
        if rest:
            n = _count(rest.split())
            fs = self.session.vm.frames
            # gdb numbering: #0 is the innermost
            if not 0 <= n < len(fs):
                raise DebugError(_("no frame #{n} (0..{last}, 0 = innermost)").format(n=n, last=len(fs) - 1))
            self.selected = len(fs) - 1 - n
        return self._frame_line(self._frame())

    def cmd_up(self, rest: str) -> str:
        return self._move_frame(-_count(rest.split()))

    def cmd_down(self, rest: str) -> str:
        return self._move_frame(_count(rest.split()))

    def _move_frame(self, delta: int) -> str:
        fs = self.session.vm.frames
        if not fs:
            raise DebugError(_("the program is not running: no frames"))
        cur = len(fs) - 1 if self.selected is None else self.selected
        new = cur + delta
        if not 0 <= new < len(fs):
            raise DebugError(_("no frame above: this is the outermost") if new < 0
                             else _("no frame below: this is the innermost"))
        self.selected = new
        return self._frame_line(self._frame())

    def _frame_line(self, f) -> str:
        n = len(self.session.vm.frames) - 1 - f.depth
        text = f.instruction.text() if f.instruction is not None else "?"
        where = f"    ({f.span})" if f.span is not None else ""
        return f"#{n}  @{f.func_name} pc={f.pc}: {text}{where}"

    def cmd_backtrace(self, rest: str) -> str:
        s = self.session
        fs = s.vm.frames
        if not fs:
            return (_("no frames: the program finished") if s.finished
                    else _("no frames: the program is not running"))
        args = rest.split()
        full = "full" in args
        args = [a for a in args if a != "full"]
        limit = _count(args, 0) if args else 0
        n = len(fs)
        if limit > 0:
            shown = list(range(n - 1, max(-1, n - 1 - limit), -1))
            gap = None
        elif n <= 40 or full:
            shown, gap = list(range(n - 1, -1, -1)), None
        else:
            shown = list(range(n - 1, n - 21, -1)) + list(range(4, -1, -1))
            gap = 20
        out = []
        for i, d in enumerate(shown):
            if gap is not None and i == gap:
                out.append("... " + _("{n} more frames (backtrace full shows all)").format(n=n - 25))
            out.append(self._frame_line(s.frame(d)))
        if limit and limit < n:
            out.append("(" + _("more frames: {n}").format(n=n - limit) + ")")
        return "\n".join(out)

    # ------------------------------------------------------------ inspection

    def cmd_info(self, rest: str) -> str:
        what = rest.split()[0].lower() if rest.split() else ""
        if what in ("registers", "reg", "r", "registers-all"):
            return self.info_registers()
        if what in ("frame", "f"):
            return self.info_frame()
        if what in ("breakpoints", "break", "b", "watchpoints", "watch"):
            return self.info_breakpoints()
        if what in ("history", "h"):
            return self.info_history()
        if what in ("display", "displays"):
            return self.info_display()
        if what in ("profile", "prof", "p"):
            return self.info_profile()
        raise CommandError(_("usage: {forms}").format(
            forms="info registers | frame | breakpoints | history | display | profile"))

    def info_profile(self) -> str:
        """The kernel table of the run so far; turns profiling on if it was off."""
        started = profile_of(self.session) is None
        prof = profile_of(self.session, start=True)
        table = prof.table()
        if started:
            return _("profiling is on from step {step}: kernel calls are timed from here "
                     "(`set profile off` stops it)").format(step=prof.since) + "\n" + table
        return table

    def info_registers(self) -> str:
        s = self.session
        f = self._frame()
        innermost = f.depth == len(s.vm.frames) - 1
        changed = s.changed_registers() if innermost else set()
        out = [_("registers of @{func} (frame #{n}, pc={pc})").format(
            func=f.func_name, n=len(s.vm.frames) - 1 - f.depth, pc=f.pc)
            + ("    " + _("* = changed since the last stop") if changed else "")]
        width = max((len(value_type(v)) for v in f.registers), default=0)
        width = min(max(width, 5), 28)
        for r, v in enumerate(f.registers):
            mark = "*" if r in changed else " "
            name = register_name(s.exe, r)
            param = f"  (%{f.params[r]})" if r < len(f.params) else ""
            out.append(f"{mark} {name:<5} {value_type(v):<{width}} {value_text(v, 60)}{param}")
        return "\n".join(out)

    def info_frame(self) -> str:
        s = self.session
        f = self._frame()
        fs = s.vm.frames
        n = len(fs) - 1 - f.depth
        out = [_("frame #{n} of {total} (depth {depth}, activation {serial})").format(
            n=n, total=len(fs), depth=f.depth, serial=f.serial) + f": @{f.func_name} pc={f.pc}"]
        if f.instruction is not None:
            out.append("  " + _("next instruction: {text}").format(text=f.instruction.text()))
        if f.span is not None:
            out.append("  " + _("source: {place}").format(place=f.span))
        exe = s.exe
        params = ", ".join(_("%{name} in {register}").format(name=p, register=register_name(exe, i))
                           for i, p in enumerate(f.params)) or _("none")
        out.append("  " + _("{n} registers; parameters: {params}").format(n=len(f.registers), params=params))
        if f.depth > 0:
            caller = s.frame(f.depth - 1)
            out.append("  " + _("called from @{func} pc={pc}, result to {register}").format(
                func=caller.func_name, pc=caller.pc,
                register=register_name(exe, fs[f.depth].caller_return_register)))
        else:
            out.append("  " + _("the outermost frame (the entry function)"))
        if f.depth < len(fs) - 1:
            out.append("  " + _("waiting for the call at pc={pc} to return").format(pc=f.pc))
        out.append("  " + _("step {step}; history from step {start} to step {last}").format(
            step=s.step_count, start=s.history_start, last=s.last_step))
        return "\n".join(out)

    def info_breakpoints(self) -> str:
        s = self.session
        rows = []
        for bp in s.breakpoints:
            cond = " ".join(part for part in (
                f"if {bp.condition}" if bp.condition else "",
                f"hits {bp.hit_condition}" if bp.hit_condition else "",
                f"log {bp.log_message!r}" if bp.log_message is not None else "") if part)
            rows.append((str(bp.id), "breakpoint", "y" if bp.enabled else "n",
                         bp.where(s.exe), str(bp.hits), cond))
        for wp in s.watches:
            live = [f for f in s.vm.frames[wp.depth:wp.depth + 1] if f.serial == wp.serial]
            scope = "" if live else "(frame not live now)"
            rows.append((str(wp.id), "watchpoint", "y" if wp.enabled else "n",
                         wp.where(), str(wp.hits), scope))
        if not rows:
            return _("no breakpoints or watchpoints")
        rows.sort(key=lambda r: int(r[0]))
        head = ("Num", "Type", "Enb", "Where", "Hits", "Condition")
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(5)]
        lines = []
        for r in [head] + rows:
            lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(r[:5])) +
                         ("  " + r[5] if r[5] else ""))
        return "\n".join(line.rstrip() for line in lines)

    def info_history(self) -> str:
        h = self.session.history_info()
        n = h["checkpoints"]
        return (_("step {step}; history from step {start} to step {last}").format(
                    step=self.session.step_count, start=h['start'], last=h['last_step']) + "; "
                + ngettext("{n} checkpoint (by running time, at most {interval} steps apart)",
                           "{n} checkpoints (by running time, at most {interval} steps apart)",
                           n).format(n=n, interval=h['interval']) + ", "
                + _("about {used} MB of {budget} MB").format(
                    used=f"{h['bytes_estimate'] / 2 ** 20:.1f}", budget=f"{h['budget'] / 2 ** 20:.0f}"))

    def _prefix(self) -> str:
        return getattr(self.session.exe, "register_prefix", "$")

    def cmd_print(self, rest: str) -> str:
        if not rest:
            raise CommandError(_("usage: print $N, or print $N[0, :, 3] for part of a tensor"))
        try:
            name, index_src = split_indexed(rest)
            index = parse_index(index_src) if index_src is not None else None
        except IndexSyntaxError as e:
            raise CommandError(str(e)) from None
        f = self._frame()
        named = self._named_value(name.strip(), f)
        if named is not None:
            reg, v = named
        else:
            r = _register(name, self._prefix())
            reg = register_name(self.session.exe, r)
            if not 0 <= r < len(f.registers):
                raise DebugError(_("{register} is outside the register file (size {size})").format(
                    register=reg, size=len(f.registers)))
            v = f.registers[r]
            if v is None:
                return _("{register} is empty").format(register=reg)
        kind = value_type(v)
        if index is not None:
            v = host_form(v)   # a TVM tensor (the Relax VM's) is indexed as its array
            if not isinstance(v, (np.ndarray, np.generic)):
                raise DebugError(_("{register} holds a {kind}, not a tensor: only tensors take an index").format(
                    register=reg, kind=kind))
            try:
                part = apply_index(v, index)
            except IndexSyntaxError as e:
                raise DebugError(f"{reg}[{index_text(index)}]: {e}") from None
            return (f"{reg}[{index_text(index)}] = {format_value(part)}    "
                    f"({_with_stats(value_type(part), part)})")
        lines = value_tree(v)
        if len(lines) == 1:
            text = _full_text(v)
            return f"{reg} = {text}    ({_with_stats(kind, v)})"
        return f"{reg} = {value_text(v, 70)}    ({kind})\n" + "\n".join(lines)

    def _named_value(self, name: str, f):
        """(label, value) for a value the program kind named (an ONNX tensor), None when
        `name` is not one; a DebugError when it has no value here yet."""
        names = getattr(self.session, "names", None)
        if names is None or name.startswith("$") or name not in names.values:
            return None
        from rvmdbg.debug.names import find_value
        exe = self.session.exe
        r, v, note = find_value(exe, f, names.values[name])
        where = f"{name} ({register_name(exe, r)})" if r is not None else name
        if v is None:
            if note is None:
                note = _("empty (freed after its last use)")
            raise DebugError(_("{name} has no value here: {why}").format(name=where, why=note))
        return where, v

    def cmd_heap(self, rest: str) -> str:
        f = self._frame()
        nodes, truncated = heap_of(f.registers)
        return format_heap(nodes, truncated)

    def cmd_deps(self, rest: str) -> str:
        s = self.session
        f = self._frame()
        d = s.deps(f.depth)
        out = [f"@{f.func_name} pc={f.pc}: "
               f"{f.instruction.text() if f.instruction is not None else '?'}"]
        if d.reads:
            out.append(_("reads:"))
            for dep in d.reads:
                if dep.write_step is not None:
                    fname = s.func_name(dep.write_func)
                    src = _("written at step {step} by @{func} pc={pc}: {text}").format(
                        step=dep.write_step, func=fname, pc=dep.write_pc, text=dep.write_text)
                else:
                    src = _write_note(dep.write_text)
                out.append(f"  {register_name(s.exe, dep.register):<4} = "
                           f"{value_text(dep.value, 30):<12} {src}")
        else:
            out.append(_("reads: nothing"))
        out.append(_("writes: {registers}").format(
            registers=", ".join(register_name(s.exe, r) for r in d.writes) or _("nothing")))
        return "\n".join(out)

    def cmd_swap(self, rest: str) -> str:
        s = self.session
        words = rest.split()
        if len(words) != 2:
            raise CommandError("usage: swap? PC1 PC2  or  swap? @f:PC1 PC2")
        first = words[0]
        if first.startswith("@"):
            fields = s.breakpoints.resolve(first)
            if fields.get("pc") is None or ":" not in first:
                raise CommandError("usage: swap? @f:PC1 PC2 (a pc after the function's name)")
            fi, pc_a = fields["func_index"], fields["pc"]
        else:
            if not _INT.match(first):
                raise CommandError(f"expected a pc, got {first!r}")
            # the selected frame's function; once the program ended, the entry function
            fi = (self._frame().func_index if s.frames() else s.exe.func_index(s.entry))
            pc_a = _number(first, "pc")
        if not _INT.match(words[1]):
            raise CommandError(f"expected a pc, got {words[1]!r}")
        pc_b = _number(words[1], "pc")
        return swap_text(s.exe, fi, s.swap_verdict(fi, pc_a, pc_b))

    def cmd_numbering(self, rest: str) -> str:
        from rvmdbg.debug.numbering import NUMBERINGS, TITLES, NumberingError, Numberings
        try:
            return self._numbering(rest, NUMBERINGS, TITLES, Numberings)
        except NumberingError as exc:
            raise CommandError(str(exc)) from None

    def _numbering(self, rest, NUMBERINGS, TITLES, Numberings) -> str:
        if self.numberings is None or self.numberings.session is not self.session:
            self.numberings = Numberings(self.session)
        nb = self.numberings
        want = rest.strip().lower()
        if want == "toggle":
            want = "reused" if nb.current == "tvm" else "tvm"
        if want and want not in NUMBERINGS:
            raise CommandError(_("usage: {forms}").format(forms="numbering [tvm | reused | toggle]"))
        if want and not self.may_switch_session:
            raise CommandError(_("numbering switches the session: on the screen (r) or in "
                                 "batch mode"))
        if want:
            self.session = nb.switch(want)
            self.selected = None
        before, after = nb.totals()
        f = self._frame() if self.session.frames() else None
        lines = [_("registers in {numbering} at step {step}: {before} registers in TVM's "
                   "numbering, {after} reused (all functions)").format(
                       numbering=_(TITLES[nb.current]), step=self.session.step_count,
                       before=before, after=after)]
        if f is not None:
            b, a = nb.sizes(f.func_name)
            lines.append(_("@{fn}: register file {before} -> {after}").format(
                fn=f.func_name, before=b, after=a))
        return "\n".join(lines)

    def cmd_list(self, rest: str) -> str:
        s = self.session
        f = self._frame()
        fn = s.exe.functions[f.func_index]
        names, kernels = s.exe.function_names(), s.exe.kernel_names()
        if rest.strip():
            fields = s.breakpoints.resolve(rest)
            if fields.get("func_index") is None:
                raise CommandError(_("usage: {forms}").format(forms="list [@f[:PC]]"))
            fn = s.exe.functions[fields["func_index"]]
            center, fi = fields.get("pc", 0), fields["func_index"]
        else:
            center, fi = f.pc, f.func_index
        lo = max(0, center - 6)
        hi = min(len(fn.instructions), lo + 13)
        out = [f"@{fn.name} " + _("({n} instructions, {registers} registers)").format(
            n=len(fn.instructions), registers=fn.register_file_size)]
        for pc in range(lo, hi):
            bps = s.breakpoints.at(fi, pc)
            mark = "B" if any(b.enabled for b in bps) else ("b" if bps else " ")
            here = "=>" if (fi == f.func_index and pc == f.pc) else "  "
            out.append(f"{here}{mark} {pc:>3}: {fn.instructions[pc].text(names, kernels)}")
        return "\n".join(out)

    def cmd_source(self, rest: str) -> str:
        s = self.session
        f = self._frame()
        span = f.span
        if span is None:
            return _("no source location for @{func} pc={pc}").format(func=f.func_name, pc=f.pc)
        # the executable's own copy of the text: a path named in a saved file is never opened
        lines = s.exe.source_lines(span.file)
        if lines is None:
            return _("source {place} is not available").format(place=span)
        lo = max(1, span.line - 5)
        hi = min(len(lines), span.line + 5)
        own_file = span.file == getattr(s.exe, "source_name", None)
        bp_lines = {b.line for b in s.breakpoints if b.kind == "line" and b.enabled}
        out = [f"{span}"]
        for n in range(lo, hi + 1):
            here = "=>" if n == span.line else "  "
            mark = "B" if own_file and n in bp_lines else " "
            # the program's text, shown: its control characters as visible cells
            out.append(f"{here}{mark}{n:>5} | {picture_controls(lines[n - 1])}")
            if n == span.line and span.end_line == span.line and span.end_col > span.col:
                out.append(" " * (10 + span.col - 1) + "^" + "~" * (span.end_col - span.col - 1))
        return "\n".join(out)

    def cmd_help(self, rest: str) -> str:
        return _(HELP)


def _write_note(text: str) -> str:
    """What the session says of a register's missing writer, in the language in use."""
    if text in WRITE_NOTES:
        return _(text)
    if text.startswith("argument of @"):
        return _("argument of @{func}").format(func=text[len("argument of @"):])
    return text


def swap_text(exe, func_index: int, verdict) -> str:
    """What `swap?` prints: the two instructions, then yes, or no and every reason."""
    fn = exe.functions[func_index]
    names, kernels = exe.function_names(), exe.kernel_names()
    out = []
    for pc in sorted({verdict.pc_a, verdict.pc_b}):
        if 0 <= pc < len(fn.instructions):
            out.append(f"  {pc:>3}: {fn.instructions[pc].text(names, kernels)}")
    where = dict(fn=fn.name, a=verdict.pc_a, b=verdict.pc_b)
    if verdict.ok:
        return "\n".join([_("@{fn} pc {a} and pc {b}: may swap (no dependence and no control "
                            "between them)").format(**where)] + out)
    lines = [_("@{fn} pc {a} and pc {b}: may not swap").format(**where)] + out
    prefix = getattr(exe, "register_prefix", "$")
    lines += [f"  - {r.text(prefix)}" for r in verdict.reasons]
    return "\n".join(lines)


def search_bytecode(exe, text: str) -> list[tuple[int, int, str]]:
    """(function index, pc, instruction text) of every instruction whose text (with callee,
    kernel and constructor names, as `list` shows it) contains `text`, case-insensitively."""
    needle = text.lower()
    names, kernels = exe.function_names(), exe.kernel_names()
    found = []
    for fi, fn in enumerate(exe.functions):
        for pc, ins in enumerate(fn.instructions):
            line = ins.text(names, kernels)
            if needle in line.lower():
                found.append((fi, pc, line))
    return found


def _with_stats(kind: str, v) -> str:
    """A printed tensor's type, then its min / max / mean and NaN/Inf counts when its full
    form lists the elements without them (as the registers pane shows them)."""
    stats = full_form_stats(v)
    return kind if stats is None else f"{kind}; {stats}"


def _full_text(v) -> str:
    try:
        return format_value(v)
    except RecursionError:
        return value_text(v, 200)


QUIT_WORDS = ("quit", "q", "exit")  # end a batch script early, as in gdb


def run_batch(session: DebugSession, lines, write, stop=None) -> int:
    """Run each command of `lines`, writing `(rvmdbg) COMMAND` then its output; returns the
    number of commands that reported an error. `stop` (a threading.Event), once set, ends
    the script after the command running then (Ctrl-C: that command stops `interrupted`)."""
    interp = CommandInterpreter(session)
    for note in session.notes:
        write(_("note: {note}").format(note=note) + "\n")
    errors = 0
    for raw in lines:
        if stop is not None and stop.is_set():
            break
        line = raw.rstrip("\n")
        if not line.strip() or line.strip().startswith("#"):
            continue
        write(f"(rvmdbg) {line.strip()}\n")
        if line.split()[0].lower() in QUIT_WORDS:
            break
        out = interp.execute(line)
        if interp.last_error is not None:
            errors += 1
        if out:
            write(out + "\n")
    return errors


__all__ = ["CommandInterpreter", "CommandError", "run_batch", "search_bytecode", "HELP"]
