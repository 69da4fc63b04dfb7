"""ManifestAlloc: every call of a primitive function becomes explicit allocation plus a
destination-passing kernel call (TVM's ManifestAlloc, without its memory planner).

Runs on the A-normal-form module after LambdaLift and DeadCodeElimination. For
`let %x = prim(%a, %b);` with a static output type it emits, one storage per output as TVM does:

    let %storage_0 = memory.alloc_storage(24i64, alignment=64, dtype_hint="float32");
    let %tensor_0 = memory.alloc_tensor(%storage_0, 0i64, <shape>, dtype="float32", const_shape=[2, 3]);
    vm.invoke_tvm_op(prim, (%a, %b), (%tensor_0,));
    let %x = %tensor_0;

The code generator binds `%x` to `%tensor_0`'s register (no move) and compiles the dialect
calls to `alloc_storage`, `alloc_tensor` and `invoke_packed`. An output with `?` dimensions
gets its shape at run time: `vm.shape_of` of every input, a shape kernel
(`vm.shape_func`: the same primitive function marked `ShapeFunc=1`) writing each output's
int64 shape, a small primitive computing the byte size from it, and `memory.alloc_tensor`
with the shape tensor instead of `const_shape` (`alloc_tensor_reg`). Where an operator's
shape depends on input values (`dyn.zeros(%shape)`, TVM's data-dependent shape functions),
the shape kernel gets that input itself instead of its `vm.shape_of`; the call's `is_input`
attribute (TVM's name) marks which (`shape_func_inputs`). A primitive that only reshapes its
first input (`reshape`, `squeeze`, `expand_dims`, and `dyn.reshape` with its new shape as a
second input) becomes `vm.reshape_tensor` (no copy, no kernel).

Kernels take tensors only: a tuple-typed parameter is split into one parameter per tensor
field (the call site projects the fields) and rebuilt as a tuple inside the kernel.
The result is not re-type-checked (the dialect calls are not user operators), so every node
made here gets its `checked_type` and the span of the call it replaces.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.passes.anf import local_names
from rvmdbg.relay.ast import (Call, Clause, Constant, ExprMutator, Function, GlobalVar, If, Let, Match,
                              Module, OpRef, Tuple, TupleGetItem, Var)
from rvmdbg.relay.dialect import (  # the memory dialect's names, typed in relay.dialect
    ALLOC_STORAGE, ALLOC_TENSOR, DIALECT_OPS, INVOKE_TVM_OP, KILL, RESHAPE_TENSOR, SHAPE_FUNC,
    SHAPE_OF,
)
from rvmdbg.relay.ops.core import RESHAPE_OPS
from rvmdbg.relay.types import (
    UNIT, FuncType, StorageType, TensorType, TupleType, dtype_bytes, scalar,
)

ALIGNMENT = 64
SHAPE_FUNC_ATTR = "ShapeFunc"   # rvmdbg.vm.kernels reads it to build a shape kernel
DYN_RESHAPE = "dyn.reshape"   # reshape-only too, its new shape a second parameter


def _typed(node, t, span):
    node.checked_type = t
    node.span = span
    return node


def constant(value, dtype: str, span=None):
    data = np.array(value, dtype=dtype)
    return _typed(Constant(data), TensorType(data.shape, dtype), span)


def dialect_call(name: str, args: list, ret, span, attrs: dict | None = None) -> Call:
    """`name(args..., attrs...)` of the memory dialect, typed `ret`."""
    op = _typed(OpRef(name), FuncType(tuple(a.checked_type for a in args), ret), span)
    return _typed(Call(op, args, attrs), ret, span)


def tuple_of(fields: list, span) -> Tuple:
    return _typed(Tuple(fields), TupleType(tuple(f.checked_type for f in fields)), span)


def tensor_leaves(t) -> list:
    """The tensor types of a (possibly nested) tuple type, left to right."""
    if isinstance(t, TupleType):
        return [leaf for f in t.fields for leaf in tensor_leaves(f)]
    return [t]


def storage_bytes(t: TensorType) -> int:
    n = dtype_bytes(t.dtype)
    for d in t.shape:
        n *= d
    return n


def primitive_callee(call, mod: Module) -> Function | None:
    """The primitive function a call invokes (inline or a primitive global), else None."""
    if not isinstance(call, Call):
        return None
    op = call.op
    if isinstance(op, Function) and op.is_primitive:
        return op
    if isinstance(op, GlobalVar):
        target = mod.functions.get(op.name)
        if target is not None and target.is_primitive:
            if target.attrs.get("Extern") and not target.attrs.get("global_symbol"):
                # TVM calls an external function by its global's name
                named = Function(target.params, target.body, target.ret_type, target.type_params,
                                 {**target.attrs, "global_symbol": op.name}, target.span)
                named.checked_type = target.checked_type
                return named
            return target
    return None


def _reshape_only(fn: Function) -> bool:
    """Does fn only reshape its first parameter? (TVM: every op is a TReshapeOp; dyn.reshape
    takes its new shape as the second parameter.)"""
    params = fn.params
    if not 1 <= len(params) <= 2 or not all(isinstance(p.checked_type, TensorType)
                                            for p in params):
        return False
    node = fn.body
    if not isinstance(node, Call) or not isinstance(node.checked_type, TensorType):
        return False
    shape_param_used = False
    while isinstance(node, Call):
        if not isinstance(node.op, OpRef):
            return False
        name = node.op.name
        if name == DYN_RESHAPE and len(params) == 2 and node.args[1] is params[1]:
            shape_param_used = True
        elif name not in RESHAPE_OPS or len(node.args) != 1:
            return False
        node = node.args[0]
    return node is params[0] and shape_param_used == (len(params) == 2)


def shape_func_inputs(fn: Function) -> list:
    """One bool per parameter of the primitive function fn: True where its shape kernel reads
    the parameter's value rather than its shape (TVM's kNeedInputData). That is where an
    operator with a data-dependent shape function (`OpDef.shape_data`) and `?` output dims
    takes the parameter at a data-dependent position. The shape kernel builder
    (rvmdbg.vm.kernels) asks the same question of the same text, so both always agree."""
    from rvmdbg.relay.ops import get_op
    index = {p: i for i, p in enumerate(fn.params)}
    flags = [False] * len(fn.params)
    for call in _calls(fn.body):
        opdef = get_op(call.op.name)
        if opdef is None or not opdef.data_dependent or _static(call.checked_type):
            continue
        for needs_value, arg in zip(opdef.shape_data, call.args):
            if needs_value and arg in index:
                flags[index[arg]] = True
    return flags


def _calls(body) -> list:
    """The operator calls of a primitive function's body (a DAG: each once)."""
    out, seen, stack = [], set(), [body]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Call):
            if isinstance(node.op, OpRef):
                out.append(node)
            stack.extend(node.args)
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
    return out


