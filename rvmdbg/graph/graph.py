"""The static dataflow graph TVM's graph executor runs, and its JSON form.

A `Graph` is what `rvmdbg.graph.lower.lower_to_graph` makes of a program whose entry is a
static dataflow graph. As in TVM's graph JSON (`src/relay/backend/graph_executor_codegen.cc`):

- `nodes` in topological order; an input or a constant is an `op: "null"` node, a call of a
  fused primitive function is an `op: "tvm_op"` node with its `func_name`;
- each node has `num_outputs` entries; `node_row_ptr[n]` is the id of node n's first entry,
  so entry `(n, i)` has id `node_row_ptr[n] + i`;
- `inputs` of a kernel node are `(node, output)` pairs (TVM adds a version, always 0);
- `arg_nodes` are the null nodes (inputs, then constants where they appear), `heads` the
  entries making up the result;
- per entry: `shape`, `dtype` and, once planned, `storage_id`.

`GraphRefusal` is the located explanation of why a program cannot be one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.graph.nodes import CONSTANT, INPUT, KERNEL  # noqa: F401 (also imported from here)
from rvmdbg.i18n import _
from rvmdbg.relay.diagnostics import RelayError, Source, Span
from rvmdbg.relay.types import dtype_bytes


class GraphRefusal(RelayError):
    """A program the graph executor cannot run: names the construct and its place."""

    kind = "graph"

    def format(self, source: Source | None = None) -> str:
        # The message already names the place; quote the line with a caret under it.
        out = [f"error: {self.message}", *quote_span(self.span, source or self.source)]
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return "\n".join(out)


def quote_span(span: Span | None, source: Source | None) -> list:
    """The source line of span with a caret under it (no lines when it cannot be quoted)."""
    if span is None or source is None or not 1 <= span.line <= len(source.lines):
        return []
    if span.file != source.name:
        return []
    text = source.line_text(span.line)
    gutter = f"{span.line:>4} | "
    width = (span.end_col - span.col) if span.end_line == span.line else len(text) - span.col + 1
    return [gutter + text.expandtabs(1),
            " " * (len(gutter) + span.col - 1) + "^" + "~" * (max(1, width) - 1)]


@dataclass
class GraphNode:
    """One node: an input, a constant (TVM passes it as a parameter) or a kernel call."""

    op: str                     # "null" or "tvm_op"
    name: str                   # input name, constant name (p0, p1, ...) or func_name
    kind: str                   # INPUT, CONSTANT or KERNEL
    inputs: list = field(default_factory=list)  # [(node id, output index)]
    num_outputs: int = 1
    func_name: str | None = None
    function: object = None     # the typed primitive Function a kernel node runs
    source: str = ""            # its Relay text (equal texts share one func_name)
    value: np.ndarray | None = None  # a constant's data
    reshape_only: bool = False  # the kernel only reshapes its one input: its output aliases it
    span: Span | None = None    # where the call came from in the program
    arg_shape: tuple = ()       # per primitive parameter: None (one tensor) or a nested tuple
    #                             of the same form, telling how the flat inputs regroup

    def source_lines(self) -> tuple:
        """The program lines a kernel's calls came from, in order: a fused kernel carries
        the span of every call fused into it (an imported ONNX model's: one line per node),
        and its own call's; only lines of the file its own call is in (`ast.call_lines`)."""
        from rvmdbg.relay.ast import call_lines
        return call_lines(self.span, self.function)


@dataclass
class Graph:
    """A static dataflow graph: nodes, entries and how the result is put together."""

    nodes: list
    node_row_ptr: list          # len(nodes) + 1 items
    shapes: list                # per entry: tuple of ints
    dtypes: list                # per entry: dtype name
    heads: list                 # [(node id, output index)] in the result's flattened order
    result_form: object         # None for one tensor, else a nested tuple of head positions
    entry: str = "main"
    input_forms: list = field(default_factory=list)  # per entry parameter: None or nested tuple
    source: Source | None = None

    # ---- structure ----

    @property
    def arg_nodes(self) -> list:
        return [i for i, n in enumerate(self.nodes) if n.op == "null"]

    @property
    def input_nodes(self) -> list:
        return [i for i, n in enumerate(self.nodes) if n.kind == INPUT]

    @property
    def kernel_nodes(self) -> list:
        return [i for i, n in enumerate(self.nodes) if n.kind == KERNEL]

    @property
    def num_entries(self) -> int:
        return self.node_row_ptr[-1]

    def entry_id(self, node: int, index: int = 0) -> int:
        return self.node_row_ptr[node] + index

    def entry_bytes(self, eid: int) -> int:
        """TVM's size of an entry: elements times the dtype's bytes."""
        n = 1
        for d in self.shapes[eid]:
            n *= int(d)
        return n * dtype_bytes(self.dtypes[eid])

    def params(self) -> dict:
        """The constants by name, as TVM's `params` dict."""
        return {n.name: n.value for n in self.nodes if n.kind == CONSTANT}

    # ---- JSON ----

    def to_dict(self, plan=None) -> dict:
        """TVM's graph JSON as a dict; storage ids from `plan` (planned now when None)."""
        if plan is None:
            from rvmdbg.graph.plan import plan_memory
            plan = plan_memory(self)
        nodes = []
        for n in self.nodes:
            item = {"op": n.op, "name": n.name,
                    "inputs": [[src, idx, 0] for src, idx in n.inputs]}
            if n.op == "tvm_op":
                item["attrs"] = {"func_name": n.func_name, "num_inputs": str(len(n.inputs)),
                                 "num_outputs": str(n.num_outputs), "flatten_data": "0"}
                if n.reshape_only:
                    item["attrs"]["reshape_only"] = "1"
            nodes.append(item)
        return {
            "nodes": nodes,
            "arg_nodes": self.arg_nodes,
            "heads": [[nid, idx, 0] for nid, idx in self.heads],
            "attrs": {
                "dltype": ["list_str", list(self.dtypes)],
                "shape": ["list_shape", [list(s) for s in self.shapes]],
                "storage_id": ["list_int", list(plan.storage_ids)],
            },
            "node_row_ptr": list(self.node_row_ptr),
        }

    def to_json(self, plan=None, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(plan), indent=indent)

    # ---- text ----

    def entry_text(self, eid: int) -> str:
        shape = self.shapes[eid]
        return f"[{', '.join(str(d) for d in shape)}] {self.dtypes[eid]}"

    def format(self, plan=None, names=None) -> str:
        """The node list: id, op, name, inputs, each output's shape and storage id; with
        `names` (a debug.names.NameTable), after a kernel the names on its source lines
        (every node a fused kernel came from)."""
        by_line = names.line_names() if names is not None else {}
        if plan is None:
            from rvmdbg.graph.plan import plan_memory
            plan = plan_memory(self)
        head_set = set(self.heads)
        lines = [_("graph @{func}: {nodes} nodes ({inputs} inputs, {constants} constants, "
                   "{kernels} kernels), {entries} entries").format(
                       func=self.entry, nodes=len(self.nodes), inputs=len(self.input_nodes),
                       constants=sum(1 for n in self.nodes if n.kind == CONSTANT),
                       kernels=len(self.kernel_nodes), entries=self.num_entries)]
        for nid, n in enumerate(self.nodes):
            if n.kind == KERNEL:
                ins = ", ".join(f"{s}" if i == 0 and self.nodes[s].num_outputs == 1
                                else f"{s}.{i}" for s, i in n.inputs)
                head = f"{nid:>3}: tvm_op {n.func_name}({ins})"
                if n.reshape_only:
                    head += " reshape-only"
                places = [by_line[line] for line in n.source_lines() if line in by_line] \
                    if by_line else []
                if places:
                    head += f" [{', '.join(places)}]"
            else:
                head = f"{nid:>3}: null   {'%' if n.kind == INPUT else ''}{n.name} ({n.kind})"
            outs = []
            for i in range(n.num_outputs):
                eid = self.entry_id(nid, i)
                mark = " head" if (nid, i) in head_set else ""
                outs.append(f"{self.entry_text(eid)} sid {plan.storage_ids[eid]}{mark}")
            lines.append(f"{head} -> " + "; ".join(outs))
        heads = ", ".join(f"{n}" if self.nodes[n].num_outputs == 1 else f"{n}.{i}"
                          for n, i in self.heads)
        lines.append(f"heads: [{heads}]")
        return "\n".join(lines)
