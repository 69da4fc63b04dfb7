"""ONNX's backend node tests on rvmdbg: each case imported, checked, compiled, run on the VM and
compared with its expected outputs at the tolerances TVM's frontend tests used.

`cases()` collects `onnx.backend.test.case.node.collect_testcases(None)` (generated in memory),
`in_scope(case)` says whether a case is in the default domain with tensor inputs and outputs
of dtypes Relay has, `run_case(case) -> Outcome`, `report_text(outcomes)` is
`docs/onnx-support.md`, `listed_failures(text)` reads the cases that document lists as failing.
"""
from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass

import numpy as np

from rvmdbg.onnx.names import dtype_name

DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass
class Outcome:
    name: str
    in_scope: bool
    passed: bool
    reason: str = ""        # why it failed
    seconds: float = 0.0
    bound: tuple = ()       # graph inputs bound as constants (values needed at import)
    scope: str = ""         # why it is out of scope (empty in scope)
    sequence: bool = False  # a sequence-typed case (graph inputs/outputs include sequences)


def cases() -> list:
    """The backend node test cases of the installed `onnx` package, by name."""
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            found = collect_testcases(None)
    return sorted(found, key=lambda c: c.name)


def tolerance(name: str) -> float:
    """TVM's frontend tests: 1e-5, 1e-4 for RoiAlign, bicubic and SoftmaxCrossEntropy, 1e-3
    for DFT."""
    lname = name.lower()
    if "dft" in lname:
        return 1e-3
    if "roialign" in lname or "bicubic" in lname or "_sce_" in lname:
        return 1e-4
    return 1e-5


def _value_type_ok(vi) -> str | None:
    """None when a graph input/output is a tensor of a Relay dtype, else why not."""
    kind = vi.type.WhichOneof("value")
    if kind != "tensor_type":
        return f"{vi.name} is a {kind.replace('_type', '') if kind else 'untyped value'}"
    if dtype_name(vi.type.tensor_type.elem_type) is None:
        import onnx
        return (f"{vi.name} has dtype "
                f"{onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type).lower()}")
    return None


def scope_reason(case) -> str | None:
    """None for a case in scope, else why it is out of scope."""
    g = case.model.graph
    for node in g.node:
        if node.domain not in DEFAULT_DOMAINS:
            return f"domain {node.domain}"
    for vi in list(g.input) + list(g.output):
        why = _value_type_ok(vi)
        if why is not None:
            return why
    return None


def in_scope(case) -> bool:
    return scope_reason(case) is None


def is_sequence_case(case) -> bool:
    """A default-domain case whose graph inputs/outputs include a sequence of tensors (and
    are otherwise tensors) of Relay dtypes: reported in a row of its own."""
    g = case.model.graph
    if any(n.domain not in DEFAULT_DOMAINS for n in g.node):
        return False
    seen = False
    for vi in list(g.input) + list(g.output):
        if vi.type.HasField("sequence_type"):
            elem = vi.type.sequence_type.elem_type
            if not elem.HasField("tensor_type") or dtype_name(
                    elem.tensor_type.elem_type) is None:
                return False
            seen = True
        elif _value_type_ok(vi) is not None:
            return False
    return seen


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(name: str, got, expected) -> str | None:
    """None when `got` matches `expected` (shape, dtype and values at the case's tolerance)."""
    if not isinstance(expected, np.ndarray):
        return f"expected a {type(expected).__name__} output"
    got = np.asarray(got)
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    tol = tolerance(name)
    if expected.dtype == np.bool_ or expected.dtype.kind in "iu":
        if not np.array_equal(got, expected):
            bad = int(np.sum(got != expected))
            return f"{bad} of {expected.size} elements differ"
        return None
    with np.errstate(all="ignore"):
        close = np.isclose(got, expected, rtol=tol, atol=tol, equal_nan=True)
    if not close.all():
        bad = int(np.sum(~close))
        diff = np.nanmax(np.abs(got.astype("float64") - expected.astype("float64")))
        return f"{bad} of {expected.size} elements differ (max abs diff {diff:.3g})"
    return None


