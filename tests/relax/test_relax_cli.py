"""A TVMScript module file through the front door: `rvmdbg run prog.relax.py ARGS`, batch mode
`rvmdbg debug prog.relax.py --batch FILE` (breakpoint, last write, reverse step), bad input
with exit 2, and without apache-tvm a message naming the `rvmdbg[tvm]` extra, exit 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from rvmdbg import cli  # noqa: E402
from rvmdbg.program import kind_for  # noqa: E402

from tests.relax import programs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, out, err


@pytest.fixture(scope="module")
def fact(tmp_path_factory):
    path = tmp_path_factory.mktemp("relax") / "fact.relax.py"
    path.write_text(programs.source("fact"))
    return path


def test_the_kind_by_suffix_and_by_content(fact, tmp_path):
    assert kind_for(str(fact)).name == "relax"
    other = tmp_path / "printed.py"
    other.write_text(programs.source("fact"))
    assert kind_for(str(other)).name == "relax"


def test_run(capsys, fact):
    code, out, _ = rvmdbg(capsys, "run", fact, "5")
    assert code == 0 and out == "120i64\n"
    code, out, _ = rvmdbg(capsys, "run", fact, "--json", "6")
    assert code == 0 and json.loads(out) == {"result": {"dtype": "int64", "shape": [], "data": 720}}


def test_batch(capsys, fact, tmp_path):
    script = tmp_path / "cmds"
    script.write_text("break @fact:16\ncontinue\nlast-write $6\nrstep 2\ncontinue\ndelete 1\n"
                      "continue\n")
    code, out, err = rvmdbg(capsys, "debug", fact, "--batch", script, "3")
    assert code == 0, err
    assert ("[step 39] @fact pc=16: call  multiply         in: %0, %6, %8   dst: %void    "
            "(breakpoint 1)") in out
    assert "[step 25] @fact pc=11: call  fact             in: %5           dst: %6    (" in out
    assert "%6 of @fact (frame #0 at step 39) is written by this instruction" in out
    assert "[step 23] @fact pc=9: call  vm.builtin.null_value" in out
    assert out.count("(breakpoint 1)") == 2
    assert "[step 54] @main: returned 6i64    (finished)" in out


def test_a_file_that_is_not_tvmscript_is_refused_with_its_location(capsys, tmp_path):
    bad = tmp_path / "bad.relax.py"
    bad.write_text(programs.HEAD + "    @R.function\n    def main(x: R.Tensor((2,), \"float32\")):\n"
                   "        return R.no_such_op(x)\n")
    code, out, err = rvmdbg(capsys, "run", bad, "[1, 2]")
    assert code == 2 and "bad.relax.py" in err and "not a TVMScript module" in err
    assert ":9:" in err or "--> " in err


def test_wrong_argument_shape_is_a_usage_error(capsys, tmp_path):
    path = tmp_path / "dataflow.relax.py"
    path.write_text(programs.source("dataflow"))
    code, out, err = rvmdbg(capsys, "run", path, "[1, 2]", "[3, 4]")
    assert code == 2 and "argument 1 of @main has shape [2], the function takes [2, 3]" in err


def test_without_tvm_the_message_names_the_extra(fact):
    code = ("import sys; sys.modules['tvm'] = None\n"
            "from rvmdbg import cli\n"
            f"raise SystemExit(cli.main(['run', {str(fact)!r}, '5']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert "rvmdbg[tvm]" in proc.stderr and "Traceback" not in proc.stderr


def test_batch_shows_tvm_tensors_as_rvmdbg_tensors(capsys, tmp_path):
    path = tmp_path / "dataflow.relax.py"
    path.write_text(programs.source("dataflow"))
    script = tmp_path / "cmds"
    script.write_text("break @main:8\ncontinue\nstep\ninfo registers\nprint $3[0, :2]\n")
    code, out, err = rvmdbg(capsys, "debug", path, "--batch", script,
                            "[[1, 2, 3], [4, 5, 6]]", "[[1, 1, 1], [1, 1, 1]]")
    assert code == 0, err
    # registers are named as TVM names them (the executable's register prefix, %)
    assert "%3    Tensor  [[2., 3., 4.], [5., 6., 7.]] (float32)" in out
    assert "%3[0, :2] = [2., 3.] (float32)" in out


def test_the_screen_opens_it(fact):
    from rvmdbg.tui import program as tui_program
    prog = tui_program.load_program(str(fact), "main")
    assert prog.exe.kind == "relax" and "@I.ir_module" in prog.source_text
