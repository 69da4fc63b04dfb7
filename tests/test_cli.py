"""Tests of the command line (cli-contract.md): commands, exit codes, error messages, result
forms, and the argument syntax of rvmdbg.args."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rvmdbg import __version__, cli
from rvmdbg.program import EXECUTORS
from rvmdbg.args import ArgumentError, parse_program_args
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.typecheck import check_module

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "programs"
HEADER = '#[version = "0.0.5"]\n'


def rvmdbg(capsys, *argv):
    """(exit code, stdout, stderr) of `rvmdbg ARGV...`, run in-process."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, out, err


def interp(capsys, *argv):
    return rvmdbg(capsys, "run", *argv, "--executor", "interp")


def result(out: str):
    return json.loads(out)["result"]


@pytest.fixture
def program(tmp_path):
    """Write a Relay program (the version header added) and return its path."""
    def write(body: str, name: str = "prog.relay") -> Path:
        path = tmp_path / name
        path.write_text(HEADER + body.lstrip("\n"), encoding="utf-8")
        return path
    return write


# ---------------------------------------------------------------------------- top level

def test_version(capsys):
    code, out, _ = rvmdbg(capsys, "--version")
    assert code == 0 and out.strip() == f"rvmdbg {__version__}"


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["run", "--help"]])
def test_help_for_every_command(capsys, argv):
    code, out, _ = rvmdbg(capsys, *argv)
    assert code == 0 and "usage: rvmdbg" in out


def test_every_registered_command_has_help(capsys):
    for name in cli.COMMANDS:
        code, out, _ = rvmdbg(capsys, name, "--help")
        assert code == 0 and f"rvmdbg {name}" in out


def test_an_unknown_word_is_taken_as_a_program_to_open_and_reported_missing(capsys):
    # `rvmdbg PROGRAM` opens the screen, so a word that is no command is a file name (as gdb does)
    code, _, err = rvmdbg(capsys, "frobnicate")
    assert code == 2 and "frobnicate" in err and "not found" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["run"], ["check"],
                                  ["run", "x.relay", "--executor", "nope"],
                                  ["run", "x.relay", "--max-steps", "0"],
                                  ["check", "a.relay", "b.relay"]])
def test_usage_errors_exit_2(capsys, argv):
    code, _, err = rvmdbg(capsys, *argv)
    assert code == 2 and "usage:" in err


# ---------------------------------------------------------------------------- check

def test_check_prints_each_definition_with_its_type(capsys):
    code, out, err = rvmdbg(capsys, "check", PROGRAMS / "fib.relay")
    assert code == 0 and err == ""
    assert out.splitlines() == ["def @fib(%n: int32) -> int32",
                                "def @main(%n: int32) -> int32"]


def test_check_shows_inferred_polymorphic_types_and_prelude_uses(capsys, program):
    path = program("""
type Pair[A, B] { MkPair(A, B) }
def @first[A, B](%p: Pair[A, B]) -> A { match (%p) { MkPair(%a, _) => %a } }
def @main(%x: int32) { @first(MkPair(%x + 1, @hd(Cons(2f, Nil)))) }
""")
    code, out, _ = rvmdbg(capsys, "check", path)
    assert code == 0
    lines = out.splitlines()
    assert lines[:3] == ["type Pair[A, B] { MkPair(A, B) }",
                         "def @first[A, B](%p: Pair[A, B]) -> A",
                         "def @main(%x: int32) -> int32"]
    assert "// from the prelude:" in lines
    assert any(line.startswith("def @hd[") for line in lines)


def test_check_parse_error_exit_2_with_location(capsys, program):
    path = program("def @main() -> int32 {\n  1 +\n}\n")
    code, out, err = rvmdbg(capsys, "check", path)
    assert code == 2 and out == ""
    assert f"{path}:4:1: error: expected an operand after `+`" in err
    assert "^" in err


def test_check_type_error_exit_2_quotes_the_line(capsys, program):
    path = program("def @main(%x: int32) -> int32 {\n  add(%x, 1f)\n}\n")
    code, _, err = rvmdbg(capsys, "check", path)
    assert code == 2
    assert f"{path}:3:" in err and "  add(%x, 1f)" in err


def test_check_missing_file_exit_2(capsys, tmp_path):
    code, _, err = rvmdbg(capsys, "check", tmp_path / "absent.relay")
    assert code == 2 and "absent.relay" in err and "not found" in err


