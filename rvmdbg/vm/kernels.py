"""Kernels: the callables behind `invoke_packed`, built from a `Kernel`'s Relay source.

A compiled kernel (TVM: a lowered primitive function) is rebuilt here from the text of its
primitive function, so an executable carries no code, only Relay. `build_kernel(kernel)`
returns `impl(inputs: list) -> ndarray | tuple`:

- built-ins (`ref_create`, `ref_read`, `ref_write`) implement references on any values;
- a data kernel evaluates its primitive function's body as a flat list of operator steps over
  a value list (parsed and type-checked once, never walked as a tree per call); a kernel of one
  operator calls that operator's NumPy kernel directly;
- a shape kernel (the function carries `ShapeFunc=1`; TVM's shape functions for outputs with
  `?` dimensions) takes the int64 shape of each input, or its value where an operator's
  data-dependent shape function reads it (`shape_func_inputs`), and returns the int64 shape
  of each output, by running each operator's shape function (`rvmdbg.relay.ops.infer_shape`:
  the type relation on concrete shapes, or the operator's own `shape_func`).

A single output comes back as the value itself (the VM's fast path), several as a tuple.
Inputs and outputs are runtime values (`rvmdbg.scalars`): a 0-d tensor of a scalar dtype is a
NumPy scalar, converted to a 0-d array for the operator kernels and back; a kernel of one
operator with a scalar path also carries `scalar_fast` (see `_with_scalar_fast`).
"""
from __future__ import annotations

from functools import lru_cache
from sys import getrefcount

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.passes.manifest_alloc import SHAPE_FUNC_ATTR, shape_func_inputs, tensor_leaves
from rvmdbg.relay.ast import (Call, Constant, ExprMutator, Function, Module, OpRef, Tuple,
                              TupleGetItem, Var, children)
from rvmdbg.relay.types import TensorType, TupleType
from rvmdbg.scalars import SCALAR_TYPES, scalar_op, to_runtime
from rvmdbg.values import ADTValue, RefCell, make_tuple

# name -> (inputs, outputs) of the built-in kernels the compiler emits for references
BUILTIN_KERNELS = {"ref_create": (1, 1), "ref_read": (1, 1), "ref_write": (2, 1)}

_UNIT = make_tuple(())


class KernelBuildError(ValueError):
    """A kernel whose source cannot become a callable (bad text, wrong arity, unknown op)."""


# ---------------------------------------------------------------- built-ins (references)

def _ref_create(values):
    return (RefCell(values[0]),)


def _cell(values, name):
    cell = values[0]
    if type(cell) is not RefCell:
        from rvmdbg.relay.ops import KernelError
        raise KernelError(_("{op}: expected a reference, got {kind}").format(
            op=name, kind=type(cell).__name__))
    return cell


def _ref_read(values):
    return (_cell(values, "ref_read").value,)


def _ref_write(values):
    _cell(values, "ref_write").value = values[1]
    return (_UNIT,)


_BUILTIN_IMPLS = {"ref_create": _ref_create, "ref_read": _ref_read, "ref_write": _ref_write}


# ---------------------------------------------------------------- entry point

def build_kernel(kernel):
    """The callable for `kernel` (a `rvmdbg.vm.executable.Kernel`); raises KernelBuildError."""
    if kernel.builtin:
        arity = BUILTIN_KERNELS.get(kernel.name)
        if arity is None:
            raise KernelBuildError(_("unknown built-in kernel {kernel} (known: {known})").format(
                kernel=repr(kernel.name), known=", ".join(BUILTIN_KERNELS)))
        if arity != (kernel.num_inputs, kernel.num_outputs):
            raise KernelBuildError(_("built-in kernel {kernel} takes {inputs} inputs and "
                                     "{outputs} outputs, declared {given_inputs} and "
                                     "{given_outputs}").format(
                kernel=kernel.name, inputs=arity[0], outputs=arity[1],
                given_inputs=kernel.num_inputs, given_outputs=kernel.num_outputs))
        return _BUILTIN_IMPLS[kernel.name]
    return _build_from_source(kernel.source, kernel.num_inputs, kernel.num_outputs)


