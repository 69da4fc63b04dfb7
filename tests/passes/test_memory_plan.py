"""MemoryPlan (issue 30): a storage whose tensors went only into local tuples, projections and
reshape views is killed after their last use; one whose tensor leaves the chain is not; the
pass is its own stage, changes no result and changes nothing the second time."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pass_helpers import load, run

from rvmdbg.passes.memory_plan import memory_plan
from rvmdbg.passes.pipeline import default_pipeline
from rvmdbg.relay.printer import print_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

ROOT = Path(__file__).resolve().parents[2]
# batch_norm's statistics are used (so SimplifyInference keeps the call for them)
BN = """def @main(%x: Tensor[(1, 2, 4, 4), float32], %g: Tensor[(2,), float32]) -> Tensor[(1, 32), float32] {
  %0 = nn.batch_norm(%x, %g, %g, %g, %g);
  %1 = nn.relu(%0.0);
  %2 = sum(add(%0.1, %0.2));
  add(reshape(%1, newshape=[1, 32]), %2)
}
"""


def _stages(text):
    return {s.name: s for s in default_pipeline().run(load(text))}


def _killed(stage) -> set:
    import re
    return set(re.findall(r"memory\.kill\((%storage_\d+)\)", stage.text))


def test_storages_of_a_tuples_fields_are_killed_after_the_last_projection():
    stages = _stages(BN)
    before, after = _killed(stages["ManifestLifetimes"]), _killed(stages["MemoryPlan"])
    assert before < after                      # batch_norm's three outputs went into a tuple
    assert "%storage_1" in after and "%storage_2" in after
    text = stages["MemoryPlan"].text
    # each added kill comes after the last use of the storage's tensors
    for s in after - before:
        t = "%tensor_" + s.split("_")[1]
        assert text.rindex(t) < text.index(f"memory.kill({s})")


def test_a_storage_whose_tensor_is_returned_is_not_killed():
    stages = _stages(BN)
    text = stages["MemoryPlan"].text
    # the result's storage (the last one allocated) lives on with it
    last = max(int(n) for n in __import__("re").findall(r"let %storage_(\d+) =", text))
    assert f"%storage_{last}" not in _killed(stages["MemoryPlan"])


def test_memory_plan_changes_no_result_and_nothing_the_second_time():
    mod = load(BN)
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(1, 2, 4, 4)
    g = np.array([0.5, 2.0], dtype="float32")
    planned = default_pipeline().apply(mod)
    assert print_module(memory_plan(planned)) == print_module(planned)
    want = run(mod, x, g)
    got = VirtualMachine(compile_module(mod)).invoke("main", [x, g])
    assert np.allclose(got, want)


def test_compile_passes_shows_memory_plan_as_its_own_stage():
    from rvmdbg.vm.compiler import compile_stages
    from rvmdbg.relay.loader import load_module
    text = (ROOT / "programs" / "cnn.relay").read_text()
    stages, _ = compile_stages(load_module(text, "cnn.relay"))
    assert stages[-1].name == "MemoryPlan"
    assert _killed(stages[-2]) < _killed(stages[-1])
