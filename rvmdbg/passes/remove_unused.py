"""RemoveUnusedFunctions: drop the globals the entry function cannot reach, as TVM's VM does.

TVM runs it first in the VM compiler's pipeline (and again before ManifestAlloc) with the
entry `main`: a global stays when `@main` mentions it, directly or through globals it keeps
(a call, or a use as a value). A module without the entry keeps everything (a library of
functions, or a program run with `--entry` naming another function passes that entry too).
"""
from __future__ import annotations

from rvmdbg.relay.ast import Module, referenced_globals

ENTRIES = ("main",)


def reachable_functions(mod: Module, entries=ENTRIES) -> set:
    """The globals reachable from the entries that exist in mod."""
    reached = {e for e in entries if e in mod.functions}
    stack = list(reached)
    while stack:
        for name in referenced_globals(mod.functions[stack.pop()]):
            if name not in reached and name in mod.functions:
                reached.add(name)
                stack.append(name)
    return reached


def remove_unused_functions(mod: Module, entries=ENTRIES) -> Module:
    """mod without the globals its entries do not reach (mod itself when none is dropped)."""
    reached = reachable_functions(mod, entries)
    if not reached or len(reached) == len(mod.functions):
        return mod
    out = mod.copy_shallow()
    out.functions = {n: f for n, f in mod.functions.items() if n in reached}
    out.warnings = list(mod.warnings)
    return out
