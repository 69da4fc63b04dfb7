"""The teaching comparison (`rvmdbg.relax.compare`): the same model compiled by rvmdbg's Relay
VM and by TVM's Relax VM, from real compiles, and docs/relax-vm.md holds exactly what they
give now (regenerate with `python3 scripts/relax_comparison.py --write`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from rvmdbg.relax import compare  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("relax_comparison",
                                                  ROOT / "scripts" / "relax_comparison.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_both_sides_come_from_real_compiles():
    from rvmdbg.vm import bytecode as bc
    relay, relax = compare.relay_side(), compare.relax_side()
    assert len(bc.OPCODES) == 21
    assert relay.kinds == ["load_const", "alloc_storage", "alloc_tensor", "invoke_packed", "ret"]
    assert relay.callees == ["vm_mod_fused_nn_dense_nn_relu"]
    assert set(relax.kinds) <= {"Call", "Ret", "Goto", "If"} and relax.kinds[-1] == "Ret"
    # allocation on the Relax VM is builtin calls, where the Relay VM has opcodes
    assert "vm.builtin.alloc_storage" in relax.callees and "vm.builtin.alloc_tensor" in relax.callees
    assert [c for c in relax.callees if not c.startswith("vm.builtin.")] == [
        "transpose", "matmul", "relu"]
    rows = compare.side_by_side(relay, relax)
    assert rows[0].startswith(relay.title) and rows[0].endswith(relax.title)
    assert len(rows) == 2 + max(len(relay.lines), len(relax.lines))


def test_the_doc_holds_what_the_compilers_give():
    script = _script()
    block = script.block_in((ROOT / "docs" / "relax-vm.md").read_text(encoding="utf-8"))
    assert block is not None, "docs/relax-vm.md lost its comparison markers"
    assert block == compare.comparison_markdown(), \
        "the comparison drifted: python3 scripts/relax_comparison.py --write"
