"""Converters of NonZero (Relay's argwhere, cast to int64 and transposed), Unique (Relay's
padded unique, trimmed to num_unique with dyn.strided_slice) and ReverseSequence
(reverse_sequence), as TVM's relay.frontend.onnx emitted them."""
from __future__ import annotations

import numpy as np

from rvmdbg.onnx.ops import common as c
from rvmdbg.onnx.registry import converter


@converter("NonZero", since=9)
def non_zero(g, node, inputs, attrs):
    out = c.cast(g, g.call("argwhere", [inputs[0]]), "int64")
    return c.transpose(g, out, [1, 0])


@converter("Unique", since=11)
def unique(g, node, inputs, attrs):
    data = inputs[0]
    along = None
    if attrs.get("axis") is None:
        data = c.reshape(g, data, [-1])
    elif g.rank_of(data) != 1:
        # TVM refused (its unique takes a 1-d tensor): unique of each slice's rank among the
        # slices in lexicographic order, the slices then taken by the first indices
        along, data = int(attrs["axis"]) % g.rank_of(data), _slice_keys(g, data, int(attrs["axis"]))
    out = g.call("unique", [data], sorted=bool(attrs.get("sorted", 1) == 1),
                 return_counts=True)
    num_unique = g.get(out, 3)

    def trim(x):
        return g.call("dyn.strided_slice", [x, g.const(np.array([0], "int32")), num_unique,
                                            g.const(np.array([1], "int32"))],
                      slice_mode="end")
    first = c.cast(g, trim(g.get(out, 1)), "int64")
    values = trim(g.get(out, 0)) if along is None else \
        g.call("take", [inputs[0], first], axis=along, batch_dims=0, mode="clip")
    return [values, first, c.cast(g, g.get(out, 2), "int64"),
            c.cast(g, trim(g.get(out, 4)), "int64")]


def _slice_keys(g, x, axis):
    """Per slice of x along axis, its rank among the distinct slices in lexicographic order
    (int64, equal slices equal keys): a radix sort by stable argsorts from the last element
    to the first, then a cumulative count of the changes between neighbours."""
    shape = g.shape_of(x)
    rank = len(shape)
    axis %= rank
    if None in shape:
        raise g.error("Unique along an axis needs static dims")
    n = shape[axis]
    m = int(np.prod([d for i, d in enumerate(shape) if i != axis]))
    perm = [axis] + [i for i in range(rank) if i != axis]
    rows = c.reshape(g, c.transpose(g, x, perm), [n, m])
    order = g.const(np.arange(n, dtype="int64"))
    for j in reversed(range(m)):
        col = g.call("take", [c.strided_slice(g, rows, [0, j], [n, j + 1]), order], axis=0,
                     batch_dims=0, mode="clip")
        step = g.call("argsort", [c.reshape(g, col, [n])], axis=0, is_ascend=True,
                      dtype="int64")
        order = g.call("take", [order, step], axis=0, batch_dims=0, mode="clip")
    srt = g.call("take", [rows, order], axis=0, batch_dims=0, mode="clip")
    if n < 2:
        return g.const(np.zeros(n, "int64"))
    changed = g.call("any", [g.call("not_equal", [c.strided_slice(g, srt, [1, 0], [n, m]),
                                                  c.strided_slice(g, srt, [0, 0], [n - 1, m])])],
                     axis=[1], keepdims=False, exclude=False)
    steps = c.concat(g, [g.const(np.zeros(1, "int64")), c.cast(g, changed, "int64")], 0)
    ranks = g.call("cumsum", [steps], axis=0, dtype="int64", exclusive=False)
    return g.call("scatter_elements", [g.const(np.zeros(n, "int64")), order, ranks], axis=0,
                  reduction="update")


@converter("ReverseSequence", since=10)
def reverse_sequence(g, node, inputs, attrs):
    return g.call("reverse_sequence", [inputs[0], inputs[1]],
                  seq_axis=int(attrs.get("time_axis", 0)),
                  batch_axis=int(attrs.get("batch_axis", 1)))


