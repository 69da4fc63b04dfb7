"""The debugger's names for an imported ONNX model: its nodes as places (`break Conv_12`) and
its tensors as values (`print conv1_out`), handed over as a plain `debug.names.NameTable`
so the debugger knows nothing of ONNX.

`name_table(model, imported) -> NameTable`: a node is its line of the node listing (the
program's source); a tensor is output k of its producing node's line, a graph input is
`@main`'s parameter, and a tensor the import folded to a constant (a weight) is that value.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.debug.names import Fixed, NameTable, Param, Produced


def name_table(model, imported) -> NameTable:
    """`model`: the ModelProto or its path (read without its external weights: only the
    graph's node names and outputs are needed)."""
    import onnx
    if isinstance(model, str):
        model = onnx.load(model, load_external_data=False)
    elif isinstance(model, bytes):
        model = onnx.load_from_string(model)

    from rvmdbg.onnx.importer import name_nodes
    from rvmdbg.relay.ast import Constant
    graph = onnx.GraphProto()
    graph.CopyFrom(model.graph)
    name_nodes(graph)  # the names the importer gave unnamed nodes
    places = dict(imported.nodes)
    values: dict = {}
    for i, name in enumerate(imported.inputs):
        values[name] = Param(i)
    for node in graph.node:
        line = places.get(node.name)
        if line is None:
            continue
        for k, out in enumerate(o for o in node.output if o):
            e = imported.tensors.get(out)
            if type(e) is Constant:
                values[out] = Fixed(np.asarray(e.data))
            else:
                values[out] = Produced(line, k)
    for name, e in imported.tensors.items():
        if name not in values and type(e) is Constant:
            values[name] = Fixed(np.asarray(e.data))  # an initializer
    return NameTable(places, values, "node")
