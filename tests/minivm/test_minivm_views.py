"""The teaching views on a MiniVM program: its control-flow graph (CH both falls through and
jumps), and View 2's VM side with the graph executor's refusal."""
from __future__ import annotations

from pathlib import Path

from rvmdbg.minivm import load_mvm
from rvmdbg.views.cfg import build_cfg
from rvmdbg.views.executors import compare_executors

ROOT = Path(__file__).resolve().parents[2]


def test_cfg_of_the_demo():
    p = load_mvm(str(ROOT / "programs/demo.mvm"))
    cfg = build_cfg(p.functions[0])
    assert [(b.start, b.end) for b in cfg.blocks] == [(0, 2), (3, 4), (5, 5), (6, 6)]
    assert sorted((e.source, e.target, e.kind) for e in cfg.edges) == [
        (0, 1, "fall"), (0, 2, "true"), (1, 3, "goto"), (2, 3, "fall")]


def test_cfg_of_an_hl_that_stays_is_a_self_loop():
    p = load_mvm(str(ROOT / "programs/demo_spin.mvm"))
    cfg = build_cfg(p.functions[0])
    last = cfg.blocks[-1]
    assert [(e.source, e.target) for e in last.successors] == [(last.index, last.index)]


def test_view_2_runs_the_minivm_and_explains_the_refusal():
    p = load_mvm(str(ROOT / "programs/demo.mvm"))
    c = compare_executors(None, p, [])
    assert not c.static and "not a dataflow graph" in c.refusal
    assert [d.text for d in c.stream] == ["LD r1 3", "LD r2 2", "CH r1 5", "ADD r1 r2 r0", "HL"]
    assert c.vm_result == (5, 3, 2) and c.vm_memory.total == 0
