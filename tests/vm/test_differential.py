"""Differential tests: the compiled VM gives the reference interpreter's value, on every example
program, every recorded case, random inputs, after a save/load round trip and with registers
reused."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # program_cases

from program_cases import CASES, FAILING_CASES, PROGRAMS_DIR, matches  # noqa: E402

from rvmdbg.args import parse_program_args  # noqa: E402
from rvmdbg.relay.interpreter import Interpreter, InterpreterError  # noqa: E402
from rvmdbg.relay.loader import load_module, program_default_args  # noqa: E402
from rvmdbg.values import ADTValue, to_json, values_equal  # noqa: E402
from rvmdbg.vm import serialize  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine, VMError  # noqa: E402

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
PROGRAM_FILES = sorted(PROGRAMS_DIR.glob("*.relay")) + sorted(EXAMPLES_DIR.glob("*.relay"))

_compiled: dict = {}


def program(path: Path):
    """(module, executable) of a program file, compiled once per test session."""
    key = str(path)
    if key not in _compiled:
        mod = load_module(path.read_text(), path.name)
        _compiled[key] = (mod, compile_module(mod))
    return _compiled[key]


class Failed:
    """A run that stopped with an error; two failures agree when the message is alike."""

    def __init__(self, exc: Exception):
        self.message = getattr(exc, "message", str(exc))

    def __repr__(self) -> str:
        return f"Failed({self.message!r})"


def both(path: Path, texts, exe=None):
    """(interpreter value, VM value) of main on the argument texts; a run that fails at run
    time gives a Failed, and then both must have failed for the same reason."""
    mod, compiled = program(path)
    try:
        expected = Interpreter(mod).run("main", parse_program_args(mod, "main", texts))
    except InterpreterError as e:
        expected = Failed(e)
    try:
        got = VirtualMachine(exe or compiled).invoke("main", parse_program_args(mod, "main", texts))
    except VMError as e:
        got = Failed(e)
    if isinstance(expected, Failed) or isinstance(got, Failed):
        assert isinstance(expected, Failed) and isinstance(got, Failed), (expected, got)
        reason = expected.message.split(":")[0]
        assert reason in got.message, (expected, got)
    return expected, got


def same(a, b) -> bool:
    return (isinstance(a, Failed) and isinstance(b, Failed)) or values_equal(a, b)


def default_texts(path: Path) -> list:
    return program_default_args(path.read_text()) or []


@pytest.mark.parametrize("path", PROGRAM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_program_matches_the_interpreter(path):
    expected, got = both(path, default_texts(path))
    assert values_equal(expected, got), (expected, got)


@pytest.mark.parametrize("file, args, result", CASES,
                         ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(CASES)])
def test_every_case_matches_the_interpreter_and_the_table(file, args, result):
    path = PROGRAMS_DIR / file
    expected, got = both(path, args if args is not None else default_texts(path))
    assert values_equal(expected, got)
    assert matches(result, to_json(got))


def test_public_examples_give_their_recorded_results():
    spec = EXAMPLES_DIR / "expected.json"
    if not spec.exists():
        pytest.skip("tests/examples/expected.json is not present")
    for case in json.loads(spec.read_text())["cases"]:
        mod, exe = program(EXAMPLES_DIR / case["file"])
        got = VirtualMachine(exe).invoke("main", parse_program_args(mod, "main", case["args"]))
        assert matches(case["result"], to_json(got)), case


@pytest.mark.parametrize("file, args, function", FAILING_CASES)
def test_failing_cases_fail_in_the_same_function(file, args, function):
    mod, exe = program(PROGRAMS_DIR / file)
    with pytest.raises(VMError) as info:
        VirtualMachine(exe).invoke("main", parse_program_args(mod, "main", args))
    assert info.value.func_name == function
    assert "match" in info.value.message


# ---------------------------------------------------------------- random inputs

def list_text(values) -> str:
    text = "Nil"
    for v in reversed(values):
        text = f"Cons({v}, {text})"
    return text


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=14))
def test_fib_random(n):
    expected, got = both(PROGRAMS_DIR / "fib.relay", [str(n)])
    assert values_equal(expected, got)


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=-5, max_value=400))
def test_loop_random(n):
    expected, got = both(PROGRAMS_DIR / "loop.relay", [str(n)])
    assert values_equal(expected, got) and int(got) == max(n, 0) * (max(n, 0) + 1) // 2


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=-1000, max_value=1000), max_size=25))
def test_list_length_random(values):
    path = EXAMPLES_DIR / "list_length.relay"
    if not path.exists():
        pytest.skip("tests/examples is not present")
    expected, got = both(path, [list_text(values)])
    assert values_equal(expected, got) and int(got) == len(values)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=15))
def test_quicksort_random(values):
    expected, got = both(PROGRAMS_DIR / "quicksort.relay", [list_text(values)])
    assert values_equal(expected, got)
    out, node = [], got
    while isinstance(node, ADTValue) and node.con == "Cons":
        out.append(int(node.fields[0]))
        node = node.fields[1]
    assert out == sorted(values)


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=-30, max_value=30), st.integers(min_value=-30, max_value=30))
def test_tuples_random(a, b):
    expected, got = both(PROGRAMS_DIR / "tuples.relay", [str(a), str(b)])
    assert same(expected, got)
    assert isinstance(got, Failed) == (b == 0)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=1, max_value=12))
def test_dynamic_shapes_random(n):
    expected, got = both(PROGRAMS_DIR / "grow.relay", [str(n)])
    assert values_equal(expected, got) and got.shape == (n,)


# ---------------------------------------------------------------- round trip and register reuse

@pytest.mark.parametrize("path", PROGRAM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_save_load_round_trip_runs_identically(path, tmp_path):
    mod, exe = program(path)
    out = tmp_path / (path.stem + ".rvmx")
    serialize.save(exe, out)
    loaded = serialize.load(out)
    assert loaded.bytecode(names=True) == exe.bytecode(names=True)
    assert loaded.source_map == exe.source_map and loaded.adt_constructor == exe.adt_constructor
    texts = default_texts(path)
    a = VirtualMachine(exe).invoke("main", parse_program_args(mod, "main", texts))
    b = VirtualMachine(loaded).invoke("main", parse_program_args(mod, "main", texts))
    assert values_equal(a, b)


@pytest.mark.parametrize("path", PROGRAM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reused_registers_run_identically_in_smaller_files(path):
    mod = load_module(path.read_text(), path.name)
    exe = compile_module(mod, reuse_registers=True)
    report = exe.register_report
    assert all(after <= before for before, after in report.values())
    total_before = sum(b for b, _ in report.values())
    total_after = sum(a for _, a in report.values())
    if total_before > 2 * len(report):
        assert total_after < total_before
    for fn in exe.functions:
        assert report[fn.name][1] == fn.register_file_size
    expected, got = both(path, default_texts(path), exe=exe)
    assert values_equal(expected, got)


def test_recorded_cases_with_reused_registers():
    exes = {}
    for file, args, result in CASES:
        path = PROGRAMS_DIR / file
        if file not in exes:
            exes[file] = compile_module(load_module(path.read_text(), file), reuse_registers=True)
        mod, _ = program(path)
        texts = args if args is not None else default_texts(path)
        got = VirtualMachine(exes[file]).invoke("main", parse_program_args(mod, "main", texts))
        assert matches(result, to_json(got)), (file, args)


def test_stepping_gives_the_same_result_as_running():
    mod, exe = program(PROGRAMS_DIR / "closures.relay")
    vm = VirtualMachine(exe)
    vm.start("main", parse_program_args(mod, "main", default_texts(PROGRAMS_DIR / "closures.relay")))
    steps = 0
    while not vm.halted:
        vm.step()
        steps += 1
    expected = VirtualMachine(exe).invoke("main", parse_program_args(mod, "main", ["10"]))
    assert values_equal(vm.result, expected) and steps == vm.steps


def test_vm_value_types_match_the_interpreter():
    # integer division truncates toward zero, dtypes survive every kernel
    mod = load_module('#[version = "0.0.5"]\n'
                      'def @main(%a: int64, %b: float32) -> (int64, float32, bool) {\n'
                      '  (%a / 3i64, %b * 2f, %a < 0i64)\n}', "d.relay")
    exe = compile_module(mod)
    args = [np.array(-7, "int64"), np.array(1.25, "float32")]
    got = VirtualMachine(exe).invoke("main", args)
    assert values_equal(got, Interpreter(mod).run("main", args))
    assert [f.dtype for f in got.fields] == [np.int64, np.float32, np.bool_]
    assert int(got.fields[0]) == -2


SQUEEZE_UNKNOWN = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, ?, 1), float32]) -> Tensor[(?,), float32] {
  squeeze(%x)
}
"""


@pytest.mark.parametrize("arg, shape", [("[[[2.5]]]", (1,)), ("[[[2.5], [1.0]]]", (2,))])
def test_squeeze_all_keeps_a_question_mark_dimension_that_is_1(tmp_path, arg, shape):
    """squeeze with axis=None on (1, ?, 1) removes the two known 1s only: the `?` stays even
    when it is 1 at run time, so the result has the rank its type says (as in TVM)."""
    path = tmp_path / "squeeze.relay"
    path.write_text(SQUEEZE_UNKNOWN)
    expected, got = both(path, [arg])
    assert expected.shape == got.shape == shape
    assert values_equal(expected, got)
