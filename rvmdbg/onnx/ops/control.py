"""Control flow: If becomes a Relay `if`, Loop and Scan a recursive function bound by `let`
(TVM's `while_loop`: `if (cond) { %while_loop(next values) } else { (values) }`), the
subgraphs converted in a scope that sees the enclosing graph's values by name."""
from __future__ import annotations

import numpy as np

from rvmdbg.relay import ast
from rvmdbg.relay.ast import Call, Function, Let, Var
from rvmdbg.relay.types import TensorType
from rvmdbg.i18n import _
from rvmdbg.onnx.registry import converter
from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx import seqlist


def _scalar_cond(g, cond):
    if g.shape_of(cond):
        cond = g.call("take", [cond, g.const(np.asarray(0, "int64"))], axis=None,
                      batch_dims=0, mode="clip")
    return cond


@converter("If", since=1)
def if_(g, node, inputs, attrs):
    cond = _scalar_cond(g, inputs[0])
    known = c.const_value(g, cond)
    if known is not None:
        # a condition known at import time: only the branch taken is converted (the other
        # may be ill-formed for these shapes, as AffineGrid's rank-dependent branches are)
        out = g.subgraph(attrs["then_branch" if bool(known) else "else_branch"], {})
        return out[0] if len(out) == 1 else out
    then_out = g.subgraph(attrs["then_branch"], {})
    else_out = g.subgraph(attrs["else_branch"], {})
    if len(then_out) == 1:
        t, e = then_out[0], else_out[0]
        if not isinstance(g.type_of(t), TensorType) or not isinstance(g.type_of(e),
                                                                      TensorType):
            return ast.If(cond, t, e, g.span)  # sequences (tuples): no rank to broadcast
        rt, re_ = g.rank_of(t), g.rank_of(e)
        if rt != re_:
            # TVM broadcast the branch of lower rank to the other's
            if rt < re_:
                t = g.call("broadcast_to_like", [t, e])
            else:
                e = g.call("broadcast_to_like", [e, t])
        return ast.If(cond, t, e, g.span)
    out = ast.If(cond, g.tuple(then_out), g.tuple(else_out), g.span)
    return [g.get(out, i) for i in range(len(then_out))]


def _var_like(g, name: str, value, scan=False) -> Var:
    t = g.type_of(value)
    if not isinstance(t, TensorType):
        # a sequence is a tuple of a length fixed at import: one that a loop carries may grow
        # each iteration, which TVM's tuples could not express either
        raise g.error(_("a Loop or Scan that carries a sequence ({name}) is not supported: "
                        "sequences are tuples whose length is fixed at import").format(
                            name=name))
    dims = [None if d == 0 else d for d in t.shape]
    if scan:
        dims = [None] + dims
    v = Var(name, TensorType(tuple(dims), t.dtype))
    v.checked_type = v.type_annotation
    return v


def _loosen(v: Var, found) -> Var:
    """v's type with the dims where the body's result differs from it made `?`."""
    t = v.type_annotation
    if not isinstance(found, TensorType) or len(found.shape) != len(t.shape):
        return v
    dims = tuple(a if a == b else None for a, b in zip(t.shape, found.shape))
    if dims == tuple(t.shape):
        return v
    w = Var(v.name, TensorType(dims, t.dtype))
    w.checked_type = w.type_annotation
    return w


