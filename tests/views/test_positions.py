"""Printed-text positions: every node of every stage found in the stage's text."""
from __future__ import annotations


import pytest

from rvmdbg.relay import ast as A
from rvmdbg.relay.parser import parse
from rvmdbg.views.positions import blank_metadata, pair_nodes, text_regions
from view_helpers import ROOT, load

PROGRAMS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "programs").glob("*.relay"))


def test_blank_metadata_keeps_every_column():
    text = "f(%a, meta[relay.Constant][12] /* ty=Tensor[(2, 3), float32] */, %b)"
    out = blank_metadata(text)
    assert len(out) == len(text)
    assert out.index("%b") == text.index("%b")
    assert "meta" not in out and out[6] == "0"


def test_pair_nodes_refuses_different_shapes():
    a = parse('#[version = "0.0.5"]\ndef @f(%x: int32) { add(%x, 1) }').functions["f"]
    b = parse('#[version = "0.0.5"]\ndef @f(%x: int32) { %x }').functions["f"]
    c = parse('#[version = "0.0.5"]\ndef @f(%y: int32) { add(%y, 2) }').functions["f"]
    assert pair_nodes(a, b) is None
    pairs = pair_nodes(a, c)
    assert pairs is not None
    assert all(type(x) is type(y) for x, y in pairs)
    assert (a.params[0], c.params[0]) in pairs


def test_unparsable_text_gives_no_regions():
    mod = load("tests/examples/list_length.relay")[0].module
    assert text_regions(mod, "this is not relay") == {}


@pytest.mark.parametrize("path", PROGRAMS)
def test_every_stage_of_every_program_has_positions(path):
    ctx, _ = load(path)
    for stage in ctx.stages:
        regions = text_regions(stage.module, stage.text)
        lines = stage.text.split("\n")
        for name, fn in stage.module.functions.items():
            assert id(fn) in regions, f"{path} {stage.name}: @{name} not found in its text"
            span = regions[id(fn)]
            assert lines[span.line - 1][span.col - 1:].startswith("def @" + name)
        # a call's region starts with its callee's text
        for fn in stage.module.functions.values():
            for e in A.walk(fn.body):
                if isinstance(e, A.Call) and isinstance(e.op, A.OpRef) and id(e) in regions:
                    sp = regions[id(e)]
                    assert lines[sp.line - 1][sp.col - 1:].startswith(e.op.name), \
                        f"{path} {stage.name}: {e.op.name}"