def test_check_directory_and_binary_file_exit_2(capsys, tmp_path):
    code, _, err = rvmdbg(capsys, "check", tmp_path)
    assert code == 2 and "directory" in err
    blob = tmp_path / "blob.relay"
    blob.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = rvmdbg(capsys, "check", blob)
    assert code == 2 and "UTF-8" in err


# ---------------------------------------------------------------------------- run: results

def test_run_uses_the_args_comment_by_default(capsys):
    code, out, _ = interp(capsys, PROGRAMS / "fib.relay")
    assert code == 0 and out == "55\n"


def test_run_default_executor_is_the_vm(capsys):
    code, out, err = rvmdbg(capsys, "run", PROGRAMS / "fib.relay", "12")
    assert (code, out) == (0, "144\n"), err


def test_an_executor_is_one_entry_of_the_table(capsys, monkeypatch):
    seen = {}

    def echo(program, entry, args, limits):
        seen.update(entry=entry, limits=limits)
        return args[0]
    monkeypatch.setitem(EXECUTORS, "echo", echo)
    code, out, _ = rvmdbg(capsys, "run", PROGRAMS / "fib.relay", "7", "--executor", "echo",
                          "--max-steps", "99")
    assert (code, out) == (0, "7\n")
    assert seen["entry"] == "main" and seen["limits"].max_steps == 99


def test_json_tensor(capsys):
    code, out, _ = interp(capsys, PROGRAMS / "grow.relay", "3", "--json")
    assert code == 0
    assert result(out) == {"dtype": "float32", "shape": [3], "data": [0.0, 1.0, 4.0]}


def test_json_and_human_tuple(capsys):
    path = ROOT / "tests" / "examples" / "tuple_swap.relay"
    code, out, _ = interp(capsys, path, "4", "2.5f", "--json")
    assert result(out) == {"tuple": [{"dtype": "float32", "shape": [], "data": 2.5},
                                     {"dtype": "int32", "shape": [], "data": 4}]}
    code, out, _ = interp(capsys, path, "4", "2.5f")
    assert out == "(2.5f, 4)\n"


def test_json_and_human_adt(capsys):
    path = PROGRAMS / "quicksort.relay"
    code, out, _ = interp(capsys, path, "Cons(3, Cons(-1, Nil))", "--json")
    assert result(out) == {"con": "Cons", "fields": [
        {"dtype": "int32", "shape": [], "data": -1},
        {"con": "Cons", "fields": [{"dtype": "int32", "shape": [], "data": 3},
                                   {"con": "Nil", "fields": []}]}]}
    code, out, _ = interp(capsys, path, "Cons(3, Cons(-1, Nil))")
    assert out == "Cons(-1, Cons(3, Nil))\n"


def test_json_closure_and_ref(capsys, program):
    path = program("""
def @inc(%x: int32) -> int32 { %x + 1 }
def @get() -> fn (int32) -> int32 { @inc }
def @cell(%x: int32) -> ref(int32) { ref(%x * 2) }
def @main() -> int32 { 0 }
""")
    code, out, _ = interp(capsys, path, "--entry", "get", "--json")
    assert code == 0 and result(out) == {"closure": "inc"}
    code, out, _ = interp(capsys, path, "--entry", "@cell", "21", "--json")
    assert result(out) == {"ref": {"dtype": "int32", "shape": [], "data": 42}}
    code, out, _ = interp(capsys, path, "--entry", "cell", "21")
    assert out == "ref(42)\n"


def test_options_may_follow_and_split_the_arguments(capsys):
    path = PROGRAMS / "minivm.relay"
    a = interp(capsys, path, "-3", "4", "--json")
    b = rvmdbg(capsys, "run", "--json", path, "-3", "--executor", "interp", "4")
    assert a[0] == b[0] == 0 and a[1] == b[1]


def test_negative_literals_are_arguments_not_options(capsys, program):
    path = program("def @main(%a: float32, %b: int64) { (%a, %b) }")
    code, out, err = interp(capsys, path, "-2.5f", "-3i64", "--json")
    assert code == 0, err
    assert result(out) == {"tuple": [{"dtype": "float32", "shape": [], "data": -2.5},
                                     {"dtype": "int64", "shape": [], "data": -3}]}


# ---------------------------------------------------------------------------- run: failures

