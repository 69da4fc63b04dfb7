"""run()'s straight-line regions of tensor code (rvmdbg/vm/regions.py) against step(): the
checks of test_run_blocks.py over models and tensor programs, where whole regions of up to
MAX_BLOCK instructions run as one handler, plus the regions' own slow paths (a failing or
misbehaving kernel, --max-bytes within a region, a region on registers it did not write)."""
from __future__ import annotations

import numpy as np
import pytest

import test_run_blocks as rb
from rvmdbg.limits import Limits
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.kernels import build_kernel
from rvmdbg.vm.machine import VirtualMachine

# small runs of tensor code; "+reuse": registers reused, so a region's registers alias
TENSOR = [("wl:lstm_sequence", None), ("wl:lstm_sequence+reuse", None), ("wl:mlp", None),
          ("wl:cnn", None), ("wl:while_loop", None), ("rnn.relay", None),
          ("dynamic_shapes.relay", None), ("cnn.relay+reuse", None)]
# the ones that run a region more than once (a trap at its start is visited again)
LOOPS = {"wl:lstm_sequence", "wl:lstm_sequence+reuse", "wl:while_loop", "rnn.relay"}


def regions(name):
    _, exe, _ = rb.compiled(name)
    return [(fi, start, w) for fi, blocks in enumerate(VirtualMachine(exe).blocks())
            for start, w in blocks if w > 8]


@pytest.mark.parametrize("name, texts", TENSOR)
def test_tensor_code_runs_in_regions(name, texts):
    assert regions(name), "no region: the tensor fast path is not exercised"
    rb.test_blocks_are_used(name, texts)


@pytest.mark.parametrize("name, texts", TENSOR)
def test_run_until_any_step_leaves_the_stepped_state(name, texts):
    rb.test_run_until_any_step_leaves_the_stepped_state(name, texts)


@pytest.mark.parametrize("name, texts", TENSOR)
def test_breakpoints_inside_regions_stop_where_stepping_arrives(name, texts):
    rb.test_breakpoints_inside_blocks_stop_where_stepping_arrives(name, texts)


@pytest.mark.parametrize("name, texts", TENSOR)
def test_max_steps_stops_at_exactly_the_limit(name, texts):
    rb.test_max_steps_stops_at_exactly_the_limit(name, texts)


@pytest.mark.parametrize("name, texts", [t for t in TENSOR if t[0] in LOOPS])
def test_checked_traps_at_region_starts_stop_where_stepping_arrives(name, texts):
    rb.test_checked_traps_at_block_starts_run_the_block_and_stop_where_stepping_arrives(
        name, texts)


