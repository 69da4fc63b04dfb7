"""Optionals holding a tensor: `Optional(x)` is x itself, `OptionalHasElement` a constant
bool (known when the model is imported: an empty input name is an empty optional), and
`OptionalGetElement` the tensor (TVM made a one-field tuple and took its field).

Sequences are Relay tuples of tensors whose length is known when the model is imported, as
TVM's relay.frontend.onnx made them: `SequenceConstruct` a `Tuple`, `SequenceAt` a field,
`SequenceInsert`/`SequenceErase` a new tuple, `SequenceLength` a constant,
`ConcatFromSequence` `concatenate` (or `stack` with new_axis), `SplitToSequence` `split`.
A sequence whose length or position is known only at run time (a Loop's carried sequence,
`SequenceAt` at a computed position) is a prelude List instead: see `rvmdbg/onnx/seqlist.py`."""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.onnx.registry import converter


@converter("Optional", since=15)
def optional(g, node, inputs, attrs):
    if not inputs or inputs[0] is None:
        raise g.error("an empty Optional (no input) is not supported")
    return inputs[0]


@converter("OptionalHasElement", since=15)
def optional_has_element(g, node, inputs, attrs):
    present = bool(inputs) and inputs[0] is not None
    return g.const(np.asarray(present))


@converter("OptionalGetElement", since=15)
def optional_get_element(g, node, inputs, attrs):
    from rvmdbg.relay.types import TupleType
    if isinstance(g.type_of(inputs[0]), TupleType):
        return [inputs[0]]  # a sequence input (a tuple) is its own element
    return g.call("copy", [inputs[0]])


# ---- sequences: a Relay tuple of tensors, its length known when the model is imported, as
# TVM's relay.frontend.onnx made them (SequenceConstruct a Tuple, SequenceAt a field, ...)

def _items(g, seq) -> list:
    """The tensors of a sequence expression, in order."""
    from rvmdbg.relay.ast import Tuple
    from rvmdbg.relay.types import TupleType
    if isinstance(seq, Tuple):
        return list(seq.fields)
    t = g.type_of(seq)
    if not isinstance(t, TupleType):
        raise g.error(_("expected a sequence (a tuple of tensors), found {type}").format(
            type=t))
    return [g.get(seq, i) for i in range(len(t.fields))]


def _position(g, expr, default: int) -> int:
    """A position input's value, which Relay needs at import time (TVM: "Position must be a
    constant")."""
    from rvmdbg.onnx.ops.common import const_value
    if expr is None:
        return default
    v = const_value(g, expr)
    if v is None:
        raise g.needs_value(_("the position"), expr)
    return int(np.asarray(v).reshape(-1)[0])


def _seq(g, items) -> list:
    return [g.tuple(items)]


@converter("SequenceConstruct", since=11)
def sequence_construct(g, node, inputs, attrs):
    return _seq(g, inputs)


@converter("SequenceEmpty", since=11)
def sequence_empty(g, node, inputs, attrs):
    return _seq(g, [])


@converter("SequenceAt", since=11)
def sequence_at(g, node, inputs, attrs):
    from rvmdbg.onnx import seqlist
    from rvmdbg.onnx.ops.common import const_value
    if seqlist.is_list(g, inputs[0]):
        return seqlist.at(g, inputs[0], inputs[1])
    if const_value(g, inputs[1]) is None:
        # a position known only at run time (a loop's counter): the tuple as a List
        return seqlist.at(g, seqlist.as_list(g, inputs[0]), inputs[1])
    items = _items(g, inputs[0])
    pos = _position(g, inputs[1], 0)
    if not -len(items) <= pos < len(items):
        raise g.error(_("position {pos} is outside a sequence of {n}").format(
            pos=pos, n=len(items)))
    return items[pos]


@converter("SequenceInsert", since=11)
def sequence_insert(g, node, inputs, attrs):
    from rvmdbg.onnx import seqlist
    if seqlist.is_list(g, inputs[0]):
        if len(inputs) > 2 and inputs[2] is not None:
            raise g.error(_("SequenceInsert at a position into a sequence whose length is "
                            "known only at run time is not supported"))
        return [seqlist.append(g, inputs[0], inputs[1])]
    items = _items(g, inputs[0])
    pos = _position(g, inputs[2] if len(inputs) > 2 else None, len(items))
    if pos < 0:
        pos += len(items)
    if not 0 <= pos <= len(items):
        raise g.error(_("position {pos} is outside a sequence of {n}").format(
            pos=pos, n=len(items)))
    items.insert(pos, inputs[1])
    return _seq(g, items)