@lru_cache(maxsize=2048)
def _build_from_source(source: str, num_inputs: int, num_outputs: int):
    # Kernels are pure functions of their text, so equal sources share one callable.
    fn = parse_primitive(source)
    if len(fn.params) != num_inputs:
        raise KernelBuildError(_("the primitive function takes {n} inputs, the kernel "
                                 "declares {m}").format(n=len(fn.params), m=num_inputs))
    outputs = len(tensor_leaves(fn.body.checked_type))
    if outputs != num_outputs:
        raise KernelBuildError(_("the primitive function has {n} outputs, the kernel "
                                 "declares {m}").format(n=outputs, m=num_outputs))
    if fn.attrs.get(SHAPE_FUNC_ATTR):
        return compile_shape_kernel(fn)
    return runtime_kernel(compile_kernel(fn))


def runtime_kernel(kernel):
    """`kernel` (arrays in, arrays out) on runtime values: NumPy scalars in become 0-d arrays,
    0-d outputs of scalar dtypes become NumPy scalars. Keeps `scalar_fast` and
    `intermediate_bytes`."""
    def on_values(inputs):
        out = kernel([np.asarray(v) if type(v) in SCALAR_TYPES else v for v in inputs])
        if type(out) is tuple:
            return tuple(map(to_runtime, out))
        return to_runtime(out)
    fast = getattr(kernel, "scalar_fast", None)
    if fast is not None:
        on_values.scalar_fast = fast
    held = getattr(kernel, "intermediate_bytes", None)
    if held is not None:
        on_values.intermediate_bytes = held
    within = getattr(kernel, "run_within", None)
    if within is not None:  # intermediates of run-time shapes, checked as they are made
        def run_within(inputs, room):
            out = within([np.asarray(v) if type(v) in SCALAR_TYPES else v for v in inputs], room)
            if type(out) is tuple:
                return tuple(map(to_runtime, out))
            return to_runtime(out)
        on_values.run_within = run_within
        on_values.intermediate_bytes = None
    return on_values


class _ParamSwap(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_Var(self, v: Var) -> Var:
        return self.mapping.get(id(v), v)


def with_param_types(fn: Function) -> Function:
    """fn with every unannotated parameter annotated with its inferred type. A kernel's source
    is its text type-checked alone, and TVM's printed primitives (its plan-devices tests) leave
    parameters unannotated, typed by the call; TVM lowers them with those inferred types."""
    if all(p.type_annotation is not None or p.checked_type is None for p in fn.params):
        return fn
    mapping = {}
    params = []
    for p in fn.params:
        if p.type_annotation is None and p.checked_type is not None:
            q = Var(p.name, p.checked_type, p.span, p.attrs)
            q.checked_type = p.checked_type
            mapping[id(p)] = q
            p = q
        params.append(p)
    out = Function(params, _ParamSwap(mapping).visit(fn.body), fn.ret_type, fn.type_params,
                   fn.attrs, fn.span)
    out.checked_type = fn.checked_type
    return out


def parse_primitive(source: str) -> Function:
    """Parse and type-check the text of a primitive function."""
    from rvmdbg.relay.diagnostics import RelayError
    from rvmdbg.relay.parser import parse_expr
    from rvmdbg.relay.typecheck import check_expr
    try:
        fn = parse_expr(source, Module(), filename="<kernel>")
    except RelayError as e:
        raise KernelBuildError(_("kernel source does not parse: {error}").format(
            error=e.message)) from None
    if not isinstance(fn, Function) or not fn.is_primitive:
        raise KernelBuildError(_("kernel source is not a primitive function "
                                 "(fn (...) with Primitive=1)"))
    try:
        check_expr(fn, Module())
        inlined = inline_local_calls(fn)
        if inlined is not fn:
            fn = inlined
            check_expr(fn, Module())
    except RelayError as e:
        raise KernelBuildError(_("kernel source does not type-check: {error}").format(
            error=e.message)) from None
    params = set(fn.params)
    for node in post_order(fn.body):
        if isinstance(node, Var) and node not in params:
            raise KernelBuildError(_("kernel body uses %{var}, which is not a parameter").format(
                var=node.name))
        if not isinstance(node, (Call, Constant, Var, Tuple, TupleGetItem, OpRef)):
            raise KernelBuildError(_("kernel body contains a {kind}; only operator calls, "
                                     "constants, tuples and projections may appear").format(
                kind=type(node).__name__))
        if isinstance(node, Call) and not isinstance(node.op, OpRef):
            raise KernelBuildError(_("kernel body calls something other than an operator"))
    return fn


class _InlineLocalCalls(ExprMutator):
    """A primitive function's calls of function literals replaced by their bodies: the
    `Composite=...` functions inside a partition for an external codegen (BYOC), which that
    codegen matches as one pattern each; here they are simply part of the one kernel."""

    def __init__(self, env: dict | None = None):
        super().__init__()
        self.env = env or {}

    def visit_Var(self, v):
        return self.env.get(v, v)

    def visit_Call(self, e):
        if not isinstance(e.op, Function):
            return self._default(e)
        args = [self.visit(a) for a in e.args]
        return _InlineLocalCalls({**self.env, **dict(zip(e.op.params, args))}).visit(e.op.body)


def inline_local_calls(fn: Function) -> Function:
    """fn with its calls of function literals inlined (fn itself when it has none)."""
    if any(isinstance(n, Call) and isinstance(n.op, Function) for n in post_order(fn.body)):
        return _InlineLocalCalls().visit(fn)
    return fn


def post_order(body) -> list:
    """A kernel body's nodes, every node after its operands, each once (it may be a DAG)."""
    out, seen = [], {id(body)}
    stack = [(body, iter(_operands(body)))]
    while stack:
        node, it = stack[-1]
        for child in it:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(_operands(child))))
                break
        else:
            stack.pop()
            out.append(node)
    return out


