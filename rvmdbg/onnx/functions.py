"""ONNX operators defined as functions of other operators (Swish, RMSNormalization, Attention,
the losses, ...): a node of such an op with no converter of its own is replaced by the nodes
of its schema's function body for the model's opset, its edges renamed into the graph, so
each inner node goes through the ordinary converters. Every Relay call made this way carries
the outer node's span: the debugger still shows the node the model names."""
from __future__ import annotations

from rvmdbg.onnx.errors import OnnxImportError


def _schema(op_type: str, domain: str, opset: int):
    import onnx
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except Exception:
        return None


def has_function(op_type: str, domain: str, opset: int) -> bool:
    s = _schema(op_type, domain, opset)
    return s is not None and bool(s.has_function or s.has_context_dependent_function)


def _function_proto(node, opset: int, input_types: list):
    import onnx
    s = _schema(node.op_type, node.domain, opset)
    if s is None:
        return None
    fp = onnx.FunctionProto()
    plain = [v for v in s.function_opset_versions if v <= opset]
    dependent = [v for v in s.context_dependent_function_opset_versions if v <= opset]
    if dependent and (not plain or max(dependent) >= max(plain)):
        data = s.get_context_dependent_function_with_opset_version(
            max(dependent), node.SerializeToString(),
            [t.SerializeToString() for t in input_types])
    elif plain:
        data = s.get_function_with_opset_version(max(plain))
    else:
        return None
    if not data:
        return None
    fp.ParseFromString(data)
    return fp


def expand(node, opset: int, input_types: list, prefix: str) -> list:
    """The nodes of `node`'s function body, edges renamed: formal inputs and outputs to the
    node's, internal names under `prefix`; attribute references resolved from the node."""
    import onnx
    fp = _function_proto(node, opset, input_types)
    if fp is None:
        raise OnnxImportError(f"{node.op_type} has no function body at opset {opset}",
                              node=node.name)
    names = {}
    for i, formal in enumerate(fp.input):
        names[formal] = node.input[i] if i < len(node.input) else ""
    for i, formal in enumerate(fp.output):
        if i < len(node.output) and node.output[i]:
            names[formal] = node.output[i]
    given = {a.name: a for a in node.attribute}
    schema = _schema(node.op_type, node.domain, opset)
    for name, spec in (schema.attributes.items() if schema is not None else ()):
        # an attribute the node leaves out takes its schema default inside the body
        if name not in given and spec.default_value is not None \
                and spec.default_value.type != 0:
            given[name] = spec.default_value

    def rename(n: str) -> str:
        if n == "":
            return ""
        return names.get(n, prefix + n)

    def rename_graph(graph) -> None:
        # a subgraph (Scan's body) names the function's values too: rename it throughout
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            vi.name = rename(vi.name)
        for t in graph.initializer:
            t.name = rename(t.name)
        for n in graph.node:
            ins, outs = [rename(x) for x in n.input], [rename(x) for x in n.output]
            del n.input[:]
            n.input.extend(ins)
            del n.output[:]
            n.output.extend(outs)
            for a in n.attribute:
                if a.HasField("g"):
                    rename_graph(a.g)
                for sub in a.graphs:
                    rename_graph(sub)

    out = []
    for k, inner in enumerate(fp.node):
        new = onnx.NodeProto()
        new.CopyFrom(inner)
        del new.input[:]
        new.input.extend(rename(n) for n in inner.input)
        del new.output[:]
        new.output.extend(rename(n) for n in inner.output)
        new.name = f"{node.name}/{inner.op_type}_{k}"
        del new.attribute[:]
        for a in inner.attribute:
            if a.ref_attr_name:
                if a.ref_attr_name in given:
                    b = onnx.AttributeProto()
                    b.CopyFrom(given[a.ref_attr_name])
                    b.name = a.name
                    new.attribute.append(b)
            else:
                new.attribute.append(a)
        for a in new.attribute:
            if a.HasField("g"):
                rename_graph(a.g)
            for sub in a.graphs:
                rename_graph(sub)
        out.append(new)
    return out
