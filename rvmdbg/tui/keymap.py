"""Rebinding the screen's keys: a small text file of `binding-id = key, key` lines.

The file is `$XDG_CONFIG_HOME/rvmdbg/keys.conf` (or the one `rvmdbg PROGRAM --keys FILE`
names). Each line gives one binding of the debugger screen, one of its panes or the teaching
views new keys, replacing its defaults; `#` starts a comment. `rvmdbg keys` prints every binding id with its
default keys, ready to copy:

    # step one instruction, into calls
    step = s, f11
    break = space            # the listing's and the source's `b`

Keys are Textual key names (`f5`, `ctrl+r`, `shift+tab`, `pageup`, `question_mark`) or single
characters (`?` means `question_mark`, `S` is a capital S). A binding id shared by several
panes or by the debugger and the views (`break`, `watch`, `step`, `view-flow`) rebinds it in
all of them. Two bindings that apply together (on one screen, or in a pane or view and its
screen) may not share a key. Ctrl+C always interrupts and cannot be rebound.

Mistakes are reported like a program's: `FILE:LINE:COL: error: ...` with the line, a caret
under the spot and what was expected; the screen does not open.
"""
from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from textual.keys import KEY_NAME_REPLACEMENTS, Keys

from rvmdbg.fileio import FileRefused, read_text
from rvmdbg.relay.diagnostics import RelayError, Source, Span
from rvmdbg.i18n import N_, _

KEYS_FILE = "keys.conf"
_MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")


class KeymapError(RelayError):
    """A located mistake in a keys file (formatted as the front end's errors are)."""

    kind = "keys"


@dataclass(frozen=True)
class BindingInfo:
    id: str
    keys: tuple[str, ...]   # the default keys
    does: str
    where: str              # "screen" or the pane's name


def _char_name(c: str) -> str | None:
    """Textual's name of a one-character key: letters and digits are themselves, `/` is
    `slash`, `?` is `question_mark` (its Unicode name, with Textual's replacements); None
    for a character no key types (control characters, unnamed code points)."""
    if c.isalnum():
        return c
    if not c.isprintable() or c.isspace():
        return None
    try:
        name = unicodedata.name(c)
    except ValueError:
        return None
    name = name.lower().replace(" ", "_").replace("-", "_")
    return KEY_NAME_REPLACEMENTS.get(name, name)


def _known_names() -> frozenset:
    names = {k.value.split("+")[-1] for k in Keys}
    names.update(_char_name(chr(c)) for c in range(33, 127))
    names.discard(None)
    names.add("space")
    return frozenset(names)


_NAMES = _known_names()


def canonical_key(text: str) -> str | None:
    """`text` as Textual's key string (`?` -> `question_mark`, `Ctrl+R` -> `ctrl+r`), or None
    when it names no key."""
    text = text.strip()
    if not text:
        return None
    if len(text) == 1:
        return _char_name(text)
    *mods, name = text.split("+")   # the key `+` itself is written plus
    mods = [m.strip().lower() for m in mods]
    if any(m not in _MODIFIERS for m in mods) or len(set(mods)) != len(mods):
        return None
    name = name.strip()
    if len(name) == 1:
        # with a modifier a letter is lower case (ctrl+r), alone it is itself (S is Shift+s)
        name = _char_name(name.lower() if mods else name)
        if name is None:
            return None
    elif name.lower() in _NAMES:
        name = name.lower()
    else:
        return None
    return "+".join([*mods, name])


