"""Running one corpus program everywhere: its header, its arguments, and the three executors.

A corpus file opens with TVM's version line and a comment block of `// key: value` lines:
- `// source:` where the text was copied from (required);
- `// args:` the entry's arguments in the CLI syntax; without it they are generated from the
  entry's parameter types with a seed taken from the file name;
- `// entry:` the function to run when it is not `@main`;
- `// expect:` the `--json` result form (the V of `{"result": V}`) the source states.

`run_everywhere` checks, compiles and runs the program on the reference interpreter and the VM
(and on the graph executor when the entry is a static graph) and returns each result;
`agree` compares two of them, `matches_expected` one with the `// expect:` line.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rvmdbg.args import param_types, parse_program_args
from rvmdbg.relay.interpreter import Interpreter, call_with_deep_stack
from rvmdbg.relay.loader import load_module, opening_comments, split_top_level
from rvmdbg.relay.typecheck import check_module
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.values import ADTValue, RefCell, make_tuple, to_json

CORPUS_DIR = Path(__file__).resolve().parent / "tvm"


@dataclass
class Header:
    source: str | None = None
    args: list[str] | None = None
    entry: str = "main"
    expect: object = None
    has_expect: bool = False
    extra: dict = field(default_factory=dict)


def read_header(text: str) -> Header:
    """The `// key: value` lines of the opening comment block (after `#[version ...]`)."""
    h = Header()
    for body in opening_comments(text):
        key, sep, value = body.partition(":")
        if not sep or " " in key:
            continue  # a continuation line of a comment
        value = value.strip()
        if key == "source":
            h.source = value
        elif key == "args":
            h.args = split_top_level(value)
        elif key == "entry":
            h.entry = value.lstrip("@")
        elif key == "expect":
            h.expect, h.has_expect = json.loads(value), True
        else:
            h.extra[key] = value
    return h


def generated_value(t, rng: np.random.Generator, any_dim: int = 3):
    """A deterministic value of type t: normal floats, small ints, random bools; `?` dims get
    `any_dim`. Types with no generic value (ADTs, functions) need a `// args:` line."""
    if isinstance(t, TensorType):
        shape = tuple(any_dim if d is None else d for d in t.shape)
        if t.dtype.startswith(("float", "bfloat")):
            return rng.standard_normal(shape).astype(t.dtype)
        if t.dtype == "bool":
            return rng.random(shape) < 0.5
        if t.dtype.startswith("uint"):
            return rng.integers(0, 6, shape).astype(t.dtype)
        return rng.integers(-5, 6, shape).astype(t.dtype)
    if isinstance(t, TupleType):
        return make_tuple([generated_value(f, rng, any_dim) for f in t.fields])
    raise ValueError(f"no generated value for a parameter of type {t}; "
                     "give the file an `// args:` line")


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def program_args(mod, header: Header, name: str) -> list:
    if header.args is not None:
        return parse_program_args(mod, header.entry, header.args)
    rng = np.random.default_rng(seed_of(name))
    return [generated_value(t, rng) for t in param_types(mod.functions[header.entry])]


def agree(a, b) -> bool:
    """Two runtime values agree: tensors of one dtype and shape, floats within a float32
    tolerance (NaN equal to NaN), tuples and constructors field by field; two closures agree
    whatever their names (the interpreter and the VM name them differently)."""
    a, b = (np.asarray(v) if isinstance(v, np.generic) else v for v in (a, b))  # 0-d tensors
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "f":
            return bool(np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, ADTValue) or isinstance(b, ADTValue):
        return (isinstance(a, ADTValue) and isinstance(b, ADTValue) and a.con == b.con
                and len(a.fields) == len(b.fields)
                and all(agree(x, y) for x, y in zip(a.fields, b.fields)))
    if isinstance(a, RefCell) or isinstance(b, RefCell):
        return isinstance(a, RefCell) and isinstance(b, RefCell) and agree(a.value, b.value)
    return getattr(a, "name", None) is not None and getattr(b, "name", None) is not None


def matches_expected(expected, value) -> bool:
    """The value against a `// expect:` line (the --json form), floats within a tolerance."""
    from program_cases import matches
    return matches(expected, to_json(value), rel=1e-4, abs_tol=1e-5)


def run_everywhere(text: str, name: str, args: list | None = None, graph: bool = True) -> dict:
    """{executor: result value} for the interpreter, the VM and (when the entry is static)
    the graph executor, with `args` or the header's. Raises what the first failing stage
    raises."""
    from rvmdbg.graph import GraphExecutor, find_refusal, lower_to_graph
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine

    header = read_header(text)
    mod = check_module(load_module(text, name))
    if args is None:
        args = program_args(mod, header, name)
    entry = header.entry
    results = {"interp": call_with_deep_stack(lambda: Interpreter(mod).run(entry, list(args)))}
    exe = compile_module(mod)
    results["vm"] = call_with_deep_stack(lambda: VirtualMachine(exe).invoke(entry, list(args)))
    if graph and find_refusal(mod, entry) is None:
        results["graph"] = GraphExecutor(lower_to_graph(mod, entry)).run(list(args))
    return results
