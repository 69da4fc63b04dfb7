"""Recurrent layers (RNN, GRU, LSTM) unrolled over the sequence as TVM's frontend did: one
`nn.dense` pair per step and direction (TVM's rnn_cell, gru_cell and lstm_cell), the steps
stacked into the outputs."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.registry import converter, lookup
from rvmdbg.onnx.ops import common as c


def _split(g, x, n, axis=0):
    t = g.call("split", [x], indices_or_sections=n, axis=axis)
    return [g.get(t, i) for i in range(n)]


def _stack(g, xs, axis=0):
    return g.call("stack", [g.tuple(xs)], axis=axis)


def _activation(g, name: str, alpha=None, beta=None):
    if name == "Affine":
        return lambda x: g.call("add", [g.call("multiply", [
            x, g.const(np.asarray(alpha if alpha is not None else 1.0, "float32"))]),
            g.const(np.asarray(beta or 0.0, "float32"))])
    if name == "ScaledTanh":
        return lambda x: g.call("multiply", [g.call("tanh", [g.call("multiply", [
            g.const(np.asarray(beta if beta is not None else 1.0, "float32")), x])]),
            g.const(np.asarray(alpha if alpha is not None else 1.0, "float32"))])
    conv = lookup(name, "", 1)
    if conv is None:
        raise g.error(f"activation {name} is not supported")
    attrs = {}
    if alpha is not None:
        attrs["alpha"] = alpha
    if beta is not None:
        attrs["beta"] = beta
    return lambda x: conv.fn(g, g.node, [x], attrs)


_NEEDS_ALPHA = {"Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu"}
_NEEDS_BETA = {"Affine", "ScaledTanh", "HardSigmoid"}


def _activations(g, attrs, defaults, n_dirs):
    if "activations" not in attrs:
        return [_activation(g, a) for a in defaults * n_dirs]
    names = attrs["activations"]
    alphas = list(attrs.get("activation_alpha", []))
    betas = list(attrs.get("activation_beta", []))
    out = []
    for name in names:
        alpha = alphas.pop(0) if name in _NEEDS_ALPHA and alphas else None
        beta = betas.pop(0) if name in _NEEDS_BETA and betas else None
        out.append(_activation(g, name, alpha, beta))
    return out


def _inputs(g, inputs, layout):
    x, w, r = inputs[0], inputs[1], inputs[2]
    b = inputs[3] if len(inputs) > 3 else None
    seq_lens = inputs[4] if len(inputs) > 4 else None
    h0 = inputs[5] if len(inputs) > 5 else None
    n_dirs = g.shape_of(w)[0]
    if layout == 1:
        x = c.transpose(g, x, [1, 0, 2])
    if h0 is None:
        xs = g.shape_of(x)
        h0 = g.call("zeros", [], shape=[n_dirs, xs[1], g.shape_of(r)[-1]], dtype=g.dtype_of(w))
    elif layout == 1:
        h0 = c.transpose(g, h0, [1, 0, 2])
    steps = [c.squeeze(g, s, [0]) for s in _split(g, x, g.shape_of(x)[0], 0)] \
        if g.shape_of(x)[0] > 1 else [c.squeeze(g, x, [0])]
    hs = _split(g, h0, n_dirs) if n_dirs > 1 else [h0]
    ws = _split(g, w, n_dirs) if n_dirs > 1 else [w]
    rs = _split(g, r, n_dirs) if n_dirs > 1 else [r]
    bs = (_split(g, b, n_dirs) if n_dirs > 1 else [b]) if b is not None else None
    return steps, hs, ws, rs, bs, n_dirs, seq_lens


def _dense(g, x, w):
    return g.call("nn.dense", [x, w], units=None, out_dtype="")


def _backwards(attrs, d: int) -> bool:
    # direction="reverse" runs the one direction backwards (TVM read only "bidirectional")
    return d == 1 or attrs.get("direction", "forward") == "reverse"


def _finish(g, per_dir, n_dirs, layout, reverse=False):
    """[(outputs list, final states...)] per direction -> Y and the stacked final states."""
    seq = len(per_dir[0][0])
    if reverse and n_dirs == 1:
        per_dir = [(list(reversed(per_dir[0][0])), *per_dir[0][1:])]
    if n_dirs == 2:
        fw, rv = per_dir
        y = _stack(g, [_stack(g, [fw[0][i], rv[0][seq - 1 - i]], 0) for i in range(seq)], 0)
        finals = [_stack(g, [fw[k], rv[k]], 0) for k in range(1, len(fw))]
    else:
        y = c.expand_dims(g, _stack(g, per_dir[0][0], 0), 1)
        finals = [c.expand_dims(g, s, 0) for s in per_dir[0][1:]]
    if layout == 1:
        y = c.transpose(g, y, [2, 0, 1, 3])
        finals = [c.transpose(g, s, [1, 0, 2]) for s in finals]
    return [y, *finals]


def _rnn_cell(g, steps, h, w_inp, w_hid, b_inp, b_hid, act, backwards):
    outs = []
    for x in (reversed(steps) if backwards else steps):
        xw, hw = _dense(g, x, w_inp), _dense(g, h, w_hid)
        if b_inp is not None:
            xw, hw = g.call("add", [xw, b_inp]), g.call("add", [hw, b_hid])
        h = act(g.call("add", [xw, hw]))
        outs.append(h)
    return outs, h


def _rnn(g, node, inputs, attrs, layout):
    steps, hs, ws, rs, bs, n_dirs, _ = _inputs(g, inputs, layout)
    acts = _activations(g, attrs, ["Tanh"], n_dirs)
    per_dir = []
    for d in range(n_dirs):
        b_inp = b_hid = None
        if bs is not None:
            bi, bh = _split(g, bs[d], 2, -1)
            b_inp, b_hid = c.squeeze(g, bi, [0]), c.squeeze(g, bh, [0])
        per_dir.append(_rnn_cell(g, steps, c.squeeze(g, hs[d], [0]), c.squeeze(g, ws[d], [0]),
                                 c.squeeze(g, rs[d], [0]), b_inp, b_hid, acts[d], _backwards(attrs, d)))
    return _finish(g, per_dir, n_dirs, layout, attrs.get("direction") == "reverse")


@converter("RNN", since=7)
def rnn_v7(g, node, inputs, attrs):
    return _rnn(g, node, inputs, attrs, 0)


@converter("RNN", since=14)
def rnn_v14(g, node, inputs, attrs):
    return _rnn(g, node, inputs, attrs, attrs.get("layout", 0))


def _reorder(g, x, parts, order):
    """x's `parts` blocks along axis 0, concatenated in `order`."""
    blocks = _split(g, x, parts, 0)
    return c.concat(g, [blocks[i] for i in order], 0)