@converter("SequenceErase", since=11)
def sequence_erase(g, node, inputs, attrs):
    items = _items(g, inputs[0])
    pos = _position(g, inputs[1] if len(inputs) > 1 else None, -1)
    if not -len(items) <= pos < len(items):
        raise g.error(_("position {pos} is outside a sequence of {n}").format(
            pos=pos, n=len(items)))
    del items[pos]
    return _seq(g, items)


@converter("SequenceLength", since=11)
def sequence_length(g, node, inputs, attrs):
    from rvmdbg.onnx import seqlist
    if seqlist.is_list(g, inputs[0]):
        return seqlist.length(g, inputs[0])
    return g.const(np.asarray(len(_items(g, inputs[0])), dtype="int64"))


@converter("ConcatFromSequence", since=11)
def concat_from_sequence(g, node, inputs, attrs):
    from rvmdbg.onnx import seqlist
    if seqlist.is_list(g, inputs[0]):
        return seqlist.concat(g, inputs[0], int(attrs.get("axis", 0)),
                              int(attrs.get("new_axis", 0)) == 1)
    items = _items(g, inputs[0])
    axis = int(attrs.get("axis", 0))
    op = "stack" if int(attrs.get("new_axis", 0)) == 1 else "concatenate"
    return g.call(op, [g.tuple(items)], axis=axis)


@converter("SplitToSequence", since=11)
def split_to_sequence(g, node, inputs, attrs):
    from rvmdbg.onnx.ops.common import const_value
    x = inputs[0]
    axis = int(attrs.get("axis", 0))
    keepdims = int(attrs.get("keepdims", 1))
    rank = g.rank_of(x)
    if axis < 0:
        axis += rank
    size = g.shape_of(x)[axis]
    split = inputs[1] if len(inputs) > 1 else None
    if split is None:
        if size is None:
            raise g.error(_("SplitToSequence without split needs a static size on axis "
                            "{axis}").format(axis=axis))
        sections = size
    else:
        v = const_value(g, split)
        if v is None:
            raise g.needs_value(_("the split sizes"), split)
        v = np.asarray(v)
        if v.ndim == 1 and (v == 0).any():
            # Relay's split takes strictly ascending cut points: empty parts are slices
            from rvmdbg.onnx.ops.common import strided_slice
            at, items = 0, []
            for n in v:
                items.append(strided_slice(g, x, [at], [at + int(n)], [1], [axis]))
                at += int(n)
            return _seq(g, items)
        if v.ndim == 1 and v.shape[0] > 1:
            sections = [int(s) for s in np.cumsum(v)[:-1]]   # cut points, as Relay's split
        else:
            sections = int(v.reshape(-1)[0])
            if size is None:
                raise g.error(_("SplitToSequence with a scalar split needs a static size on "
                                "axis {axis}").format(axis=axis))
            if size is not None and size % sections:
                # an uneven last part: cut points every `sections` elements
                sections = list(range(sections, size, sections))
            else:
                sections = size // sections
    out = g.call("split", [x], indices_or_sections=sections, axis=axis)
    n = len(sections) + 1 if isinstance(sections, list) else sections
    items = [g.get(out, i) for i in range(n)]
    if not keepdims and split is None:
        # the ONNX rule: keepdims applies only without split
        items = [g.call("squeeze", [t], axis=[axis]) for t in items]
    return _seq(g, items)


@converter("SequenceMap", since=17)
def sequence_map(g, node, inputs, attrs):
    """The body once per element (sequences have a static length): each sequence input gives
    its k-th element, each tensor input itself; each body output collects into a tuple.
    (TVM's converter had no SequenceMap; this is its unrolled form over tuples.)"""
    from rvmdbg.relay.types import TupleType
    body = attrs["body"]
    seqs = [isinstance(g.type_of(x), TupleType) for x in inputs]
    lengths = {len(_items(g, x)) for x, s in zip(inputs, seqs) if s}
    if len(lengths) != 1:
        raise g.error(_("SequenceMap's sequences have different lengths: {n}").format(
            n=sorted(lengths)))
    n = lengths.pop()
    items = [(_items(g, x) if s else None) for x, s in zip(inputs, seqs)]
    outs = [[] for _o in node.output]
    for k in range(n):
        bindings = {vi.name: (it[k] if it is not None else x)
                    for vi, x, it in zip(body.input, inputs, items)}
        for j, e in enumerate(g.subgraph(body, bindings)):
            outs[j].append(e)
    return [g.tuple(o) for o in outs]