def _static(t) -> bool:
    return all(leaf.is_static for leaf in tensor_leaves(t))


class _Substitute(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_Var(self, e):
        return self.mapping.get(e, e)


class _Manifester:
    """Rewrites one global function's body."""

    def __init__(self, mod: Module, taken: set):
        self.mod = mod
        self.taken = taken
        self.counters: dict = {}

    def fresh(self, prefix: str, t, span) -> Var:
        n = self.counters.get(prefix, 0)
        while f"{prefix}_{n}" in self.taken:
            n += 1
        self.counters[prefix] = n + 1
        name = f"{prefix}_{n}"
        self.taken.add(name)
        return _typed(Var(name, None), t, span)

    # ---- structure ----

    def expr(self, e):
        if isinstance(e, Let):
            return self.chain(e)
        if isinstance(e, If):
            return self._keep(e, If(e.cond, self.expr(e.true_branch), self.expr(e.false_branch)))
        if isinstance(e, Match):
            clauses = [Clause(c.lhs, self.expr(c.rhs), c.span) for c in e.clauses]
            return self._keep(e, Match(e.data, clauses, e.complete))
        if isinstance(e, Function) and not e.is_primitive:
            return self._keep(e, Function(e.params, self.expr(e.body), e.ret_type, e.type_params,
                                          e.attrs))
        if primitive_callee(e, self.mod) is not None:
            return self.chain(e)  # not let-bound (input not in ANF): bind it first
        return e

    @staticmethod
    def _keep(old, new):
        new.span = old.span
        new.checked_type = old.checked_type
        return new

    def chain(self, e):
        """A let chain rebuilt with every primitive call expanded (iterative over the chain)."""
        bindings: list = []   # (var, value, span)
        node = e
        while isinstance(node, Let):
            if primitive_callee(node.value, self.mod) is not None:
                self.expand(node.var, node.value, bindings, node.value.span or node.span)
            else:
                bindings.append((node.var, self.expr(node.value), node.span))
            node = node.body
        if primitive_callee(node, self.mod) is not None:
            var = self.fresh("x", node.checked_type, node.span)
            self.expand(var, node, bindings, node.span)
            tail = var
        else:
            tail = self.expr(node)
        return wrap_lets(bindings, tail)

    # ---- one primitive call ----

    def bind(self, bindings: list, prefix: str, value, span) -> Var:
        var = self.fresh(prefix, value.checked_type, span)
        bindings.append((var, value, span))
        return var

    def expand(self, var: Var, call: Call, bindings: list, span) -> None:
        fn = primitive_callee(call, self.mod)
        args = list(call.args)
        fn, args = self.flatten_inputs(fn, args, bindings, span)
        result_type = call.checked_type if call.checked_type is not None else fn.body.checked_type
        out_types = tensor_leaves(result_type)

        if _reshape_only(fn) and isinstance(result_type, TensorType):
            if result_type.is_static:
                shape = constant(list(result_type.shape), "int64", span)
            else:
                shape = self.shape_func(fn, args, out_types, bindings, span)[0]
            value = dialect_call(RESHAPE_TENSOR, [args[0], shape], result_type, span,
                                 {"newshape": [-1 if d is None else d for d in result_type.shape]})
            bindings.append((var, value, span))
            return

        if all(t.is_static for t in out_types):
            outs = [self.alloc_static(t, bindings, span) for t in out_types]
        else:
            shapes = self.shape_func(fn, args, out_types, bindings, span)
            outs = [self.alloc_static(t, bindings, span) if t.is_static
                    else self.alloc_dynamic(t, shape, bindings, span)
                    for t, shape in zip(out_types, shapes)]
        invoke = dialect_call(INVOKE_TVM_OP, [fn, tuple_of(args, span), tuple_of(outs, span)],
                              UNIT, span)
        bindings.append((_typed(Var("_"), UNIT, span), invoke, span))
        leaves = iter(outs)
        bindings.append((var, _rebuild(result_type, leaves, span), span))

    def alloc_static(self, t: TensorType, bindings: list, span) -> Var:
        size = constant(storage_bytes(t), "int64", span)
        storage = self.bind(bindings, "storage", dialect_call(
            ALLOC_STORAGE, [size], StorageType(), span,
            {"alignment": ALIGNMENT, "dtype_hint": t.dtype}), span)
        alloc = dialect_call(ALLOC_TENSOR, [storage, constant(0, "int64", span),
                                            constant(list(t.shape), "int64", span)], t, span,
                             {"dtype": t.dtype, "const_shape": list(t.shape)})
        return self.bind(bindings, "tensor", alloc, span)

    def alloc_dynamic(self, t: TensorType, shape: Var, bindings: list, span) -> Var:
        size = self.storage_size(t, shape, bindings, span)
        storage = self.bind(bindings, "storage", dialect_call(
            ALLOC_STORAGE, [size], StorageType(), span,
            {"alignment": ALIGNMENT, "dtype_hint": t.dtype}), span)
        alloc = dialect_call(ALLOC_TENSOR, [storage, constant(0, "int64", span), shape], t, span,
                             {"dtype": t.dtype})
        return self.bind(bindings, "tensor", alloc, span)

    def storage_size(self, t: TensorType, shape: Var, bindings: list, span) -> Var:
        """Bytes of a tensor of run-time shape: a primitive `prod(shape) * itemsize`
        (TVM computes it with Relay operators too)."""
        shape_type = shape.checked_type
        p = _typed(Var("p0", shape_type), shape_type, span)
        i64 = scalar("int64")
        count = _typed(Call(_typed(OpRef("prod"), FuncType((shape_type,), i64), span), [p]),
                       i64, span)
        item = constant(dtype_bytes(t.dtype), "int64", span)
        body = _typed(Call(_typed(OpRef("multiply"), FuncType((i64, i64), i64), span),
                           [count, item]), i64, span)
        fn = _typed(Function([p], body, i64, attrs={"Primitive": 1}), FuncType((shape_type,), i64),
                    span)
        call = _typed(Call(fn, [shape]), i64, span)
        size = self.fresh("size", i64, span)
        self.expand(size, call, bindings, span)
        return size

    def shape_func(self, fn: Function, args: list, out_types: list, bindings: list, span) -> list:
        """Bind each input's shape (or pass the input itself where the shape kernel reads its
        value), run fn's shape kernel; the output shape vars."""
        by_value = shape_func_inputs(fn)
        in_shapes = []
        for a, value in zip(args, by_value):
            if value:
                in_shapes.append(a)
                continue
            ndim = len(a.checked_type.shape)
            in_shapes.append(self.bind(bindings, "in_shape", dialect_call(
                SHAPE_OF, [a], TensorType((ndim,), "int64"), span), span))
        out_shapes = [self.alloc_static(TensorType((len(t.shape),), "int64"), bindings, span)
                      for t in out_types]
        params, body = copy_primitive(fn)
        shape_fn = _typed(Function(params, body, fn.ret_type, [],
                                   {**fn.attrs, SHAPE_FUNC_ATTR: 1}), fn.checked_type, fn.span)
        call = dialect_call(SHAPE_FUNC, [shape_fn, tuple_of(in_shapes, span),
                                         tuple_of(out_shapes, span)], UNIT, span,
                            {"is_input": [int(v) for v in by_value]})
        bindings.append((_typed(Var("_"), UNIT, span), call, span))
        return out_shapes

    def flatten_inputs(self, fn: Function, args: list, bindings: list, span):
        """Split tuple-typed parameters into tensor parameters (kernels take tensors only)."""
        if not any(isinstance(p.checked_type, TupleType) for p in fn.params):
            return fn, args
        params, new_args, mapping = [], [], {}
        for p, a in zip(fn.params, args):
            if not isinstance(p.checked_type, TupleType):
                params.append(p)
                new_args.append(a)
                continue

            def split(t, value, path):
                if isinstance(t, TupleType):
                    fields = []
                    for i, ft in enumerate(t.fields):
                        item = _typed(TupleGetItem(value, i), ft, span)
                        if isinstance(ft, TupleType):
                            item = self.bind(bindings, "field", item, span)
                        fields.append(split(ft, item, f"{path}_{i}"))
                    return _typed(Tuple(fields), t, span)
                q = _typed(Var(path, t), t, p.span)
                params.append(q)
                new_args.append(value if isinstance(value, Var)
                                else self.bind(bindings, "field", value, span))
                return q
            mapping[p] = split(p.checked_type, a, p.name)
        body = _Substitute(mapping).visit(fn.body)
        new_fn = _typed(Function(params, body, fn.ret_type, [], fn.attrs),
                        FuncType(tuple(q.checked_type for q in params), fn.body.checked_type),
                        fn.span)
        return new_fn, new_args


def copy_primitive(fn: Function):
    """Fresh parameters and body nodes for fn (the shape kernel must not share nodes with the
    data kernel: the printer would take shared nodes for graph bindings)."""
    params = []
    memo: dict = {}
    for p in fn.params:
        q = _typed(Var(p.name, p.type_annotation or p.checked_type), p.checked_type, p.span)
        memo[id(p)] = q
        params.append(q)

    def copy(e):
        if id(e) in memo:
            return memo[id(e)]
        if isinstance(e, Call):
            new = Call(e.op, [copy(a) for a in e.args], e.attrs)
            new.type_args = list(e.type_args)
        elif isinstance(e, Tuple):
            new = Tuple([copy(f) for f in e.fields])
        elif isinstance(e, TupleGetItem):
            new = TupleGetItem(copy(e.tuple_value), e.index)
        else:
            return e  # constants and operators are leaves
        memo[id(e)] = _typed(new, e.checked_type, e.span)
        return new

    return params, copy(fn.body)


def _rebuild(t, leaves, span):
    if isinstance(t, TupleType):
        return _typed(Tuple([_rebuild(f, leaves, span) for f in t.fields]), t, span)
    return next(leaves)


def wrap_lets(bindings: list, tail):
    """`let v1 = e1; ... tail` from (var, value, span) bindings, typed like tail."""
    out = tail
    for var, value, span in reversed(bindings):
        out = _typed(Let(var, value, out), tail.checked_type, span)
    return out


def manifest_alloc(mod: Module) -> Module:
    """A new module in which every primitive call is allocation plus `vm.invoke_tvm_op`."""
    out = mod.copy_shallow()
    for name, fn in mod.functions.items():
        if fn.is_primitive:
            continue
        m = _Manifester(mod, local_names(fn))
        new = Function(fn.params, m.expr(fn.body), fn.ret_type, fn.type_params, fn.attrs, fn.span)
        new.checked_type = fn.checked_type
        out.functions[name] = new
    return out
