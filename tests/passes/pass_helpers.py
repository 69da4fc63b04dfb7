"""Shared helpers for the pass tests: load and type-check text, run it, walk the AST."""
from __future__ import annotations

import numpy as np

from rvmdbg.relay.ast import (Call, Constant, ConstructorRef, Function, GlobalVar, Module, OpRef,
                              Var, children)
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import ADTValue, values_equal

HEADER = '#[version = "0.0.5"]\n'


def load(text: str, prelude: bool = True) -> Module:
    """Parse (with the prelude), type-check."""
    if not text.lstrip().startswith("#["):
        text = HEADER + text
    return check_module(load_module(text, "<test>", prelude=prelude))


def run(mod: Module, *args, entry: str = "main"):
    """The reference interpreter's result for entry(args) (tensors as NumPy arrays)."""
    values = [a if isinstance(a, ADTValue) else np.asarray(a) for a in args]
    return Interpreter(mod).run(entry, values)


def i32(v: int) -> np.ndarray:
    return np.array(v, dtype="int32")


def f32(v) -> np.ndarray:
    return np.array(v, dtype="float32")


def same(a, b) -> bool:
    return values_equal(a, b)


def nodes(e, enter_primitives: bool = True) -> list:
    """Every node reachable from e (once each)."""
    out, seen, stack = [], set(), [e]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if enter_primitives or not (isinstance(n, Function) and n.is_primitive):
            stack.extend(children(n))
    return out


def module_nodes(mod: Module) -> list:
    out = []
    for fn in mod.functions.values():
        out.extend(nodes(fn))
    return out


def primitive_functions(mod: Module) -> list:
    return [n for n in module_nodes(mod) if isinstance(n, Function) and n.is_primitive]


def op_calls_outside_primitives(mod: Module) -> list:
    """Operator calls that are not inside a primitive function."""
    found = []
    for fn in mod.functions.values():
        seen, stack = set(), [fn]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, Function) and n.is_primitive:
                continue
            if isinstance(n, Call) and isinstance(n.op, OpRef):
                found.append(n)
            stack.extend(children(n))
    return found


ATOMS = (Var, GlobalVar, Constant, ConstructorRef, OpRef)