@converter("TfIdfVectorizer", since=9)
def tfidf_vectorizer(g, node, inputs, attrs):
    """TfIdfVectorizer over integer tokens (TVM had none; `pool_strings` has no Relay dtype and
    is refused): for each gram size n in [min_gram_length, max_gram_length] and each skip
    distance d (1 .. max_skip_count + 1; unigrams once), the windows X[i + k d] (one `take`
    of a constant index matrix) compared with all the pool's n-grams at once (`equal`, `all`
    over the gram), counted over the positions (`sum`), the counts placed at their
    ngram_indexes by a constant 0/1 matrix (`nn.dense`), then TF, IDF or TFIDF with the
    weights. A batch row's n-grams stay within the row."""
    if "pool_strings" in attrs:
        raise g.error("TfIdfVectorizer over strings is not supported (Relay has no string "
                      "dtype); integer tokens (pool_int64s) are")
    x = inputs[0]
    shape = g.shape_of(x)
    if len(shape) not in (1, 2) or shape[-1] is None:
        raise g.error(f"TfIdfVectorizer takes 1-d or 2-d tokens of a static length, got "
                      f"shape {list(shape)}")
    pool = c.ints(attrs.get("pool_int64s", []))
    starts, indexes = c.ints(attrs["ngram_counts"]), c.ints(attrs["ngram_indexes"])
    lo, hi = int(attrs["min_gram_length"]), int(attrs["max_gram_length"])
    skips = int(attrs.get("max_skip_count", 0)) + 1
    mode = attrs.get("mode", b"TF")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    size = max(indexes) + 1 if indexes else 0
    weights = attrs.get("weights")
    batch = x if len(shape) == 2 else c.expand_dims(g, x, 0)
    length = shape[-1]
    dtype = g.dtype_of(x)
    out = None
    first = 0                      # the index of the level's first n-gram, in pool order
    for level, start in enumerate(starts):
        n = level + 1
        end = starts[level + 1] if level + 1 < len(starts) else len(pool)
        grams = np.array(pool[start:end], dtype).reshape(-1, n)
        count = None
        if lo <= n <= hi and len(grams):
            for d in (range(1, skips + 1) if n > 1 else (1,)):
                positions = length - (n - 1) * d
                if positions <= 0:
                    continue
                index = np.arange(positions)[:, None] + np.arange(n)[None, :] * d
                windows = g.call("take", [batch, g.const(index.astype("int64"))], axis=1,
                                 batch_dims=0, mode="clip")            # (N, L, n)
                hits = g.call("all", [g.call("equal", [c.expand_dims(g, windows, 2),
                                                       g.const(grams)])],
                              axis=[3], keepdims=False, exclude=False)  # (N, L, G)
                found = g.call("sum", [c.cast(g, hits, "float32")], axis=[1], keepdims=False,
                               exclude=False)                           # (N, G)
                count = found if count is None else g.call("add", [count, found])
        if count is not None:
            place = np.zeros((size, len(grams)), "float32")
            for j in range(len(grams)):
                place[indexes[first + j], j] = 1
            placed = g.call("nn.dense", [count, g.const(place)], units=size)
            out = placed if out is None else g.call("add", [out, placed])
        first += len(grams)
    if out is None:   # no n-gram of the counted sizes fits: every count is 0
        rows = g.shape_of(batch)[0]
        if rows is None:
            raise g.error("TfIdfVectorizer counts nothing here and needs the static batch size")
        out = g.call("zeros", [], shape=[rows, size], dtype="float32")
    w = np.asarray(weights if weights is not None else np.ones(size), "float32")
    if mode == "IDF":
        out = g.call("where", [g.call("greater", [out, g.const(np.float32(0))]), g.const(w),
                               g.const(np.float32(0))])
    elif mode == "TFIDF":
        out = g.call("multiply", [out, g.const(w)])
    elif mode != "TF":
        raise g.error(f"TfIdfVectorizer's mode must be TF, IDF or TFIDF, got {mode}")
    return out if len(shape) == 2 else c.squeeze(g, out, [0])