@converter("Loop", since=11)
def loop(g, node, inputs, attrs):
    from rvmdbg.onnx.names import legal_name
    max_count, cond = inputs[0], inputs[1]
    deps = list(inputs[2:])
    body = attrs["body"]
    n_deps = len(deps)
    iter_dtype = g.dtype_of(max_count) if max_count is not None else "int64"
    if cond is not None:
        cond = _scalar_cond(g, cond)
    if max_count is not None:
        max_count = c.reshape(g, max_count, []) if g.shape_of(max_count) else max_count
    cond_init = cond if cond is not None else g.const(np.asarray(True))
    count_init = max_count if max_count is not None else g.const(np.asarray(0, iter_dtype))

    # a loop-carried sequence grows at run time: a run-time List (seqlist), not a tuple
    is_seq = [not isinstance(g.type_of(d), TensorType) for d in deps]

    def make_vars(types=None, probe=None):
        vs = [Var(legal_name(body.input[0].name), TensorType((), iter_dtype)),
              Var("max_count", TensorType((), iter_dtype)),
              Var(legal_name(body.input[1].name), TensorType((), "bool"))]
        for i, d in enumerate(deps):
            name = legal_name(body.input[i + 2].name)
            if not is_seq[i]:
                vs.append(_var_like(g, name, d))
            elif probe is None:
                vs.append(d)  # the first conversion sees the initial sequence itself
            else:
                vs.append(seqlist.loop_var(g, name, d, probe[1 + i]))
        for v in vs:
            if isinstance(v, Var) and v.type_annotation is not None:
                v.checked_type = v.type_annotation
        if types is not None:
            vs = vs[:3] + [_loosen(v, t) for v, t in zip(vs[3:], types)]
        return vs

    def run_body(vs):
        bind = {body.input[0].name: vs[0], body.input[1].name: vs[2]}
        for i in range(n_deps):
            bind[body.input[i + 2].name] = vs[3 + i]
        return g.subgraph(body, bind)

    # a first conversion finds the types the body gives the loop-carried values
    probe = run_body(make_vars())
    vs = make_vars([g.type_of(o) for o in probe[1:1 + n_deps]], probe)
    for i in range(n_deps):
        if is_seq[i]:
            elem = g.type_of(vs[3 + i]).args[0]
            deps[i] = seqlist.as_list(g, deps[i], elem)
    n_scan = len(body.output) - 1 - n_deps
    scan_vars, scan_init = [], []
    for i in range(n_scan):
        t = g.type_of(probe[1 + n_deps + i])
        sv = Var(legal_name(body.output[1 + n_deps + i].name),
                 TensorType(tuple([None] * (len(t.shape) + 1)), t.dtype))
        sv.checked_type = sv.type_annotation
        scan_vars.append(sv)
        scan_init.append(c.reshape(g, g.const(np.array([], t.dtype)), [0] + [1] * len(t.shape)))
    outs = run_body(vs)
    new_cond = _scalar_cond(g, outs[0])
    new_deps = [seqlist.as_list(g, o, g.type_of(vs[3 + i]).args[0]) if is_seq[i] else o
                for i, o in enumerate(outs[1:1 + n_deps])]
    new_scans = []
    for sv, new in zip(scan_vars, outs[1 + n_deps:]):
        scan = sv
        expanded = c.expand_dims(g, new, 0)
        if g.rank_of(new) > 0:
            shape = c.concat(g, [c.reshape(g, vs[0], [1]), c.shape_of(g, new, iter_dtype)], 0)
            scan = g.call("dyn.broadcast_to", [scan, shape])
        new_scans.append(c.concat(g, [scan, expanded], 0))
    count = vs[0]
    if max_count is not None:
        count = g.call("add", [count, g.const(np.asarray(1, iter_dtype))])
    params = vs + scan_vars
    keep_going = []
    if cond is not None:
        keep_going.append(g.call("equal", [vs[2], g.const(np.asarray(True))]))
    if max_count is not None:
        keep_going.append(g.call("less", [vs[0], vs[1]]))
    test = keep_going[0] if len(keep_going) == 1 else g.call("logical_and", keep_going)
    fn_var = Var("while_loop")
    again = Call(fn_var, [count, vs[1], new_cond, *new_deps, *new_scans], None, g.span)
    fn = Function(params, ast.If(test, again, g.tuple(list(params)), g.span), span=g.span)
    looped = Let(fn_var, fn, fn_var, g.span)
    result = Call(looped, [g.const(np.asarray(0, iter_dtype)), count_init, cond_init,
                           *deps, *scan_init], None, g.span)
    n = n_deps + n_scan
    if n == 1:
        return g.get(result, 3)
    return [g.get(result, 3 + i) for i in range(n)]


