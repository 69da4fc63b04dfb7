"""What the screen says about a stop, read from the session once per stop: the stop line and
its kind, the history line, a note on the instruction at the pc, the breakpoints as the
breakpoints pane's rows and as the gutters' marks, and the wording of errors.

Plain functions of the session (no widgets): `DebuggerScreen.show_stop` calls them and hands
each pane what it shows.
"""
from __future__ import annotations

from rvmdbg.tui.breakpoints import BreakpointRow
from rvmdbg.tui.links import SourceLinks
from rvmdbg.tui.summary import value_summary
from rvmdbg.debug.session import step_tag
from rvmdbg.i18n import _, ngettext

def is_program_error(error: BaseException) -> bool:
    return type(error).__name__ == "VMError"


def error_text(error) -> str:
    if error is None:
        return ""
    message = getattr(error, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(error).split("\n")[0]


def toggle_message(result, where: str) -> str:
    """`toggle_at` and `toggle_line` return the new breakpoint, or None when they removed."""
    if result is None:
        return _("breakpoint removed at {where}").format(where=where)
    return _("breakpoint {n} at {where}").format(n=result.id, where=where)


def is_quick_command(line: str) -> bool:
    """Commands that only read or edit state run at once; the rest may run long."""
    word = line.split()[0] if line.split() else ""
    return word in {"info", "i", "backtrace", "bt", "print", "p", "heap", "deps", "list", "l",
                    "source", "break", "b", "delete", "disable", "enable", "watch", "help",
                    "tbreak", "condition", "display", "undisplay", "search", "set",
                    "swap?"}


def pc_note(frame, exe) -> str:
    """A short note on the instruction at the pc: where a closure call goes, what an `if`
    compares."""
    ins = getattr(frame, "instruction", None)
    regs = getattr(frame, "registers", None)
    if ins is None or regs is None:
        return ""
    name = type(ins).__name__
    try:
        if name == "InvokeClosure":
            closure = regs[ins.closure]
            target = getattr(closure, "name", None)
            return f"-> @{target}" if target else ""
        if name == "If":
            a, b = regs[ins.test], regs[ins.target]
            return f"${ins.test}={value_summary(a, 12)} ${ins.target}={value_summary(b, 12)}"
        if name in ("GetTag", "GetField"):
            obj = regs[ins.object]
            con = getattr(obj, "con", None)
            return _("${register} is {constructor}").format(register=ins.object, constructor=con) if con else ""
    except Exception:
        return ""
    return ""


def stop_line(session, event, exe) -> tuple[str, str]:
    """(the stop line, its kind) for the status bar."""
    error = getattr(session, "error", None)
    kind = "error" if error is not None else "finished" if session.finished else "stop"
    if event is not None and hasattr(event, "line"):
        try:
            return event.line(), kind
        except Exception:
            return str(event), kind
    loc = session.location()
    if session.finished and error is None:
        return (step_tag(session.step_count) + " " + _("finished: result = {value}").format(
            value=value_summary(session.result, 120)), "finished")
    if loc is None:
        if error is not None:
            return step_tag(session.step_count) + " " + _("error: {message}").format(message=error_text(error)), "error"
        return step_tag(session.step_count), kind
    fi, pc = loc
    ins = session.current_instruction()
    text = ins.text() if ins is not None else "?"
    reason = _("error: {message}").format(message=error_text(error)) if error is not None else _("start")
    return step_tag(session.step_count) + f" @{exe.functions[fi].name} pc={pc}: {text}    ({reason})", kind


def event_note(event) -> str:
    """The first line of a stop's extra message (a watchpoint's values, a condition that
    could not be evaluated), or ""."""
    message = getattr(event, "message", None)
    if not message or getattr(event, "reason", "") in ("error", "limit", "repeated state"):
        return ""
    return str(message).strip().split("\n")[0]


def history_line(session, glyphs) -> str:
    try:
        step, last, start = session.step_count, session.last_step, session.history_start
    except Exception:
        return ""
    text = _("step {step} of {last}").format(step=step, last=last)
    text += f" {glyphs.separator} " + _("history from step {start}").format(start=start)
    return text


def breakpoint_rows(session, exe) -> list[BreakpointRow]:
    """The session's breakpoints and watches as rows for the breakpoints pane."""
    rows: list[BreakpointRow] = []
    for bp in list(session.breakpoints):
        kind = getattr(bp, "kind", "")
        if kind == "line":
            moved = getattr(bp, "moved_from", None)
            where = _("line {line}").format(line=bp.line) + (" " + _("(from {line})").format(line=moved) if moved else "")
            names = getattr(session, "names", None)
            if names is not None and bp.spec in names.places:   # a named line: an ONNX node
                where = f"{bp.spec}: {where}"
        elif callable(getattr(bp, "where", None)):
            where = bp.where(exe)
        else:
            where = str(getattr(bp, "spec", bp))
        locs = sorted(getattr(bp, "locations", ()) or ())
        if kind == "opcode" and locs:
            where += " " + ngettext("({n} place)", "({n} places)", len(locs)).format(n=len(locs))
        rows.append(BreakpointRow("break", bp.id, bool(bp.enabled), where, bp.condition or "",
                                  getattr(bp, "hits", None), tuple(locs[0]) if locs else None))
    for w in list(getattr(session, "watches", ()) or ()):
        where = w.where(exe) if callable(getattr(w, "where", None)) else f"${w.register}"
        rows.append(BreakpointRow("watch", w.id, bool(w.enabled), where, "",
                                  getattr(w, "hits", None), None))
    rows.sort(key=lambda r: r.number)
    return rows


def breakpoint_marks(session, exe, links: SourceLinks):
    """({(func_index, pc): mark}, {source line: mark}) for the gutters: "on", "off", "cond"."""
    by_location: dict[tuple[int, int], str] = {}
    by_line: dict[int, str] = {}
    for bp in list(session.breakpoints):
        enabled = bool(getattr(bp, "enabled", True))
        mark = ("cond" if getattr(bp, "condition", None) else "on") if enabled else "off"
        for loc in getattr(bp, "locations", ()) or ():
            loc = tuple(loc)
            if by_location.get(loc) in (None, "off"):
                by_location[loc] = mark
            line = links.line_of(*loc)
            if line is not None and by_line.get(line) in (None, "off"):
                by_line[line] = mark
        line = getattr(bp, "line", None)
        if isinstance(line, int) and by_line.get(line) in (None, "off"):
            by_line[line] = mark
    return by_location, by_line


__all__ = ["stop_line", "history_line", "breakpoint_rows", "breakpoint_marks", "pc_note",
           "event_note", "error_text", "is_program_error", "is_quick_command", "toggle_message"]
