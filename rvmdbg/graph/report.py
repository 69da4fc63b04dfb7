"""What `rvmdbg graph PROGRAM` prints: the graph's nodes and its memory plan, or its JSON."""
from __future__ import annotations

import json

from rvmdbg.graph.lower import lower_to_graph
from rvmdbg.graph.plan import plan_memory
from rvmdbg.relay.ast import Module


def graph_report(mod: Module, entry: str = "main", as_json: bool = False, names=None) -> str:
    """The node list and plan summary of entry's graph (raises GraphRefusal when it has none).
    With as_json, TVM's graph JSON plus a `memory_plan` object. `names`: the program kind's
    debug.names.NameTable (an ONNX model's nodes), shown beside each kernel."""
    graph = lower_to_graph(mod, entry)
    plan = plan_memory(graph)
    if as_json:
        data = graph.to_dict(plan)
        data["memory_plan"] = {"pool_bytes": plan.pool_bytes, "tensor_bytes": plan.tensor_bytes,
                               "block_sizes": plan.block_sizes,
                               "reuse_ratio": round(plan.reuse_ratio, 4)}
        return json.dumps(data, indent=2)
    return graph.format(plan, names) + "\n" + plan.summary()
