"""einsum (TVM's EinsumAttrs: equation; one argument, a tuple of tensors of one dtype; pattern
injective, as TVM registers it).

The equation is NumPy's: comma-separated subscripts, one per operand, an optional `->output`
(without it, the labels used once, in alphabetical order), and `...` for the dims no label
names (broadcast against each other, as topi's InferEinsumShape does). A label's dims must
agree (`?` agrees with anything); the result has the first operand's dtype, summed in it as
topi's einsum does (a bool sum is TVM's 1-bit parity).
"""
from __future__ import annotations

import string

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, AttrSpec, KernelError, OpTypeError, as_result, bool_parity, register, unify_dim,
)
from rvmdbg.relay.types import TensorType

_LABELS = frozenset(string.ascii_letters)


def parse_equation(name: str, equation: str, ranks: list) -> tuple:
    """(input subscripts, output subscript), each a list of labels with "..." as one item, the
    output made explicit."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise OpTypeError(_("{op}: equation '{eq}' names {n} operands, the tuple has "
                            "{m}").format(op=name, eq=equation, n=len(terms), m=len(ranks)))

    def split(term):
        parts, rest = [], term
        while rest:
            if rest.startswith("..."):
                parts.append("...")
                rest = rest[3:]
            elif rest[0] in _LABELS:
                parts.append(rest[0])
                rest = rest[1:]
            else:
                raise OpTypeError(_("{op}: equation '{eq}': unexpected '{ch}' (labels are "
                                    "letters, '...' the other dims)").format(
                        op=name, eq=equation, ch=rest[0]))
        if parts.count("...") > 1:
            raise OpTypeError(_("{op}: equation '{eq}': '...' twice in one operand").format(
                    op=name, eq=equation))
        return parts

    ins = [split(t) for t in terms]
    for parts, rank in zip(ins, ranks):
        named = len(parts) - ("..." in parts)
        if named > rank or ("..." not in parts and named != rank):
            raise OpTypeError(_("{op}: equation '{eq}': subscript '{sub}' does not fit a "
                                "{rank}-d operand").format(op=name, eq=equation,
                                                           sub="".join(parts), rank=rank))
    if arrow:
        out = split(rhs)
        used = {c for p in ins for c in p}
        for c in out:
            if c not in used:
                raise OpTypeError(_("{op}: equation '{eq}': output label '{c}' is in no "
                                    "operand").format(op=name, eq=equation, c=c))
        if len(set(out)) != len(out):
            raise OpTypeError(_("{op}: equation '{eq}': a label repeats in the output").format(
                    op=name, eq=equation))
    else:
        counts = {}
        for p in ins:
            for c in p:
                counts[c] = counts.get(c, 0) + 1
        out = (["..."] if "..." in counts else []) + sorted(
            c for c, k in counts.items() if k == 1 and c != "...")
    return ins, out


def _broadcast(name, a, b):
    if a == 1:
        return b
    if b == 1 or a == b:
        return a
    if a is None or b is None:
        return None if b is None or b == 1 else b
    raise OpTypeError(_("{op}: the '...' dims {a} and {b} do not broadcast").format(
            op=name, a=a, b=b))


def _einsum_rel(name, args, attrs):
    (tup,) = args
    fields = list(tup.fields)
    if not fields:
        raise OpTypeError(_("{op}: needs at least one tensor").format(op=name))
    dtype = fields[0].dtype
    for f in fields:
        if f.dtype != dtype:
            raise OpTypeError(_("{op}: requires all tensors to have the same dtype, got "
                                "{tensors}").format(op=name,
                                                    tensors=", ".join(map(str, fields))))
    ins, out = parse_equation(name, attrs["equation"], [len(f.shape) for f in fields])
    dims, ellipsis = {}, []
    for parts, f in zip(ins, fields):
        shape = list(f.shape)
        if "..." in parts:
            at = parts.index("...")
            n_ell = len(shape) - (len(parts) - 1)
            ell = shape[at:at + n_ell]
            named = parts[:at] + parts[at + 1:]
            shape = shape[:at] + shape[at + n_ell:]
            # right-aligned broadcasting of the unnamed dims
            width = max(len(ellipsis), len(ell))
            a = [1] * (width - len(ellipsis)) + ellipsis
            b = [1] * (width - len(ell)) + ell
            ellipsis = [_broadcast(name, x, y) for x, y in zip(a, b)]
        else:
            named = parts
        for c, d in zip(named, shape):
            if c in dims:
                dims[c] = unify_dim(name, dims[c], d, _("label '{c}' has sizes {a} and "
                                                        "{b}").format(c=c, a=dims[c], b=d))
            else:
                dims[c] = d
    shape = []
    for c in out:
        shape.extend(ellipsis if c == "..." else [dims[c]])
    return TensorType(tuple(shape), dtype)


def _einsum_kernel(args, attrs):
    parts = list(args[0])
    dt = parts[0].dtype
    try:
        if dt == BOOL:  # summed in TVM's 1-bit bool: the parity of the products
            total = np.einsum(attrs["equation"], *[p.astype(np.int64) for p in parts])
            return as_result(bool_parity(total), BOOL)
        if dt.kind in "iu":
            return as_result(np.einsum(attrs["equation"], *parts, dtype=dt), dt)
        with np.errstate(all="ignore"):
            return as_result(np.einsum(attrs["equation"], *parts), dt)
    except ValueError as e:
        raise KernelError(_("einsum: the operands do not fit '{eq}' at run time: {why}").format(
                eq=attrs["equation"], why=e)) from None


register("einsum", 1, _einsum_rel, _einsum_kernel, "injective",
         attrs=[AttrSpec("equation", "str")], tuple_input=True,
         doc="einsum((a, b, ...), equation=\"ij,jk->ik\"): Einstein summation")
