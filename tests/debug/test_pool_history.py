"""Time travel with the pooled storage allocator (issue 30): a buffer the pool hands out again
never changes a tensor an earlier state holds, and stepping back restores the pool's figures
and the storage each tensor lives in."""
from __future__ import annotations

import numpy as np

from rvmdbg import workloads
from rvmdbg.debug import DebugSession
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder

from dbg_helpers import fresh_vm_at, same_state


def _mobilenet():
    w = workloads.build("mobilenet_v1", **workloads.WORKLOADS["mobilenet_v1"][1])
    return compile_module(check_module(load_module(w.text, "mobilenet.relay"))), list(w.inputs)


def test_stepping_back_past_a_reused_buffer_keeps_the_old_tensor_and_the_pool():
    exe, args = _mobilenet()
    s = DebugSession(exe, args, interval=8)
    vm = s.vm
    seen = {}        # id(storage) -> (step, register, tensor copy) of the first tensor written in it
    reuse_at = None
    while not vm.halted:
        before = vm.memory_stats()["reused"]
        s.step(1)
        frame = vm.frames[-1] if vm.frames else None
        if frame is None:
            break
        for r, v in enumerate(frame.registers):
            if type(v) is StorageObject and v.tensor is not None and id(v) not in seen:
                seen[id(v)] = (vm.steps, v.tensor, v.tensor.copy(), vm.memory_stats())
        if vm.memory_stats()["reused"] > before and seen:
            reuse_at = vm.steps
            # run on until a kernel has written into the reused buffer
            s.step(8)
            break
    assert reuse_at is not None, "the pool handed no buffer out again"
    stats_after = vm.memory_stats()
    # the first tensor written (a storage since killed and handed out again)
    step0, tensor0, copy0, stats0 = min(seen.values(), key=lambda t: t[0])
    assert stats_after["reused"] > stats0["reused"]
    s.goto(step0)
    assert vm.steps == step0
    assert vm.memory_stats() == stats0                     # the pool as it was then
    held = [v for v in vm.frames[-1].registers if v is tensor0]
    assert held and np.array_equal(held[0], copy0)          # the old tensor, unchanged
    assert same_state(vm, fresh_vm_at(exe, list(args), step0))
    s.goto(reuse_at + 8)
    assert vm.memory_stats() == stats_after                 # and forward again
    # rstep undoes single steps the same way
    s.rstep(3)
    assert vm.memory_stats() == fresh_vm_at(exe, list(args), vm.steps).memory_stats()


def test_unstep_restores_the_pool_over_a_whole_run():
    exe, args = _mobilenet()
    vm = fresh_vm_at(exe, list(args), 0)
    infos, stats = [], [vm.memory_stats()]
    while not vm.halted:
        infos.append(vm.step())
        stats.append(vm.memory_stats())
    assert stats[-1]["reused"] > 0
    for info in reversed(infos):
        vm.unstep(info)
        stats.pop()
        assert vm.memory_stats() == stats[-1]
    assert not any(type(v) in (StorageObject, TensorPlaceholder) for v in vm.frames[0].registers)


def test_a_reused_buffer_keeps_its_name_on_the_panes():
    from rvmdbg.debug.heap import storage_tags
    exe, args = _mobilenet()
    vm = fresh_vm_at(exe, list(args), 0)
    given: dict = {}     # buffer number -> the storages it was given to (kept alive here)
    while not vm.halted:
        vm.step()
        if not vm.frames:
            break
        regs = vm.frames[-1].registers
        tags = storage_tags(regs)
        for v in regs:
            if type(v) is StorageObject and v.buffer is not None:
                if all(v is not w for w in given.setdefault(v.buffer, [])):
                    given[v.buffer].append(v)
                if not v.released:
                    assert tags[id(v)] == f"s{v.buffer}"
                    if type(v.tensor) is np.ndarray:
                        assert tags[id(v.tensor)] == f"s{v.buffer}"
    assert any(len(storages) > 1 for storages in given.values())  # a buffer handed out again