def test_runtime_failure_exit_1_names_function_and_line(capsys):
    code, out, err = interp(capsys, PROGRAMS / "option.relay", "17", "0")
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"{PROGRAMS / 'option.relay'}:22:3: error: match? found no "
                            "matching clause for None (in @expect)")
    assert "match? (%o) {" in err


def test_runtime_failure_on_the_vm_exit_1(capsys):
    code, _, err = rvmdbg(capsys, "run", PROGRAMS / "option.relay", "17", "0")
    assert code == 1 and "option.relay:22" in err


def test_depth_limit_exit_1(capsys):
    code, _, err = interp(capsys, PROGRAMS / "sum_up.relay", "1000", "--max-depth", "100")
    assert code == 1
    assert "call depth limit 100 exceeded (raise with --max-depth)" in err
    assert "sum_up.relay:9:10" in err


def test_step_limit_exit_1(capsys):
    code, _, err = interp(capsys, PROGRAMS / "loop.relay", "--max-steps", "50")
    assert code == 1 and "--max-steps" in err


def test_byte_limit_exit_1(capsys, program):
    path = program('def @main() { ones(shape=[512, 512], dtype="float32") }')
    code, _, err = interp(capsys, path, "--max-bytes", "1000")
    assert code == 1 and "--max-bytes" in err


def test_interrupt_exit_130(capsys, monkeypatch):
    def interrupted(*_):
        raise KeyboardInterrupt
    monkeypatch.setitem(EXECUTORS, "interp", interrupted)
    code, _, err = interp(capsys, PROGRAMS / "fib.relay")
    assert code == 130 and "interrupted" in err


def test_interpreter_on_a_saved_executable_is_a_usage_error(capsys, tmp_path):
    bogus = tmp_path / "x.rvmx"
    bogus.write_bytes(b"not an executable")
    code, _, err = interp(capsys, bogus)
    assert code == 2 and "x.rvmx" in err


# ---------------------------------------------------------------------------- run: arguments

def test_wrong_argument_count_exit_2(capsys):
    code, _, err = interp(capsys, PROGRAMS / "fib.relay", "1", "2")
    assert code == 2
    assert "error: @main takes 1 argument (%n: int32), got 2" in err


@pytest.mark.parametrize("arg,message", [
    ("Foo(1)", "unknown constructor Foo"),
    ("2.5f", "expected int32 integers, got 2.5f (float32)"),
    ("3000000000", "does not fit in int32"),
    ("[1, 2]", "expected a scalar, got shape (2,)"),
    ("[1, [2]]", "ragged"),
    ("@main", "main: file not found"),
    ("%x", "cannot read"),
    ("add(1, 2)", "is a call"),
    ("True", "expected int32 numbers, got a boolean"),
    ("", "empty argument"),
])
def test_bad_arguments_exit_2(capsys, arg, message):
    code, _, err = interp(capsys, PROGRAMS / "fib.relay", arg)
    assert code == 2
    assert "argument 1 (%n: int32)" in err or "argument 1" in err
    assert message in err


def test_npy_argument(capsys, tmp_path):
    state = tmp_path / "state.npy"
    np.save(state, np.array([[0.5, -1.0, 2.0]]))  # float64 on disk: converted to float32
    w = "[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]"
    code, out, err = interp(capsys, ROOT / "tests/examples/policy_argmax.relay",
                            f"@{state}", w, "--json")
    assert code == 0, err
    assert result(out) == {"dtype": "int32", "shape": [], "data": 2}


def test_npy_argument_errors(capsys, tmp_path):
    path = ROOT / "tests/examples/reshape_chain.relay"
    code, _, err = interp(capsys, path, f"@{tmp_path / 'missing.npy'}")
    assert code == 2 and "missing.npy: file not found" in err
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((3, 2), dtype=np.float32))
    code, _, err = interp(capsys, path, f"@{wrong}")
    assert code == 2 and "expected shape (2, 3), got shape (3, 2)" in err
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    code, _, err = interp(capsys, path, f"@{objects}")
    assert code == 2 and "objects.npy" in err
    archive = tmp_path / "arch.npy"
    with open(archive, "wb") as fh:
        np.savez(fh, a=np.zeros(3))
    code, _, err = interp(capsys, path, f"@{archive}")
    assert code == 2 and ".npz" in err
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    code, _, err = interp(capsys, path, f"@{empty}")
    assert code == 2 and "empty.npy: is empty" in err