def _gru_cell(g, steps, h, w_inp, w_hid, b_inp, b_hid, rz_act, n_act, backwards, lbr):
    outs = []
    for x in (reversed(steps) if backwards else steps):
        xw = _dense(g, x, w_inp)
        if lbr:
            hw = _dense(g, h, w_hid)
            if b_inp is not None:
                xw, hw = g.call("add", [xw, b_inp]), g.call("add", [hw, b_hid])
            i_r, i_z, i_n = _split(g, xw, 3, -1)
            h_r, h_z, h_n = _split(g, hw, 3, -1)
            r = rz_act(g.call("add", [i_r, h_r]))
            z = rz_act(g.call("add", [i_z, h_z]))
            n = n_act(g.call("add", [i_n, g.call("multiply", [r, h_n])]))
        else:
            i_r, i_z, i_n = _split(g, xw, 3, 1)
            w_hr, w_hz, w_hn = _split(g, w_hid, 3, 0)
            r = g.call("add", [i_r, _dense(g, h, w_hr)])
            z = g.call("add", [i_z, _dense(g, h, w_hz)])
            if b_inp is not None:
                b_ir, b_iz, b_in = _split(g, b_inp, 3, -1)
                b_hr, b_hz, b_hn = _split(g, b_hid, 3, -1)
                r = rz_act(g.call("add", [r, g.call("add", [b_ir, b_hr])]))
                z = g.call("add", [z, g.call("add", [b_iz, b_hz])])
                i_n = g.call("add", [i_n, b_in])
                h_n = g.call("add", [_dense(g, g.call("multiply", [r, h]), w_hn), b_hn])
            else:
                r = rz_act(r)
                h_n = _dense(g, g.call("multiply", [r, h]), w_hn)
            z = rz_act(z)
            n = n_act(g.call("add", [i_n, h_n]))
        h = g.call("add", [g.call("multiply", [g.call("subtract", [h, n]), z]), n])
        outs.append(h)
    return outs, h


