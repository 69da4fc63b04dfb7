"""Real networks on rvmdbg: the models the `onnx` package ships with reference outputs, each
imported, checked, compiled and run on the VM, the interpreter and the graph executor.

The networks are the nine model-zoo networks of `onnx/backend/test/data/light` (weights as
`ConstantOfShape` nodes; an all-ones input of the graph input's shape, batch 1, gives the
shipped `light_*_output_0.pb`) and the folders of `pytorch-converted`, `pytorch-operator` and
`simple` (`model.onnx` with `test_data_set_0/{input,output}_*.pb`).

`networks() -> list[Network]`, `load(net) -> (model, feeds, expected)`, `run_network(net,
executors) -> NetOutcome` (per-executor times and the first failure with its stage),
`random_feeds(model, imp, seed)` for the `onnx.reference.ReferenceEvaluator` oracle,
`report_section(outcomes)` is the networks section of `docs/onnx-support.md` and
`listed_networks(text)` reads the networks it lists as failing.
"""
from __future__ import annotations

import os
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.onnx.conformance import _array, _one_line, _outputs

FOLDERS = ("pytorch-converted", "pytorch-operator", "simple")
EXECUTORS = ("vm", "interpreter", "graph")
TOLERANCE = dict(rtol=1e-5, atol=1e-5)      # TVM's frontend tests
# against onnx.reference on random inputs: float32 sums over thousands of terms in another order
ORACLE_TOLERANCE = dict(rtol=1e-4, atol=1e-4)


@dataclass(frozen=True)
class Network:
    name: str      # "light/squeezenet", "pytorch-converted/test_Conv2d", ...
    path: str      # the model file

    @property
    def light(self) -> bool:
        return self.name.startswith("light/")


@dataclass
class NetOutcome:
    name: str
    passed: bool
    reason: str = ""                            # the first failure, with its stage
    seconds: dict = field(default_factory=dict)  # "import+compile", "vm", "interpreter", ...
    ran: tuple = ()                             # executors that ran and matched
    skipped: dict = field(default_factory=dict)  # executor -> why it did not run (graph: dynamic)


def data_dir() -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def networks() -> list:
    """Every network the installed `onnx` package ships with reference outputs, by name."""
    root = data_dir()
    found = []
    light = os.path.join(root, "light")
    if os.path.isdir(light):
        for f in sorted(os.listdir(light)):
            if f.startswith("light_") and f.endswith(".onnx"):
                found.append(Network("light/" + f[len("light_"):-len(".onnx")],
                                     os.path.join(light, f)))
    for folder in FOLDERS:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            continue
        for case in sorted(os.listdir(top)):
            path = os.path.join(top, case, "model.onnx")
            if os.path.isfile(path):
                found.append(Network(f"{folder}/{case}", path))
    return found


def graph_inputs(model) -> list:
    """The graph inputs that are not initializers, as ValueInfoProtos."""
    init = {i.name for i in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in init]


def _load_tensor(path: str):
    import onnx
    from onnx import numpy_helper
    return numpy_helper.to_array(onnx.load_tensor(path))


def load(net: Network):
    """(model, feeds by input name, expected outputs) for one network."""
    import onnx
    model = onnx.load(net.path)
    if net.light:
        inp = graph_inputs(model)[0]
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
        feeds = {inp.name: np.ones(shape, np.float32)}
        expected = [_load_tensor(net.path[:-len(".onnx")] + "_output_0.pb")]
        return model, feeds, expected
    data = os.path.join(os.path.dirname(net.path), "test_data_set_0")
    files = sorted(os.listdir(data), key=lambda f: (len(f), f))
    ins = [_load_tensor(os.path.join(data, f)) for f in files if f.startswith("input_")]
    outs = [_load_tensor(os.path.join(data, f)) for f in files if f.startswith("output_")]
    names = [vi.name for vi in graph_inputs(model)]
    return model, dict(zip(names, ins)), outs