def _conv(body: str, *texts, entry="main"):
    mod = check_module(load_module(HEADER + body, "<t>"))
    return parse_program_args(mod, entry, list(texts))


def test_args_convert_to_declared_dtypes_and_shapes():
    v = _conv("def @main(%a: float32, %b: Tensor[(2, 3), float32], %c: int64, %d: bool,"
              " %e: Tensor[(?,), int32]) { %a }",
              "3", "[[1, 2, 3], [4, 5, 6]]", "5i64", "True", "[7, 8, 9, 10]")
    assert v[0].dtype == np.float32 and v[0].shape == () and float(v[0]) == 3.0
    assert v[1].dtype == np.float32 and v[1].shape == (2, 3)
    assert v[2].dtype == np.int64 and int(v[2]) == 5
    assert v[3].dtype == np.bool_ and bool(v[3]) is True
    assert v[4].dtype == np.int32 and v[4].tolist() == [7, 8, 9, 10]


def test_args_take_tvms_non_finite_literals_and_refuse_them_for_integers():
    body = "def @main(%a: float32, %b: float64, %c: float16) { %a }"
    a, b, c = _conv(body, "inff", "-inff64", "nanf16")
    assert np.isposinf(a) and a.dtype == np.float32
    assert np.isneginf(b) and b.dtype == np.float64
    assert np.isnan(c) and c.dtype == np.float16
    for text in ("inff", "nanf", "-inff"):
        with pytest.raises(ArgumentError, match="expected int32 integers"):
            _conv("def @main(%x: int32) { %x }", text)


def test_args_tuples_adts_refs_and_negation():
    body = ("def @main(%t: (int32, float32), %l: List[float32], %o: Option[(int32, bool)], "
            "%r: ref(int32), %n: int32) { %n }")
    t, lst, o, r, n = _conv(body, "(1, 2f)", "Cons(1, Cons(2, Nil))", "Some((-4, False))",
                            "ref(8)", "negative(5)")
    assert [f.dtype.name for f in t.fields] == ["int32", "float32"]
    assert lst.con == "Cons" and lst.fields[0].dtype == np.float32
    assert lst.fields[1].fields[0].dtype == np.float32 and lst.fields[1].fields[1].con == "Nil"
    assert o.con == "Some" and int(o.fields[0].fields[0]) == -4
    assert int(r.value) == 8 and int(n) == -5
    (t2,) = _conv("def @main(%t: (int32, float32)) { %t }", "[1, 2.5]")
    assert t2.fields[1].dtype == np.float32 and float(t2.fields[1]) == 2.5


@pytest.mark.parametrize("body,text,message", [
    ("def @main(%l: List[int32]) { @hd(Cons(None, Nil)); 0 }", "Some(1)",
     "Some is not a constructor of List[int32]"),
    ("def @main(%l: List[int32]) { 0 }", "Some(1)", "unknown constructor Some"),
    ("def @main(%l: List[int32]) { 0 }", "Cans(1, Nil)", "did you mean Cons?"),
    ("def @main(%l: List[int32]) { 0 }", "3", "expected a value of type List[int32]"),
    ("def @main(%l: List[int32]) { 0 }", "Cons(1)", "takes 2 argument(s), got 1"),
    ("def @main(%l: List[int32]) { 0 }", "Cons", "needs 2 argument(s)"),
    ("def @main(%t: (int32, int32)) { 0 }", "(1, 2, 3)", "expected a tuple of 2, got one of 3"),
    ("def @main(%f: fn (int32) -> int32) { 0 }", "1", "a function cannot be given"),
    ("def @main(%b: bool) { 0 }", "1", "expected True or False"),
    ("def @main(%x: uint8) { 0 }", "-1", "does not fit in uint8"),
    ("def @main(%x: Tensor[(2,), int32]) { 0 }", "[1.5, 2]", "got a float64 tensor holding 1.5"),
])
def test_args_conversion_errors(body, text, message):
    with pytest.raises(ArgumentError) as info:
        _conv(body, text)
    assert message in info.value.message


def test_args_for_a_polymorphic_parameter_take_relay_defaults():
    (v,) = _conv("def @main[A](%x: A) -> A { %x }", "[1, 2]")
    assert v.dtype == np.int32
    (v,) = _conv("def @main[A](%x: A) -> A { %x }", "[1.5]")
    assert v.dtype == np.float32