def _gru(g, node, inputs, attrs, layout):
    steps, hs, ws, rs, bs, n_dirs, _ = _inputs(g, inputs, layout)
    acts = _activations(g, attrs, ["Sigmoid", "Tanh"], n_dirs)
    lbr = attrs.get("linear_before_reset", 0)
    per_dir = []
    zrn = [1, 0, 2]  # ONNX's z, r, n blocks as TVM's cell takes them: r, z, n
    for d in range(n_dirs):
        b_inp = b_hid = None
        if bs is not None:
            bi, bh = _split(g, bs[d], 2, -1)
            b_inp = _reorder(g, c.squeeze(g, bi, [0]), 3, zrn)
            b_hid = _reorder(g, c.squeeze(g, bh, [0]), 3, zrn)
        per_dir.append(_gru_cell(g, steps, c.squeeze(g, hs[d], [0]),
                                 _reorder(g, c.squeeze(g, ws[d], [0]), 3, zrn),
                                 _reorder(g, c.squeeze(g, rs[d], [0]), 3, zrn), b_inp, b_hid,
                                 acts[2 * d], acts[2 * d + 1], _backwards(attrs, d), lbr))
    return _finish(g, per_dir, n_dirs, layout, attrs.get("direction") == "reverse")


@converter("GRU", since=7)
def gru_v7(g, node, inputs, attrs):
    return _gru(g, node, inputs, attrs, 0)


@converter("GRU", since=14)
def gru_v14(g, node, inputs, attrs):
    return _gru(g, node, inputs, attrs, attrs.get("layout", 0))


def _lstm_cell(g, steps, h, cs, w_inp, w_hid, b_inp, b_hid, peep, f_act, g_act, h_act,
               backwards):
    outs = []
    cat_w = c.concat(g, [w_inp, w_hid], 1)
    for x in (reversed(steps) if backwards else steps):
        gates = _dense(g, c.concat(g, [x, h], 1), cat_w)
        if b_inp is not None:
            gates = g.call("add", [gates, b_inp])
        if b_hid is not None:
            gates = g.call("add", [gates, b_hid])
        i, f, cell, o = _split(g, gates, 4, -1)
        if peep is not None:
            p_i, p_f, p_o = peep
            i = f_act(g.call("add", [i, g.call("multiply", [p_i, cs])]))
            f = f_act(g.call("add", [f, g.call("multiply", [p_f, cs])]))
        else:
            i, f = f_act(i), f_act(f)
        cell = g_act(cell)
        cs = g.call("add", [g.call("multiply", [f, cs]), g.call("multiply", [i, cell])])
        o = f_act(g.call("add", [o, g.call("multiply", [peep[2], cs])])) if peep is not None \
            else f_act(o)
        h = g.call("multiply", [o, h_act(cs)])
        outs.append(h)
    return outs, h, cs


def _lstm(g, node, inputs, attrs, layout):
    steps, hs, ws, rs, bs, n_dirs, _ = _inputs(g, inputs, layout)
    acts = _activations(g, attrs, ["Sigmoid", "Tanh", "Tanh"], n_dirs)
    c0 = inputs[6] if len(inputs) > 6 else None
    if c0 is None:
        cs0 = [g.call("zeros_like", [h]) for h in hs]
    else:
        if layout == 1:
            c0 = c.transpose(g, c0, [1, 0, 2])
        cs0 = _split(g, c0, n_dirs) if n_dirs > 1 else [c0]
    p = inputs[7] if len(inputs) > 7 else None
    peeps = None
    if p is not None:
        p_i, p_o, p_f = _split(g, p, 3, 1)
        split = (lambda t: _split(g, t, n_dirs)) if n_dirs > 1 else (lambda t: [t])
        peeps = list(zip(split(p_i), split(p_f), split(p_o)))
    iofc = [0, 2, 3, 1]  # ONNX's i, o, f, c blocks as TVM's cell takes them: i, f, c, o
    per_dir = []
    for d in range(n_dirs):
        b_inp = b_hid = None
        if bs is not None:
            bi, bh = _split(g, bs[d], 2, -1)
            b_inp = _reorder(g, c.squeeze(g, bi, [0]), 4, iofc)
            b_hid = _reorder(g, c.squeeze(g, bh, [0]), 4, iofc)
        peep = None
        if peeps is not None:
            peep = tuple(c.squeeze(g, t, [0]) for t in peeps[d])
        per_dir.append(_lstm_cell(
            g, steps, c.squeeze(g, hs[d], [0]), c.squeeze(g, cs0[d], [0]),
            _reorder(g, c.squeeze(g, ws[d], [0]), 4, iofc),
            _reorder(g, c.squeeze(g, rs[d], [0]), 4, iofc), b_inp, b_hid, peep,
            acts[3 * d], acts[3 * d + 1], acts[3 * d + 2], _backwards(attrs, d)))
    return _finish(g, per_dir, n_dirs, layout, attrs.get("direction") == "reverse")


@converter("LSTM", since=7)
def lstm_v7(g, node, inputs, attrs):
    return _lstm(g, node, inputs, attrs, 0)


@converter("LSTM", since=14)
def lstm_v14(g, node, inputs, attrs):
    return _lstm(g, node, inputs, attrs, attrs.get("layout", 0))
