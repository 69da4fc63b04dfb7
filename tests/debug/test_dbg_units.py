"""The debugger's building blocks on their own: the condition language, breakpoint specs,
static def-use and swappability, the saved-breakpoint format, checkpoints and the
reference-cell journal, value trees and types."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rvmdbg.debug.breakpoints import (BreakpointError, BreakpointTable, Condition,
                                      ConditionError, line_table, parse_condition)
from rvmdbg.debug.config import (breakpoint_file, config_root, find_line, load_records,
                                 restore_breakpoints, save_breakpoints)
from rvmdbg.debug.deps import (ENTRY, conflict, may_swap, reaching_definitions, static_def_use,
                               writer_pcs, writers_by_register)
from rvmdbg.debug.heap import value_text, value_tree, value_type
from rvmdbg.debug.history import History, RefJournal, instrument
from rvmdbg.values import ADTValue, RefCell, values_equal
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import Executable, VMFunction
from rvmdbg.vm.machine import VirtualMachine

from dbg_helpers import (calls_exe, count_loop_exe, executable, fresh_vm_at, i32, i64, kernels,
                         program, refs_exe, same_state)


# ------------------------------------------------------------------ conditions

def regs(*values):
    return [None if v is None else (v if not isinstance(v, (int, float, bool)) else np.array(v))
            for v in values]


@pytest.mark.parametrize("text, values, expected", [
    ("$0 == 0", [0], True),
    ("$0 == 0", [1], False),
    ("$0 != 3 and $1 < 2", [1, 1], True),
    ("$0 != 3 && $1 < 2", [3, 1], False),
    ("$0 > 5 or $1 >= 1", [1, 1], True),
    ("$0 > 5 || $1 >= 1", [1, 0], False),
    ("not $0 == 1", [1], False),
    ("!($0 == 1)", [2], True),
    ("$0 + 1 == $1 - 2", [1, 4], True),
    ("-$0 <= -3", [3], True),
    ("$0", [True], True),
    ("$0 == 2.5f", [2.5], True),
    ("$0 == 5i64", [5], True),
    ("$0 == True", [True], True),
    ("($0 == 1 or $0 == 2) and $1 == 0", [2, 0], True),
])
def test_condition_evaluation(text, values, expected):
    assert Condition(text).evaluate(regs(*values)) is expected


def test_condition_on_constructors():
    nil = ADTValue(0, "Nil", ())
    cons = ADTValue(1, "Cons", (i32(1), nil))
    assert Condition("$0 == Nil").evaluate([nil])
    assert Condition("$0 != Nil and $1 == Cons").evaluate([cons, cons])
    with pytest.raises(ConditionError):
        Condition("$0 < Nil").evaluate([nil])
    with pytest.raises(ConditionError):
        Condition("$0 == 1").evaluate([nil])


@pytest.mark.parametrize("text", ["", "$0 ==", "$0 == == 1", "($0 == 1", "$0 = 1",
                                  "__import__('os')", "$0 < 1 < 2", "$0; 1", "1 $0"])
def test_condition_syntax_errors(text):
    with pytest.raises(BreakpointError):
        Condition(text)


@pytest.mark.parametrize("text, values", [
    ("$3 == 0", [1]),               # outside the register file
    ("$0 == 0", [None]),            # empty register
    ("$0 == 0", [np.arange(3)]),    # not a scalar
    ("$0 == 0", [ADTValue(0, None, ())]),  # a tuple
])
def test_condition_evaluation_errors(text, values):
    with pytest.raises(ConditionError):
        Condition(text).evaluate(values)


def test_condition_registers_and_none():
    assert Condition("$1 == 0 and $7 < $2").registers == {1, 2, 7}
    assert parse_condition(None) is None and parse_condition("  ") is None


# ------------------------------------------------------------------ breakpoint specs

def test_breakpoint_specs_resolve():
    exe = calls_exe()
    t = BreakpointTable(exe)
    b1 = t.add("@inc")
    assert b1.kind == "function" and b1.locations == frozenset([(0, 0)])
    b2 = t.add("twice:1")
    assert b2.kind == "instruction" and b2.spec == "@twice:1" and b2.locations == {(1, 1)}
    b3 = t.add("op:Invoke")
    assert b3.kind == "opcode" and b3.locations == {(1, 0), (1, 1), (2, 0), (2, 1)}
    b4 = t.add("", current=(2, 1))
    assert b4.locations == {(2, 1)}
    assert [b.id for b in t] == [1, 2, 3, 4]
    assert t.at(2, 1) == [b3, b4]
    assert set(t.locations()) == {(0, 0), (1, 1), (1, 0), (2, 0), (2, 1)}
    for bad in ["@nope", "@inc:99", "op:Frobnicate", "what?", "@inc:-1"]:
        with pytest.raises(BreakpointError):
            t.add(bad)
    with pytest.raises(BreakpointError):
        t.add("12")  # no source map
    with pytest.raises(BreakpointError):
        t.delete(99)


def test_toggle_and_change_callback():
    exe = calls_exe()
    t = BreakpointTable(exe)
    changes = []
    t.on_change = lambda: changes.append(1)
    bp = t.toggle_at(1, 1)
    assert bp is not None and bp.locations == {(1, 1)}
    assert t.toggle_at(1, 1) is None and len(t) == 0
    t.add("@inc")
    t.disable(2)
    assert t.locations() == {}
    t.enable(2)
    assert list(t.locations()) == [(0, 0)]
    assert len(changes) == 5


def test_line_breakpoints_on_real_program():
    exe, _ = program("sum_up.relay")
    table = line_table(exe)
    assert table, "the compiler records source spans"
    for line, locs in table.items():
        for fi, pc in locs:
            assert exe.span_at(fi, pc).line == line
    t = BreakpointTable(exe)
    line = min(table)
    bp = t.add(str(line))
    assert bp.kind == "line" and bp.locations == table[line] and bp.line_text is not None
    # a comment line moves to the next line with code (a table of its own: on `t` it would
    # be the breakpoint already on that line, as identical breakpoints are one)
    bp2 = BreakpointTable(exe).add("2")
    assert bp2.moved_from == 2 and bp2.line > 2
    assert t.add("2") is bp
    assert t.toggle_line(bp.line) is None
    with pytest.raises(BreakpointError):
        t.add("100000")


def test_line_entry_points_only():
    exe, _ = program("sum_up.relay")
    table = line_table(exe)
    for line, locs in table.items():
        for fi, pc in locs:
            fn = exe.functions[fi]
            preds = [p for p, ins in enumerate(fn.instructions) if pc in ins.successors(p)]
            same = [p for p in preds if exe.span_at(fi, p) is not None
                    and exe.span_at(fi, p).line == line]
            assert pc == 0 or not preds or len(same) < len(preds)


# ------------------------------------------------------------------ static dependencies

def test_static_def_use_through_a_loop():
    fn = count_loop_exe().functions[0]
    du = static_def_use(fn)
    assert du[7] == {1: [0, 11], 0: [ENTRY]}     # less reads i (init or loop) and n (param)
    assert du[10] == {1: [0, 11], 2: [1]}
    assert du[11] == {8: [10]}
    assert du[8] == {3: [7], 5: [4]}
    assert du[14] == {1: [0, 11]}
    # the storage $4 is killed at pc 12, then redefined at pc 5 before any use
    assert du[6] == {4: [5], 7: [3]}


@pytest.mark.parametrize("name", ["fib.relay", "list_ops.relay", "refs.relay"])
def test_writers_by_register_is_writer_pcs_of_every_register(name):
    for fn in executable(name).functions:
        table = writers_by_register(fn)
        for r in range(fn.register_file_size):
            assert table.get(r, []) == writer_pcs(fn, r), (fn.name, r)


def test_reaching_definitions_branches():
    # main(n): if n == 0 then $1 = 1 else $1 = 2; ret $1
    fn = VMFunction("main", ["n"], 3, [
        bc.LoadConsti(0, 2), bc.If(0, 2, 1, 3),
        bc.LoadConsti(1, 1), bc.Goto(2),
        bc.LoadConsti(2, 1), bc.Ret(1),
    ])
    rd = reaching_definitions(fn)
    assert rd[5] == {1: [2, 4]}
    assert rd[1] == {0: [ENTRY], 2: [0]}


def test_may_swap():
    fn = count_loop_exe().functions[0]
    assert may_swap(fn, 0, 1)                     # two independent constants
    assert may_swap(fn, 1, 0)
    assert not may_swap(fn, 0, 0)
    assert not may_swap(fn, 9, 10)                # 10 writes $8 which 9 allocates (WAW)
    assert not may_swap(fn, 10, 11)               # RAW on $8
    assert not may_swap(fn, 7, 8)                 # 8 is a jump
    assert not may_swap(fn, 12, 13)               # goto
    assert not may_swap(fn, 4, 5)                 # 5 is a jump target (loop head)
    assert may_swap(fn, 0, 2)                     # across pc 1, which touches neither
    assert not may_swap(fn, 0, 99)
    assert conflict(bc.Move(1, 2), bc.Move(2, 3)) == "RAW"
    assert conflict(bc.Move(1, 2), bc.Move(3, 1)) == "WAR"
    assert conflict(bc.Move(1, 2), bc.Move(3, 2)) == "WAW"
    assert conflict(bc.Move(1, 2), bc.Move(3, 4)) is None
    calls = calls_exe().functions[1]
    assert not may_swap(calls, 0, 1)              # calls never move


def test_may_swap_respects_reference_cells():
    exe = refs_exe()
    fn = exe.functions[0]
    assert not may_swap(fn, 10, 11, exe)          # ref_read is ordered through its cell
    assert may_swap(fn, 2, 3, exe)


# ------------------------------------------------------------------ saved breakpoints

def test_config_root_and_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_root() == tmp_path / "rvmdbg"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_root() == tmp_path / "home" / ".config" / "rvmdbg"
    a = breakpoint_file("/x/prog.relay", tmp_path)
    b = breakpoint_file("/y/prog.relay", tmp_path)
    assert a != b and a.name.startswith("prog.relay-") and a.suffix == ".json"


def test_find_line_by_content():
    lines = ["a", "b", "x = 1", "c", "d", "x = 1", "e"]
    rec = {"line": 6, "text": "x = 1", "before": ["c", "d"], "after": ["e"]}
    assert find_line(lines, rec) == 6
    moved = ["new", "new2"] + lines
    assert find_line(moved, rec) == 8       # context picks the second copy
    rec1 = {"line": 3, "text": "x = 1", "before": ["a", "b"], "after": ["c"]}
    assert find_line(moved, rec1) == 5
    assert find_line(["nothing here"], rec) is None


def test_save_and_restore_round_trip(tmp_path):
    exe, _ = program("sum_up.relay")
    t = BreakpointTable(exe)
    line = min(line_table(exe))
    t.add(str(line), "$0 == 1")
    t.add("@sum_up:3")
    t.add("op:Ret")
    t.disable(2)
    path = save_breakpoints(t, exe, "prog.relay", tmp_path)
    assert path is not None and json.loads(path.read_text())["format"] == 1
    recs = load_records("prog.relay", tmp_path)
    assert [r["kind"] for r in recs] == ["line", "instruction", "opcode"]
    t2 = BreakpointTable(exe)
    notes = restore_breakpoints(t2, exe, "prog.relay", tmp_path)
    assert len(notes) == 3 and all(n.startswith("restored") for n in notes)
    got = list(t2)
    assert [b.spec for b in got] == [b.spec for b in t]
    assert got[0].condition == "$0 == 1" and not got[1].enabled


def test_restore_ignores_garbage(tmp_path):
    exe, _ = program("sum_up.relay")
    path = breakpoint_file("prog.relay", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    notes = restore_breakpoints(BreakpointTable(exe), exe, "prog.relay", tmp_path)
    assert len(notes) == 1 and notes[0].endswith(": not valid JSON")   # a note, a fresh start
    path.write_text(json.dumps({"breakpoints": [{"kind": "line", "line": 9, "text": "gone"},
                                                {"kind": "instruction", "function": "nope",
                                                 "pc": 0}, "junk", {"kind": "opcode",
                                                                    "spec": "op:Nope"}]}))
    t = BreakpointTable(exe)
    notes = restore_breakpoints(t, exe, "prog.relay", tmp_path)
    assert len(t) == 0 and len(notes) == 4
    assert notes[0].startswith("skipped 1 unreadable entries")
    assert all("dropped" in n for n in notes[1:])


# ------------------------------------------------------------------ history

def test_journal_undo_redo():
    j = RefJournal()
    create = j.wrap("ref_create", None)
    write = j.wrap("ref_write", lambda values: (setattr(values[0], "value", values[1]), ())[1])
    (cell,) = create([1])
    write([cell, 2])
    write([cell, 3])
    assert j.cursor == 3 and cell.value == 3
    j.seek(1)
    assert cell.value == 1
    j.seek(3)
    assert cell.value == 3
    j.seek(0)
    # replaying the creation hands back the same cell
    (again,) = create([1])
    assert again is cell and j.cursor == 1 and len(j) == 3
    j.trim(1)
    assert j.base == 1
    with pytest.raises(ValueError):
        j.seek(0)


def test_instrument_leaves_other_executables_alone():
    exe, _ = program("fib.relay")  # no reference kernels: nothing to journal
    assert instrument(exe, RefJournal()) is exe
    exe2 = refs_exe()
    inst = instrument(exe2, RefJournal())
    assert inst is not exe2 and inst.functions is exe2.functions
    assert exe2.kernels[3].impl is not inst.kernels[3].impl


def test_checkpoint_restore_and_frame_sharing():
    exe, args = program("sum_up.relay", ["50"])
    vm = VirtualMachine(exe)
    vm.start("main", args)
    h = History(vm, RefJournal(), interval=100)
    h.take()
    saved = []
    while not vm.halted:
        vm.run(until_step=vm.steps + 100)
        saved.append(h.take())
    # consecutive checkpoints share the saved frames below the ones that ran in between
    deep = [cp for cp in saved if cp.nframes > 20]
    a, b = deep[0], deep[1]
    shared = sum(1 for x, y in zip(a.frame_nodes(), b.frame_nodes()) if x is y)
    assert shared >= min(a.nframes, b.nframes) - 12
    for cp in [saved[3], saved[10], saved[0], saved[-1], saved[7]]:
        h.restore(cp)
        assert same_state(vm, fresh_vm_at(exe, program("sum_up.relay", ["50"])[1], cp.step))
    assert h.at_or_before(250).step == 200 and h.before(200).step == 100
    assert h.checkpoint_for_push(3).pushes < 3


def test_budget_drops_oldest_checkpoints():
    exe, args = program("sum_up.relay", ["30"])
    vm = VirtualMachine(exe)
    vm.start("main", args)
    h = History(vm, RefJournal(), interval=10, budget=20_000)
    h.take()
    while not vm.halted:
        vm.run(until_step=vm.steps + 10)
        h.take()
    assert h.dropped > 0 and h.start > 0 and h.bytes_used <= 20_000 + 10_000
    assert h.at_or_before(h.start - 1) is None


def test_checkpoints_are_placed_by_running_time():
    """Issue 28 (3): a checkpoint is due once the running time since the last one reaches
    `min_seconds`, so a heavy step (a kernel call) gets one right after it and a reverse step
    never replays it; cheap steps still go `interval` steps between checkpoints."""
    exe, args = program("sum_up.relay", ["50"])
    vm = VirtualMachine(exe)
    vm.start("main", args)
    h = History(vm, RefJournal(), interval=100, min_seconds=0.001)
    h.take()
    assert h.chunk_end(0) == 1                      # measured one step at a time at first
    h.ran(0, 1, 0.000001)
    assert not h.due(1) and h.chunk_end(1) == 3     # cheap: chunks double
    h.ran(1, 3, 0.000002)
    h.ran(3, 7, 0.000004)
    assert not h.due(7) and h.chunk_end(7) == 15
    for a, b in [(7, 15), (15, 31), (31, 63)]:
        h.ran(a, b, 0.000001 * (b - a))
    assert not h.due(63) and h.chunk_end(63) == 100  # by step count, up to `interval`
    assert h.due(100)
    h.ran(63, 64, 0.005)                            # a heavy step: due at once, then one by one
    assert h.due(64) and h.chunk_end(64) == 65
    vm.run(until_step=64)
    h.take()
    assert not h.due(64) and h.chunk_end(64) == 65
    h.ran(64, 65, 0.000001)
    assert not h.due(65) and h.chunk_end(65) == 66  # still near the heavy step
    steps = History(vm, RefJournal(), interval=100, min_seconds=None)
    steps.take()
    steps.ran(64, 65, 5.0)                          # min_seconds=None: by step count alone
    assert not steps.due(65) and steps.chunk_end(65) == 164


def test_checkpoint_bytes_count_each_tensor_once():
    """A checkpoint's cost is the tensors the one before it did not hold: two checkpoints of
    the same registers cost one set of tensors, and the second's share passes to it when
    the first is dropped."""
    from rvmdbg import workloads
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    w = workloads.build("mlp", units=(64, 32), in_dim=128, classes=4)
    vm = VirtualMachine(compile_module(check_module(load_module(w.text, "mlp"))))
    vm.start("main", w.inputs)
    h = History(vm, RefJournal(), interval=1000, min_seconds=None)
    first = h.take()
    vm.run(until_step=vm.steps + 8)
    a = h.take()
    vm.step()
    b = h.take()
    assert a.top.held > 0 and a.shared > 0                 # the input, still held
    assert b.shared > 0 and b.cost < b.top.held            # its tensors counted once
    assert a.cost + b.cost + first.cost == h.bytes_used
    h.budget = h.bytes_used - 1                            # drop the oldest
    h._enforce_budget()
    assert h.checkpoints[0] is a and a.shared == 0 and a.cost >= a.top.held


def test_values_types_and_trees():
    nil = ADTValue(0, "Nil", ())
    lst = ADTValue(1, "Cons", (i32(1), ADTValue(1, "Cons", (i32(2), nil))))
    tup = ADTValue(0, None, (lst, lst, i64(3)))
    assert value_type(i32(1)) == "int32"
    assert value_type(np.zeros((2, 3), np.float32)) == "Tensor[(2, 3), float32]"
    assert value_type(tup) == "(Cons, Cons, int64)"
    assert value_type(RefCell(1)) == "ref" and value_type(None) == ""
    tree = value_tree(tup)
    assert tree[0] == "tuple"
    assert tree[1] == "|-- Cons  #0 shared"
    assert "#0 (shared, shown above)" in tree[-2]
    assert tree[-1] == "`-- 3i64"
    long = nil
    for i in range(5000):
        long = ADTValue(1, "Cons", (i32(i), long))
    text = value_text(long, 40)
    assert len(text) <= 40 and text.startswith("Cons(4999, Cons(")
    assert len(value_tree(long)) <= 402


def test_argument_copy_is_iterative_keeps_sharing_and_refreshes_reference_cells():
    import numpy as np
    from rvmdbg.values import copy_values as _copy_args
    from rvmdbg.values import ADTValue, RefCell
    long_list = ADTValue(1, "Nil", ())
    for i in range(50_000):  # deeper than Python's recursion limit
        long_list = ADTValue(0, "Cons", (np.array(i, dtype="int32"), long_list))
    assert _copy_args([long_list])[0] is long_list  # nothing mutable inside: shared as is
    cell = RefCell(np.array(1))
    pair = ADTValue(0, None, (cell, cell))
    copied = _copy_args([pair])[0]
    assert copied.fields[0] is copied.fields[1] and copied.fields[0] is not cell
    loop = RefCell(None)
    loop.value = ADTValue(0, None, (loop,))
    again = _copy_args([loop])[0]
    assert again is not loop and again.value.fields[0] is again


def test_limits_refuse_values_that_cannot_be_honoured():
    from rvmdbg.limits import MAX_DEPTH_CEILING, LimitValueError, Limits
    assert Limits(max_depth=MAX_DEPTH_CEILING).max_depth == MAX_DEPTH_CEILING
    for bad in ({"max_depth": MAX_DEPTH_CEILING + 1}, {"max_steps": 0}, {"max_bytes": -5},
                {"max_steps": 1 << 80}, {"max_depth": True}):
        with pytest.raises(LimitValueError, match="--max-"):
            Limits(**bad)


def test_ranges_never_expand_and_long_numbers_are_messages():
    from dbg_helpers import program
    from rvmdbg.debug import DebugSession
    from rvmdbg.debug.commands import CommandInterpreter
    exe, args = program("fib.relay")
    s = DebugSession(exe, args)
    ci = CommandInterpreter(s)
    for spec in ("break @fib", "break @main"):
        ci.execute(spec)
    ids = sorted(b.id for b in s.breakpoints)
    # a range names the breakpoints inside it, never a list of its own
    out = ci.execute("disable 1-100000000000")
    assert "disabled" in out and all(not b.enabled for b in s.breakpoints)
    assert "nothing is numbered" in ci.execute("delete 500-100000000000")
    big = "9" * 5000
    for line in (f"delete {big}", f"goto {big}", f"step {big}", f"print ${big}",
                 f"condition {big} $0 == 1", f"break @fib if $0 == {big}", f"break {big}",
                 f"break @fib:{big}", f"delete 1-{big}"):
        out = ci.execute(line)
        assert "too large" in out, (line, out)
    assert sorted(b.id for b in s.breakpoints) == ids


def test_breakpoints_by_kernel_name_index_and_part_of_a_name():
    """Issue 28 (16): `break fused_nn_conv2d_3`, `break PackedFunc[12]` and `break
    kernel:conv2d` stop at every invoke_packed calling those kernels; a name that is no
    kernel is still a function name, and a bad one says what there is."""
    from rvmdbg import workloads
    from rvmdbg.debug import DebugSession
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    w = workloads.build("mobilenet_v1", small=True)
    exe = compile_module(check_module(load_module(w.text, "mobilenet")))
    names = exe.kernel_names()
    calls = {(fi, pc): ins.packed_index for fi, fn in enumerate(exe.functions)
             for pc, ins in enumerate(fn.instructions) if ins.name == "InvokePacked"}
    t = BreakpointTable(exe)
    one = t.add("fused_nn_conv2d_multiply_add_nn_relu_3")
    assert one.kind == "kernel" and one.kernels == ("vm_mod_fused_nn_conv2d_multiply_add_nn_relu_3",)
    assert one.locations == {loc for loc, k in calls.items() if names[k] == one.kernels[0]}
    assert one.where(exe) == "fused_nn_conv2d_multiply_add_nn_relu_3 (vm_mod_fused_nn_conv2d_multiply_add_nn_relu_3)"
    assert t.add("vm_mod_fused_nn_conv2d_multiply_add_nn_relu_3").locations == one.locations
    assert t.add("PackedFunc[12]").locations == {loc for loc, k in calls.items() if k == 12}
    part = t.add("kernel:conv2d")
    assert part.locations == {loc for loc, k in calls.items() if "conv2d" in names[k]}
    assert len(part.kernels) > 5 and part.where(exe) == "kernel:conv2d"
    assert t.add("kernel:conv2d") is part                       # identical breakpoints are one
    assert t.add("main").kind == "function"
    with pytest.raises(BreakpointError, match="no kernel name contains 'winograd'"):
        t.add("kernel:winograd")
    with pytest.raises(BreakpointError, match=r"no PackedFunc\[999\]: the program has 22"):
        t.add("PackedFunc[999]")
    # it stops where a single-stepping run first reaches such a call
    s = DebugSession(exe, w.inputs)
    s.breakpoints.add("kernel:relu_1")
    ev = s.cont()
    first = min(pc for (fi, pc), k in calls.items() if "relu_1" in names[k])
    assert ev.reason == "breakpoint" and ev.text.startswith("invoke_packed")
    assert ev.pc == first                       # @main is straight-line: the first such call
