"""View 3's control flow: basic blocks, edges, branch outcomes and the path taken so far."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.views.cfg import (FALL, FALSE, GOTO, TRUE, ActivationPath, branch_outcome,
                              build_cfg, draw_cfg, leaders, summarize_path)
from rvmdbg.views.text import ASCII, rows_text
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import VMFunction
from rvmdbg.vm.machine import VirtualMachine
from view_helpers import ROOT, context, int_list, load

PROGRAMS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "programs").glob("*.relay"))


def _length_cfg():
    ctx, _ = load("tests/examples/list_length.relay")
    fi = ctx.exe.func_index("length")
    return ctx, fi, build_cfg(ctx.exe.functions[fi], fi)


def test_blocks_of_a_match():
    _, _, cfg = _length_cfg()
    assert [(b.start, b.end) for b in cfg.blocks] == [(0, 2), (3, 12), (13, 15), (16, 18),
                                                      (19, 19), (20, 20)]
    edges = {(e.source, e.target, e.kind) for e in cfg.edges}
    assert edges == {(0, 1, TRUE), (0, 2, FALSE), (1, 5, GOTO), (2, 3, TRUE), (2, 4, FALSE),
                     (3, 5, GOTO)}
    assert [e.source for e in cfg.blocks[5].predecessors] == [1, 3]


def test_leaders_of_hand_written_code():
    code = [bc.LoadConsti(1, 1), bc.If(0, 1, 1, 3), bc.Move(0, 2), bc.Goto(2),
            bc.Move(1, 2), bc.Ret(2)]
    assert leaders(code) == [0, 2, 4, 5]
    cfg = build_cfg(VMFunction("f", ["x"], 3, code))
    assert {(e.source, e.target, e.kind) for e in cfg.edges} == {
        (0, 1, TRUE), (0, 2, FALSE), (1, 3, GOTO), (2, 3, FALL)}


@pytest.mark.parametrize("path", PROGRAMS)
def test_blocks_partition_every_function_and_edges_follow_the_instructions(path):
    ctx, _ = load(path)
    for fi, fn in enumerate(ctx.exe.functions):
        cfg = build_cfg(fn, fi)
        covered = [pc for b in cfg.blocks for pc in b.pcs]
        assert covered == list(range(len(fn.instructions)))
        for b in cfg.blocks:
            for pc in range(b.start, b.end):   # no jump leaves a block before its end
                assert not fn.instructions[pc].is_jump
            last = fn.instructions[b.end]
            targets = {cfg.block_of_pc[t] for t in last.successors(b.end)}
            assert {e.target for e in b.successors} == targets
            for t in last.jump_targets(b.end):
                assert cfg.blocks[cfg.block_of_pc[t]].start == t   # jumps land on block starts


def test_branch_outcome_as_the_vm_decides():
    ins = bc.If(1, 2, 1, 5)
    regs = [None, np.array(3, dtype=np.int32), np.array(3, dtype=np.int64)]
    out = branch_outcome(ins, 10, regs)
    assert out.taken is True and out.next_pc == 11
    regs[1] = np.array(False)
    out = branch_outcome(ins, 10, [None, np.array(False), np.array(1, dtype=np.int64)])
    assert out.taken is False and out.next_pc == 15
    assert "goes false, to pc 15" in out.describe()
    out = branch_outcome(ins, 10, [None, None, np.array(1)])
    assert out.taken is None and out.next_pc is None


def _brute_path(exe, args, serial, until):
    vm = VirtualMachine(exe)
    vm.start("main", args)
    pcs = []
    while vm.steps < until and not vm.halted:
        if vm.frames[-1].serial == serial:
            pcs.append(vm.frames[-1].pc)
        vm.step()
    return pcs


def test_activation_path_matches_a_step_by_step_trace():
    ctx = context("tests/examples/list_length.relay", args=None)
    args = [int_list(4, 5, 6)]
    fi = ctx.exe.func_index("length")
    cfg = build_cfg(ctx.exe.functions[fi], fi)
    ap = ActivationPath(ctx.exe, "main", args)
    for serial, until in ((2, 40), (2, 60), (1, 70), (1, 20)):
        path = ap.path(serial, fi, until, cfg)
        assert path.pcs == _brute_path(ctx.exe, [int_list(4, 5, 6)], serial, until)
    # the outermost call of @length went Cons: B0 -> B1, and back from its callee
    path = ap.path(1, fi, 70, cfg)
    assert path.blocks[:2] == [0, 1]
    assert path.edge_counts[(0, 1)] == 1


def test_summarize_path_counts_loops_and_arrivals():
    _, _, cfg = _length_cfg()
    p = summarize_path(0, 0, [0, 1, 2, 13, 14, 15, 16, 17, 18], cfg, arrive=20)
    assert p.blocks == [0, 2, 3, 5]
    assert p.edge_counts == {(0, 2): 1, (2, 3): 1, (3, 5): 1}
    assert summarize_path(0, 0, [0, 1, 2], cfg, arrive=2).edge_counts == {}


def test_draw_cfg_marks_the_path_the_pc_and_the_branch():
    ctx, fi, cfg = _length_cfg()
    exe = ctx.exe
    path = summarize_path(0, fi, [0, 1], cfg, arrive=2)
    regs = [int_list(1), np.array(0, dtype=np.int32), np.array(0, dtype=np.int64)]
    out = branch_outcome(exe.functions[fi].instructions[2], 2, regs)
    rows, row_of_pc = draw_cfg(cfg, exe.function_names(), exe.kernel_names(), path, 2, out,
                               ASCII)
    text = rows_text(rows)
    assert "> " in rows_text([rows[row_of_pc[2]]])
    assert [role for _, role in rows[row_of_pc[2]] if role == "current"]
    assert "goes true, to pc 3" in text
    assert "B5  pc 20  from B1 (goto), B3 (goto)" in text
    roles = {role for row in rows for _, role in row}
    assert {"next", "visited", "dim", "header"} <= roles
    # the arrow to a non-adjacent block ends with a head on its header row
    header = next(r for r in rows if "B2  pc 13-15" in rows_text([r]))
    assert "+-> B2" in rows_text([header])