def _operands(node) -> list:
    if isinstance(node, Call):
        return list(node.args)  # the callee is an OpRef, not a value
    return children(node)


# ---------------------------------------------------------------- data kernels

def _make_tuple(values, _attrs):
    return tuple(values)


def _project(values, index):
    return values[0][index]


def _flatten(value) -> tuple:
    if isinstance(value, tuple):
        return tuple(leaf for v in value for leaf in _flatten(v))
    return (value,)


def _adt_to_tuple(value):
    # A tuple-typed input arrives as the VM's tuple value; operators take a Python tuple.
    if isinstance(value, ADTValue):
        return tuple(_adt_to_tuple(f) for f in value.fields)
    if type(value) in SCALAR_TYPES:
        return np.asarray(value)
    return value


def _slots(fn: Function, params: list) -> tuple[dict, list, list]:
    """(slot of every node, the Constant nodes, the computing nodes) of a primitive function's
    body: the inputs take slots 0..n-1, the constants the next ones, then each computing node
    (Call, Tuple, TupleGetItem) one slot, in evaluation order (after its operands)."""
    order = post_order(fn.body)
    slot = {p: i for i, p in enumerate(params)}
    constants = [node for node in order if isinstance(node, Constant)]
    computing = [node for node in order if not isinstance(node, (Var, Constant, OpRef))]
    for i, node in enumerate(constants + computing, start=len(params)):
        slot[node] = i
    return slot, constants, computing


