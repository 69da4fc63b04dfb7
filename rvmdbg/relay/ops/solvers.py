"""What TVM's type relations assign to arguments whose type is still unknown.

TVM's type solver runs a relation as soon as the types it needs are known, and a relation may
*assign* the type of another argument: DenseRel gives the weight `(units, in_features)` once
the data type and `units` are known, BiasAddRel gives the bias `(data.shape[axis],)`, and so
on. That is how a printed `relay.testing` workload with unannotated weights type-checks.

`SOLVERS[op_name](known, attrs) -> {index: Type}` receives the argument types (None where still
unknown) and the normalised attributes, and returns the types TVM's relation assigns to the
unknown arguments (an empty dict while it still waits). The type checker unifies them with
the arguments and then runs the operator's ordinary relation. Operators not registered (yet)
are simply never looked up.
"""
from __future__ import annotations

from rvmdbg.relay.types import TensorType


def _tensor(t) -> TensorType | None:
    return t if isinstance(t, TensorType) else None


def _axis(attrs, rank: int, key: str = "axis", default: int = 1) -> int | None:
    axis = attrs.get(key, default) if attrs else default
    if axis is None:
        return None
    axis = int(axis)
    if axis < 0:
        axis += rank
    return axis if 0 <= axis < rank else None


def _dense(known, attrs) -> dict:
    # DenseRel: with `units`, the weight is (units, data.shape[-1]) of the data's dtype
    data = _tensor(known[0])
    units = attrs.get("units") if attrs else None
    if data is None or not data.shape or units is None or known[1] is not None:
        return {}
    return {1: TensorType((int(units), data.shape[-1]), data.dtype)}


def _per_channel(*indexes):
    """Relations giving each of `indexes` the shape (data.shape[axis],) (BiasAddRel,
    BatchNormRel, LayerNormRel, InstanceNormRel, GroupNormRel)."""
    def solve(known, attrs) -> dict:
        data = _tensor(known[0])
        if data is None:
            return {}
        axis = _axis(attrs, len(data.shape), default=1)
        if axis is None:
            return {}
        t = TensorType((data.shape[axis],), data.dtype)
        return {i: t for i in indexes if i < len(known) and known[i] is None}
    return solve


def _layer_norm(known, attrs) -> dict:
    data = _tensor(known[0])
    if data is None:
        return {}
    axis = _axis(attrs, len(data.shape), default=-1)
    if axis is None:
        return {}
    t = TensorType((data.shape[axis],), data.dtype)
    return {i: t for i in (1, 2) if known[i] is None}


def _prelu(known, attrs) -> dict:
    data = _tensor(known[0])
    if data is None or known[1] is not None:
        return {}
    axis = _axis(attrs, len(data.shape), default=1)
    return {} if axis is None else {1: TensorType((data.shape[axis],), data.dtype)}


_CONV2D_LAYOUTS = ("NCHW", "NHWC")  # data layouts whose channel axis is found by name


def _conv2d(known, attrs) -> dict:
    # Conv2DRel: with `channels` and `kernel_size`, the weight is OIHW (channels,
    # in_channels / groups, kh, kw), written in kernel_layout
    data = _tensor(known[0])
    if data is None or known[1] is not None or len(data.shape) != 4 or not attrs:
        return {}
    channels, ksize = attrs.get("channels"), attrs.get("kernel_size")
    if channels is None or not ksize:
        return {}
    layout = attrs.get("data_layout", "NCHW")
    if layout not in _CONV2D_LAYOUTS:
        return {}
    c = data.shape[layout.index("C")]
    groups = int(attrs.get("groups", 1) or 1)
    if c is not None:
        c //= groups
    kh, kw = (ksize, ksize) if isinstance(ksize, int) else (ksize[0], ksize[1])
    dims = {"O": int(channels), "I": c, "H": int(kh), "W": int(kw)}
    klayout = attrs.get("kernel_layout") or ("OIHW" if layout == "NCHW" else "HWIO")
    if sorted(klayout) != sorted("OIHW"):
        return {}
    return {1: TensorType(tuple(dims[k] for k in klayout), data.dtype)}


SOLVERS = {
    "nn.dense": _dense,
    "nn.bias_add": _per_channel(1),
    "nn.batch_norm": _per_channel(1, 2, 3, 4),
    "nn.instance_norm": _per_channel(1, 2),
    "nn.group_norm": _per_channel(1, 2),
    "nn.layer_norm": _layer_norm,
    "nn.prelu": _prelu,
    "nn.conv2d": _conv2d,
}

# Operators whose TVM relation is IdentityRel: it unifies the result with the input, so a
# known result (a return annotation, a later use) gives the input its type.
IDENTITY_RELATION_OPS = frozenset("""
    log log2 log10 tan cos cosh sin sinh acos acosh asin asinh atan atanh exp fast_exp erf
    fast_erf sqrt rsqrt zeros_like ones_like sigmoid copy floor ceil trunc round sign abs tanh
    fast_tanh negative logical_not bitwise_not nn.relu nn.leaky_relu
""".split())
