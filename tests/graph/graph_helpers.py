"""Shared helpers of the graph executor tests: load, lower, run on every engine, compare."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rvmdbg.args import parse_program_args
from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_file, load_module, program_default_args
from rvmdbg.relay.typecheck import check_module
from rvmdbg.values import ADTValue

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = ROOT / "programs"
EXAMPLES = ROOT / "tests" / "examples"
GRAPH_PROGRAMS = HERE / "programs"
HEADER = '#[version = "0.0.5"]\n'


def load_path(path) -> tuple:
    """(checked module, default arguments) of a program file."""
    path = Path(path)
    mod = check_module(load_file(str(path)))
    texts = program_default_args(path.read_text()) or []
    return mod, parse_program_args(mod, "main", texts)


def load_text(body: str, name: str = "prog.relay"):
    return check_module(load_module(HEADER + body.lstrip("\n"), name))


def run_graph(mod, args, entry: str = "main"):
    graph = lower_to_graph(mod, entry)
    return GraphExecutor(graph, plan_memory(graph)).run(args)


def run_interp(mod, args, entry: str = "main"):
    return Interpreter(mod).run(entry, args)


def run_vm(mod, args, entry: str = "main"):
    """The VM's result, or None while the VM compiler cannot compile the module."""
    try:
        from rvmdbg.vm.compiler import compile_module
        from rvmdbg.vm.machine import VirtualMachine
        exe = compile_module(mod)
    except Exception:  # the VM is written by another helper at the same time
        return None
    return VirtualMachine(exe).invoke(entry, args)


def same_value(a, b, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Equal structure, dtypes and shapes; float data within float32 tolerance."""
    if isinstance(a, ADTValue) or isinstance(b, ADTValue):
        return (isinstance(a, ADTValue) and isinstance(b, ADTValue) and a.con == b.con
                and len(a.fields) == len(b.fields)
                and all(same_value(x, y, rtol, atol) for x, y in zip(a.fields, b.fields)))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(a, b))