def compile_kernel(fn: Function):
    """A callable evaluating the typed primitive function `fn` on a list of input arrays."""
    from rvmdbg.relay.ops import get_op, normalize_attrs

    fn = inline_local_calls(fn)
    params = list(fn.params)
    slot, constant_nodes, computing = _slots(fn, params)
    constants = [node.data for node in constant_nodes]   # values preloaded after the inputs
    steps = []       # (function, attrs, operand slots)
    for node in computing:
        if isinstance(node, Call):
            opdef = get_op(node.op.name)
            if opdef is None:
                raise KernelBuildError(_("unknown operator {op}").format(op=node.op.name))
            attrs = normalize_attrs(opdef, node.attrs)
            steps.append((_bound(opdef, attrs), attrs, tuple(slot[a] for a in node.args)))
        elif isinstance(node, Tuple):
            steps.append((_make_tuple, None, tuple(slot[f] for f in node.fields)))
        else:  # TupleGetItem
            steps.append((_project, node.index, (slot[node.tuple_value],)))

    multi = isinstance(fn.body.checked_type, TupleType)
    tuple_params = [i for i, p in enumerate(params) if isinstance(p.checked_type, TupleType)]
    body = fn.body
    result_slot = slot[body]
    if len(steps) == 1 and not multi and not tuple_params and isinstance(body, Call):
        return _with_scalar_fast(_single_op(steps[0], len(params), constants), fn)

    consts = tuple(constants)
    # An intermediate is dropped after its last use, as TVM's fused loop never holds the
    # chain at once; what the kernel holds at its peak is known from the static types.
    first = len(params) + len(consts)
    last_use: dict = {}
    for k, (_fn, _attrs, operands) in enumerate(steps):
        for i in operands:
            last_use[i] = k
    drops = tuple(tuple(i for i in sorted(set(operands)) if last_use[i] == k and i >= first
                        and i != result_slot)
                  for k, (_, _, operands) in enumerate(steps))
    steps = tuple(steps)
    peak = _intermediate_peak(computing, steps, drops, first, result_slot)
    into = _in_place_steps(computing, steps, last_use, first, slot)

    def kernel(inputs):
        if tuple_params:
            inputs = list(inputs)
            for i in tuple_params:
                inputs[i] = _adt_to_tuple(inputs[i])
        values = [*inputs, *consts]
        for (func, attrs, operands), drop, in_place in zip(steps, drops, into):
            args = [values[i] for i in operands]
            if in_place is not None:
                a = args[0]
                # the array is the kernel's own: made by an operator, referred to by
                # `values`, `args` and `a` alone, and so is the memory it views (a view
                # holds its base: no other view of it is alive)
                if (type(a) is np.ndarray and getrefcount(a) == _OWN_REFS
                        and a.flags.writeable):
                    b = a.base
                    if b is None or (type(b) is np.ndarray and b.base is None
                                     and getrefcount(b) == _BASE_REFS):
                        func = in_place
            values.append(func(args, attrs))
            for i in drop:
                values[i] = None
        out = values[result_slot]
        return _flatten(out) if multi else out

    # bytes of intermediates held at once (None: a shape known only at run time); the VM
    # checks them against --max-bytes before calling
    kernel.intermediate_bytes = peak
    if peak is None:
        kernel.run_within = _run_within(computing, steps, drops, tuple_params, consts,
                                        result_slot, multi)
    return kernel


_UNKNOWN = object()
# references to an intermediate only the kernel's loop holds, as getrefcount counts them:
# its slot in `values`, `args`, the local `a` and getrefcount's own argument
_OWN_REFS = 4
# and to the array an intermediate views: the view's base, the local `b`, the argument
_BASE_REFS = 3


def _in_place_steps(computing, steps, last_use, first, slot) -> tuple:
    """Per step, the operator's in-place kernel (`rvmdbg.relay.ops.IN_PLACE`) when its first
    operand is an intermediate of static float type equal to the result's, made by an
    operator call and used for the last time here (and only once in the step); else None.
    The loop then still checks, each call, that no view of that array is alive."""
    from rvmdbg.relay.ops.core import IN_PLACE

    made_by_call = {slot[node] for node in computing if isinstance(node, Call)}
    out = []
    for k, (node, (_fn, _attrs, operands)) in enumerate(zip(computing, steps)):
        fn = IN_PLACE.get(node.op.name) if isinstance(node, Call) else None
        if fn is not None and operands:
            s0 = operands[0]
            t, t0 = node.checked_type, node.args[0].checked_type
            if not (s0 >= first and s0 in made_by_call and last_use.get(s0) == k
                    and operands.count(s0) == 1 and _static_float(t) and t == t0):
                fn = None
        out.append(fn)
    return tuple(out)


