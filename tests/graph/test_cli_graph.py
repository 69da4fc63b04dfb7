"""`rvmdbg graph PROGRAM` and `rvmdbg run PROGRAM --executor graph`: output and exit codes."""
from __future__ import annotations

import json

from graph_helpers import EXAMPLES, GRAPH_PROGRAMS, HEADER, PROGRAMS
from program_cases import matches
from rvmdbg import cli


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_graph_command_prints_nodes_and_plan(capsys):
    code, out, err = rvmdbg(capsys, "graph", PROGRAMS / "mlp.relay")
    assert code == 0, err
    assert "graph @main: 8 nodes (5 inputs, 0 constants, 3 kernels), 8 entries" in out
    assert "6: tvm_op fused_nn_dense_nn_bias_add(5, 3, 4) -> [1, 3] float32 sid 6" in out
    assert "pool bytes:        264" in out and "sum of tensors:    276" in out
    assert "reuse ratio:       1.05x" in out


def test_graph_command_json(capsys):
    code, out, _ = rvmdbg(capsys, "graph", EXAMPLES / "reshape_chain.relay", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["arg_nodes"] == [0] and data["heads"] == [[1, 0, 0]]
    assert data["nodes"][1]["attrs"]["func_name"] == "fused_transpose_reshape_multiply_reshape"
    assert data["memory_plan"]["pool_bytes"] == 48


def test_graph_command_refuses_with_place_exit_2(capsys):
    code, out, err = rvmdbg(capsys, "graph", PROGRAMS / "fib.relay")
    assert code == 2 and out == ""
    assert ("error: graph executor: `if` at " in err and "fib.relay:6:3 needs a branch at run "
            "time; run it on the VM" in err)
    assert "   6 |   if (%n < 2) {" in err


def test_graph_command_on_missing_file_exit_2(capsys, tmp_path):
    code, _, err = rvmdbg(capsys, "graph", tmp_path / "nope.relay")
    assert code == 2 and "file not found" in err


def test_run_with_graph_executor(capsys):
    code, out, err = rvmdbg(capsys, "run", PROGRAMS / "mlp.relay", "--executor", "graph",
                            "--json")
    assert code == 0, err
    assert matches({"dtype": "float32", "shape": [1, 3],
                    "data": [[0.22775607, 0.37550628, 0.39673764]]}, json.loads(out)["result"])


def test_run_graph_matches_interp_on_nested_tuples(capsys):
    path = GRAPH_PROGRAMS / "concat_split.relay"
    code, graph_out, _ = rvmdbg(capsys, "run", path, "--executor", "graph", "--json")
    _, interp_out, _ = rvmdbg(capsys, "run", path, "--executor", "interp", "--json")
    assert code == 0
    assert matches(json.loads(interp_out), json.loads(graph_out))


def test_run_refused_program_exit_2(capsys):
    code, out, err = rvmdbg(capsys, "run", PROGRAMS / "refs.relay", "--executor", "graph")
    assert code == 2 and out == ""
    assert "`ref(...)` at " in err and "refs.relay:6:16" in err and "run it on the VM" in err


def test_run_failure_exit_1(capsys, tmp_path):
    path = tmp_path / "div.relay"
    path.write_text(HEADER + "def @main(%x: Tensor[(2,), int32], %y: Tensor[(2,), int32]) "
                    "-> Tensor[(2,), int32] {\n  divide(%x, %y)\n}\n")
    code, _, err = rvmdbg(capsys, "run", path, "[1, 2]", "[1, 0]", "--executor", "graph")
    assert code == 1
    assert "kernel fused_divide" in err and "division by zero" in err
    assert "   3 |   divide(%x, %y)" in err


def test_run_over_byte_limit_exit_1(capsys):
    code, _, err = rvmdbg(capsys, "run", PROGRAMS / "mlp.relay", "--executor", "graph",
                          "--max-bytes", "100")
    assert code == 1 and "--max-bytes" in err
