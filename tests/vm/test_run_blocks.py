"""run()'s fast path against step(): fused blocks, constant-bound handlers and the 0-d kernel
path must leave exactly the state stepping leaves, at every stop (until_step, breakpoints
inside blocks, limits, errors inside blocks), and the VM must make no cyclic garbage."""
from __future__ import annotations

import gc
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg import workloads
from rvmdbg.args import parse_program_args
from rvmdbg.limits import Limits
from rvmdbg.relay.loader import load_module, program_default_args
from rvmdbg.values import ADTValue, format_value
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.kernels import build_kernel
from rvmdbg.vm.machine import MAX_BLOCK, VirtualMachine, VMError
from rvmdbg.vm.objects import ByteAccount, StorageObject, TensorPlaceholder

from random_relay import programs as random_programs

ROOT = Path(__file__).resolve().parents[2]

# (program, argument texts): small runs, so every stop can be checked; "+reuse" compiles
# with register reuse, where a block's registers alias each other
SMALL = [("fib.relay", ["6"]), ("loop.relay", ["25"]), ("collatz.relay", None),
         ("list_ops.relay", None), ("refs.relay", None), ("closures.relay", None),
         ("policy.relay", None), ("fib.relay+reuse", ["6"]), ("quicksort.relay+reuse", None)]

_compiled: dict = {}


def compiled(name: str):
    """`programs/FILE` or, as `wl:NAME`, a workload of `rvmdbg.workloads` at its small size;
    `+reuse` compiles with register reuse."""
    if name not in _compiled:
        file, _, reuse = name.partition("+")
        defaults = None
        if file.startswith("wl:"):
            w = workloads.build(file[3:], small=True)
            text, defaults = w.text, [json.dumps(a.tolist()) for a in w.inputs]
        else:
            text = (ROOT / "programs" / file).read_text()
        mod = load_module(text, file)
        exe = compile_module(mod, reuse_registers=bool(reuse))
        _compiled[name] = (mod, exe, defaults or program_default_args(text) or [])
    return _compiled[name]


def started(name: str, texts, limits=None) -> VirtualMachine:
    mod, exe, defaults = compiled(name)
    vm = VirtualMachine(exe, limits)
    vm.start("main", parse_program_args(mod, "main", defaults if texts is None else texts))
    return vm


def describe(v):
    """A register value as comparable data (two runs make equal but distinct arrays)."""
    t = type(v)
    if t is np.ndarray or isinstance(v, np.generic):  # a NumPy scalar is a 0-d tensor
        return ("tensor", v.dtype.str, v.shape, v.tolist())
    if t is StorageObject:  # with the tensor written into it (--max-bytes reads it)
        return ("storage", v.size, v.alignment, v.dtype_hint, v.released, describe(v.tensor))
    if t is TensorPlaceholder:
        return ("placeholder", v.shape, str(v.dtype), v.offset, v.storage.size)
    if v is None:
        return None
    return (t.__name__, format_value(v))


def state(vm: VirtualMachine):
    frames = [(f.func_index, f.pc, f.caller_return_register, f.owned_bytes, f.serial,
               [describe(v) for v in f.registers]) for f in vm.frames]
    return frames, vm.steps, vm.live_bytes, vm.orphan_bytes, vm.halted, vm.pushes


def outcome(exe, args, drive, limits=None):
    """(error message or result, pc, state) of running `exe` by run() or by step()."""
    vm = VirtualMachine(exe, limits)
    vm.start("main", args)
    try:
        if drive == "run":
            vm.run()
        else:
            while not vm.halted:
                vm.step()
        return ("ok", describe(vm.result), state(vm))
    except VMError as e:
        return (e.message, e.limit, e.pc, state(vm))


def stepped_states(name, texts):
    """The state before every step of a stepped run, and the number of steps."""
    vm = started(name, texts)
    states = []
    while not vm.halted:
        states.append(state(vm))
        vm.step()
    states.append(state(vm))
    return states