def _static_float(t) -> bool:
    return (isinstance(t, TensorType) and t.dtype in ("float32", "float64")
            and all(type(d) is int for d in t.shape))


def _bound(opdef, attrs):
    """The operator's kernel with its attributes bound (`OpDef.bind`) when it has a binder that
    takes them, else its kernel (which reports what is wrong with them when it runs)."""
    if opdef.bind is not None:
        try:
            return opdef.bind(attrs)
        except Exception:  # noqa: BLE001 (the unbound kernel raises it again, at run time)
            pass
    return opdef.kernel


class NoRoom(Exception):
    """A fused kernel's next operator would make its intermediates pass the bytes it may
    hold (`needed`); raised before that operator allocates."""

    def __init__(self, needed: int, op: str):
        super().__init__(needed, op)
        self.needed = needed
        self.op = op


def _run_within(computing, steps, drops, tuple_params, consts, result_slot, multi):
    """`run_within(inputs, room)`: the fused kernel with intermediates whose shapes are known
    only at run time, checking before each operator, from its relation on the real input
    shapes, that the intermediates it holds with the new one fit in `room` bytes (NoRoom)."""
    from rvmdbg.relay.ops import get_op

    rels = []
    for node in computing:
        if isinstance(node, Call):
            static = _static_bytes(node.checked_type)
            rels.append((node.op.name, static, get_op(node.op.name).type_rel))
        else:
            rels.append((None, 0, None))   # a tuple or a projection shares its fields' arrays

    known: dict = {}   # (step, input shapes and dtypes) -> bytes: relations run once per shape

    def size_of(k, args, attrs) -> int | None:
        name, static, rel = rels[k]
        if static is not None or rel is None:
            return static
        if not all(type(a) is np.ndarray for a in args):
            return None
        key = (k, *[(a.shape, a.dtype) for a in args])
        size = known.get(key, _UNKNOWN)
        if size is _UNKNOWN:
            try:
                t = rel([TensorType(tuple(a.shape), str(a.dtype)) for a in args], attrs)
                size = _static_bytes(t) if isinstance(t, TensorType) else None
            except Exception:
                size = None   # the kernel reports what is wrong with its inputs
            if len(known) > 4096:
                known.clear()
            known[key] = size
        return size

    def run_within(inputs, room: int):
        if tuple_params:
            inputs = list(inputs)
            for i in tuple_params:
                inputs[i] = _adt_to_tuple(inputs[i])
        values = [*inputs, *consts]
        held = 0
        first = len(values)
        for k, ((func, attrs, operands), drop) in enumerate(zip(steps, drops)):
            args = [values[i] for i in operands]
            slot = first + k
            if slot != result_slot:
                size = size_of(k, args, attrs)
                if size is not None and held + size > room:
                    raise NoRoom(held + size, rels[k][0])
            out = func(args, attrs)
            values.append(out)
            if slot != result_slot and type(out) is np.ndarray and out.base is None:
                held += out.nbytes
            for i in drop:
                v = values[i]
                if type(v) is np.ndarray and v.base is None:
                    held -= v.nbytes
                values[i] = None
        out = values[result_slot]
        return _flatten(out) if multi else out
    return run_within


def _static_bytes(t) -> int | None:
    """Bytes of a value of type `t` when every shape in it is known, else None."""
    if isinstance(t, TensorType):
        if not t.is_static:
            return None
        size = np.dtype(t.dtype).itemsize
        for d in t.shape:
            size *= int(d)
        return size
    if isinstance(t, TupleType):
        total = 0
        for f in t.fields:
            b = _static_bytes(f)
            if b is None:
                return None
            total += b
        return total
    return None


def _intermediate_peak(computing: list, steps: tuple, drops: tuple, first: int,
                       result_slot: int) -> int | None:
    """The most bytes of intermediates (not the inputs, constants or the result, which the
    VM counts itself) the kernel holds at once."""
    live, peak = 0, 0
    sizes: dict = {}
    for k, node in enumerate(computing):
        slot = first + k
        if isinstance(node, (Tuple, TupleGetItem)):
            size = 0   # a tuple or a projection shares its fields' arrays
        else:
            size = _static_bytes(node.checked_type)
            if size is None:
                return None
        if slot != result_slot:
            sizes[slot] = size
            live += size
        peak = max(peak, live)
        for i in drops[k]:
            live -= sizes.pop(i, 0)
    return peak


