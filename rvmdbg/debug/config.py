"""Breakpoints saved per program under the user's config directory, restored on the next start.

Files live in `$XDG_CONFIG_HOME/rvmdbg/breakpoints/` (or `~/.config/rvmdbg/breakpoints/`),
one JSON file per program, named after the program's file name and a hash of its absolute
path. JSON only: nothing is ever unpickled or evaluated.

A source-line breakpoint stores the line's text and two lines of context on each side. On
load, when the line at the stored number no longer has that text (the file was edited above
it), the line is found again by content: among the lines with the same text, the one whose
context matches best, then the one nearest the old number. A line that is gone drops its
breakpoint, with a note. Instruction breakpoints store the instruction's text and are found
again the same way within their function.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path

from rvmdbg.fileio import FileRefused, read_text, write_atomic
from rvmdbg.i18n import N_, _

FORMAT = 1
CONTEXT = 2


def config_root(config_dir: str | os.PathLike | None = None) -> Path:
    """The rvmdbg config directory: `config_dir` if given, else the XDG location."""
    if config_dir is not None:
        return Path(config_dir)
    base = os.environ.get("XDG_CONFIG_HOME")
    if not base:
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "rvmdbg"


def breakpoint_file(program_path: str, config_dir=None) -> Path:
    """Where the breakpoints of `program_path` are kept."""
    full = os.path.abspath(program_path)
    digest = hashlib.sha1(full.encode("utf-8")).hexdigest()[:12]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(full).name)
    return config_root(config_dir) / "breakpoints" / f"{stem}-{digest}.json"


def _context(lines: list[str], line: int) -> tuple[list[str], list[str]]:
    i = line - 1
    before = [s.strip() for s in lines[max(0, i - CONTEXT):i]]
    after = [s.strip() for s in lines[i + 1:i + 1 + CONTEXT]]
    return before, after


def breakpoint_records(table, exe) -> list[dict]:
    """The JSON-ready records of a BreakpointTable."""
    source = (getattr(exe, "source_text", None) or "").split("\n")
    out = []
    for bp in table:
        rec = {"kind": bp.kind, "spec": bp.spec, "enabled": bp.enabled,
               "condition": bp.condition}
        if bp.kind == "line":
            rec["line"] = bp.line
            rec["text"] = (bp.line_text or "").strip()
            rec["before"], rec["after"] = _context(source, bp.line) if source else ([], [])
        elif bp.kind in ("instruction", "function"):
            fn = exe.functions[bp.func_index]
            rec["function"] = fn.name
            rec["pc"] = bp.pc
            rec["text"] = fn.instructions[bp.pc].text()
        out.append(rec)
    return out


def _key(rec: dict) -> tuple:
    """What makes two saved records the same breakpoint."""
    return (rec.get("kind"), str(rec.get("spec")))


@contextmanager
def _locked(path: Path):
    """An exclusive lock on the breakpoints file of one program (a `.lock` file beside it),
    held while its records are read, merged and written."""
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing releases the lock


def save_breakpoints(table, exe, program_path: str, config_dir=None,
                     synced: dict | None = None) -> Path | None:
    """Write the table's breakpoints for `program_path`; None if it failed.

    Another session may have saved breakpoints of the same program meanwhile, so the file is
    read, merged and written under a lock: `synced` (kept by the caller, updated here) holds
    the records the caller knew at its last restore or save. A record in the file that the
    caller never knew is someone else's and stays; one it knew and no longer has was deleted
    by it and goes; its own records replace theirs."""
    path = breakpoint_file(program_path, config_dir)
    ours = {_key(r): r for r in breakpoint_records(table, exe)}
    known = synced if synced is not None else {}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            merged, seen = [], set()
            for rec in _read_records(path)[0]:
                k = _key(rec)
                if k in seen:
                    continue
                seen.add(k)
                if k in ours:
                    merged.append(ours[k])
                elif k not in known:
                    merged.append(rec)
            merged.extend(rec for k, rec in ours.items() if k not in seen)
            data = {"format": FORMAT, "program": os.path.abspath(program_path),
                    "breakpoints": merged}
            write_atomic(path, json.dumps(data, indent=1).encode("utf-8"))
    except OSError:
        return None  # an unwritable config dir must not stop the debugger
    if synced is not None:
        synced.clear()
        synced.update(ours)
    return path


# a breakpoints file larger than this is not one rvmdbg wrote
_MAX_STATE_BYTES = 16 * 1024 * 1024


def _read_records(path: Path) -> tuple[list[dict], str | None]:
    """The records of one breakpoints file and a note when it could not be used whole (it is
    then treated as empty, or as the records that were readable)."""
    try:
        text = read_text(path, _MAX_STATE_BYTES, N_("breakpoints file"))
    except FileNotFoundError:
        return [], None
    except (OSError, UnicodeDecodeError) as e:
        return [], _ignored(path, _why(e))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        why = _("nested too deeply") if isinstance(e, RecursionError) else _("not valid JSON")
        return [], _ignored(path, why)
    if not isinstance(data, dict) or not isinstance(data.get("breakpoints"), list):
        return [], _ignored(path, _("not a breakpoints file"))
    records = [r for r in data["breakpoints"] if _readable(r)]
    note = None
    if len(records) != len(data["breakpoints"]):
        note = _("skipped {n} unreadable entries of {path}").format(
            n=len(data["breakpoints"]) - len(records), path=path)
    return records, note


def _ignored(path: Path, why: str) -> str:
    return _("ignored the saved breakpoints in {path}: {why}").format(path=path, why=why)


def _readable(rec) -> bool:
    """A record whose identity can be read (its kind and spec are text); the other fields
    are checked where they are used."""
    return (isinstance(rec, dict) and isinstance(rec.get("kind"), str)
            and isinstance(rec.get("spec", ""), str))


def _why(e: Exception) -> str:
    if isinstance(e, FileRefused):
        return e.reason
    if isinstance(e, UnicodeDecodeError):
        return _("not UTF-8 text")
    return getattr(e, "strerror", None) or str(e)


def load_records(program_path: str, config_dir=None) -> list[dict]:
    """The saved records for `program_path` ([] when there are none or the file is unusable)."""
    return _read_records(breakpoint_file(program_path, config_dir))[0]


def find_line(lines: list[str], rec: dict) -> int | None:
    """The line number where the saved line now is, or None when it is gone."""
    want = str(rec.get("text", "")).strip()
    old = rec.get("line")
    if not isinstance(old, int):
        return None
    if 1 <= old <= len(lines) and lines[old - 1].strip() == want:
        return old
    if not want:
        return None
    candidates = [i + 1 for i, s in enumerate(lines) if s.strip() == want]
    if not candidates:
        return None
    before = _lines_of(rec.get("before"))
    after = _lines_of(rec.get("after"))

    def score(n: int):
        b, a = _context(lines, n)
        same = sum(1 for x, y in zip(reversed(b), reversed(before)) if x == y)
        same += sum(1 for x, y in zip(a, after) if x == y)
        return (-same, abs(n - old))
    return min(candidates, key=score)


def _lines_of(value) -> list[str]:
    """A record's context lines; anything but a list of strings (a hand-edited or damaged
    file) is no context."""
    if not isinstance(value, list):
        return []
    return [s for s in value if isinstance(s, str)]


def _find_instruction(exe, rec: dict) -> tuple[int, int] | None:
    name = rec.get("function")
    pc = rec.get("pc")
    if not isinstance(name, str) or not isinstance(pc, int):
        return None
    try:
        fi = exe.func_index(name)
    except KeyError:
        return None
    code = exe.functions[fi].instructions
    text = rec.get("text")
    if 0 <= pc < len(code) and (text is None or code[pc].text() == text):
        return fi, pc
    same = [i for i, ins in enumerate(code) if ins.text() == text]
    if same:
        return fi, min(same, key=lambda i: abs(i - pc))
    return None


def restore_breakpoints(table, exe, program_path: str, config_dir=None,
                        synced: dict | None = None) -> list[str]:
    """Add the saved breakpoints of `program_path` to `table`; returns notes for the user.
    `synced` (see save_breakpoints) is filled with the records read, so a later save knows
    which of the file's records this session has seen (and moved or dropped)."""
    from rvmdbg.debug.breakpoints import BreakpointError
    records, note = _read_records(breakpoint_file(program_path, config_dir))
    notes: list[str] = [note] if note else []
    if synced is not None:
        synced.update((_key(r), r) for r in records)
    if not records:
        return notes
    lines = (getattr(exe, "source_text", None) or "").split("\n")
    saved_hook, table.on_change = table.on_change, None  # one save at the end, not per add
    try:
        for rec in records:
            kind = rec.get("kind")
            cond = rec.get("condition") if isinstance(rec.get("condition"), str) else None
            enabled = rec.get("enabled", True) is not False
            try:
                if kind == "line":
                    line = find_line(lines, rec)
                    if line is None:
                        notes.append(_("dropped the breakpoint on line {line}: `{text}` is no "
                                       "longer in the file").format(line=rec.get("line"),
                                                                    text=rec.get("text", "")))
                        continue
                    spec = str(line)
                    if line != rec.get("line"):
                        notes.append(_("breakpoint on line {old} moved to line {new}, where its "
                                       "line now is").format(old=rec.get("line"), new=line))
                elif kind in ("instruction", "function"):
                    loc = _find_instruction(exe, rec)
                    if loc is None:
                        notes.append(_("dropped the breakpoint {spec}: the instruction is "
                                       "gone").format(spec=rec.get("spec")))
                        continue
                    fi, pc = loc
                    spec = (f"@{exe.functions[fi].name}" if kind == "function"
                            else f"@{exe.functions[fi].name}:{pc}")
                elif kind in ("opcode", "kernel"):
                    spec = str(rec.get("spec", ""))
                else:
                    continue
                bp = table.add(spec, cond, enabled=enabled)
                if synced is not None:
                    synced.update((_key(r), r) for r in breakpoint_records([bp], exe))
                if bp.condition and not bp.enabled:
                    note = _("restored breakpoint {n} at {where} if {condition} (disabled)")
                elif bp.condition:
                    note = _("restored breakpoint {n} at {where} if {condition}")
                elif not bp.enabled:
                    note = _("restored breakpoint {n} at {where} (disabled)")
                else:
                    note = _("restored breakpoint {n} at {where}")
                notes.append(note.format(n=bp.id, where=bp.where(exe), condition=bp.condition))
            except BreakpointError as exc:
                notes.append(_("dropped the breakpoint {spec}: {why}").format(
                    spec=rec.get("spec"), why=exc))
            except RecursionError:
                notes.append(_("skipped the breakpoint {spec} saved in {path}: its condition is "
                               "nested too deeply to restore").format(
                                   spec=rec.get("spec"),
                                   path=breakpoint_file(program_path, config_dir)))
    finally:
        table.on_change = saved_hook
    return notes


__all__ = ["config_root", "breakpoint_file", "save_breakpoints", "restore_breakpoints",
           "load_records", "find_line", "breakpoint_records"]
