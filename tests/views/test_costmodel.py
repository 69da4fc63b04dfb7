"""View 2's cost model: compile + n x dispatch, fitted to measurements, and its chart."""
from __future__ import annotations

import pytest

from rvmdbg.views.costmodel import (WORKLOADS, CostModel, CostSample, break_even_runs,
                                    compare_models, cost_chart, fit_cost_model,
                                    measure_family)
from rvmdbg.views.text import rows_text


def _samples(compile_s, dispatch_s, ns, kernel=0.0, executor="VM", noise=None):
    out = []
    for k, n in enumerate(ns):
        run = n * dispatch_s + kernel + (noise[k] if noise else 0.0)
        out.append(CostSample(executor, size=k + 1, dispatches=n, compile_seconds=compile_s,
                              run_seconds=run, kernel_seconds=kernel))
    return out


def test_fit_recovers_an_exact_line():
    m = fit_cost_model(_samples(2e-3, 500e-9, [100, 1000, 10_000, 100_000], kernel=1e-4))
    assert m.compile_seconds == pytest.approx(2e-3, rel=1e-6)
    assert m.dispatch_seconds == pytest.approx(500e-9, rel=1e-6)
    assert m.r2 == pytest.approx(1.0)
    assert m.predict(1000, runs=3) == pytest.approx(2e-3 + 3 * 1000 * 500e-9)


def test_fit_with_noise_stays_close():
    noise = [3e-6, -2e-6, 4e-6, -1e-6, 2e-6]
    m = fit_cost_model(_samples(1e-3, 1e-6, [10, 100, 1000, 5000, 20_000], noise=noise))
    assert m.dispatch_seconds == pytest.approx(1e-6, rel=0.01)
    assert m.compile_seconds == pytest.approx(1e-3, rel=0.01)
    assert 0.99 < m.r2 <= 1.0


def test_a_fixed_dispatch_count_uses_the_measured_compile_cost():
    samples = [CostSample("graph", s, 4, 3e-3, 10e-6 + s * 1e-9, s * 1e-9)
               for s in (10, 100, 1000)]
    m = fit_cost_model(samples)
    assert m.compile_seconds == pytest.approx(3e-3)
    assert m.dispatch_seconds == pytest.approx(10e-6 / 4)


def test_a_negative_intercept_is_refitted_through_the_origin():
    samples = [CostSample("VM", 1, 10, 0.0, 0.0), CostSample("VM", 2, 20, 0.0, 30e-6),
               CostSample("VM", 3, 30, 0.0, 60e-6)]
    m = fit_cost_model(samples)
    assert m.compile_seconds == 0.0 and m.dispatch_seconds > 0


def test_fit_needs_measurements():
    with pytest.raises(ValueError):
        fit_cost_model([])


def test_break_even_runs():
    vm = CostModel("VM", 1e-3, 1e-6, 1.0, 3)
    graph = CostModel("graph", 5e-3, 2e-6, 1.0, 3)
    # per run: VM 100 x 1us = 100us, graph 4 x 2us = 8us: 4 ms more compile pays off in ~43
    runs = break_even_runs(vm, 100, graph, 4)
    assert runs == pytest.approx(4e-3 / 92e-6)
    assert break_even_runs(vm, 1, graph, 100) is None


def test_compare_models_in_every_case():
    vm = CostModel("VM", 1e-3, 1e-6, 1.0, 3)
    dear = CostModel("graph", 5e-3, 2e-6, 1.0, 3)
    cheap = CostModel("graph", 0.5e-3, 2e-6, 1.0, 3)
    assert compare_models(vm, 100, dear, 4) == "graph's extra compile cost pays off after 43 runs"
    assert compare_models(vm, 100, cheap, 4) == "graph costs less from the first run"
    assert compare_models(vm, 1, dear, 100) == "VM costs less at any number of runs"
    # cheap to compile, dear per run: 0.5 ms saved, lost at 200 us - 1 us a run
    assert compare_models(vm, 1, cheap, 100) == \
        "graph costs less for up to 3 runs, VM after that"


def test_cost_chart_draws_both_executors():
    samples = (_samples(2e-3, 1e-6, [13] * 4, executor="VM")
               + _samples(4e-3, 3e-6, [2] * 4, executor="graph"))
    for i, s in enumerate(samples):
        s.size = [10, 100, 1000, 10_000][i % 4]
    models = {e: fit_cost_model([s for s in samples if s.executor == e]) for e in ("VM", "graph")}
    for mode in ("braille", "block", "ascii"):
        rows = cost_chart(samples, models, WORKLOADS["chain"], width=40, height=8, mode=mode)
        text = rows_text(rows)
        assert "VM measured" in text and "graph model" in text
        assert "by vector elements (log)" in text
        assert len(rows) == 8 + 4
    assert set(rows_text(cost_chart(samples, models, mode="ascii"))) < set(
        " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;()+-*|#%=ox'`_/\n")


def test_workloads_compile_and_grow():
    small = {"list": (3, 12), "chain": (4, 40)}
    for name, w in WORKLOADS.items():
        samples = measure_family(w, sizes=small[name], rounds=1)
        vm = [s for s in samples if s.executor == "VM"]
        assert [s.size for s in vm] == list(small[name])
        if w.static:
            assert {s.executor for s in samples} == {"VM", "graph"}
            assert vm[0].dispatches == vm[1].dispatches     # a static graph: fixed count
        else:
            assert {s.executor for s in samples} == {"VM"}
            assert vm[1].dispatches > vm[0].dispatches      # grows with the list
        assert all(s.run_seconds > 0 and s.compile_seconds > 0 for s in samples)