def _single_op(step, n_inputs: int, constants: list):
    """A kernel of one operator: call its NumPy kernel with no step loop (specialised for the
    common shapes of a scalar program's kernels, which run once per VM instruction)."""
    func, attrs, operands = step
    if operands == tuple(range(n_inputs)):
        def kernel(inputs):
            return func(inputs, attrs)
        return kernel
    # each operand is an input (by index) or an inline scalar constant
    sources = [(True, i) if i < n_inputs else (False, constants[i - n_inputs]) for i in operands]
    if len(sources) == 2:
        (a_in, a), (b_in, b) = sources
        if a_in and b_in:
            def kernel(inputs):
                return func([inputs[a], inputs[b]], attrs)
        elif a_in:
            def kernel(inputs):
                return func([inputs[a], b], attrs)
        elif b_in:
            def kernel(inputs):
                return func([a, inputs[b]], attrs)
        else:
            def kernel(inputs):
                return func([a, b], attrs)
        return kernel
    if len(sources) == 1 and sources[0][0]:
        a = sources[0][1]

        def kernel(inputs):
            return func([inputs[a]], attrs)
        return kernel

    def kernel(inputs):
        return func([inputs[v] if is_input else v for is_input, v in sources], attrs)
    return kernel


# ---------------------------------------------------------------- the VM's scalar fast path
# (added for rvmdbg/vm/handlers.py's `invoke_packed`; separate from the kernel builders above)

def _with_scalar_fast(kernel, fn: Function):
    """`kernel` with `kernel.scalar_fast = (fast, operands)` when its one operator has a
    scalar path (`rvmdbg.scalars.scalar_op`) for its argument dtypes and every parameter and
    constant is 0-d.

    `fast(*values)` computes on NumPy scalars what the operator's kernel computes on 0-d arrays
    (callers run it under `rvmdbg.scalars.quiet()`); `operands` lists, in the operator's
    argument order, an input index (int) or a constant (a NumPy scalar). Callers must still
    check at run time that each input is 0-d."""
    body = fn.body
    if any(not (isinstance(p.checked_type, TensorType) and p.checked_type.shape == ())
           for p in fn.params):
        return kernel
    dtypes = [a.checked_type.dtype for a in body.args
              if isinstance(a.checked_type, TensorType)]
    fast = scalar_op(body.op.name, dtypes) if len(dtypes) == len(body.args) else None
    if fast is None:
        return kernel
    index = {p: i for i, p in enumerate(fn.params)}
    operands = []
    for a in body.args:
        if isinstance(a, Var) and a in index:
            operands.append(index[a])
        elif isinstance(a, Constant) and a.data.shape == ():
            operands.append(to_runtime(a.data))
        else:
            return kernel
    kernel.scalar_fast = (fast, tuple(operands))
    return kernel


# ---------------------------------------------------------------- shape kernels

def _value_dtypes(t):
    if isinstance(t, TupleType):
        return [_value_dtypes(f) for f in t.fields]
    return t.dtype