def _outputs(value) -> list:
    from rvmdbg.values import ADTValue
    if isinstance(value, ADTValue) and value.is_tuple:
        out = []
        for f in value.fields:
            out.extend(_outputs(f))
        return out
    return [value]


def _arg(v):
    """A data set's input as the VM takes it: a sequence (a list) is a tuple of tensors."""
    if isinstance(v, list):
        from rvmdbg.values import make_tuple
        return make_tuple(tuple(np.asarray(_array(x)) for x in v))
    return v


def _grouped(value, outputs) -> list:
    """@main's result as one value per graph output: a sequence output stays a tuple."""
    from rvmdbg.values import ADTValue
    if len(outputs) == 1:
        return [value]
    if isinstance(value, ADTValue) and value.is_tuple and len(value.fields) == len(outputs):
        return list(value.fields)
    return _outputs(value)


def compare_value(name: str, got, expected) -> str | None:
    """`compare`, and for a sequence (an expected list) element by element."""
    from rvmdbg.values import ADTValue, make_tuple
    if isinstance(expected, list):
        from rvmdbg.onnx.seqlist import list_items
        items = list_items(got)
        if items is not None:  # a sequence whose length was known only at run time
            got = make_tuple(items)
        if not (isinstance(got, ADTValue) and got.is_tuple):
            return f"a {type(got).__name__}, expected a sequence"
        if len(got.fields) != len(expected):
            return f"a sequence of {len(got.fields)}, expected {len(expected)}"
        for k, (a, b) in enumerate(zip(got.fields, expected)):
            why = compare(name, a, _array(b))
            if why is not None:
                return f"element {k}: {why}"
        return None
    if isinstance(got, ADTValue) and got.is_tuple and len(got.fields) == 1:
        got = got.fields[0]
    return compare(name, got, expected)


def _array(v):
    """A data set's value as an ndarray (they come as arrays, NumPy scalars or TensorProtos);
    sequences and optionals stay as they are."""
    if isinstance(v, np.ndarray):
        return v
    if isinstance(v, np.generic):
        return np.asarray(v)
    if hasattr(v, "raw_data") and hasattr(v, "dims"):
        from onnx import numpy_helper
        return numpy_helper.to_array(v)
    return v


def run_case(case) -> Outcome:
    """Import, check, compile, run on the VM and compare every data set of one case."""
    from rvmdbg.onnx import import_model
    from rvmdbg.onnx.errors import NeedsValue
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine

    why_out = scope_reason(case)
    seq = is_sequence_case(case)
    start = time.perf_counter()
    stage = "import"
    bound: list = []
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            names = [vi.name for vi in case.model.graph.input]
            first = dict(zip(names, (_array(v) for v in case.data_sets[0][0])))
            # a sequence input is a tuple of tensors: its length and element shapes are
            # those of the first data set's list
            shapes = {n: [np.shape(x) for x in v] for n, v in first.items()
                      if isinstance(v, list)}
            while True:
                try:
                    imp = import_model(case.model, shapes=shapes,
                                       bind={n: first[n] for n in bound})
                    break
                except NeedsValue as e:
                    # a value Relay takes as an attribute comes from a graph input: bind
                    # exactly the inputs it depends on, as TVM's bind_params_by_name would
                    more = [n for n in e.inputs if n in first and n not in bound]
                    if not more:
                        raise
                    bound.extend(more)
            stage = "check"
            mod = check_module(imp.module)
            stage = "compile"
            exe = compile_module(mod)
            stage = "run"
            for inputs, expected in case.data_sets:
                feeds = dict(zip(names, (_array(v) for v in inputs)))
                args = [_arg(feeds[n]) for n in imp.inputs]
                expected = [_array(v) for v in expected]
                value = VirtualMachine(exe).invoke("main", args)
                outs = _grouped(value, case.model.graph.output)
                if len(outs) != len(expected):
                    raise AssertionError(f"{len(outs)} outputs, expected {len(expected)}")
                for i, (got, exp) in enumerate(zip(outs, expected)):
                    why = compare_value(case.name, got, exp)
                    if why is not None:
                        raise AssertionError(f"output {i}: {why}")
    except AssertionError as e:
        return Outcome(case.name, why_out is None, False, _one_line(f"wrong result: {e}"),
                       time.perf_counter() - start, tuple(bound), why_out or "", seq)
    except Exception as e:  # every failure is recorded, with its stage
        msg = getattr(e, "message", None) or str(e) or type(e).__name__
        return Outcome(case.name, why_out is None, False,
                       _one_line(f"{stage}: {msg}"), time.perf_counter() - start,
                       tuple(bound), why_out or "", seq)
    return Outcome(case.name, why_out is None, True, "", time.perf_counter() - start,
                   tuple(bound), why_out or "", seq)


