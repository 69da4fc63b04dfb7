"""Model families printed the way TVM prints them after binding their weights (the analogue of
TVM's `relay.testing` workloads followed by `bind_params_by_name` and `mod.astext()`).

Each builder returns a `Workload`: the Relay text (`#[version]` header, `@main` whose weights
are `meta[relay.Constant][i]` references with `/* ty=... */` comments, only non-default
attributes, and the `#[metadata]` section holding the weights), the weights themselves, and
deterministic inputs. Weights and inputs come from a seeded generator, so a model's text is
the same on every run. `python3 -m rvmdbg.workloads NAME [key=value...]` prints one.

Families: an MLP, a small CNN (conv2d/batch_norm/pooling), a transformer block and encoder, an
LSTM cell and an LSTM over a `?`-length sequence, a `while_loop` growing a `?`-shaped tensor
(as `relay.loops.while_loop` prints it: a recursive let-bound function), MobileNet-v1 and a
ResNet-18-shaped CNN.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.relay.metadata import metadata_text

__all__ = ["Workload", "WORKLOADS", "build"]


@dataclass
class Workload:
    name: str
    text: str
    constants: list          # the metadata table, in meta[relay.Constant][i] order
    inputs: list             # @main's arguments, in order
    static: bool = True      # no `?` shapes and no control flow: the graph executor runs it
    input_names: list = field(default_factory=list)
    # the same model before its weights were bound (relay.testing's form): @main takes the
    # weights as parameters after the inputs, in the metadata table's order
    unbound_text: str = ""


# ---------------------------------------------------------------------------- printing

def _ty(shape, dtype="float32") -> str:
    if shape is None:
        return dtype
    if len(shape) == 0:
        return dtype
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"Tensor[({dims}), {dtype}]"


def _attr(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return f"{v:g}f"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_attr(x) for x in v) + "]"
    return str(v)


@dataclass
class Val:
    """An expression as an argument: its text and its (shape, dtype); shape None is a tuple."""
    ref: str
    shape: tuple | None
    dtype: str = "float32"
    ty_text: str | None = None

    @property
    def ty(self) -> str:
        return self.ty_text or _ty(self.shape, self.dtype)


class _Graph:
    """Emits `%n = op(args, attrs) /* ty=... */;` lines and collects the metadata table."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.lines: list[str] = []
        self.constants: list[np.ndarray] = []
        self.const_names: list[str] = []
        self.n = 0

    def const(self, a: np.ndarray, kind: str = "weight") -> Val:
        i = len(self.constants)
        self.constants.append(a)
        self.const_names.append(f"{kind}_{i}")
        # a placeholder: `render` writes a metadata reference or a parameter in its place
        return Val(f"\x00{i}\x00", tuple(a.shape), str(a.dtype))

    def render(self, text: str, bound: bool) -> str:
        def ref(m):
            i = int(m.group(1))
            if not bound:
                return f"%{self.const_names[i]}"
            a = self.constants[i]
            return f"meta[relay.Constant][{i}] /* ty={_ty(a.shape, str(a.dtype))} */"
        return re.sub("\x00(\\d+)\x00", ref, text)

    def weight_params(self) -> list[Val]:
        return [Val(f"%{n}", tuple(a.shape), str(a.dtype))
                for n, a in zip(self.const_names, self.constants)]

    def weight(self, *shape, scale=None) -> Val:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        s = np.sqrt(2.0 / max(fan_in, 1)) if scale is None else scale
        return self.const((self.rng.standard_normal(shape) * s).astype("float32"))

    def bias(self, n) -> Val:
        return self.const((self.rng.standard_normal(n) * 0.05).astype("float32"), "bias")

    def call(self, op: str, args: list, out_shape, attrs: dict | None = None,
             dtype="float32", ty_text=None) -> Val:
        parts = [a.ref for a in args]
        parts += [f"{k}={_attr(v)}" for k, v in (attrs or {}).items()]
        out = Val(f"%{self.n}", out_shape, dtype, ty_text)
        self.lines.append(f"  %{self.n} = {op}({', '.join(parts)}) /* ty={out.ty} */;")
        self.n += 1
        return out

    def item(self, tup: Val, i: int, shape, dtype="float32") -> Val:
        out = Val(f"%{self.n}", shape, dtype)
        self.lines.append(f"  %{self.n} = {tup.ref}.{i} /* ty={out.ty} */;")
        self.n += 1
        return out

    def module(self, params: list[Val], result: Val, bound: bool = True) -> str:
        if not bound:
            params = params + self.weight_params()
        sig = ", ".join(f"{p.ref}: {p.ty} /* ty={p.ty} */" for p in params)
        body = list(self.lines)
        last = body.pop()  # the result is the body's last expression, not a binding
        assert last.startswith(f"  {result.ref} = ")
        body.append("  " + last[len(f"  {result.ref} = "):].rstrip(";"))
        text = ['#[version = "0.0.5"]', f"def @main({sig}) -> {result.ty} {{", *body, "}"]
        if bound:
            text += ["", "#[metadata]", metadata_text(self.constants)]
        return self.render("\n".join(text) + "\n", bound)