def _owners() -> list[tuple[type, str, str | None]]:
    """(class, name, the screen it sits on) of the debugger screen, the teaching views'
    screen, and the panes and views on them: whose bindings a keys file may change."""
    from rvmdbg.tui.breakpoints import BreakpointPane
    from rvmdbg.tui.listing import BytecodeListing
    from rvmdbg.tui.registers import RegisterPane
    from rvmdbg.tui.screen import DebuggerScreen
    from rvmdbg.tui.source_view import SourceView
    from rvmdbg.tui.stack import CallStackPane
    from rvmdbg.tui.views.base import TeachingScreen
    from rvmdbg.tui.views.control_flow import ControlFlowView
    from rvmdbg.tui.views.executors import ExecutorsView
    from rvmdbg.tui.views.flow import FlowView
    # the names are shown in messages (`_(name)`): marked for the catalog
    return [(DebuggerScreen, "screen", None), (BytecodeListing, N_("bytecode pane"), "screen"),
            (SourceView, N_("source pane"), "screen"),
            (RegisterPane, N_("registers pane"), "screen"),
            (CallStackPane, N_("stack pane"), "screen"),
            (BreakpointPane, N_("breakpoints pane"), "screen"),
            (TeachingScreen, N_("teaching views"), None),
            (FlowView, N_("flow view"), "teaching views"),
            (ExecutorsView, N_("executors view"), "teaching views"),
            (ControlFlowView, N_("control-flow view"), "teaching views")]


def _chain(cls) -> list:
    """Every binding rvmdbg gives `cls`, its base classes' first (Textual's own bindings of
    its base classes, such as Tab to focus or the arrows to scroll, are ones rvmdbg's
    replace)."""
    out = []
    for c in reversed(cls.__mro__):
        if c.__module__.startswith("rvmdbg."):
            out += c.__dict__.get("BINDINGS", [])
    return out


def bindings() -> list[BindingInfo]:
    """Every binding a keys file may change, by owner (the screen first, then its panes)."""
    out = []
    for owner, where, _on in _owners():
        for b in owner.BINDINGS:
            if b.id:
                keys = tuple(k.strip() for k in b.key.split(","))
                out.append(BindingInfo(b.id, keys, b.tooltip or b.description, where))
    return out


def template() -> str:
    """A keys file holding every binding with its default keys (what `rvmdbg keys` prints)."""
    lines = ["# rvmdbg keys: `binding-id = key, key` per line; save as "
             f"$XDG_CONFIG_HOME/rvmdbg/{KEYS_FILE}",
             "# and keep only the lines you change. Ctrl+C always interrupts."]
    seen: set = set()
    where = None
    for info in bindings():
        if info.id in seen:
            continue
        seen.add(info.id)
        if info.where != where:
            where = info.where
            lines += ["", f"# --- {where}"]
        lines.append(f"# {_(info.does)}")
        lines.append(f"{info.id} = {', '.join(info.keys)}")
    return "\n".join(lines) + "\n"


# a keys file has a line per binding: a megabyte is far beyond any real one
KEYS_LIMIT = 1 << 20


def default_path(config_dir=None) -> Path:
    from rvmdbg.debug.config import config_root
    return config_root(config_dir) / KEYS_FILE


def parse_keymap(text: str, filename: str, notes: list[str] | None = None) -> dict[str, str]:
    """{binding id: "key,key"} from a keys file's text; raises KeymapError. With `notes`, a
    line in error is left out instead, its message appended to `notes` (the rest is kept)."""
    source = Source(filename, text)
    known = bindings()
    ids = {b.id for b in known}
    keymap: dict[str, str] = {}
    where: dict[str, int] = {}

    def fail(line_no, col, width, message, hint=None):
        raise KeymapError(message, Span(line_no, col, line_no, col + max(1, width), filename),
                          hint, source)

    for line_no, raw in enumerate(text.split("\n"), start=1):
        if notes is None:
            _parse_line(raw, line_no, ids, keymap, where, fail)
            continue
        try:
            _parse_line(raw, line_no, ids, keymap, where, fail)
        except KeymapError as exc:
            notes.append(exc.format())
    while True:
        try:
            _check_clashes(keymap, where, fail)
            return keymap
        except KeymapError as exc:
            if notes is None:
                raise
            notes.append(exc.format())
            # the binding changed on the clashing line loses its change
            changed = next(b for b, n in where.items() if n == exc.span.line)
            del keymap[changed], where[changed]


