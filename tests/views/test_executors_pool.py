"""View 2 with the storage pool (issue 30): the VM's peak is the pool's, shown next to the
graph executor's plan with the ratio and the explanation of the difference, from a real run."""
from __future__ import annotations

from rvmdbg import workloads
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.views.executors import compare_executors, memory_explanation
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine
from view_helpers import context


def test_the_vm_peak_is_the_pools_and_is_compared_with_the_plan():
    w = workloads.build("mobilenet_v1", **workloads.WORKLOADS["mobilenet_v1"][1])
    mod = check_module(load_module(w.text, "mobilenet.relay"))
    exe = compile_module(mod)
    cmp = compare_executors(mod, exe, list(w.inputs))
    vm = VirtualMachine(exe)
    vm.invoke("main", list(w.inputs))
    assert cmp.vm_pool == vm.memory_stats() and cmp.vm_pool["reused"] > 0
    assert cmp.vm_peak_bytes == cmp.vm_pool["peak"]
    assert cmp.peak_vs_plan == cmp.vm_peak_bytes / cmp.graph_memory.working
    assert cmp.peak_vs_plan <= 1.3
    text = "\n".join(memory_explanation(cmp))
    assert f"{cmp.peak_vs_plan:.2f}x" in text and str(cmp.vm_pool["reused"]) in text
    assert str(cmp.graph_memory.working) in text


def test_a_dynamic_program_says_why_there_is_no_plan():
    ctx = context("programs/dynamic_shapes.relay")
    cmp = compare_executors(ctx.module, ctx.run_exe(), ctx.session_args())
    assert not cmp.static and cmp.peak_vs_plan is None
    assert any("dynamic program" in line for line in memory_explanation(cmp))
