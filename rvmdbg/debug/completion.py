"""Tab completion for the command language: command names, `@function` names, `$registers`
of the selected frame, `op:` opcode names and the words `info` and `set logging` take.

`complete(interpreter, text)` looks at the word the cursor ends (the end of `text`) and
returns where that word starts and the words it could become, sorted.
"""
from __future__ import annotations

SUBCOMMANDS = {
    "info": ["breakpoints", "display", "frame", "history", "registers"],
    "i": ["breakpoints", "display", "frame", "history", "registers"],
    "set": ["logging"],
    "watch": ["change"],
    "help": [],
}
LOGGING_WORDS = ["enabled", "file", "off", "on"]


def _opcode_names() -> list[str]:
    from rvmdbg.vm import bytecode as bc
    names = []
    for obj in vars(bc).values():
        if isinstance(obj, type) and issubclass(obj, bc.Instruction) and obj is not bc.Instruction:
            names.append(getattr(obj, "name", obj.__name__))
    return sorted(set(names))


def complete(interpreter, text: str) -> tuple[int, list[str]]:
    start = len(text) - len(text.split(" ")[-1]) if text else 0
    word = text[start:]
    before = text[:start].split()
    session = interpreter.session
    if not before:
        return start, sorted(n for n in interpreter.command_names if n.startswith(word))
    if word.startswith("@"):
        names = session.exe.function_names()
        return start, sorted("@" + n for n in names if ("@" + n).startswith(word))
    prefix = getattr(session.exe, "register_prefix", "$")
    if word.startswith("$") or (prefix != "$" and word[:1] == prefix
                                  and (word[1:].isdigit() or word == prefix)):
        try:
            size = len(session.frame(interpreter.selected).registers)
        except Exception:
            return start, []
        # the program's own register names (`r3` on the MiniVM); `$3` completes to them too
        stem = prefix + word[1:]
        return start, [f"{prefix}{r}" for r in range(size) if f"{prefix}{r}".startswith(stem)]
    if before and before[0].lower() in ("break", "b", "br", "run-to"):
        packed = list(getattr(session.exe, "kernel_names", lambda: [])())
        # the Relax VM: the kernels and builtins its Calls name (`break matmul`)
        kernels = packed + [n for n in getattr(session.exe, "called_names", lambda: [])()
                            if n not in packed]
        if word.lower().startswith("kernel:"):
            return start, [f"kernel:{n}" for n in kernels
                           if f"kernel:{n}".lower().startswith(word.lower())]
        if word and "packedfunc[".startswith(word.lower()[:11]) and word[:1] in "Pp":
            return start, [f"PackedFunc[{i}]" for i in range(len(packed))
                           if f"PackedFunc[{i}]".lower().startswith(word.lower())]
        if word and not word.startswith(("@", "$", "op:")) and not word.isdigit():
            found = sorted(n for n in kernels if n.startswith(word))
            found += sorted(n[len("vm_mod_"):] for n in kernels
                            if n.startswith("vm_mod_" + word))
            if found or "kernel:".startswith(word.lower()):
                return start, (["kernel:"] if "kernel:".startswith(word.lower()) else []) + found
    if word.lower().startswith("op:"):
        return start, [f"op:{n}" for n in _opcode_names() if f"op:{n}".lower().startswith(word.lower())]
    if before[0].lower() == "set" and before[1:] == ["logging"]:
        return start, [w for w in LOGGING_WORDS if w.startswith(word)]
    if len(before) == 1 and before[0].lower() in SUBCOMMANDS:
        return start, [w for w in SUBCOMMANDS[before[0].lower()] if w.startswith(word)]
    return start, []


__all__ = ["complete"]
