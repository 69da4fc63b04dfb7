"""The one value formatter (rvmdbg.values): scalars at their dtype's precision, small tensors
in full, big ones as first values, shape, dtype, min / max / mean and NaN/Inf counts, the same
in `run`, `print`, trace and stop lines and the screen's panes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.debug.heap import value_text
from rvmdbg.tui.summary import value_summary as pane_summary
from rvmdbg.values import (
    element_text, format_value, tensor_line, tensor_stats, tensor_summary, value_summary,
)


@pytest.mark.parametrize("value, dtype, text", [
    (0.1, "float32", "0.1f"),          # not 0.10000000149011612f (issue 12, defect 8)
    (0.1, "float16", "0.1f16"),        # not 0.0999755859375f16
    (0.1, "float64", "0.1f64"),
    (3.0, "float32", "3f"),
    (1e20, "float32", "1e+20f"),
    (-2.5e-7, "float64", "-2.5e-07f64"),
    (float("nan"), "float32", "nan"),
    (7, "int64", "7i64"),
    (True, "bool", "True"),
])
def test_scalars_print_at_their_dtypes_precision(value, dtype, text):
    a = np.array(value, dtype=dtype)
    assert format_value(a) == text
    assert value_summary(a) == text and tensor_line(a) == text and value_text(a) == text


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["float16", "float32", "float64"]), st.floats(allow_nan=False,
                                                                      allow_infinity=False))
def test_an_element_reads_back_as_exactly_itself(dtype, x):
    with np.errstate(over="ignore"):
        v = np.array(x).astype(dtype)
    if not np.isfinite(v):
        return
    assert np.array(float(element_text(v)), dtype=dtype).tobytes() == v.tobytes()


def test_small_tensors_print_in_full_as_numpy_does():
    a = np.array([[0.1, 0.2], [0.3, 0.4]], dtype="float32")
    assert format_value(a) == "[[0.1, 0.2],\n [0.3, 0.4]] (float32)"
    assert tensor_line(a) == "[[0.1, 0.2], [0.3, 0.4]] (float32)"
    assert value_summary(a) == "[0.1, 0.2, 0.3, 0.4]"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_full_form_prints_every_element_at_its_dtypes_precision(dtype):
    # NumPy's default print keeps 8 fractional digits: float64 1/3 read 0.33333333 and a
    # float32 0.00012345678 read 0.00012346 in `print` and `run` (issue 11)
    small = np.array([[1 / 3, 0.00012345678], [2.0, np.nan]], dtype=dtype)
    close = np.array([0.00012345678, 0.0002], dtype=dtype)
    big = np.linspace(0, 1 / 3, 1200, dtype=dtype)
    for a in (small, close, big):
        body = format_value(a).split(f" ({dtype}")[0]
        shown = [t.strip(" []\n") for t in body.replace("...,", "").split(",")]
        shown = [t for t in shown if t]
        assert np.array(float(shown[0]), dtype=dtype) == a.flat[0]
        for text in shown:
            v = np.array(float(text), dtype=dtype)
            assert np.isnan(v) or v in a, text  # reads back as exactly an element


def test_big_tensors_show_shape_dtype_statistics_and_first_values():
    a = np.linspace(-1, 1, 3 * 500, dtype="float32").reshape(3, 500)
    a[0, 0], a[0, 1], a[1, 1] = np.nan, np.inf, -np.inf
    stats = tensor_stats(a)
    finite = a[np.isfinite(a)]
    assert stats == (f"min {element_text(finite.min())}, max 1, "
                     f"mean {float(finite.mean(dtype=np.float64)):.4g}, 1 NaN, 2 Inf")
    full = format_value(a)
    assert full.endswith(f"(float32, shape (3, 500), {stats})") and "..." in full
    line = tensor_line(a)
    assert line == f"Tensor[(3, 500), float32] [nan, inf, {element_text(a[0, 2])}, " \
                   f"{element_text(a[0, 3])}, ...] {stats}"
    assert value_text(a, 40) == line  # the statistics are never cut off
    assert pane_summary(a, 200, "…") == f"[nan, inf, {element_text(a[0, 2])}, " \
                                        f"{element_text(a[0, 3])}, …] {stats}"


def test_statistics_of_bool_integer_empty_and_all_nan_tensors():
    assert tensor_stats(np.array([True, False, True, True, False])) == "3 True, 2 False"
    assert tensor_stats(np.arange(10, dtype="int8")) == "min 0, max 9, mean 4.5"
    assert tensor_stats(np.zeros((0, 3), "float32")) == "empty"
    assert tensor_stats(np.full(6, np.nan, "float16")) == "6 NaN"
    assert tensor_summary(np.arange(4)) == "[0, 1, 2, 3]"


def test_statistics_follow_a_new_tensor_at_a_reused_address():
    # the cache is keyed by identity and checked through a weak reference
    for k in range(20):
        a = np.full(10, k, dtype="int32")
        assert tensor_stats(a) == f"min {k}, max {k}, mean {k}"
        del a


def test_run_prints_a_big_result_with_its_statistics(tmp_path, capsys):
    from rvmdbg import cli
    prog = tmp_path / "big.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main() {\n'
                    '  full(0.1f, shape=[40, 40], dtype="float32")\n}\n')
    assert cli.main(["run", str(prog)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("(float32, shape (40, 40), min 0.1, max 0.1, mean 0.1)")
    assert "0.10000000149011612" not in out
