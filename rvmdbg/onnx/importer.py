"""ONNX graph -> Relay module, as TVM's `relay.frontend.from_onnx` made it.

Graph inputs become `@main`'s parameters (their names kept, made legal), initializers become
constants (TVM's `freeze_params=True`) or, with `keep_params`, more parameters after the
inputs; each node is converted by the converter `registry.lookup` picks for its op type and
opset, and every Relay call made for it carries the node's span: its line in the node listing,
the text that is the imported program's source. As TVM's importer did, each node's result is
constant-folded as soon as it is made, so shape arithmetic on constants disappears.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay import ast
from rvmdbg.relay.ast import Call, Constant, Function, Module, OpRef, Var
from rvmdbg.relay.diagnostics import RelayError, Source, Span
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.onnx import functions, registry
from rvmdbg.onnx.context import GraphContext
from rvmdbg.onnx.errors import OnnxImportError
from rvmdbg.onnx.names import RELAY_DTYPES, _onnx, dtype_name, legal_name  # noqa: F401
from rvmdbg.onnx import ops as _ops  # noqa: F401  (each family registers its converters)

DEFAULT_MAX_BYTES = 4 << 30

@dataclass
class Imported:
    """An imported model: the Relay module and how its names map back to the ONNX graph."""
    module: Module
    node_lines: str                              # the node listing: the program's source
    nodes: dict = field(default_factory=dict)    # node name -> its line in node_lines
    tensors: dict = field(default_factory=dict)  # ONNX tensor name -> the Relay expression
    inputs: list = field(default_factory=list)   # ONNX names of @main's parameters, in order
    params: dict = field(default_factory=dict)   # keep_params: initializer name -> array
    opset: int = 0


def load_proto(model_or_path, max_bytes: int = DEFAULT_MAX_BYTES):
    """A ModelProto from a path, bytes or a ModelProto; (model, folder of the file or None)."""
    onnx = _onnx()
    if hasattr(model_or_path, "graph"):
        return model_or_path, None
    if isinstance(model_or_path, (bytes, bytearray)):
        data, folder, name = bytes(model_or_path), None, "<bytes>"
    else:
        name = os.fspath(model_or_path)
        try:
            size = os.path.getsize(name)
            if size > max_bytes:
                raise OnnxImportError(_("the model is {size} bytes, more than --max-bytes "
                                        "({limit})").format(file=name, size=size, limit=max_bytes))
            with open(name, "rb") as f:
                data = f.read()
        except OSError as e:
            raise OnnxImportError(_("cannot read {file}: {reason}").format(
                file=name, reason=e.strerror or e)) from None
        folder = os.path.dirname(os.path.abspath(name))
    try:
        model = onnx.ModelProto()
        model.ParseFromString(data)
    except Exception as e:
        raise OnnxImportError(_("not an ONNX model (the protobuf does not parse: "
                                "{reason})").format(file=name, reason=str(e) or type(e).__name__),
                              hint=_("is the file truncated or of another format?")) from None
    if not model.HasField("graph") or not model.opset_import and not model.graph.node:
        raise OnnxImportError(_("not an ONNX model (no graph)").format(file=name))
    _check_names(model.graph)
    return model, folder


def _check_names(graph) -> None:
    """Every name a string: protobuf hands back bytes for a name that is not UTF-8."""
    def bad(n):
        return not isinstance(n, str)
    names = [vi.name for vi in list(graph.input) + list(graph.output)]
    names += [t.name for t in graph.initializer]
    for node in graph.node:
        names += [node.name, node.op_type, node.domain, *node.input, *node.output]
        for a in node.attribute:
            names.append(a.name)
            if a.HasField("g"):
                _check_names(a.g)
            for sub in a.graphs:
                _check_names(sub)
    if any(bad(n) for n in names):
        raise OnnxImportError(_("not an ONNX model (a name is not valid UTF-8 text)"),
                              hint=_("is the file truncated or of another format?"))


def _external_array(tensor, folder: str | None, max_bytes: int):
    """An external-data initializer, read only from a regular file inside the model's folder."""
    onnx = _onnx()
    info = {e.key: e.value for e in tensor.external_data}
    loc = info.get("location", "")
    if folder is None:
        raise OnnxImportError(_("initializer {name} keeps its data in an external file, and "
                                "the model was not read from a file").format(name=tensor.name))
    path = os.path.realpath(os.path.join(folder, loc))
    root = os.path.realpath(folder)
    if os.path.isabs(loc) or os.path.commonpath([root, path]) != root:
        raise OnnxImportError(_("initializer {name}: external data path {loc} leaves the "
                                "model's folder").format(name=tensor.name, loc=loc))
    try:
        st = os.stat(path)
    except OSError:
        raise OnnxImportError(_("initializer {name}: external data file {loc} not found").format(
            name=tensor.name, loc=loc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise OnnxImportError(_("initializer {name}: external data {loc} is not a regular "
                                "file").format(name=tensor.name, loc=loc))
    offset = int(info.get("offset", 0) or 0)
    length = int(info.get("length", 0) or 0) or (st.st_size - offset)
    if length > max_bytes:
        raise OnnxImportError(_("initializer {name} is {size} bytes, more than --max-bytes "
                                "({limit})").format(name=tensor.name, size=length,
                                                    limit=max_bytes))
    with open(path, "rb") as f:
        f.seek(offset)
        raw = f.read(length)
    t = onnx.TensorProto()
    t.CopyFrom(tensor)
    del t.external_data[:]
    t.data_location = onnx.TensorProto.DEFAULT
    t.raw_data = raw
    return onnx.numpy_helper.to_array(t)


def tensor_array(tensor, folder=None, max_bytes: int = DEFAULT_MAX_BYTES):
    """A TensorProto's value as a NumPy array (external data read safely)."""
    onnx = _onnx()
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return _external_array(tensor, folder, max_bytes)
    n = int(np.prod(tensor.dims)) if len(tensor.dims) else 1
    dt = dtype_name(tensor.data_type)
    if dt is not None and n * np.dtype(dt).itemsize > max_bytes:
        raise OnnxImportError(_("initializer {name} is {size} bytes, more than --max-bytes "
                                "({limit})").format(name=tensor.name,
                                                    size=n * np.dtype(dt).itemsize,
                                                    limit=max_bytes))
    try:
        return onnx.numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise OnnxImportError(_("tensor {name} is malformed: {reason}").format(
            name=tensor.name or "(unnamed)", reason=e)) from None


def attribute_values(node, folder=None, max_bytes=DEFAULT_MAX_BYTES) -> dict:
    """A node's attributes as Python values: ints, floats, str, lists, arrays, GraphProtos."""
    onnx = _onnx()
    A = onnx.AttributeProto
    out = {}
    for a in node.attribute:
        t = a.type
        if t == A.FLOAT:
            v = float(a.f)
        elif t == A.INT:
            v = int(a.i)
        elif t == A.STRING:
            v = a.s.decode("utf-8", "replace")
        elif t == A.TENSOR:
            v = tensor_array(a.t, folder, max_bytes)
        elif t == A.GRAPH:
            v = a.g
        elif t == A.FLOATS:
            v = [float(x) for x in a.floats]
        elif t == A.INTS:
            v = [int(x) for x in a.ints]
        elif t == A.STRINGS:
            v = [s.decode("utf-8", "replace") for s in a.strings]
        elif t == A.TENSORS:
            v = [tensor_array(x, folder, max_bytes) for x in a.tensors]
        elif t == A.GRAPHS:
            v = list(a.graphs)
        elif t == A.SPARSE_TENSOR:
            v = onnx.numpy_helper.to_array(a.sparse_tensor.values)  # values only
        else:
            v = onnx.helper.get_attribute_value(a)
        out[a.name] = v
    return out


def _attr_text(v) -> str:
    if isinstance(v, np.ndarray):
        if v.size <= 4:
            return f"{v.dtype}{list(v.shape)}{{{', '.join(str(x) for x in v.reshape(-1))}}}"
        return f"{v.dtype}{list(v.shape)}"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "[" + ", ".join(_attr_text(x) for x in v) + "]"
    if hasattr(v, "node"):
        return f"graph({len(v.node)} nodes)"
    return str(v)


def _value_type_text(vi) -> str:
    tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
    if tt is None:
        return vi.type.WhichOneof("value") or "?"
    dt = dtype_name(tt.elem_type) or f"type{tt.elem_type}"
    if not tt.HasField("shape"):
        return f"{dt}[...]"
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
            for d in tt.shape.dim]
    return f"{dt}[{', '.join(dims)}]"


def name_nodes(graph) -> None:
    """Give every unnamed node TVM's generated name, `{op_type}_{k}` (k counting per op type
    from 0), made unique against the names the graph already has."""
    taken = {n.name for n in graph.node if n.name}
    counts: dict = {}
    for node in graph.node:
        if node.name:
            continue
        while True:
            k = counts.get(node.op_type, -1) + 1
            counts[node.op_type] = k
            name = f"{node.op_type}_{k}"
            if name not in taken:
                break
        taken.add(name)
        node.name = name


def node_listing(model, opset: int, init_names: set) -> tuple:
    """The listing text of the graph and {node name: line}. One line per node:
    `Conv_12  Conv  [x, W, B] -> [y]  group=1 kernel_shape=[3, 3]`."""
    g = model.graph
    lines = [f"// ONNX graph {g.name or '(unnamed)'}, opset {opset}"
             + (f", from {model.producer_name} {model.producer_version}".rstrip()
                if model.producer_name else "")]
    for vi in g.input:
        if vi.name not in init_names:
            lines.append(f"input  {vi.name}  {_value_type_text(vi)}")
    nodes = {}
    for node in g.node:
        ins = ", ".join(node.input)
        outs = ", ".join(node.output)
        dom = f"{node.domain}::" if node.domain not in ("", "ai.onnx") else ""
        text = f"{node.name}  {dom}{node.op_type}  [{ins}] -> [{outs}]"
        try:
            attrs = attribute_values(node, None, 1 << 62)
        except Exception:
            attrs = {}
        if attrs:
            text += "  " + " ".join(f"{k}={_attr_text(v)}" for k, v in sorted(attrs.items()))
        lines.append(text)
        nodes[node.name] = len(lines)
    for vi in g.output:
        lines.append(f"output  {vi.name}  {_value_type_text(vi)}")
    return "\n".join(lines) + "\n", nodes


def model_opset(model, domain: str = "") -> int:
    for imp in model.opset_import:
        if imp.domain in (("", "ai.onnx") if domain == "" else (domain,)):
            return int(imp.version)
    return 1


class Importer:
    """One model's conversion."""

    def __init__(self, model, folder, shapes, dtypes, opset, keep_params, max_bytes,
                 filename, bind=None):
        self.bind = dict(bind or {})
        self.model = model
        self.folder = folder
        self.shapes = dict(shapes or {})
        self.dtypes = dict(dtypes or {})
        self.opset = int(opset) if opset is not None else model_opset(model)
        self.keep_params = keep_params
        self.max_bytes = max_bytes
        self.filename = filename
        self.values: dict = {}        # ONNX tensor name -> Relay expr
        self.expansions = 0           # function bodies expanded so far (unique edge names)
        self.fold_memo = {}           # id(expr) -> (expr, folded): kept across nodes
        self.outer_node = None        # the top-level node being converted (subgraphs: its span)
        self.module = Module()
        self.g = GraphContext(self.opset, self.module, self)

    def domain_opset(self, domain: str) -> int:
        if domain in ("", "ai.onnx"):
            return self.opset
        return model_opset(self.model, domain)

    def run(self) -> Imported:
        graph = self.model.graph
        name_nodes(graph)
        init_names = {t.name for t in graph.initializer}
        text, lines = node_listing(self.model, self.opset, init_names)
        self.source = Source(self.filename, text)
        self.lines = lines
        self.text_lines = text.split("\n")
        try:
            return self._convert(graph, text, lines, init_names)
        except RelayError as e:
            if e.source is None:
                e.source = self.source
            raise

    def span_of(self, node_name: str) -> Span | None:
        line = self.lines.get(node_name)
        if line is None:
            return None
        return Span(line, 1, line, len(self.text_lines[line - 1]) + 1, self.filename)

    def _check_supported(self, graph) -> None:
        missing = []
        for node in graph.node:
            opset = self.domain_opset(node.domain)
            if (registry.lookup(node.op_type, node.domain, opset) is None
                    and not functions.has_function(node.op_type, node.domain, opset)):
                missing.append(node)
        if not missing:
            return
        listed = "; ".join(
            f"{n.name} ({n.domain or 'ai.onnx'}::{n.op_type}, opset "
            f"{self.domain_opset(n.domain)})" for n in missing[:20])
        more = len(missing) - 20
        if more > 0:
            listed += _(" and {n} more").format(n=more)
        raise OnnxImportError(
            _("{n} node(s) use an operator or opset the importer does not support: "
              "{nodes}").format(n=len(missing), nodes=listed),
            node=missing[0].name, span=self.span_of(missing[0].name),
            hint=_("`rvmdbg import --help` and docs/onnx-support.md list what is supported"))

    def _input_var(self, vi) -> Var:
        name = vi.name
        if vi.type.HasField("sequence_type"):
            return self._sequence_var(vi)
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            raise OnnxImportError(_("graph input {name} is not a tensor ({kind}); only tensor "
                                    "inputs are supported").format(
                                        name=name, kind=vi.type.WhichOneof("value")))
        dt = self.dtypes.get(name) or dtype_name(tt.elem_type)
        if dt is None:
            raise OnnxImportError(_("graph input {name} has element type {t}, which Relay "
                                    "has no dtype for").format(name=name, t=tt.elem_type))
        if name in self.shapes:
            shape = tuple(int(d) if d is not None and int(d) >= 0 else None
                          for d in self.shapes[name])
        elif not tt.HasField("shape"):
            raise OnnxImportError(_("graph input {name} has no shape").format(name=name),
                                  hint=_("give one with --shape {name}=1,3,224,224").format(
                                      name=name))
        else:
            shape = tuple(int(d.dim_value) if d.HasField("dim_value") else None
                          for d in tt.shape.dim)
        v = Var(self._unique(legal_name(name)), TensorType(shape, dt))
        return v

    def _sequence_var(self, vi) -> Var:
        """A sequence graph input is a tuple of tensors (sequences are tuples, as TVM's
        converter made them): its length and element shapes come from `shapes[name]`, a list
        of shapes, one per element."""
        name = vi.name
        elem = vi.type.sequence_type.elem_type
        tt = elem.tensor_type if elem.HasField("tensor_type") else None
        shapes = self.shapes.get(name)
        if tt is None or not isinstance(shapes, (list, tuple)) or not all(
                isinstance(s, (list, tuple)) for s in shapes):
            raise OnnxImportError(
                _("graph input {name} is a sequence: its length and element shapes must be "
                  "known when the model is imported").format(name=name),
                hint=_("give them with --shape {name}=2,3;2,3 (a shape per tensor, separated "
                       "by ;)").format(name=name))
        dt = self.dtypes.get(name) or dtype_name(tt.elem_type)
        if dt is None:
            raise OnnxImportError(_("graph input {name} has element type {t}, which Relay "
                                    "has no dtype for").format(name=name, t=tt.elem_type))
        fields = tuple(TensorType(tuple(int(d) if d is not None and int(d) >= 0 else None
                                        for d in s), dt) for s in shapes)
        return Var(self._unique(legal_name(name)), TupleType(fields))

    def _unique(self, name: str) -> str:
        base, k = name, 1
        while name in self.taken:
            name = f"{base}_{k}"
            k += 1
        self.taken.add(name)
        return name

    def _convert(self, graph, text, lines, init_names) -> Imported:
        self.taken: set = set()
        input_names = [vi.name for vi in graph.input if vi.name not in init_names]
        unknown = [n for n in self.shapes if n not in input_names]
        if unknown:
            raise OnnxImportError(_("--shape names {names}, which is not an input of the graph "
                                    "(its inputs: {inputs})").format(
                                        names=", ".join(unknown),
                                        inputs=", ".join(input_names) or "none"))
        self._check_supported(graph)
        params, onnx_inputs = [], []
        for vi in graph.input:
            if vi.name in init_names:
                continue
            if vi.name in self.bind:
                a = np.ascontiguousarray(self.bind[vi.name])
                c = Constant(a)
                c.checked_type = TensorType(tuple(a.shape), str(a.dtype))
                self.values[vi.name] = c
                continue
            v = self._input_var(vi)
            v.checked_type = v.type_annotation
            params.append(v)
            onnx_inputs.append(vi.name)
            self.values[vi.name] = v
        kept: dict = {}
        param_vars: dict = {}
        for t in graph.initializer:
            a = tensor_array(t, self.folder, self.max_bytes)
            if str(a.dtype) not in RELAY_DTYPES:
                raise OnnxImportError(_("initializer {name} has dtype {dt}, which Relay has no "
                                        "dtype for").format(name=t.name, dt=a.dtype))
            if self.keep_params:
                v = Var(self._unique(legal_name(t.name)), TensorType(a.shape, str(a.dtype)))
                v.checked_type = v.type_annotation
                kept[t.name] = a
                param_vars[t.name] = v
                self.values[t.name] = v
            else:
                c = Constant(np.ascontiguousarray(a))
                c.checked_type = TensorType(tuple(a.shape), str(a.dtype))
                self.values[t.name] = c
        self.convert_nodes(graph.node)
        outs = []
        for vi in graph.output:
            if vi.name not in self.values:
                raise OnnxImportError(_("graph output {name} is computed by no node").format(
                    name=vi.name))
            outs.append(self.values[vi.name])
        body = outs[0] if len(outs) == 1 else ast.Tuple(outs)
        if self.keep_params:
            # TVM appended, in initializer order, only the parameters the outputs use
            used = {id(n) for n in ast.walk(body) if type(n) is Var}
            for name, v in param_vars.items():
                if id(v) in used:
                    params.append(v)
                    onnx_inputs.append(name)
            kept = {k: a for k, a in kept.items() if id(param_vars[k]) in used}
        # @main's span is the listing's first line: its definition is the model's own
        fn = Function(params, body, span=Span(1, 1, 1, len(self.text_lines[0]) + 1,
                                              self.filename))
        self.module.functions["main"] = fn
        self.module.source = self.source
        return Imported(self.module, text, dict(lines), dict(self.values), onnx_inputs, kept,
                        self.opset)

    def convert_nodes(self, nodes, outer=None) -> None:
        """Convert `nodes` in order; `outer` is the node whose function body they are (its
        name and span are theirs)."""
        g = self.g
        for node in nodes:
            opset = self.domain_opset(node.domain)
            conv = registry.lookup(node.op_type, node.domain, opset)
            g.node = node
            g.node_name = (outer or node).name
            g.span = self.span_of((outer or node).name)
            if outer is None:
                self.outer_node = node
            if conv is None:
                self._expand(node, opset, outer)
                continue
            inputs = []
            for i in node.input:
                if i == "":
                    inputs.append(None)
                elif i in self.values:
                    inputs.append(self.values[i])
                else:
                    raise g.error(_("node {node} reads {name}, which no input, initializer or "
                                    "earlier node defines").format(node=node.name, name=i))
            attrs = attribute_values(node, self.folder, self.max_bytes)
            try:
                out = conv.fn(g, node, inputs, attrs)
            except RelayError as e:
                if e.span is None:
                    e.span = g.span
                raise
            except (OnnxImportError,):
                raise
            except Exception as e:  # a converter's own failure is the node's, located
                raise g.error(_("cannot convert {node} ({op}): {reason}").format(
                    node=node.name, op=node.op_type, reason=f"{type(e).__name__}: {e}")) \
                    from None
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            names = list(node.output)
            if len(outs) < len([n for n in names if n]):
                raise g.error(_("the converter of {op} made {k} output(s), the node has "
                                "{n}").format(op=node.op_type, k=len(outs), n=len(names)))
            for name, e in zip(names, outs):
                if name and e is None:
                    raise g.error(_("{op} makes no output {name}").format(op=node.op_type,
                                                                       name=name))
                if name:
                    e = self.fold(e)
                    self.values[name] = e

    def convert_subgraph(self, graph, bindings: dict) -> list:
        """A subgraph's outputs (If's branches, Loop's and Scan's bodies): its nodes converted
        in a scope that sees the enclosing graph's values by name, `bindings` (its inputs)
        over them; every call carries the enclosing node's span."""
        g = self.g
        saved = (self.values, g.node, g.node_name, g.span)
        outer = g.node
        self.values = dict(self.values)
        self.values.update(bindings)
        try:
            for t in graph.initializer:
                a = np.ascontiguousarray(tensor_array(t, self.folder, self.max_bytes))
                c = Constant(a)
                c.checked_type = TensorType(tuple(a.shape), str(a.dtype))
                self.values[t.name] = c
            name_nodes(graph)
            self.convert_nodes(graph.node, self.outer_node or outer)
            outs = []
            for vi in graph.output:
                if vi.name not in self.values:
                    raise g.error(_("subgraph output {name} is computed by no node").format(
                        name=vi.name))
                outs.append(self.values[vi.name])
            return outs
        finally:
            self.values, g.node, g.node_name, g.span = saved

    def input_names_under(self, exprs) -> list:
        """The ONNX names of the graph inputs the expressions read."""
        by_var = {id(v): name for name, v in self.values.items() if type(v) is Var}
        found = []
        for e in exprs:
            for n in ast.walk(e):
                name = by_var.get(id(n)) if type(n) is Var else None
                if name is not None and name not in found:
                    found.append(name)
        return found

    def _expand(self, node, opset, outer) -> None:
        """A node of an op defined as an ONNX function: convert its body's nodes instead."""
        import onnx
        if not functions.has_function(node.op_type, node.domain, opset):
            raise self.g.error(_("no converter for {op} (domain {domain}, opset {opset}), "
                                 "used inside {node}").format(
                op=node.op_type, domain=node.domain or "ai.onnx", opset=opset,
                node=(outer or node).name))
        types = []
        for i in node.input:
            if i == "" or i not in self.values:
                types.append(onnx.TypeProto())
                continue
            t = self.g.type_of(self.values[i])
            # a sequence (a tuple) is typed as one: onnx's function builders crash on an
            # empty TypeProto where they expect a sequence
            seq = isinstance(t, TupleType)
            if seq and t.fields and all(isinstance(f, TensorType) for f in t.fields):
                t = t.fields[0]
            if not isinstance(t, TensorType):
                types.append(onnx.TypeProto())
                continue
            elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
            shape = [d if d is not None else "?" for d in t.shape]
            tp = onnx.helper.make_tensor_type_proto(elem, shape)
            types.append(onnx.helper.make_sequence_type_proto(tp) if seq else tp)
        self.expansions += 1
        body = functions.expand(node, opset, types, f"{node.name}/{self.expansions}/")
        self.convert_nodes(body, outer or node)

    def fold(self, e):
        """Type `e` (located errors at its node) and evaluate what only depends on
        constants, as TVM's importer folded each node's result."""
        self.g.type_of(e)
        # one memo for the whole import: an earlier node's result is not walked again (a
        # fresh memo per node made importing quadratic in the depth of the network)
        return _fold(e, self.fold_memo)


def _fold(e, memo: dict):
    """Constant-fold the calls not typed before this node (the new ones). `memo` maps
    id(expr) to (expr, folded): holding expr keeps its id from being reused."""
    from rvmdbg.passes.fold_constant import const_value, run_kernel
    key = id(e)
    hit = memo.get(key)
    if hit is not None and hit[0] is e:
        return hit[1]
    out = e
    t = type(e)
    if t is Call and type(e.op) is OpRef:
        args = [_fold(a, memo) for a in e.args]
        if any(a is not b for a, b in zip(args, e.args)):
            new = Call(e.op, args, e.attrs, e.span)
            new.checked_type = e.checked_type
            out = new
        values = [const_value(a) for a in args]
        arg_t = args[0].checked_type if args else None
        if (e.op.name in ("shape_of", "ndarray_size") and type(arg_t) is TensorType
                and all(d is not None for d in arg_t.shape)):
            # TVM's FoldConstant evaluates shape_of and ndarray_size of a statically shaped
            # tensor
            value = (arg_t.shape if e.op.name == "shape_of"
                     else int(np.prod(arg_t.shape, dtype="int64")))
            c = Constant(np.array(value, dtype=e.attrs.get("dtype", "int32")), e.span)
            c.checked_type = e.checked_type
            out = c
        elif all(v is not None for v in values):
            r = run_kernel(e.op.name, values, e.attrs)
            if isinstance(r, np.ndarray) or np.isscalar(r):
                c = Constant(np.asarray(r), e.span)
                c.checked_type = e.checked_type
                out = c
            elif isinstance(r, tuple) and all(isinstance(x, np.ndarray) for x in r):
                fields = []
                for x in r:
                    c = Constant(x, e.span)
                    c.checked_type = TensorType(tuple(x.shape), str(x.dtype))
                    fields.append(c)
                out = ast.Tuple(fields, e.span)
                out.checked_type = TupleType(tuple(f.checked_type for f in fields))
    elif t is ast.TupleGetItem:
        inner = _fold(e.tuple_value, memo)
        if type(inner) is ast.Tuple and type(inner.fields[e.index]) is Constant:
            out = inner.fields[e.index]
        elif inner is not e.tuple_value:
            out = ast.TupleGetItem(inner, e.index, e.span)
            out.checked_type = e.checked_type
    elif t is ast.Tuple:
        fields = [_fold(f, memo) for f in e.fields]
        if any(a is not b for a, b in zip(fields, e.fields)):
            out = ast.Tuple(fields, e.span)
            out.checked_type = e.checked_type
    memo[key] = (e, out)
    memo[id(out)] = (out, out)  # a later node reads the folded form
    return out


def _located(e: OnnxImportError, filename: str) -> OnnxImportError:
    if e.source is None:
        e.source = Source(filename, "")
    return e


def import_model(model_or_path, shapes=None, dtypes=None, opset=None, keep_params=False,
                 max_bytes: int = DEFAULT_MAX_BYTES, bind=None) -> Imported:
    """Import an ONNX model (a path, its bytes or a ModelProto) as a Relay module.

    `bind` maps graph-input names to arrays bound as constants (TVM's bind_params_by_name):
    those inputs are no parameters of @main, and converters that need a value at import
    time (reduction axes, pads, sizes) see it."""
    filename = (os.fspath(model_or_path) if isinstance(model_or_path, (str, os.PathLike))
                else "<model>")
    try:
        model, folder = load_proto(model_or_path, max_bytes)
    except OnnxImportError as e:
        raise _located(e, filename) from None
    if filename == "<model>":
        filename = (model.graph.name or "model") + ".onnx"
    return Importer(model, folder, shapes, dtypes, opset, keep_params, max_bytes,
                    filename, bind).run()
