"""What a converter sees of the graph being imported: `GraphContext`.

`g.call(op, args, **attrs)` makes a Relay call carrying the current node's span (its line in
the node listing), `g.const(array)` a constant, `g.type_of(e)` / `g.shape_of(e)` the checked
type of an expression built so far (TVM's `infer_type` / `infer_shape`). Types are found
incrementally: only the nodes not yet typed are visited, so a long graph costs linear time.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay import ast
from rvmdbg.relay.ast import Call, Constant, OpRef, walk
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.onnx.errors import NeedsValue, OnnxImportError


class GraphContext:
    """The conversion state of one graph: the opset, the node being converted, the types."""

    def __init__(self, opset: int, module: ast.Module, importer=None):
        self.opset = opset
        self.module = module          # an empty module: the checker's context for type_of
        self.importer = importer
        self.node = None              # the NodeProto being converted
        self.node_name = ""
        self.span = None              # the node's Span in the listing

    # ---- building

    def call(self, op_name: str, args: list, **attrs) -> Call:
        if any(a is None for a in args):
            raise self.error(_("{op} lacks an input it needs (an empty input name)").format(
                op=self.node.op_type if self.node is not None else op_name))
        return Call(OpRef(op_name, self.span), list(args), attrs, self.span)

    def const(self, value, dtype: str | None = None) -> Constant:
        a = np.asarray(value, dtype=dtype)
        if dtype is None and a.dtype == np.float64 and not isinstance(value, np.ndarray):
            a = a.astype("float32")  # a Python float means float32, as relay.const did
        elif dtype is None and a.dtype == np.int64 and not isinstance(value, np.ndarray):
            a = a.astype("int32")
        return Constant(a, self.span)

    def tuple(self, fields: list) -> ast.Tuple:
        return ast.Tuple(list(fields), self.span)

    def get(self, tup, index: int) -> ast.TupleGetItem:
        return ast.TupleGetItem(tup, index, self.span)

    def subgraph(self, graph, bindings: dict) -> list:
        """The output expressions of a subgraph (GraphProto) whose inputs are `bindings`
        (name -> expression); it sees the enclosing graph's values by name."""
        return self.importer.convert_subgraph(graph, bindings)

    def fold(self, expr):
        """`expr` typed and constant-folded (TVM's fold_constant inside a converter)."""
        return self.importer.fold(expr)

    def needs_value(self, what: str, exprs=None) -> NeedsValue:
        """The error for a value this converter must know at import time and cannot;
        `.inputs` names the graph inputs that value depends on."""
        if not isinstance(exprs, (list, tuple)):
            exprs = [exprs]
        names = self.importer.input_names_under([e for e in exprs if e is not None])
        err = NeedsValue(_("{op} needs {what} at import time, and it is computed at run "
                           "time").format(op=self.node.op_type if self.node is not None else "",
                                          what=what),
                         node=self.node_name, span=self.span,
                         hint=_("bind the graph input it comes from as a constant"))
        err.inputs = names
        return err

    def error(self, message: str, hint: str | None = None) -> OnnxImportError:
        return OnnxImportError(message, node=self.node_name, hint=hint, span=self.span)

    # ---- types

    def type_of(self, expr):
        """The checked type of `expr` (types every node of it not typed yet)."""
        if expr.checked_type is not None:
            return expr.checked_type
        from rvmdbg.relay import typecheck as tc_mod
        tc = tc_mod.TypeChecker(self.module)
        for name, fn in self.module.functions.items():
            # the prelude's functions a run-time sequence uses (seqlist), checked when added
            if fn.checked_type is not None:
                tc.schemes[name] = fn.checked_type
        for n in walk(expr, into=lambda n: n.checked_type is None):
            if n.checked_type is not None:
                tc.types[id(n)] = n.checked_type
        with tc_mod.checking():
            t = tc.visit(expr)
            tc.solve_pending()
            tc.fail_on_pending()
            tc.finalize()
        return expr.checked_type if expr.checked_type is not None else tc.resolve_final(t)

    def shape_of(self, expr) -> tuple:
        """Static dims as ints, None for `?` (TVM's infer_shape)."""
        t = self.type_of(expr)
        if not isinstance(t, TensorType):
            raise self.error(_("expected a tensor, found {type}").format(type=t))
        return tuple(t.shape)

    def dtype_of(self, expr) -> str:
        t = self.type_of(expr)
        if isinstance(t, TupleType):
            return t.fields[0].dtype
        return t.dtype

    def rank_of(self, expr) -> int:
        return len(self.shape_of(expr))

    def value_of(self, expr):
        """The value of `expr` when it is a constant (after folding), else None (TVM's
        try_infer_value for the common case)."""
        if isinstance(expr, Constant):
            return expr.data
        return None
