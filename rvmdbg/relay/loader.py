"""Loading programs: parse with the prelude visible, then merge in the prelude definitions the
program reaches, and read the default arguments from a program's `// args:` comment.

The program's own definitions win: where it defines a type, constructor or function the prelude
also has, its own is used. A prelude type that the program redefines (or whose constructors it
redefines) is dropped, and so is every prelude type or function that depends on a dropped one;
a program that still reaches one of those gets an error at its use saying why.
"""
from __future__ import annotations

from pathlib import Path

from rvmdbg.fileio import FileRefused, read_text

from rvmdbg.relay.ast import Module
from rvmdbg.relay.diagnostics import NameResolutionError, RelayError, Source
from rvmdbg.relay.parser import parse, parse_with_info
from rvmdbg.i18n import N_, _

PRELUDE_PATH = Path(__file__).with_name("prelude.relay")


def prelude_text() -> str | None:
    """The prelude's source, or None when the package has none."""
    try:
        return PRELUDE_PATH.read_text(encoding="utf-8")
    except OSError:
        return None


def load_module(text: str, filename: str = "<input>", prelude: bool = True,
                missing_meta=None) -> Module:
    """Parse a program; with `prelude`, its uses of prelude names resolve and the prelude
    definitions it reaches (transitively) are added to the module. `missing_meta` (a
    `metadata.MissingConstants`: --meta-inputs, --meta-random) says what a
    `meta[relay.Constant][i]` is in a file without its #[metadata] section."""
    ptext = prelude_text() if prelude else None
    if ptext is None:
        return parse(text, filename, missing_meta=missing_meta)
    # parsed afresh each time: the type checker annotates nodes in place
    pmod, pinfo = parse_with_info(ptext, str(PRELUDE_PATH))
    mod, info = parse_with_info(text, filename, env=pmod, missing_meta=missing_meta)
    return _merge_prelude(mod, info, pmod, pinfo)


def read_program(path) -> str:
    """A program file's text (a byte-order mark is not source); a file that cannot be read,
    is no regular file (a FIFO, a device) or is too big is a RelayError naming it."""
    name = str(path)
    src = Source(name, "")
    try:
        return read_text(path, what=N_("program"))
    except FileNotFoundError:
        raise RelayError(_("file not found"), None, None, src) from None
    except FileRefused as e:
        raise RelayError(_("cannot read the file: {reason}").format(reason=e.reason), None, None,
                         src) from None
    except UnicodeDecodeError:
        raise RelayError(_("cannot read the file: it is not UTF-8 text"), None, None, src) from None
    except OSError as e:
        raise RelayError(_("cannot read the file: {reason}").format(reason=e.strerror or e), None,
                         None, src) from None


def load_file(path, prelude: bool = True, missing_meta=None) -> Module:
    """Read and load a `.relay` file; an unreadable file is a RelayError with no span."""
    return load_module(read_program(path), str(path), prelude, missing_meta)


def opening_comments(text: str):
    """The bodies of the `//` lines of the program's opening comment block (after the
    `#[version ...]` header, or TVM 0.6's `v0.0.4`), in order."""
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#[") or line == "v0.0.4":
            continue
        if not line.startswith("//"):
            return
        yield line[2:].strip()


def program_default_args(text: str) -> list[str] | None:
    """The arguments of the `// args: A B ...` comment in the program's opening comment block,
    split at spaces outside brackets and quotes; None when there is no such line."""
    for body in opening_comments(text):
        if body.startswith("args:"):
            return split_top_level(body[len("args:"):])
    return None


def split_top_level(text: str) -> list[str]:
    """Split at whitespace that is outside (), [], {} and double quotes."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    in_string = False
    for c in text:
        if in_string:
            cur.append(c)
            if c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c.isspace() and depth == 0:
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        cur.append(c)
    if cur:
        out.append("".join(cur))
    return out


def _merge_prelude(mod: Module, info, pmod: Module, pinfo) -> Module:
    own_types, own_ctors, own_funcs = mod.type_defs, mod.constructors, mod.functions

    # Prelude definitions unusable because the program redefined something they rest on.
    dropped: dict[tuple, str] = {}  # ("type"|"global", name) -> why
    for tname, td in pmod.type_defs.items():
        if tname in own_types:
            dropped[("type", tname)] = _("this program defines its own type {name}").format(
                name=tname)
        else:
            clash = [c.name for c in td.constructors if c.name in own_ctors]
            if clash:
                dropped[("type", tname)] = _("this program defines its own constructor "
                                             "{name}").format(name=clash[0])

    def dep_key(dep: tuple):
        """The definition a dependency names: constructors stand for their type."""
        kind, name = dep
        if kind == "ctor":
            c = pmod.constructors.get(name)
            return ("type", c.type_name) if c is not None else None
        return dep

    changed = True
    while changed:
        changed = False
        for key, deps in pinfo.deps.items():
            if key in dropped or (key[0] == "global" and key[1] in own_funcs):
                continue
            for dep in deps:
                d = dep_key(dep)
                if d is None or d == key:
                    continue
                if d[0] == "global" and d[1] in own_funcs:
                    continue  # calls the program's own definition by name, as TVM does
                if d in dropped:
                    if d[0] == "type":
                        why = _("it uses the prelude type {name}, and {reason}")
                    else:
                        why = _("it uses the prelude function {name}, and {reason}")
                    dropped[key] = why.format(name=("" if d[0] == "type" else "@") + d[1],
                                              reason=dropped[d])
                    changed = True
                    break

    # What the program reaches, transitively through prelude definitions.
    reached: set = set()
    work: list = []
    for use, span in info.env_uses.items():
        d = dep_key(use)
        if d is None:
            continue
        if d in dropped:
            if d[0] == "global":
                message = _("the prelude function {name} is not available here").format(
                    name="@" + use[1])
            elif use[0] == "ctor":
                message = _("the prelude type {name} (of type {type}) is not available here"
                            ).format(name=use[1], type=d[1])
            else:
                message = _("the prelude type {name} is not available here").format(
                    name=use[1])
            raise NameResolutionError(message, span, _("it is left out because {reason}").format(
                reason=dropped[d]), mod.source)
        if d not in reached:
            reached.add(d)
            work.append(d)
    while work:
        key = work.pop()
        for dep in pinfo.deps.get(key, ()):
            d = dep_key(dep)
            if d is None or d in reached:
                continue
            if d[0] == "global" and d[1] in own_funcs:
                continue
            if d[0] == "type" and d[1] in own_types:
                continue
            reached.add(d)
            work.append(d)

    out = Module(mod.source)
    out.warnings = list(mod.warnings)
    for tname, td in pmod.type_defs.items():
        if ("type", tname) in reached:
            out.type_defs[tname] = td
            for c in td.constructors:
                out.constructors[c.name] = c
    out.type_defs.update(own_types)
    out.constructors.update(own_ctors)
    for fname, f in pmod.functions.items():
        if ("global", fname) in reached:
            out.functions[fname] = f
    out.functions.update(own_funcs)
    return out