def report_text(outcomes: list, onnx_version: str) -> str:
    """docs/onnx-support.md: counts, then every failing case with its reason."""
    from rvmdbg.onnx.registry import supported_ops
    inside = [o for o in outcomes if o.in_scope]
    outside = [o for o in outcomes if not o.in_scope]
    ip = sum(o.passed for o in inside)
    op = sum(o.passed for o in outside)
    seqs = [o for o in outside if o.sequence]
    sp = sum(o.passed for o in seqs)
    pct = 100.0 * ip / len(inside) if inside else 0.0
    ops = supported_ops()
    lines = [
        "# ONNX support",
        "",
        "Generated by `python3 scripts/onnx_support.py`; do not edit by hand. "
        f"The cases are ONNX's backend node tests (`onnx.backend.test.case.node."
        f"collect_testcases`, onnx {onnx_version}), each imported with `rvmdbg.onnx`, "
        "type-checked, compiled and run on rvmdbg's VM, its outputs compared with the "
        "expected ones (same shape, same dtype, values within rtol = atol = 1e-5; 1e-4 for "
        "RoiAlign, bicubic and SoftmaxCrossEntropy (`_sce_`), 1e-3 for DFT, as TVM's frontend "
        "tests used). `tests/onnx/test_onnx_conformance.py` fails when a case listed below "
        "passes or a case not listed fails.",
        "",
        "| cases | total | pass | fail |",
        "|---|---:|---:|---:|",
        f"| in scope: default domain, tensor inputs and outputs of dtypes Relay has | "
        f"{len(inside)} | {ip} ({pct:.1f}%) | {len(inside) - ip} |",
        f"| out of scope | {len(outside)} | {op} | {len(outside) - op} |",
        f"| of which sequence-typed: default domain, sequence inputs or outputs of tensors "
        f"(a sequence is a Relay tuple) | {len(seqs)} | {sp} | {len(seqs) - sp} |",
        f"| all | {len(outcomes)} | {ip + op} | {len(outcomes) - ip - op} |",
        "",
        f"{sum(1 for o in inside if o.passed and o.bound)} of the passing cases in scope read "
        "a value Relay takes as an attribute (a reduction's axes, a pad width, a size) from a "
        "graph input: the harness binds exactly those inputs as constants (TVM's "
        "`bind_params_by_name`), and they are marked *bound* below. TVM's converters refused "
        "these (\"Dynamic Reduce is not supported yet\").",
        "",
        f"Converters: {len(ops)} ONNX op types "
        f"({', '.join(op_type for _d, op_type, _s in ops if not _d)}).",
        "",
        "## Failing cases in scope",
        "",
        "| case | reason |",
        "|---|---|",
    ]
    for o in inside:
        if not o.passed:
            lines.append(f"| `{o.name}` | {o.reason} |")
    lines += ["", "## Passing cases with bound inputs", "",
              "| case | inputs bound as constants |", "|---|---|"]
    for o in outcomes:
        if o.passed and o.bound:
            lines.append(f"| {o.name} | {', '.join(o.bound)} |")
    lines += ["", "## Failing cases out of scope", "",
              "| case | out of scope because | reason |", "|---|---|---|"]
    for o in outside:
        if not o.passed:
            lines.append(f"| `{o.name}` | {_one_line(o.scope)} | {o.reason} |")
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\| `(test_[^`]+)` \|")


def listed_failures(text: str) -> set:
    """The case names docs/onnx-support.md lists as failing."""
    return {m.group(1) for line in text.splitlines() if (m := _ROW.match(line))}