# ---------------------------------------------------------------------------- layers

def _conv(g: _Graph, x: Val, channels: int, kernel: int, stride: int = 1, groups: int = 1,
          pad: int | None = None) -> Val:
    n, c, h, w = x.shape
    pad = kernel // 2 if pad is None else pad
    wt = g.weight(channels, c // groups, kernel, kernel)
    oh = (h + 2 * pad - kernel) // stride + 1
    ow = (w + 2 * pad - kernel) // stride + 1
    attrs = {}
    if stride != 1:
        attrs["strides"] = [stride, stride]
    attrs["padding"] = [pad] * 4
    if groups != 1:
        attrs["groups"] = groups
    attrs["channels"] = channels
    attrs["kernel_size"] = [kernel, kernel]
    return g.call("nn.conv2d", [x, wt], (n, channels, oh, ow), attrs)


def _batch_norm(g: _Graph, x: Val) -> Val:
    c = x.shape[1]
    gamma = g.const((1 + 0.1 * g.rng.standard_normal(c)).astype("float32"), "gamma")
    beta = g.const((0.1 * g.rng.standard_normal(c)).astype("float32"), "beta")
    mean = g.const((0.1 * g.rng.standard_normal(c)).astype("float32"), "moving_mean")
    var = g.const(g.rng.uniform(0.5, 1.5, c).astype("float32"), "moving_var")
    vec = _ty((c,))
    tup = g.call("nn.batch_norm", [x, gamma, beta, mean, var], None,
                 ty_text=f"({x.ty}, {vec}, {vec})")
    return g.item(tup, 0, x.shape)


def _conv_bn_relu(g, x, channels, kernel, stride=1, groups=1):
    y = _batch_norm(g, _conv(g, x, channels, kernel, stride, groups))
    return g.call("nn.relu", [y], y.shape)


def _max_pool(g, x, size, stride, pad):
    n, c, h, w = x.shape
    oh, ow = ((h + 2 * pad - size) // stride + 1, (w + 2 * pad - size) // stride + 1)
    return g.call("nn.max_pool2d", [x], (n, c, oh, ow),
                  {"pool_size": [size, size], "strides": [stride, stride],
                   "padding": [pad] * 4})


def _classifier(g, x, classes):
    """global_avg_pool2d, batch_flatten, dense, bias_add, softmax (relay.testing's head)."""
    n, c = x.shape[:2]
    p = g.call("nn.global_avg_pool2d", [x], (n, c, 1, 1))
    f = g.call("nn.batch_flatten", [p], (n, c))
    return _dense_softmax(g, f, classes)


def _dense(g, x, units, bias=True):
    w = g.weight(units, x.shape[-1])
    y = g.call("nn.dense", [x, w], x.shape[:-1] + (units,), {"units": units})
    if bias:
        y = g.call("nn.bias_add", [y, g.bias(units)], y.shape,
                   {"axis": -1} if len(y.shape) != 2 else None)
    return y


def _dense_softmax(g, x, classes):
    y = _dense(g, x, classes)
    return g.call("nn.softmax", [y], y.shape)


def _input(name, shape, dtype="float32") -> Val:
    return Val(f"%{name}", shape, dtype)


def _workload(name, g, params, result, rng_inputs, static=True):
    inputs = [rng_inputs(p) for p in params]
    return Workload(name, g.module(params, result), g.constants, inputs, static,
                    [p.ref[1:] for p in params], g.module(params, result, bound=False))


def _normal_input(seed):
    rng = np.random.default_rng(seed + 1)

    def make(p: Val):
        shape = tuple(3 if d is None else d for d in p.shape)
        return rng.standard_normal(shape).astype(p.dtype)
    return make


# ---------------------------------------------------------------------------- families

def mlp(batch=1, units=(64, 32), in_dim=128, classes=10, seed=0) -> Workload:
    """relay.testing.mlp: batch_flatten, (dense, bias_add, relu) per hidden layer, softmax."""
    g = _Graph(seed)
    x = _input("data", (batch, in_dim))
    y = g.call("nn.batch_flatten", [x], (batch, in_dim))
    for u in units:
        y = g.call("nn.relu", [_dense(g, y, u)], (batch, u))
    return _workload("mlp", g, [x], _dense_softmax(g, y, classes), _normal_input(seed))


def cnn(batch=1, size=16, channels=(8, 16), classes=10, seed=0) -> Workload:
    """A small CNN: (conv2d, batch_norm, relu, max_pool2d) blocks, then the classifier head."""
    g = _Graph(seed)
    x = _input("data", (batch, 3, size, size))
    y = x
    for c in channels:
        y = _max_pool(g, _conv_bn_relu(g, y, c, 3), 2, 2, 0)
    return _workload("cnn", g, [x], _classifier(g, y, classes), _normal_input(seed))


def mobilenet_v1(batch=1, size=224, width=1.0, classes=1000, seed=0) -> Workload:
    """MobileNet-v1 as relay.testing.mobilenet builds it: a strided conv, 13 depthwise-separable
    blocks (3x3 depthwise conv + 1x1 conv, each with batch_norm and relu), the classifier."""
    g = _Graph(seed)
    x = _input("data", (batch, 3, size, size))

    def ch(c):
        return max(8, int(c * width))
    y = _conv_bn_relu(g, x, ch(32), 3, 2)
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
            (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
    for out, stride in plan:
        c = y.shape[1]
        y = _conv_bn_relu(g, y, c, 3, stride, groups=c)
        y = _conv_bn_relu(g, y, ch(out), 1)
    return _workload("mobilenet_v1", g, [x], _classifier(g, y, classes), _normal_input(seed))


def resnet18(batch=1, size=224, width=64, classes=1000, seed=0) -> Workload:
    """A ResNet-18-shaped CNN (v1 basic blocks): 7x7 conv, max pool, four stages of two blocks,
    the classifier."""
    g = _Graph(seed)
    x = _input("data", (batch, 3, size, size))
    y = _max_pool(g, _conv_bn_relu(g, x, width, 7, 2), 3, 2, 1)
    for stage in range(4):
        c = width * 2 ** stage
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            a = _conv_bn_relu(g, y, c, 3, stride)
            b = _batch_norm(g, _conv(g, a, c, 3))
            short = y if stride == 1 and y.shape[1] == c else _batch_norm(g, _conv(g, y, c, 1,
                                                                                   stride, pad=0))
            y = g.call("nn.relu", [g.call("add", [b, short], b.shape)], b.shape)
    return _workload("resnet18", g, [x], _classifier(g, y, classes), _normal_input(seed))


def _layer_norm(g, x):
    d = x.shape[-1]
    gamma = g.const((1 + 0.1 * g.rng.standard_normal(d)).astype("float32"), "gamma")
    beta = g.const((0.1 * g.rng.standard_normal(d)).astype("float32"), "beta")
    return g.call("nn.layer_norm", [x, gamma, beta], x.shape)


def _encoder_layer(g, x, heads, ff):
    seq, d = x.shape
    dk = d // heads

    def project(v):
        r = g.call("reshape", [_dense(g, v, d)], (seq, heads, dk), {"newshape": [seq, heads, dk]})
        return g.call("transpose", [r], (heads, seq, dk), {"axes": [1, 0, 2]})
    q, k, v = project(x), project(x), project(x)
    scores = g.call("nn.batch_matmul", [q, k], (heads, seq, seq), {"transpose_b": True})
    scale = Val(f"{1.0 / np.sqrt(dk):g}f /* ty=float32 */", ())
    scaled = g.call("multiply", [scores, scale], (heads, seq, seq))
    attn = g.call("nn.softmax", [scaled], (heads, seq, seq))
    vt = g.call("transpose", [v], (heads, dk, seq), {"axes": [0, 2, 1]})
    ctx = g.call("nn.batch_matmul", [attn, vt], (heads, seq, dk), {"transpose_b": True})
    ctx = g.call("transpose", [ctx], (seq, heads, dk), {"axes": [1, 0, 2]})
    ctx = g.call("reshape", [ctx], (seq, d), {"newshape": [seq, d]})
    y = _layer_norm(g, g.call("add", [_dense(g, ctx, d), x], (seq, d)))
    h = _dense(g, y, ff)
    # GELU as TVM's frontends print it: x * (0.5 + erf(x / sqrt 2) * 0.5)
    r2 = Val("0.707107f /* ty=float32 */", ())
    half = Val("0.5f /* ty=float32 */", ())
    e = g.call("erf", [g.call("multiply", [h, r2], h.shape)], h.shape)
    gelu = g.call("multiply", [h, g.call("add", [g.call("multiply", [e, half], h.shape), half],
                                         h.shape)], h.shape)
    return _layer_norm(g, g.call("add", [_dense(g, gelu, d), y], (seq, d)))


def transformer(seq=16, d=64, heads=4, ff=128, layers=1, seed=0) -> Workload:
    """A transformer encoder (BERT-style post-norm layers: self-attention, GELU feed-forward)."""
    g = _Graph(seed)
    x = _input("data", (seq, d))
    y = x
    for _ in range(layers):
        y = _encoder_layer(g, y, heads, ff)
    name = "transformer_block" if layers == 1 else f"transformer_encoder_{layers}"
    return _workload(name, g, [x], y, _normal_input(seed))


def lstm_cell(batch=1, in_dim=16, hidden=32, seed=0) -> Workload:
    """One LSTM step: gates = x Wi^T + h Wh^T + b split in four, (h', c') returned as a tuple."""
    g = _Graph(seed)
    x, h, c = _input("x", (batch, in_dim)), _input("h", (batch, hidden)), _input("c", (batch, hidden))
    h2, c2 = _lstm_step(g, x, h, c, hidden)
    pair = g.call("", [h2, c2], None, ty_text=f"({h2.ty}, {c2.ty})")  # the tuple (h', c')
    return _workload("lstm_cell", g, [x, h, c], pair, _normal_input(seed))


def _lstm_step(g, x, h, c, hidden, weights=None):
    batch = x.shape[0]
    wi, wh, b = weights or (g.weight(4 * hidden, x.shape[1], scale=0.2),
                            g.weight(4 * hidden, hidden, scale=0.2), g.bias(4 * hidden))
    gates = g.call("add", [g.call("nn.dense", [x, wi], (batch, 4 * hidden), {"units": 4 * hidden}),
                           g.call("nn.dense", [h, wh], (batch, 4 * hidden),
                                  {"units": 4 * hidden})], (batch, 4 * hidden))
    gates = g.call("nn.bias_add", [gates, b], (batch, 4 * hidden))
    q = (batch, hidden)
    parts = g.call("split", [gates], None, {"indices_or_sections": 4, "axis": 1},
                   ty_text="(" + ", ".join([_ty(q)] * 4) + ")")
    i, f, cand, o = (g.item(parts, k, q) for k in range(4))
    i, f, o = (g.call("sigmoid", [v], q) for v in (i, f, o))
    cand = g.call("tanh", [cand], q)
    c2 = g.call("add", [g.call("multiply", [f, c], q), g.call("multiply", [i, cand], q)], q)
    h2 = g.call("multiply", [o, g.call("tanh", [c2], q)], q)
    return h2, c2


def _loop_text(g: _Graph, params: list[Val], loop_vars: list[Val], cond: list[str],
               test: Val, body: list[str], next_args: list[str], init: list[str],
               result_index: int, result_ty: str, bound: bool = True) -> str:
    """@main around `relay.loops.while_loop`'s printed form: a let-bound recursive function
    `%while_loop` that calls itself while the condition holds and returns its loop variables."""
    state = "(" + ", ".join(v.ty for v in loop_vars) + ")"
    sig = ", ".join(f"{v.ref}: {v.ty} /* ty={v.ty} */" for v in loop_vars)
    if not bound:
        params = params + g.weight_params()
    main_sig = ", ".join(f"{p.ref}: {p.ty} /* ty={p.ty} */" for p in params)
    n = g.n
    lines = ['#[version = "0.0.5"]', f"def @main({main_sig}) -> {result_ty} {{",
             f"  %{n} = (", f"    let %while_loop = fn ({sig}) -> {state} {{",
             *("    " + line for line in cond), f"      if ({test.ref}) {{",
             *("      " + line for line in body),
             f"        %while_loop({', '.join(next_args)}) /* ty={state} */",
             "      } else {", f"        ({', '.join(v.ref for v in loop_vars)})", "      }",
             "    };", "    %while_loop", "  );",
             f"  %{n + 1} = %{n}({', '.join(init)}) /* ty={state} */;",
             f"  %{n + 1}.{result_index}", "}"]
    if bound:
        lines += ["", "#[metadata]", metadata_text(g.constants)]
    return g.render("\n".join(lines) + "\n", bound)


_ONE = Val("1 /* ty=int32 */", (), "int32")


def while_loop(width=4, iterations=3, seed=0) -> Workload:
    """`relay.loops.while_loop` growing a `?`-shaped tensor: each turn appends a row (the input
    row scaled by a weight) until the counter reaches %n."""
    g = _Graph(seed)
    x, count = _input("x", (1, width)), _input("n", (), "int32")
    i, s = _input("i", (), "int32"), _input("s", (None, width))
    test = g.call("less", [i, count], (), dtype="bool")
    cond, g.lines = g.lines, []
    step = g.call("add", [i, _ONE], (), dtype="int32")
    row = g.call("multiply", [x, g.weight(1, width, scale=1.0)], (1, width))
    pair = g.call("", [s, row], None, ty_text=f"({s.ty}, {row.ty})")
    grown = g.call("concatenate", [pair], (None, width))
    body, g.lines = g.lines, []
    text, unbound = (_loop_text(g, [x, count], [i, s], cond, test, body,
                                [step.ref, grown.ref], ["0 /* ty=int32 */", x.ref], 1, s.ty, b)
                     for b in (True, False))
    inputs = [np.random.default_rng(seed + 1).standard_normal((1, width)).astype("float32"),
              np.array(iterations, dtype="int32")]
    return Workload("while_loop", text, g.constants, inputs, static=False,
                    input_names=["x", "n"], unbound_text=unbound)


def lstm_sequence(batch=1, in_dim=16, hidden=32, steps=8, seed=0) -> Workload:
    """An LSTM over a `?`-length sequence %xs (steps, batch, in): a while_loop over time whose
    state is (t, h, c); the final h is the result."""
    g = _Graph(seed)
    xs = _input("xs", (None, batch, in_dim))
    t, h, c = _input("t", (), "int32"), _input("h", (batch, hidden)), _input("c", (batch, hidden))
    weights = (g.weight(4 * hidden, in_dim, scale=0.2), g.weight(4 * hidden, hidden, scale=0.2),
               g.bias(4 * hidden))
    length = g.call("shape_of", [xs], (3,), dtype="int32")
    total = g.call("take", [length, Val("0 /* ty=int32 */", (), "int32")], (), dtype="int32")
    test = g.call("less", [t, total], (), dtype="bool")
    cond, g.lines = g.lines, []
    x_t = g.call("take", [xs, t], (batch, in_dim), {"axis": 0})
    h2, c2 = _lstm_step(g, x_t, h, c, hidden, weights)
    step = g.call("add", [t, _ONE], (), dtype="int32")
    body, g.lines = g.lines, []
    zeros = f"zeros(shape=[{batch}, {hidden}], dtype=\"float32\") /* ty={h.ty} */"
    text, unbound = (_loop_text(g, [xs], [t, h, c], cond, test, body,
                                [step.ref, h2.ref, c2.ref], ["0 /* ty=int32 */", zeros, zeros],
                                1, h.ty, b) for b in (True, False))
    rng = np.random.default_rng(seed + 1)
    inputs = [rng.standard_normal((steps, batch, in_dim)).astype("float32")]
    return Workload("lstm_sequence", text, g.constants, inputs, static=False,
                    input_names=["xs"], unbound_text=unbound)


# name -> (builder, the small sizes the tests and `--quick` use)
WORKLOADS = {
    "mlp": (mlp, dict(units=(16, 8), in_dim=32, classes=4)),
    "cnn": (cnn, dict(size=8, channels=(4, 8), classes=4)),
    "transformer_block": (transformer, dict(seq=4, d=8, heads=2, ff=16)),
    "transformer_encoder": (lambda **kw: transformer(layers=2, **kw),
                            dict(seq=4, d=8, heads=2, ff=16)),
    "lstm_cell": (lstm_cell, dict(in_dim=4, hidden=8)),
    "lstm_sequence": (lstm_sequence, dict(in_dim=4, hidden=8, steps=3)),
    "while_loop": (while_loop, dict(width=4, iterations=3)),
    "mobilenet_v1": (mobilenet_v1, dict(size=32, width=0.25, classes=10)),
    "resnet18": (resnet18, dict(size=32, width=8, classes=10)),
}


def build(name: str, small: bool = False, **sizes) -> Workload:
    """The named workload, at its full size, at the tests' small size, or with `sizes`."""
    builder, small_sizes = WORKLOADS[name]
    return builder(**{**(small_sizes if small else {}), **sizes})


def main(argv=None) -> int:
    import sys
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in WORKLOADS:
        print("usage: python3 -m rvmdbg.workloads NAME [--small] [key=value ...]\n"
              f"names: {' '.join(WORKLOADS)}", file=sys.stderr)
        return 2
    sizes = {}
    for kv in args[1:]:
        if kv == "--small":
            continue
        k, _, v = kv.partition("=")
        sizes[k] = float(v) if "." in v else int(v)
    sys.stdout.write(build(args[0], "--small" in args, **sizes).text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
