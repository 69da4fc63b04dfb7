"""`print $N[0, :, 3]`: NumPy's basic indexing parsed by our own small parser (no eval)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.debug.indexing import (
    IndexSyntaxError, apply_index, index_text, parse_index, split_indexed,
)

from test_dbg_batch import debug, outputs


@pytest.mark.parametrize("text, index", [
    ("0, :, 3", (0, slice(None), 3)),
    ("-1", (-1,)),
    ("1:3", (slice(1, 3),)),
    ("::-2, 0", (slice(None, None, -2), 0)),
    ("..., 1", (Ellipsis, 1)),
    ("None, 2:", (None, slice(2, None))),
    ("0,", (0,)),
])
def test_parse_index(text, index):
    assert parse_index(text) == index


@pytest.mark.parametrize("text, message", [
    ("a", "expected an integer"),
    ("1:2:3:4", "at most three parts"),
    ("::0", "step cannot be zero"),
    ("..., ...", "only one `...`"),
    ("1,,2", "empty index"),
    ("__import__('os')", "expected an integer"),
])
def test_bad_indices_are_refused(text, message):
    with pytest.raises(IndexSyntaxError, match=re.escape(message)):
        parse_index(text)


def test_split_and_out_of_range():
    assert split_indexed("$3[0, :]") == ("$3", "0, :")
    assert split_indexed("$3") == ("$3", None)
    with pytest.raises(IndexSyntaxError, match="close the index"):
        split_indexed("$3[0")
    with pytest.raises(IndexSyntaxError, match=r"out of bounds.*\(shape \(2, 3\)\)"):
        apply_index(np.zeros((2, 3)), (5,))


_part = st.one_of(st.integers(-4, 4), st.none(),
                  st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
                            st.none() | st.integers(-3, 3).filter(bool)))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(_part, max_size=3),
       st.booleans())
def test_indexing_is_numpys(shape, parts, ellipsis):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    index = tuple(parts) + ((Ellipsis,) if ellipsis else ())
    parsed = parse_index(index_text(index)) if index else ()
    assert parsed == index
    try:
        want = np.asarray(a[index])
    except IndexError:
        with pytest.raises(IndexSyntaxError):
            apply_index(a, parsed)
        return
    got = apply_index(a, parsed)
    assert got.shape == want.shape and np.array_equal(got, want)


def test_print_slices_a_register_in_batch_mode(tmp_path):
    prog = tmp_path / "t.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3, 4), float32]) {\n'
                    "  add(%x, 1f)\n}\n")
    arr = tmp_path / "x.npy"
    np.save(arr, (np.arange(24, dtype=np.float32) / 10).reshape(2, 3, 4))
    proc = debug(tmp_path, str(prog), [f"@{arr}"],
                 "print $0[0, :, 3]\nprint $0[..., ::2][1]\nprint $0[1, -1, 0]\n"
                 "print $0[9]\nprint $0[x]\nprint $0\n")
    out = outputs(proc.stdout)
    assert out["print $0[0, :, 3]"] == ["$0[0, :, 3] = [0.3, 0.7, 1.1] (float32)    "
                                        "(Tensor[(3,), float32])"]
    assert out["print $0[1, -1, 0]"] == ["$0[1, -1, 0] = 2f    (float32)"]
    assert out["print $0[..., ::2][1]"][0].startswith("error: expected")
    assert "index 9 is out of bounds" in out["print $0[9]"][0]
    assert out["print $0[x]"][0].startswith("error: expected an integer")
    assert "$0 = [[[0. , 0.1, 0.2, 0.3]," in out["print $0"][0]
    # past a few elements, print adds the statistics the registers pane shows
    assert out["print $0"][-1].endswith("(Tensor[(2, 3, 4), float32]; min 0, max 2.3, "
                                        "mean 1.15)")


def test_print_shows_the_nan_and_inf_counts_of_a_small_tensor(tmp_path):
    prog = tmp_path / "t.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(6), float64]) {\n'
                    "  add(%x, 1f64)\n}\n")
    arr = tmp_path / "x.npy"
    np.save(arr, np.array([np.nan, 1 / 3, np.inf, 2.0, -np.inf, np.nan]))
    out = outputs(debug(tmp_path, str(prog), [f"@{arr}"], "print $0\nprint $0[1:4]\n").stdout)
    text = "\n".join(out["print $0"])
    assert "0.3333333333333333" in text  # the dtype's own precision
    assert text.endswith("(Tensor[(6,), float64]; min 0.3333333333333333, max 2, mean 1.167, "
                         "2 NaN, 2 Inf)")
    assert out["print $0[1:4]"][-1].endswith("(Tensor[(3,), float64])")  # all shown: no stats