def compile_shape_kernel(fn: Function):
    """A callable mapping `fn`'s inputs to the int64 shapes of its outputs.

    Each input is the int64 shape of the kernel's parameter, or, where
    `shape_func_inputs(fn)` says so (an operator's data-dependent shape function reads it), the
    parameter's value itself: the VM passes what ManifestAlloc put in the `vm.shape_func` call,
    which asked the same function. While it runs a slot holds a shape (a tuple of ints), a
    value (an ndarray, standing for its shape where only the shape is needed) or, for a tuple,
    a list of them."""
    from rvmdbg.relay.ops import KernelError, get_op, infer_shape, normalize_attrs

    params = list(fn.params)
    for p in params:
        if not isinstance(p.checked_type, TensorType):
            raise KernelBuildError(_("shape kernel input %{var} is not a tensor").format(
                var=p.name))
    by_value = shape_func_inputs(fn)
    slot, constant_nodes, computing = _slots(fn, params)
    steps = []
    for node in computing:
        if isinstance(node, Call):
            opdef = get_op(node.op.name)
            if opdef is None:
                raise KernelBuildError(_("unknown operator {op}").format(op=node.op.name))
            if opdef.data_dependent and _static(node.checked_type):
                # its shape is known: no need for values computed inside the kernel
                steps.append(("static", _static_shapes(node.checked_type), ()))
                continue
            if opdef.data_dependent:
                for needs_value, a in zip(opdef.shape_data, node.args):
                    if needs_value and not isinstance(a, (Var, Constant)):
                        raise KernelBuildError(_(
                            "{op} needs a value computed inside the kernel to know its output "
                            "shape; its shape function can read only the kernel's parameters "
                            "(as in TVM, such a call must stand alone)").format(op=node.op.name))
            dtypes = [_value_dtypes(a.checked_type) for a in node.args]
            several = isinstance(node.checked_type, TupleType)
            steps.append(("op", (node.op.name, dtypes, normalize_attrs(opdef, node.attrs),
                                 several), tuple(slot[a] for a in node.args)))
        elif isinstance(node, Tuple):
            steps.append(("tuple", None, tuple(slot[f] for f in node.fields)))
        else:
            steps.append(("get", node.index, (slot[node.tuple_value],)))
    result_slot = slot[fn.body]
    consts = tuple(node.data for node in constant_nodes)
    expects = [(bool(v), p.name, p.checked_type) for v, p in zip(by_value, params)]

    def shape_kernel(inputs):
        values = []
        for i, (s, (value, name, t)) in enumerate(zip(inputs, expects)):
            values.append(_shape_kernel_input(s, value, name, t, KernelError))
        values.extend(consts)
        for kind, info, operands in steps:
            args = [values[i] for i in operands]
            if kind == "op":
                name, dtypes, attrs, several = info
                shapes = infer_shape(name, args, dtypes, attrs)
                values.append([tuple(s) for s in shapes] if several else tuple(shapes[0]))
            elif kind == "static":
                values.append(info)
            elif kind == "tuple":
                values.append(list(args))
            else:
                values.append(args[0][info])
        return tuple(np.array(_shape_of(s), dtype=np.int64)
                     for s in _flatten_shapes(values[result_slot]))

    return shape_kernel


def _shape_kernel_input(s, by_value: bool, name: str, t: TensorType, error):
    """One input of a shape kernel, checked: the parameter's value, or its int64 shape."""
    arr = np.asarray(s)
    if by_value:
        if (arr.dtype != np.dtype(t.dtype) or arr.ndim != len(t.shape)
                or any(d is not None and d != n for d, n in zip(t.shape, arr.shape))):
            raise error(_("shape function input %{var} must be the value of a {type}, got a "
                          "{dtype} tensor of shape {shape}").format(
                var=name, type=t, dtype=arr.dtype, shape=tuple(arr.shape)))
        return arr
    if arr.ndim != 1 or arr.shape[0] != len(t.shape):
        raise error(_("shape function input %{var} must be the {n}-element shape of a {type}, "
                      "got a tensor of shape {shape}").format(
            var=name, n=len(t.shape), type=t, shape=tuple(arr.shape)))
    return tuple(int(d) for d in arr)


def _static(t) -> bool:
    return all(leaf.is_static for leaf in tensor_leaves(t))


def _static_shapes(t):
    if isinstance(t, TupleType):
        return [_static_shapes(f) for f in t.fields]
    return tuple(t.shape)


def _shape_of(s) -> tuple:
    return s.shape if isinstance(s, np.ndarray) else s


def _flatten_shapes(value) -> list:
    if isinstance(value, list):
        return [s for v in value for s in _flatten_shapes(v)]
    return [value]


__all__ = ["build_kernel", "compile_kernel", "compile_shape_kernel", "parse_primitive",
           "post_order", "BUILTIN_KERNELS", "KernelBuildError"]