@converter("Scan", since=9)
def scan(g, node, inputs, attrs):
    from rvmdbg.onnx.names import legal_name
    body = attrs["body"]
    n_scan_in = int(attrs["num_scan_inputs"])
    n_all_in = len(inputs)
    n_state = len(body.input) - n_scan_in
    n_all_out = len(body.output)
    n_scan_out = n_all_out - n_state
    in_axes = list(attrs.get("scan_input_axes", [0] * n_scan_in))
    in_dirs = list(attrs.get("scan_input_directions", [0] * n_scan_in))
    out_axes = list(attrs.get("scan_output_axes", [0] * n_scan_out))
    out_dirs = list(attrs.get("scan_output_directions", [0] * n_scan_out))
    first = inputs[n_state]
    in_axes = [a % g.rank_of(inputs[n_state + i]) for i, a in enumerate(in_axes)]
    count = g.shape_of(first)[in_axes[0]]
    if count is None:
        raise g.error("Scan over an axis of unknown length is not supported")
    i32 = lambda v: g.const(np.asarray(v, "int32"))  # noqa: E731

    def slices(it):
        out = []
        for k in range(n_state, n_all_in):
            j = k - n_state
            at = g.call("subtract", [i32(count - 1), it]) if in_dirs[j] else it
            out.append(g.call("take", [inputs[k], at], axis=in_axes[j], batch_dims=0,
                              mode="clip"))
        return out

    def bindings(it, states):
        b = {body.input[i].name: states[i] for i in range(n_state)}
        for j, e in enumerate(slices(it)):
            b[body.input[n_state + j].name] = e
        return b

    it0 = Var("iter", TensorType((), "int32"))
    it0.checked_type = it0.type_annotation
    states0 = [_var_like(g, legal_name(body.input[i].name), inputs[i]) for i in range(n_state)]
    probe = g.subgraph(body, bindings(it0, states0))
    scan_vars, scan_init = [], []
    for i in range(n_scan_out):
        t = g.type_of(probe[n_state + i])
        shape = list(t.shape)
        if out_axes[i] < 0:
            out_axes[i] += len(shape) + 1
        shape.insert(out_axes[i], count)
        v = Var(legal_name(body.output[n_state + i].name), TensorType(tuple(shape), t.dtype))
        v.checked_type = v.type_annotation
        scan_vars.append(v)
        scan_init.append(g.call("zeros", [], shape=shape, dtype=t.dtype))
    it = Var("iter", TensorType((), "int32"))
    it.checked_type = it.type_annotation
    states = [_var_like(g, legal_name(body.input[i].name), inputs[i]) for i in range(n_state)]
    outs = g.subgraph(body, bindings(it, states))
    new_scans = []
    for i in range(n_scan_out):
        ax = out_axes[i]
        new = c.expand_dims(g, outs[n_state + i], ax)
        if out_dirs[i] == 0:
            joined = c.concat(g, [scan_vars[i], new], ax)
            new_scans.append(c.strided_slice(g, joined, [1], [count + 1], [1], [ax]))
        else:
            joined = c.concat(g, [new, scan_vars[i]], ax)
            new_scans.append(c.strided_slice(g, joined, [0], [count], [1], [ax]))
    params = [it, *states, *scan_vars]
    fn_var = Var("while_loop")
    again = Call(fn_var, [g.call("add", [it, i32(1)]), *outs[:n_state], *new_scans], None,
                 g.span)
    test = g.call("less", [it, i32(count)])
    fn = Function(params, ast.If(test, again, g.tuple(list(params)), g.span), span=g.span)
    result = Call(Let(fn_var, fn, fn_var, g.span),
                  [i32(0), *inputs[:n_state], *scan_init], None, g.span)
    return [g.get(result, 1 + i) for i in range(n_all_out)]


@converter("Scan", since=8)
def scan_v8(g, node, inputs, attrs):
    # opset 8 has a batch axis first and an optional sequence_lens input: one v9 scan per
    # batch item, the results stacked (TVM's _impl_v8)
    rest = inputs[1:]
    batch = g.shape_of(rest[0])[0]
    out = None
    for b in range(batch):
        items = [g.call("take", [x, g.const(np.asarray(b, "int32"))], axis=0, batch_dims=0,
                        mode="clip") for x in rest]
        res = [c.expand_dims(g, r, 0) for r in scan(g, node, items, attrs)]
        out = res if out is None else [c.concat(g, [o, r], 0) for o, r in zip(out, res)]
    return out