@pytest.mark.parametrize("name, texts", SMALL)
def test_blocks_are_used(name, texts):
    _, exe, _ = compiled(name)
    vm = VirtualMachine(exe)
    assert any(vm.blocks()), "no fused block: the fast path is not exercised"
    assert all(1 < w <= MAX_BLOCK for blocks in vm.blocks() for _, w in blocks)


@pytest.mark.parametrize("name, texts", SMALL)
def test_run_until_any_step_leaves_the_stepped_state(name, texts):
    states = stepped_states(name, texts)
    total = len(states) - 1
    stride = max(1, total // 300)
    for k in list(range(0, total, stride)) + [total - 1]:
        vm = started(name, texts)
        vm.run(until_step=k)
        assert state(vm) == states[k], f"after run(until_step={k})"
        vm.run()  # and it carries on to the same end
        assert state(vm) == states[-1]


@pytest.mark.parametrize("name, texts", SMALL)
def test_breakpoints_inside_blocks_stop_where_stepping_arrives(name, texts):
    _, exe, _ = compiled(name)
    states = stepped_states(name, texts)
    first_at = {}
    for k, (frames, *_rest) in enumerate(states[:-1]):
        first_at.setdefault((frames[-1][0], frames[-1][1]), k)
    vm0 = VirtualMachine(exe)
    inside = [(fi, q) for fi, blocks in enumerate(vm0.blocks()) for start, w in blocks
              for q in range(start + 1, start + w)]
    checked = 0
    for where in inside:
        if where not in first_at:
            continue
        vm = started(name, texts)
        vm.run(breakpoints={where})
        assert vm.location == where
        assert state(vm) == states[first_at[where]]
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("name, texts", SMALL)
def test_max_steps_stops_at_exactly_the_limit(name, texts):
    states = stepped_states(name, texts)
    total = len(states) - 1
    for limit in sorted({1, 2, 3, 7, MAX_BLOCK + 1, total // 3, total // 2 + 1, total - 1}
                        - set(range(total, MAX_BLOCK + 2))):  # a limit the run reaches
        vm = started(name, texts, Limits(max_steps=limit))
        with pytest.raises(VMError) as info:
            vm.run()
        assert info.value.limit == "max_steps"
        assert state(vm) == states[limit]


def test_max_bytes_inside_a_block_fails_like_stepping():
    # fib's storages are 1 (bool) or 4 (int32) bytes; fib(8) peaks at 43 live bytes, so
    # each limit is hit inside a fused allocation, at various depths
    for limit in (1, 4, 9, 20, 42):  # 0 is refused by Limits itself now
        ran = started("fib.relay", ["8"], Limits(max_bytes=limit))
        with pytest.raises(VMError) as by_run:
            ran.run()
        stepped = started("fib.relay", ["8"], Limits(max_bytes=limit))
        with pytest.raises(VMError) as by_step:
            while True:
                stepped.step()
        assert by_run.value.limit == by_step.value.limit == "max_bytes"
        assert by_run.value.message == by_step.value.message
        assert (by_run.value.func_name, by_run.value.pc) == (by_step.value.func_name,
                                                             by_step.value.pc)
        assert state(ran) == state(stepped)
        assert ran.current_instruction().name == "AllocStorage"


def test_kernel_error_inside_a_block_fails_like_stepping():
    text = ("#[version = \"0.0.5\"]\n"
            "def @main(%x: int32) -> int32 {\n  let %y = 7 / %x;\n  %y + 1\n}\n")
    mod = load_module(text, "div.relay")
    exe = compile_module(mod)
    vm = VirtualMachine(exe)
    assert any(vm.blocks())
    results = []
    for drive in ("run", "step"):
        vm = VirtualMachine(exe)
        vm.start("main", [np.array(0, dtype=np.int32)])
        with pytest.raises(VMError) as info:
            if drive == "run":
                vm.run()
            else:
                while True:
                    vm.step()
        results.append((info.value.message, info.value.pc, state(vm)))
    assert results[0] == results[1]
    assert "division by zero" in results[0][0]
    # the output register still holds the tensor alloc_tensor laid out
    regs = results[0][2][0][-1][-1]
    assert any(r is not None and r[0] == "placeholder" for r in regs)


def test_failing_branch_at_the_end_of_a_block_fails_like_stepping():
    # load_consti + if fuse; the if's test register holds an ADT, which has no scalar value
    code = [bc.LoadConst(0, 1), bc.Move(1, 2), bc.LoadConsti(1, 3), bc.If(0, 3, 1, 2),
            bc.Ret(2), bc.Ret(1)]
    exe = Executable([VMFunction("main", ["x"], 4, code)], [np.array(5, dtype=np.int32)], [])
    outcomes = []
    for drive in ("run", "step"):
        vm = VirtualMachine(exe)
        assert vm.blocks()[0] and vm.blocks()[0][0] == (0, 4)
        vm.start("main", [ADTValue(0, "Nil", ())])
        with pytest.raises(VMError) as info:
            if drive == "run":
                vm.run()
            else:
                while True:
                    vm.step()
        outcomes.append((info.value.message, info.value.pc, state(vm)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == 3 and outcomes[0][2][1] == 3


def test_scalar_kernel_on_a_non_scalar_input_takes_the_general_path():
    # A malformed executable: a kernel typed for 0-d inputs gets a 1-d tensor. The fast
    # handler must fall back to the kernel, whose output then fails the output check.
    source = "fn (%p0: int32, Primitive=1) -> int32 {\n  add(%p0, 1)\n}"
    kernel = Kernel("fused_add", source, 1, 1)
    kernel.impl = build_kernel(kernel)
    assert getattr(kernel.impl, "scalar_fast", None) is not None
    code = [bc.LoadConst(1, 1), bc.AllocStorage(1, 64, "int32", 2), bc.LoadConst(2, 3),
            bc.AllocTensor(2, 3, [], "int32", 4), bc.InvokePacked(0, 2, 1, [0, 4]), bc.Ret(4)]
    consts = [np.array(0, dtype=np.int64), np.array(64, dtype=np.int64),
              np.array(0, dtype=np.int64)]
    exe = Executable([VMFunction("main", ["x"], 5, code)], consts, [kernel])
    for arg, ok in ((np.array(4, dtype=np.int32), True),
                    (np.array([4, 5], dtype=np.int32), False)):
        outcomes = [outcome(exe, [arg], drive) for drive in ("run", "step")]
        assert outcomes[0] == outcomes[1]
        assert (outcomes[0][0] == "ok") == ok
        if ok:
            assert outcomes[0][1] == describe(np.array(5, dtype=np.int32))
        else:
            assert "produced [2] int32" in outcomes[0][0]


def test_a_run_makes_no_cyclic_garbage_and_restores_the_collector():
    vm = started("fib.relay", ["12"])
    gc.collect()
    assert gc.isenabled()
    vm.run()
    assert gc.isenabled()
    assert gc.collect() == 0  # every returned frame was freed by reference counting
    failing = started("fib.relay", ["12"], Limits(max_bytes=20))
    with pytest.raises(VMError):
        failing.run()
    assert gc.isenabled()
    gc.disable()
    try:
        started("fib.relay", ["5"]).run()
        assert not gc.isenabled()  # a collector paused by the caller stays paused
    finally:
        gc.enable()


def test_storages_count_against_their_frames_account():
    vm = started("fib.relay", ["3"])
    while not any(type(v) is StorageObject for v in vm.frames[-1].registers):
        vm.step()
    frame = vm.frames[-1]
    storage = next(v for v in frame.registers if type(v) is StorageObject)
    assert type(storage.owner) is ByteAccount and storage.owner is frame.account
    assert frame.owned_bytes == storage.size == vm.live_bytes
    frame.owned_bytes = 0  # what the debugger's history does when it restores a frame
    assert frame.account.owned_bytes == 0
    fresh = started("fib.relay", ["3"]).frames[-1]
    assert fresh.account is None and fresh.owned_bytes == 0
    fresh.owned_bytes = 0
    assert fresh.account is None


# ------------------------------------------------------------ traps with checks (run(checks=))


@pytest.mark.parametrize("name, texts", SMALL)
def test_checked_traps_at_block_starts_run_the_block_and_stop_where_stepping_arrives(name, texts):
    """A trap at a block's start whose check says go on runs the fused block; the run stops
    at the visit where the check first says True, in the state stepping has there."""
    _, exe, _ = compiled(name)
    states = stepped_states(name, texts)
    vm0 = VirtualMachine(exe)
    starts = [(fi, start) for fi, blocks in enumerate(vm0.blocks()) for start, _ in blocks]
    visits = {}
    for k, (frames, *_rest) in enumerate(states[:-1]):
        visits.setdefault((frames[-1][0], frames[-1][1]), []).append(k)
    checked = 0
    for where in starts:
        ks = [k for k in visits.get(where, ()) if k > 0]
        if not ks:
            continue
        n = min(2, len(ks))   # go on at the first visit, stop at the second (if any)
        seen = []
        vm = started(name, texts)

        def check(regs):
            seen.append(1)
            return len(seen) == n
        vm.run(breakpoints={where}, checks={where: check})
        assert vm.location == where and state(vm) == states[ks[n - 1]]
        vm.run()
        assert state(vm) == states[-1]
        checked += 1
    assert checked > 0


def test_a_check_returning_a_callable_stops_after_its_instruction():
    """In a scoped (watched) activation a check may ask to stop after the instruction: the
    run stops with the instruction run and counted, only in that activation."""
    states = stepped_states("fib.relay", ["6"])
    _, exe, _ = compiled("fib.relay")
    fib = exe.func_index("fib")
    # fib's pc 13 (invoke_packed of subtract) writes $10; activation serial 2 is fib(4)
    where = (fib, 13)
    arrivals = [k for k, (frames, *_r) in enumerate(states[:-1])
                if (frames[-1][0], frames[-1][1]) == where and frames[-1][4] == 2]
    asked = []
    vm = started("fib.relay", ["6"])

    def check(regs):
        asked.append(vm.frames[-1].serial)
        return lambda: True
    vm.run(checks={where: check}, scoped=({2}, {where}))
    assert asked == [2]   # other activations run the untrapped code
    assert vm.steps == arrivals[0] + 1 and state(vm) == states[arrivals[0] + 1]
    vm.run()
    assert state(vm) == states[-1]


def test_trap_tables_copy_only_the_trapped_functions_and_keep_the_sets_in_use():
    """A set of trap locations costs its own functions' tables, not the program's (a stop's
    few writers of one function, or the debugger's every-call set, on a 20,000-instruction
    program), a trap inside a block cuts the block before it, and the sets made are kept
    least recently used first out, so one used at every stop survives others made meanwhile."""
    vm = started("list_ops.relay", None)
    blocks = [(fi, start, w) for fi, bs in enumerate(vm.blocks()) for start, w in bs]
    fi, start, width = blocks[0]
    inside = frozenset({(fi, start + 1)})
    table, fused = vm._code_with_traps(inside)
    assert table[fi] is not vm._code[fi] and fused[fi] is not vm._fused[fi]
    assert all(table[g] is vm._code[g] and fused[g] is vm._fused[g]
               for g in range(len(table)) if g != fi)
    assert fused[fi][1][start] == 1 and fused[fi][1][start + 1] == 1
    assert fused[fi][0][start] is table[fi][start]   # the block's first instruction, alone
    kept = vm._code_with_traps(inside)
    for n in range(40):
        # distinct sets (a function index past the last one is no location: ignored)
        vm._code_with_traps(frozenset({(fi, n % len(table[fi])), (len(table) + n, 0)}))
        assert vm._code_with_traps(inside) is kept


# ------------------------------------------------------------ random programs (hypothesis)


def _outcome(vm, drive):
    """(error message, function, pc) or ("ok", result) of driving `vm` to its end with
    `drive` (nothing when it has halted), and its state."""
    try:
        if not vm.halted:
            drive()
        return ("ok", describe(vm.result)), state(vm)
    except VMError as e:
        return (e.message, e.func_name, e.pc), state(vm)


@st.composite
def straight_programs(draw):
    """Scalar code as TVM's VM runs it most: lets of `x op y` and `x op constant` (each
    a scalar kernel group; consecutive independent ones fuse two at a time), ifs on
    comparisons, calls; `@main(%a: int32, %b: int32) -> int32`."""
    names = ["%a", "%b"]
    lines = []
    for i in range(draw(st.integers(1, 7))):
        x = draw(st.sampled_from(names))
        y = draw(st.sampled_from(names + [str(draw(st.integers(-3, 3)))]))
        op = draw(st.sampled_from(["+", "-", "*", "+", "-"]))
        expr = f"{x} {op} {y}"
        kind = draw(st.integers(0, 5))
        if kind == 0:
            cmp = draw(st.sampled_from(["<", ">", "==", "!="]))
            expr = f"if ({x} {cmp} {y}) {{ {x} }} else {{ {y} {op} 1 }}"
        elif kind == 1:
            expr = f"@h({x}, {y})"
        lines.append(f"  let %v{i} = {expr};")
        names.append(f"%v{i}")
    last = " + ".join(draw(st.lists(st.sampled_from(names), min_size=1, max_size=3)))
    return ("def @h(%p: int32, %q: int32) -> int32 { %p * 2 - %q }\n"
            "def @main(%a: int32, %b: int32) -> int32 {\n" + "\n".join(lines)
            + f"\n  {last}\n}}\n")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(random_programs(), straight_programs()), st.integers(-5, 5),
       st.integers(-5, 5), st.data())
def test_run_agrees_with_single_steps_on_random_programs(text, x, y, data):
    """Random int32 programs (lets, ifs, closures, references, options: scalar kernel groups
    chained with moves, kills, branches, calls and returns), optionally with reused registers
    and a --max-bytes limit: run() stopped at random steps and breakpoints, and run() to the
    end, leave exactly the states and the outcome single steps do."""
    reuse = data.draw(st.booleans(), label="reuse registers")
    mod = load_module('#[version = "0.0.5"]\n' + text, "<random>")
    exe = compile_module(mod, reuse_registers=reuse)
    max_bytes = data.draw(st.sampled_from([None, None, 3, 9, 17]), label="max_bytes")
    limits = Limits(max_bytes=max_bytes) if max_bytes else None

    def fresh():
        vm = VirtualMachine(exe, limits)
        vm.start("main", [np.array(x, dtype=np.int32), np.array(y, dtype=np.int32)])
        return vm

    stepper = fresh()
    states = [state(stepper)]
    locations = [stepper.location]

    def step_to_the_end():
        while not stepper.halted:
            stepper.step()
            states.append(state(stepper))
            locations.append(stepper.location)
    expected = _outcome(stepper, step_to_the_end)
    vm = fresh()
    assert _outcome(vm, vm.run) == expected
    total = len(states) - 1
    stride = max(1, total // 40)
    offset = data.draw(st.integers(0, stride - 1), label="offset")
    for k in range(offset, total + 1, stride):
        vm = fresh()
        vm.run(until_step=k)
        assert state(vm) == states[k], f"run(until_step={k})"
        if k % 8 == 0:
            assert _outcome(vm, vm.run) == expected
    if total:
        where = data.draw(st.sampled_from(locations[1:total]) if total > 1 else st.none(),
                          label="breakpoint")
        if where is not None:
            vm = fresh()
            vm.run(breakpoints={where})
            first = locations.index(where, 1)
            assert vm.location == where and state(vm) == states[first]