def test_args_unknown_entry():
    with pytest.raises(ArgumentError, match="no function @nope"):
        _conv("def @main() { 0 }", entry="nope")


# ---------------------------------------------------------------------------- as a process

def _process(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "rvmdbg", *map(str, argv)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_process_exit_codes_and_streams():
    ok = _process("run", PROGRAMS / "fib.relay", "10", "--executor", "interp", "--json")
    assert ok.returncode == 0 and result(ok.stdout) == {"dtype": "int32", "shape": [],
                                                         "data": 55}
    failed = _process("run", PROGRAMS / "option.relay", "17", "0", "--executor", "interp")
    assert failed.returncode == 1 and failed.stdout == "" and "(in @expect)" in failed.stderr
    bad = _process("run", PROGRAMS / "fib.relay", "x y")
    assert bad.returncode == 2 and bad.stdout == ""
    for p in (ok, failed, bad):
        assert "Traceback" not in p.stderr


def test_process_deep_recursion_limit_error_is_clean():
    p = _process("run", PROGRAMS / "sum_up.relay", "1000000", "--executor", "interp")
    assert p.returncode == 1
    assert "call depth limit 200000 exceeded (raise with --max-depth)" in p.stderr
    assert "Traceback" not in p.stderr and "Segmentation" not in p.stderr


def test_missing_arguments_without_an_args_line(capsys, program):
    path = program("def @main(%a: float32) { %a }")
    code, _, err = interp(capsys, path)
    assert code == 2
    assert "@main takes 1 argument (%a: float32), got 0" in err and "// args:" in err


def test_a_reader_that_goes_away_is_not_a_program_failure():
    """`rvmdbg trace ... | head -1`: once the reader closes the pipe, rvmdbg stops quietly
    with 141 (as a process ended by SIGPIPE), not 1, which says the program failed."""
    proc = subprocess.Popen([sys.executable, "-m", "rvmdbg", "trace", "programs/loop.relay"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert first and proc.returncode == 141
    assert b"Traceback" not in err


# ---------------------------------------------------------------------------- TVM's forms

def test_a_global_defined_twice_runs_the_last_with_a_warning_line(capsys, program):
    path = program("def @f() -> int32 { 1 }\ndef @f() -> int32 { 2 }\ndef @main() -> int32 { @f() }\n")
    code, out, err = rvmdbg(capsys, "run", path)
    assert code == 0 and out.strip() == "2"
    assert err.splitlines()[0] == (f"{path}:3:5: warning: @f is defined twice: this definition "
                                   "replaces the one at line 2, as in TVM")
    code, out, err = rvmdbg(capsys, "check", path)
    assert code == 0 and err.count("warning:") == 1


def test_a_float_literal_out_of_range_exits_2_located(capsys, program):
    path = program("def @main() -> float16 {\n  70000f16\n}\n")
    code, out, err = rvmdbg(capsys, "run", path)
    assert code == 2
    assert err.splitlines()[0] == (f"{path}:3:3: error: floating point number `70000f16` "
                                   "unrepresentable in width 16")


def test_a_file_that_is_one_expression_runs_as_main(capsys, program):
    path = program("fn (%x: int32) -> int32 { %x * 2i }\n")
    assert rvmdbg(capsys, "run", path, "21")[:2] == (0, "42\n")
    assert interp(capsys, path, "21")[:2] == (0, "42\n")


def test_a_printed_memory_stage_runs_on_the_vm_and_the_interpreter_refuses_it(capsys, program):
    path = program("""
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %s = vm.shape_of(%x);
  let %storage_0: Storage[] = memory.alloc_storage(8i64, alignment=64, dtype_hint="float32");
  let %t = memory.alloc_tensor(%storage_0, 0i64, %s, assert_shape=[2]);
  vm.invoke_tvm_op(fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
    negative(%p0)
  }, (%x,), (%t,));
  %t
}
""")
    code, out, err = rvmdbg(capsys, "run", path, "[1, 2]")
    assert code == 0 and out.startswith("[-1., -2.]")
    code, out, err = interp(capsys, path, "[1, 2]")
    assert code == 2 and "printed ManifestAlloc stage" in err and "--executor vm" in err


# ---- inputs as TVM users hold them: tuples of tensors, 0-d .npy, --inputs FILE.npz ----------

_PAIR = HEADER + ("def @main(%t: (Tensor[(2,), float32], Tensor[(2,), float32]), %s: float32) {\n"
                  "  multiply(add(%t.0, %t.1), %s)\n}\n")


@pytest.fixture
def pair(tmp_path):
    prog = tmp_path / "pair.relay"
    prog.write_text(_PAIR)
    np.save(tmp_path / "a.npy", np.array([1, 2], dtype=np.float32))
    np.save(tmp_path / "b.npy", np.array([10, 20], dtype=np.float64))
    np.save(tmp_path / "s.npy", np.array(2, dtype=np.float32))  # 0-d
    return tmp_path, prog


def test_a_tuple_of_npy_files_and_a_zero_d_npy(capsys, pair):
    tmp, prog = pair
    code, out, err = rvmdbg(capsys, "run", prog, f"(@{tmp / 'a.npy'}, @{tmp / 'b.npy'})",
                            f"@{tmp / 's.npy'}", "--json")
    assert code == 0, err
    assert result(out) == {"dtype": "float32", "shape": [2], "data": [22.0, 44.0]}
    code, out, err = rvmdbg(capsys, "run", prog, f"([1, 2], @{tmp / 'b.npy'},)", "1", "--json")
    assert code == 0, err
    code, _, err = rvmdbg(capsys, "run", prog, f"(@{tmp / 'a.npy'})", "1")
    assert code == 2 and "expected a tuple of 2" in err


def test_inputs_archive_binds_parameters_by_name(capsys, pair):
    tmp, prog = pair
    np.savez(tmp / "in.npz", s=np.array(3, dtype=np.float32))
    for cmd in ("run", "trace"):
        code, out, err = rvmdbg(capsys, cmd, prog, "([1, 1], [2, 2])", "--inputs", tmp / "in.npz")
        assert code == 0, err
        assert "[9., 9.] (float32)" in out
    batch = tmp / "cmds"
    batch.write_text("c\n")
    code, out, err = rvmdbg(capsys, "debug", prog, "([1, 1], [2, 2])", "--inputs",
                            tmp / "in.npz", "--batch", batch)
    assert code == 0 and "returned [9., 9.] (float32)" in out, err
    # every parameter by name, `%` prefixes accepted (TVM's names have none)
    np.savez(tmp / "all.npz", **{"%s": np.array(1, np.float32)},
             t=np.zeros(2, np.float32))
    code, _, err = rvmdbg(capsys, "run", prog, "--inputs", tmp / "all.npz")
    assert code == 2 and "expected a tuple" in err  # t is a tuple: an archive holds tensors


@pytest.mark.parametrize("arrays, positional, message", [
    ({"s": 1.0, "q": 2.0}, ["([1, 1], [2, 2])"], "q is not a parameter of @main"),
    ({"ss": 1.0}, ["([1, 1], [2, 2])"], "did you mean s?"),
    ({}, ["([1, 1], [2, 2])"], "no value for %s of @main"),
    ({"t": 1.0, "s": 1.0}, ["([1, 1], [2, 2])"], "%t is given twice"),
])
def test_inputs_archive_errors_exit_2(capsys, pair, arrays, positional, message):
    tmp, prog = pair
    np.savez(tmp / "in.npz", **{k: np.array(v, np.float32) for k, v in arrays.items()})
    code, _, err = rvmdbg(capsys, "run", prog, *positional, "--inputs", tmp / "in.npz")
    assert code == 2 and message in err, err


def test_inputs_archive_without_pickle_and_archive_members(capsys, pair):
    tmp, prog = pair
    np.savez(tmp / "obj.npz", s=np.array([{"a": 1}], dtype=object))
    code, _, err = rvmdbg(capsys, "run", prog, "([1, 1], [2, 2])", "--inputs", tmp / "obj.npz")
    assert code == 2 and "obj.npz" in err and "Traceback" not in err
    code, _, err = rvmdbg(capsys, "run", prog, "([1, 1], [2, 2])", "--inputs", tmp / "none.npz")
    assert code == 2 and "none.npz: file not found" in err
    np.savez(tmp / "m.npz", scale=np.array(4, np.float32))
    code, out, err = rvmdbg(capsys, "run", prog, "([1, 1], [2, 2])", f"@{tmp / 'm.npz'}:scale")
    assert code == 0 and "[12., 12.]" in out, err
    code, _, err = rvmdbg(capsys, "run", prog, "([1, 1], [2, 2])", f"@{tmp / 'm.npz'}")
    assert code == 2 and f"name one of its arrays: @{tmp / 'm.npz'}:scale" in err


def test_compile_stage_prints_a_pass_stage_that_reads_back_and_runs(capsys, tmp_path):
    code, stage, _ = rvmdbg(capsys, "compile", PROGRAMS / "mlp.relay", "--stage", "ManifestAlloc")
    assert code == 0 and "vm.invoke_tvm_op(" in stage and "#[metadata]" in stage
    path = tmp_path / "mlp_alloc.relay"
    path.write_text(stage, encoding="utf-8")
    code, out, _ = rvmdbg(capsys, "run", path)  # the program's // args: line came along
    assert code == 0
    assert out == rvmdbg(capsys, "run", PROGRAMS / "mlp.relay")[1]
    code, _, err = rvmdbg(capsys, "compile", PROGRAMS / "mlp.relay", "--stage", "Nope")
    assert code == 2 and "the stages are Input, RemoveUnusedFunctions" in err


def test_check_prints_a_note_where_tvm_refuses_a_generalised_global(capsys, program):
    path = program("def @id(%x) { %x }\ndef @main() -> int32 { @id(1) }\n")
    code, out, err = rvmdbg(capsys, "check", path)
    assert code == 0 and "def @id[A](%x: A) -> A" in out
    assert err.splitlines()[0] == (f"{path}:2:9: note: TVM refuses @id: its type inference is "
                                   "unable to infer a type here (nothing constrains it); rvmdbg "
                                   "generalises @id to fn [A](A) -> A")
    code, out, err = rvmdbg(capsys, "run", path)
    assert code == 0 and err == ""  # only check prints notes


def test_check_types_unannotated_weights_from_the_operators_using_them(capsys, program):
    path = program("def @main(%x: Tensor[(2, 5), float32], %w, %b) {\n"
                   "  nn.bias_add(nn.dense(%x, %w, units=3), %b)\n}\n")
    code, out, _ = rvmdbg(capsys, "check", path)
    assert code == 0
    assert out.strip() == ("def @main(%x: Tensor[(2, 5), float32], %w: Tensor[(3, 5), float32], "
                           "%b: Tensor[(3,), float32]) -> Tensor[(2, 3), float32]")


def test_an_empty_inputs_archive_is_a_usage_error(capsys, pair):
    tmp, prog = pair
    (tmp / "empty.npz").write_bytes(b"")
    code, _, err = rvmdbg(capsys, "run", prog, "--inputs", tmp / "empty.npz")
    assert code == 2 and "empty.npz: is empty" in err


def test_limits_that_cannot_be_honoured_are_refused_up_front():
    proc = _process("run", ROOT / "programs/fib.relay", "--max-depth", "100000000000")
    assert proc.returncode == 2
    assert "--max-depth 100000000000 cannot be honoured: at most 10000000" in proc.stderr
    proc = _process("run", ROOT / "programs/fib.relay", "--max-steps", "9" * 5000)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_an_argument_of_thousands_of_digits_is_a_usage_error():
    proc = _process("run", ROOT / "programs/fib.relay", "9" * 5000)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "out of range" in proc.stderr


def test_memory_error_anywhere_is_a_message_and_exit_1(monkeypatch, capsys):
    from rvmdbg import cli
    from rvmdbg.program import relay_text

    def exhausted(*a, **kw):
        raise MemoryError()
    monkeypatch.setattr(relay_text, "read_source", exhausted)
    assert cli.main(["check", str(ROOT / "programs/fib.relay")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory") and "Traceback" not in err


def test_trace_labels_its_steps_in_the_language_in_use():
    """Issue 28 item 10: `rvmdbg --lang zh_CN trace` printed `[step 0]`."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(__import__("os").environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-m", "rvmdbg", "--lang", "zh_CN", "trace",
                          "programs/fib.relay", "2"], capture_output=True, text=True, cwd=root,
                         env=env, timeout=120).stdout
    assert out.startswith("[第 0 步] @main pc=0") and "[step" not in out


def test_an_expression_file_without_a_header_runs_with_a_note(capsys, tmp_path):
    path = tmp_path / "fn.relay"
    path.write_text("fn (%x: int32) {\n  add(%x, 1)\n}\n", encoding="utf-8")
    code, out, err = rvmdbg(capsys, "run", path, "4", "--json")
    assert code == 0 and result(out) == {"dtype": "int32", "shape": [], "data": 5}
    assert f"{path}:1:1: note: no version header" in err
    path.write_text("def @main() { 1 }\n", encoding="utf-8")
    code, _, err = rvmdbg(capsys, "check", path)
    assert code == 2 and "error: missing version header" in err


NO_METADATA = HEADER + """\
def @main(%x: Tensor[(2), float32]) {
  %0 = add(%x, meta[relay.Constant][0] /* ty=Tensor[(2), float32] */) /* ty=Tensor[(2), float32] */;
  multiply(%0, meta[relay.Constant][1] /* ty=Tensor[(2), float32] */)
}
"""


def test_check_names_the_meta_options_for_constants_without_a_section(capsys, tmp_path):
    path = tmp_path / "bug.relay"
    path.write_text(NO_METADATA, encoding="utf-8")
    code, _, err = rvmdbg(capsys, "check", path)
    assert code == 2 and "--meta-inputs" in err and "--meta-random SEED" in err
    code, out, _ = rvmdbg(capsys, "check", path, "--meta-inputs")
    assert code == 0 and "%meta_const_0: Tensor[(2,), float32], %meta_const_1" in out


def test_meta_inputs_are_bound_by_args_or_inputs(capsys, tmp_path):
    path = tmp_path / "bug.relay"
    path.write_text(NO_METADATA, encoding="utf-8")
    code, out, _ = rvmdbg(capsys, "run", path, "[1, 2]", "[10, 20]", "[2, 3]", "--meta-inputs",
                          "--json")
    assert code == 0 and result(out)["data"] == [22.0, 66.0]
    archive = tmp_path / "in.npz"
    np.savez(archive, x=np.array([1, 2], np.float32), meta_const_0=np.zeros(2, np.float32),
             meta_const_1=np.full(2, 3, np.float32))
    for command in ("run", "trace"):
        code, out, err = rvmdbg(capsys, command, path, "--meta-inputs", "--inputs", archive)
        assert code == 0, err
    assert "[3., 6.]" in out


def test_meta_random_runs_with_seeded_constants_on_every_command(capsys, tmp_path):
    path = tmp_path / "bug.relay"
    path.write_text(NO_METADATA, encoding="utf-8")
    runs = [rvmdbg(capsys, "run", path, "[1, 2]", "--meta-random", seed, "--json")
            for seed in ("5", "5", "6")]
    assert all(code == 0 for code, _, _ in runs)
    assert result(runs[0][1]) == result(runs[1][1]) != result(runs[2][1])
    for command in ("compile", "graph"):
        code, _, err = rvmdbg(capsys, command, path, "--meta-random", "5")
        assert code == 0, err
    batch = tmp_path / "cmds.txt"
    batch.write_text("continue\n", encoding="utf-8")
    code, out, err = rvmdbg(capsys, "debug", path, "[1, 2]", "--meta-random", "5", "--batch",
                            batch)
    assert code == 0, err


def test_inputs_archive_missing_many_parameters_shows_a_few_and_a_count(capsys, tmp_path):
    """Issue 28 (15): a ResNet-shaped model whose weights are parameters, run with an
    archive holding only the input: the first few missing names, how many, and where to see
    them all, not every name on one line."""
    from rvmdbg import workloads
    w = workloads.build("resnet18", small=True)
    prog = tmp_path / "resnet_unbound.relay"
    prog.write_text(w.unbound_text, encoding="utf-8")
    np.savez(tmp_path / "x.npz", data=w.inputs[0])
    code, _, err = rvmdbg(capsys, "run", prog, "--inputs", tmp_path / "x.npz")
    missing = len(w.constants)
    assert code == 2 and "Traceback" not in err
    assert "no value for %weight_0, %gamma_1, %beta_2, %moving_mean_3, %moving_var_4 and " \
           f"{missing - 5} more ({missing} parameters in all; `rvmdbg check PROGRAM` prints " \
           "every parameter of @main)" in err, err
    assert "%weight_5" not in err and len(err.splitlines()[0]) < 300
    code, out, _ = rvmdbg(capsys, "check", prog)
    assert code == 0 and "%weight_5" in out      # the hint's command does list them