def _parse_line(raw: str, line_no: int, ids: set, keymap: dict, where: dict, fail) -> None:
    """One line of a keys file into `keymap` (a comment or blank line adds nothing)."""
    line = raw.split("#", 1)[0].rstrip()
    if not line.strip():
        return
    indent = len(line) - len(line.lstrip())
    if "=" not in line:
        fail(line_no, indent + 1, len(line) - indent, _("expected `binding-id = key, key`"),
             _("run `rvmdbg keys` to see every binding id with its keys"))
    name, _eq, value = line.partition("=")
    binding_id = name.strip()
    if binding_id not in ids:
        fail(line_no, indent + 1, len(binding_id) or 1,
             _("unknown binding `{id}`").format(id=binding_id) if binding_id
             else _("expected a binding id"),
             _("binding ids: {ids}").format(ids=", ".join(sorted(ids))))
    if binding_id in where:
        fail(line_no, indent + 1, len(binding_id),
             _("`{id}` was given keys already on line {line}").format(id=binding_id,
                                                                     line=where[binding_id]))
    keys = []
    col = len(name) + 2
    for part in value.split(","):
        start = col + (len(part) - len(part.lstrip()))
        key = canonical_key(part)
        if key is None:
            shown = part.strip()
            fail(line_no, start, len(shown) or 1,
                 _("`{key}` is not a key").format(key=shown) if shown else _("expected a key"),
                 _("keys are single characters or Textual key names such as f5, ctrl+r, "
                   "shift+tab, pageup, escape, space"))
        if key in keys:
            fail(line_no, start, len(part.strip()),
                 _("`{key}` is listed twice").format(key=part.strip()))
        keys.append(key)
        col += len(part) + 1
    keymap[binding_id] = ",".join(keys)
    where[binding_id] = line_no


def _check_clashes(keymap: dict, where: dict, fail) -> None:
    """A key changed by the keymap may not also be the key of another binding where both
    apply: on the screen, or in a pane (its own bindings and the screen's)."""
    screens = {name: _chain(cls) for cls, name, on in _owners() if on is None}
    spaces = [(name, screens[on] + _chain(cls) if on else screens[name])
              for cls, name, on in _owners()]
    for space, chain in spaces:
        occupied: dict[str, str] = {}
        for b in chain:
            label = b.id or b.action
            if b.id in keymap:
                keys = keymap[b.id].split(",")
            else:
                keys = [canonical_key(k) or k.strip() for k in b.key.split(",")]
            for key in keys:
                other = occupied.get(key)
                if other is not None and other != label and (b.id in keymap or other in keymap):
                    changed = b.id if b.id in keymap else other
                    if space == "screen":
                        message = _("`{key}` would be the key of both `{a}` and `{b}` (on the "
                                    "screen)").format(key=key, a=other, b=label)
                    else:
                        message = _("`{key}` would be the key of both `{a}` and `{b}` (in the "
                                    "{space})").format(key=key, a=other, b=label, space=_(space))
                    fail(where[changed], 1, len(changed), message,
                         _("give one of them another key"))
                occupied[key] = label


def load_keymap(path: str | os.PathLike | None = None, config_dir=None,
                notes: list[str] | None = None) -> dict[str, str]:
    """The keymap of `path`, or of the default keys file when there is one ({} otherwise).
    A file named with --keys is checked strictly: KeymapError (unreadable included). The
    default file is the user's standing setup: with `notes`, what is wrong in it (a line, or
    the whole file when it cannot be read) becomes a note and the rest is kept, so a damaged
    file never locks the user out of the screen."""
    explicit = path is not None
    file = Path(path) if explicit else default_path(config_dir)
    lenient = notes if not explicit else None
    try:
        text = read_text(file, KEYS_LIMIT, N_("keys file"))
    except FileNotFoundError:
        if explicit:
            raise KeymapError(_("no such keys file"), source=Source(str(file), "")) from None
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.reason if isinstance(exc, FileRefused) else (
            _("not UTF-8 text") if isinstance(exc, UnicodeDecodeError) else
            (exc.strerror or str(exc)))
        if lenient is not None:
            lenient.append(_("{file}: cannot read the keys file ({reason}); the default keys "
                             "are used").format(file=file, reason=reason))
            return {}
        raise KeymapError(_("cannot read the keys file: {reason}").format(reason=reason),
                          source=Source(str(file), "")) from None
    return parse_keymap(text, str(file), lenient)


__all__ = ["KeymapError", "BindingInfo", "bindings", "canonical_key", "default_path",
           "load_keymap", "parse_keymap", "template", "KEYS_FILE"]