def compare(got, expected, tol: dict) -> str | None:
    """None when every output matches (shape, dtype, values within `tol`), else why not."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if g.shape != e.shape:
            return f"output {i}: shape {g.shape}, expected {e.shape}"
        if g.dtype != e.dtype:
            return f"output {i}: dtype {g.dtype}, expected {e.dtype}"
        with np.errstate(all="ignore"):
            close = np.isclose(g, e, equal_nan=True, **tol) if e.dtype.kind in "fc" \
                else g == e
        if not np.all(close):
            bad = int(np.sum(~close))
            return f"output {i}: {bad} of {e.size} elements differ"
    return None


def random_feeds(model, seed: int = 0, shipped: dict | None = None) -> dict:
    """Random inputs of each graph input's shape (unknown dims 1) and dtype, for the oracle;
    an integer or bool input keeps its `shipped` value when given (it is a shape, an index or
    a mask more often than data)."""
    from onnx import helper
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in graph_inputs(model):
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in tt.shape.dim]
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        if dtype.kind != "f" and shipped is not None and vi.name in shipped:
            feeds[vi.name] = shipped[vi.name]
        elif dtype.kind == "f":
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[vi.name] = rng.integers(0, 2, shape).astype(dtype)
        else:
            feeds[vi.name] = rng.integers(0, 4, shape).astype(dtype)
    return feeds


def oracle_model(model):
    """`model` as `onnx.reference` can be the oracle for: a final Softmax before opset 13 is cut
    off (the graph's output becomes its input), because onnx.reference (1.23) applies it on the
    last axis rather than flattening from `axis` as Softmax-1/11 says (the model-zoo networks
    end in one over N x 1000 x 1 x 1: it gives all ones, not the shipped 0.001s)."""
    import onnx
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    g = model.graph
    last = g.node[-1] if len(g.node) else None
    if (opset >= 13 or last is None or last.op_type != "Softmax" or len(g.output) != 1
            or last.output[0] != g.output[0].name):
        return model
    cut = onnx.ModelProto()
    cut.CopyFrom(model)
    del cut.graph.node[-1]
    del cut.graph.output[:]
    cut.graph.output.append(onnx.helper.make_empty_tensor_value_info(last.input[0]))
    return cut


def build(model, feeds: dict | None = None):
    """Import, check and compile: (Imported, checked module, VM executable). A value Relay
    takes at import time (a split's sizes) that comes from a graph input binds exactly that
    input from `feeds` as a constant, as the conformance harness does (TVM's
    bind_params_by_name)."""
    from rvmdbg.onnx import import_model
    from rvmdbg.onnx.errors import NeedsValue
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    bound: list = []
    while True:
        try:
            imp = import_model(model, bind={n: feeds[n] for n in bound})
            break
        except NeedsValue as e:
            more = [n for n in e.inputs if feeds and n in feeds and n not in bound]
            if not more:
                raise
            bound.extend(more)
    mod = check_module(imp.module)
    return imp, mod, compile_module(mod)


def execute(kind: str, mod, exe, args: list) -> list:
    """The outputs of one run of `@main` on `args` on one executor, as a list of arrays."""
    if kind == "vm":
        from rvmdbg.vm.machine import VirtualMachine
        value = VirtualMachine(exe).invoke("main", list(args))
    elif kind == "interpreter":
        from rvmdbg.relay.interpreter import Interpreter, call_with_deep_stack
        value = call_with_deep_stack(lambda: Interpreter(mod).run("main", list(args)))
    else:
        from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory
        graph = lower_to_graph(mod)
        value = GraphExecutor(graph, plan_memory(graph)).run(list(args))
    if isinstance(value, (list, tuple)):
        return [np.asarray(_array(v)) for v in value]
    return [np.asarray(v) for v in _outputs(value)]


def graph_refusal(mod) -> str | None:
    """Why the static graph executor cannot run `mod` (None when it can)."""
    from rvmdbg.graph import find_refusal
    refusal = find_refusal(mod)
    return None if refusal is None else _one_line(getattr(refusal, "message", str(refusal)))


def run_network(net: Network, executors=EXECUTORS) -> NetOutcome:
    """Import, check, compile, then run on each executor and compare with the shipped outputs.
    The graph executor is skipped (not failed) on a program it refuses as dynamic."""
    out = NetOutcome(net.name, False)
    stage = "import"
    ran = []
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            model, feeds, expected = load(net)
            t0 = time.perf_counter()
            imp, mod, exe = build(model, feeds)
            out.seconds["import+compile"] = time.perf_counter() - t0
            args = [feeds[n] for n in imp.inputs]
            for kind in executors:
                stage = kind
                if kind == "graph":
                    why = graph_refusal(mod)
                    if why is not None:
                        out.skipped[kind] = why
                        continue
                t0 = time.perf_counter()
                got = execute(kind, mod, exe, args)
                out.seconds[kind] = time.perf_counter() - t0
                why = compare(got, expected, TOLERANCE)
                if why is not None:
                    raise AssertionError(why)
                ran.append(kind)
    except AssertionError as e:
        out.reason = _one_line(f"wrong result on the {stage}: {e}")
    except Exception as e:  # every failure is recorded, with its stage
        msg = getattr(e, "message", None) or str(e) or type(e).__name__
        out.reason = _one_line(f"{stage}: {msg}")
    else:
        out.passed = True
    out.ran = tuple(ran)
    return out


HEADING = "## Real networks"
_NET_ROW = re.compile(r"^\| `((?:light|pytorch-converted|pytorch-operator|simple)/[^`]+)` \|")


def report_section(outcomes: list) -> str:
    """The networks section of docs/onnx-support.md."""
    ok = sum(o.passed for o in outcomes)
    lines = [
        HEADING,
        "",
        "Generated by `python3 scripts/onnx_support.py --networks`. The networks the `onnx` "
        "package ships with reference outputs: the nine model-zoo networks of "
        "`backend/test/data/light` (an all-ones input, batch 1) and the folders of "
        "`pytorch-converted`, `pytorch-operator` and `simple` (their `test_data_set_0`), "
        "compared at rtol = atol = 1e-5, each imported, type-checked, compiled and "
        "run on the VM, the interpreter and, where the program is static, the graph "
        "executor. `tests/onnx/test_onnx_networks.py` fails when a network listed below "
        "passes or one not listed fails.",
        "",
        f"{ok} of {len(outcomes)} networks pass.",
        "",
        "| model-zoo network | executors |",
        "|---|---|",
    ]
    for o in outcomes:
        if o.name.startswith("light/") and o.passed:
            lines.append(f"| {o.name} | {', '.join(o.ran)} |")
    lines += ["", "(The script prints each network's import+compile and run times; "
              "`benchmarks/bench_onnx.py` measures them properly.)", "",
              "### Failing networks", "", "| network | reason |", "|---|---|"]
    for o in outcomes:
        if not o.passed:
            lines.append(f"| `{o.name}` | {o.reason} |")
    return "\n".join(lines) + "\n"


def listed_networks(text: str) -> set:
    """The networks docs/onnx-support.md lists as failing."""
    return {m.group(1) for line in text.splitlines() if (m := _NET_ROW.match(line))}


def replace_section(doc: str, section: str) -> str:
    """`doc` with its networks section (to the end of the file) replaced by `section`."""
    at = doc.find("\n" + HEADING + "\n")
    head = doc if at < 0 else doc[: at + 1]
    return head.rstrip("\n") + "\n\n" + section