@pytest.mark.parametrize("name", ["wl:lstm_sequence", "wl:mlp", "wl:cnn"])
def test_max_bytes_within_a_region_fails_like_stepping(name):
    _, exe, texts = rb.compiled(name)
    peak, vm = 0, rb.started(name, None)
    while not vm.halted:
        vm.step()
        peak = max(peak, vm.live_bytes)
    for limit in sorted({1, peak // 3, peak // 2, peak - 1}):
        vm = rb.started(name, None)
        args = [f.registers[i] for f in vm.frames[:1] for i in range(len(exe.functions[
            f.func_index].params))]
        by_run, by_step = (rb.outcome(exe, args, d, Limits(max_bytes=limit))
                           for d in ("run", "step"))
        assert by_run == by_step
        assert by_run[1] == "max_bytes"


def _two_kernel_exe(source_a: str, source_b: str, shape=(2,)):
    """main(x) = b(a(x)), each kernel's output laid out in its own storage, then a kill and
    the return: one region of 13 instructions."""
    ka, kb = Kernel("fused_a", source_a, 1, 1), Kernel("fused_b", source_b, 1, 1)
    for k in (ka, kb):
        k.impl = build_kernel(k)
    nbytes = 4 * int(np.prod(shape))
    code = [bc.LoadConst(0, 1), bc.AllocStorage(1, 64, "float32", 2), bc.LoadConst(1, 3),
            bc.AllocTensor(2, 3, list(shape), "float32", 4), bc.InvokePacked(0, 2, 1, [0, 4]),
            bc.LoadConst(0, 5), bc.AllocStorage(5, 64, "float32", 6), bc.LoadConst(1, 7),
            bc.AllocTensor(6, 7, list(shape), "float32", 8), bc.InvokePacked(1, 2, 1, [4, 8]),
            bc.KillRegister(4), bc.KillRegister(2), bc.Ret(8)]
    consts = [np.array(nbytes, dtype=np.int64), np.array(0, dtype=np.int64)]
    return Executable([VMFunction("main", ["x"], 9, code)], consts, [ka, kb])


def test_a_failing_kernel_inside_a_region_fails_like_stepping():
    # the second kernel divides integers by zero on the first kernel's output
    a = "fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n  negative(%p0)\n}"
    b = ("fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n"
         "  cast(divide(cast(%p0, dtype=\"int32\"), cast(%p0, dtype=\"int32\")), dtype=\"float32\")\n}")
    exe = _two_kernel_exe(a, b)
    assert VirtualMachine(exe).blocks()[0] == [(0, 13)]  # the whole function, ret included
    for x, ok in ((np.array([1, 2], dtype=np.float32), True),
                  (np.array([0, 2], dtype=np.float32), False)):
        by_run, by_step = (rb.outcome(exe, [x], d) for d in ("run", "step"))
        assert by_run == by_step
        assert (by_run[0] == "ok") == ok
        if not ok:
            assert by_run[2] == 9 and "division by zero" in by_run[0]


def test_a_kernel_output_of_the_wrong_shape_fails_like_stepping():
    # a malformed executable: the first kernel's output is laid out as [3], it makes [2]
    a = "fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n  negative(%p0)\n}"
    exe = _two_kernel_exe(a, a, shape=(2,))
    exe.functions[0].instructions[3] = bc.AllocTensor(2, 3, [3], "float32", 4)
    exe.constants[0] = np.array(12, dtype=np.int64)
    by_run, by_step = (rb.outcome(exe, [np.array([1, 2], dtype=np.float32)], d)
                       for d in ("run", "step"))
    assert by_run == by_step
    assert by_run[2] == 4 and "produced [2] float32" in by_run[0]


def test_a_region_reading_an_uninitialized_tensor_fails_like_stepping():
    # the argument is a storage's uninitialized tensor from the caller's point of view: the
    # region reads it as a kernel input, as the kernel's handler would, and fails there
    a = "fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n  negative(%p0)\n}"
    exe = _two_kernel_exe(a, a)
    from rvmdbg.vm.objects import ByteAccount, StorageObject, TensorPlaceholder
    placeholder = TensorPlaceholder(StorageObject(8, 64, "float32", ByteAccount()), 0, (2,),
                                    np.dtype("float32"))
    by_run, by_step = (rb.outcome(exe, [placeholder], d) for d in ("run", "step"))
    assert by_run == by_step
    assert by_run[2] == 4 and "uninitialized" in by_run[0]


@pytest.mark.parametrize("name", ["wl:cnn", "wl:lstm_sequence+reuse"])
def test_regions_letting_dead_tensors_go_leave_the_stepped_state(name, monkeypatch):
    from rvmdbg.vm import regions
    monkeypatch.setattr(regions, "_DROP_BYTES", 0)  # every dead value dropped after its last use
    rb.test_max_steps_stops_at_exactly_the_limit(name, None)


@pytest.mark.parametrize("name", ["wl:lstm_sequence", "wl:while_loop", "rnn.relay"])
def test_max_bytes_limits_near_the_peak_take_the_slow_paths_and_end_alike(name):
    # a region checks its allocations against the limit all at once (frees not counted):
    # near the peak it runs its instructions' own handlers, the loop's exit branch included
    _, exe, _ = rb.compiled(name)
    states = rb.stepped_states(name, None)
    peak = max(s[2] for s in states)
    finished = 0
    for limit in range(peak, peak + 600, 41):
        vm = rb.started(name, None, Limits(max_bytes=limit))
        args = vm.frames[0].registers[:len(exe.functions[vm.frames[0].func_index].params)]
        by_run, by_step = (rb.outcome(exe, args, d, Limits(max_bytes=limit))
                           for d in ("run", "step"))
        assert by_run == by_step
        finished += by_run[0] == "ok"
    assert finished


def test_a_tensor_laid_out_at_a_regions_end_is_made_as_stepping_makes_it():
    # the region ends before shape_of, which reads the uninitialized tensor $8 it laid out
    # (and its storage $6, released by the kill of a copy of it); a kernel fills $4 before
    a = "fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n  negative(%p0)\n}"
    exe = _two_kernel_exe(a, a)
    code = exe.functions[0].instructions[:9] + [
        bc.Move(6, 9), bc.KillRegister(9), bc.ShapeOf(8, 10), bc.Ret(10)]
    exe.functions[0] = VMFunction("main", ["x"], 11, code)
    assert VirtualMachine(exe).blocks()[0][0] == (0, 11)
    x = np.array([1, 2], dtype=np.float32)
    ran, stepped = VirtualMachine(exe), VirtualMachine(exe)
    ran.start("main", [x])
    ran.run(breakpoints={(0, 12)})  # stops before the ret: the registers are still there
    stepped.start("main", [x])
    while stepped.location != (0, 12):
        stepped.step()
    assert rb.state(ran) == rb.state(stepped)
    regs = rb.state(ran)[0][0][-1]
    assert regs[8][0] == "placeholder" and regs[6] == ("storage", 8, 64, "float32", True, None)
    assert regs[10] == rb.describe(np.array([2], dtype=np.int64))


@pytest.mark.parametrize("name, texts", TENSOR)
def test_run_gives_the_result_stepping_gives(name, texts):
    _, exe, _ = rb.compiled(name)
    results = []
    for drive in ("run", "step"):
        vm = rb.started(name, texts)
        if drive == "run":
            vm.run()
        else:
            while not vm.halted:
                vm.step()
        results.append((rb.describe(vm.result), rb.state(vm)))
    assert results[0] == results[1]


@pytest.mark.parametrize("first, second", [
    ("negative(%p0)", "reshape(%p0, newshape=[2])"),  # the second output is a view of the first
    ("negative(%p0)", "%p0"),                          # ... or the first tensor itself
    ("%p0", "negative(%p0)"),                          # the first output is the argument
])
def test_a_killed_storages_tensor_living_on_is_counted_as_stepping_counts_it(first, second):
    # --max-bytes counts a killed storage's bytes again while its tensor is referenced
    # elsewhere: the region must find that out as stepping's reference count does
    def source(body):
        return ("fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {\n  "
                + body + "\n}")
    exe = _two_kernel_exe(source(first), source(second))
    assert VirtualMachine(exe).blocks()[0] == [(0, 13)]
    by_run, by_step = (rb.outcome(exe, [np.array([1, 2], dtype=np.float32)], d)
                       for d in ("run", "step"))
    assert by_run == by_step and by_run[0] == "ok"
    assert by_run[2][3] > 0  # orphan bytes: the first storage's, and the returned frame's


def _watching_exe(k: int, outputs):
    """main(x): k kernels each make `negative(x)` in its own storage, then a kernel of two
    outputs, `outputs(inputs) -> (a, b)`, reads all k; the k inputs and their storages are
    killed, the two outputs returned in a tuple: one region. Each input's storage kill counts
    it as living on only when an output is it or a view of it."""
    t = "Tensor[(2), float32]"
    neg = Kernel("fused_negative", f"fn (%p0: {t}, Primitive=1) -> {t} {{\n  negative(%p0)\n}}",
                 1, 1)
    params = ", ".join(f"%p{i}: {t}" for i in range(k))
    two = Kernel("fused_two", f"fn ({params}, Primitive=1) -> ({t}, {t}) {{\n  "
                 "(negative(%p0), negative(%p0))\n}", k, 2)
    neg.impl = build_kernel(neg)
    two.impl = outputs
    code, r = [], 1

    def alloc():  # load_const, alloc_storage, load_const, alloc_tensor: (storage, tensor)
        nonlocal r
        s, st, o, tensor = r, r + 1, r + 2, r + 3
        r += 4
        code.extend([bc.LoadConst(0, s), bc.AllocStorage(s, 64, "float32", st),
                     bc.LoadConst(1, o), bc.AllocTensor(st, o, [2], "float32", tensor)])
        return st, tensor
    inputs = []
    for _ in range(k):
        st, tensor = alloc()
        code.append(bc.InvokePacked(0, 2, 1, [0, tensor]))
        inputs.append((st, tensor))
    outs = [alloc()[1] for _ in range(2)]
    code.append(bc.InvokePacked(1, k + 2, 2, [tensor for _, tensor in inputs] + outs))
    code += [bc.KillRegister(tensor) for _, tensor in inputs]
    code += [bc.KillRegister(st) for st, _ in inputs]
    code += [bc.AllocADT(0, outs, r), bc.Ret(r)]
    consts = [np.array(8, dtype=np.int64), np.array(0, dtype=np.int64)]
    return Executable([VMFunction("main", ["x"], r + 1, code)], consts, [neg, two])


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("outputs, lives_on", [
    (lambda v: (np.negative(v[0]), v[-1] + v[0]), False),  # new tensors: the fast path holds
    (lambda v: (np.negative(v[0]), v[-1][:]), True),       # a view of the last input
    (lambda v: (v[0][::1][:], np.negative(v[-1])), True),  # a view of a view of the first
    (lambda v: (v[-1], np.negative(v[0])), True),          # the last input itself
], ids=["new", "view-last", "view-first", "itself"])
def test_a_kernel_of_several_outputs_viewing_a_killed_input_is_counted_as_stepping(
        k, outputs, lives_on):
    # the region's check of a multi-output kernel against the inputs whose storages it
    # kills afterwards (one, two or more watched values): run() must count as step() does
    calls = []
    exe = _watching_exe(k, lambda values: calls.append(1) or outputs(values))
    width = len(exe.functions[0].instructions)
    assert VirtualMachine(exe).blocks()[0] == [(0, width)]
    x = np.array([1, 2], dtype=np.float32)
    by_run = rb.outcome(exe, [x], "run")
    ran_calls, calls[:] = len(calls), []
    by_step = rb.outcome(exe, [x], "step")
    assert by_run == by_step and by_run[0] == "ok"
    # the region runs its kernels once when nothing lives on, and re-runs the instructions
    # one by one (the kernel twice) when a killed input's tensor does
    assert ran_calls == (2 if lives_on else 1)
    frame_owned = 2 * 8  # the outputs' storages, released when the frame returned
    assert by_run[2][3] == frame_owned + (8 if lives_on else 0)
