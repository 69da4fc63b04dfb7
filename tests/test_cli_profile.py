"""`rvmdbg profile`, `--trace FILE.json` on run/profile/trace and `--threads N` (issue 30):
the report's three forms, the program kinds the front door runs on the Relay VM, and the
clear refusals (exit 2) of what they cannot do."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rvmdbg import cli, workloads
from rvmdbg.threads import default_threads, limited

ROOT = Path(__file__).resolve().parents[1]
FIB = str(ROOT / "programs" / "fib.relay")
CNN = str(ROOT / "programs" / "cnn.relay")


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_profile_prints_tvms_table_with_threads_in_the_header(capsys):
    code, out, err = rvmdbg(capsys, "profile", CNN, "--threads", "1", "--repeat", "2")
    assert code == 0, err
    head, _sep, table = out.partition("\n\n")
    assert "@main" in head and "2 timed runs" in head and "1 thread" in head
    assert table.startswith("Name") and "Duration (us)" in table.splitlines()[0]
    assert "Argument Shapes" in table.splitlines()[0] and "Line" in table.splitlines()[0]
    assert "conv2d" in table and "VM::AllocStorage" in table and "VM::Dispatch" in table
    assert "Number of threads: 1" in table and "Timer cost:" in table


def test_profile_csv_json_and_per_call_rows(capsys):
    code, out, _err = rvmdbg(capsys, "profile", FIB, "6", "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"calls", "device_metrics", "configuration"}
    code, out, _err = rvmdbg(capsys, "profile", FIB, "6", "--csv")
    lines = out.splitlines()
    assert code == 0 and lines[0].split(",") == sorted(lines[0].split(","))
    assert len(lines) - 1 == len(doc["calls"])
    code, per_call, _err = rvmdbg(capsys, "profile", FIB, "6", "--no-aggregate",
                                  "--sort", "name")
    code2, aggregated, _err = rvmdbg(capsys, "profile", FIB, "6")
    assert code == code2 == 0
    assert per_call.count("vm_mod_fused_less") > aggregated.count("vm_mod_fused_less") == 1


def test_profile_names_onnx_nodes(capsys, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="Big_MatMul"),
         helper.make_node("Relu", ["y"], ["z"], name="Small_Relu")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [64, 64])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [64, 64])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    np.save(tmp_path / "x.npy", np.ones((64, 64), np.float32))
    code, out, err = rvmdbg(capsys, "profile", path, f"@{tmp_path / 'x.npy'}",
                            f"@{tmp_path / 'x.npy'}")
    assert code == 0, err
    assert "Big_MatMul" in out or "Small_Relu" in out


def test_profile_of_a_saved_executable(capsys, tmp_path):
    saved = tmp_path / "fib.rvmx"
    assert rvmdbg(capsys, "compile", FIB, "-o", saved)[0] == 0
    code, out, err = rvmdbg(capsys, "profile", saved, "5")
    assert code == 0, err
    assert "vm_mod_fused_add" in out


def test_profile_refuses_what_is_not_the_relay_vm(capsys):
    code, _out, err = rvmdbg(capsys, "profile", ROOT / "programs" / "demo.mvm")
    assert code == 2 and "Relay VM" in err and "Traceback" not in err
    code, _out, err = rvmdbg(capsys, "profile", FIB, "--threads", "0")
    assert code == 2 and "thread" in err
    code, _out, err = rvmdbg(capsys, "run", FIB, "--threads", "many")
    assert code == 2
    code, _out, err = rvmdbg(capsys, "run", FIB, "--executor", "interp", "--trace", "x.json")
    assert code == 2 and "--trace" in err
    code, _out, err = rvmdbg(capsys, "profile", FIB, "--fused", "--trace", "x.json")
    assert code == 2 and "--fused" in err


def test_profile_of_a_failing_run_exits_1(capsys, tmp_path):
    bad = tmp_path / "bad.relay"
    bad.write_text('#[version = "0.0.5"]\ndef @main(%x: int32) -> int32 {\n'
                   '  @main(%x + 1)\n}\n')
    code, _out, err = rvmdbg(capsys, "profile", bad, "1", "--max-depth", "50")
    assert code == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "profile", "trace"])
def test_trace_option_writes_a_chrome_trace(capsys, tmp_path, command):
    path = tmp_path / "t.json"
    code, out, err = rvmdbg(capsys, command, FIB, "5", "--trace", path)
    assert code == 0, err
    if command == "run":
        assert out.strip() == "5"
    events = json.loads(path.read_text())["traceEvents"]
    frames = [e for e in events if e.get("cat") == "frame"]
    assert frames[0]["name"] == "@main" and all(e["ph"] == "X" for e in frames)
    assert any(e.get("cat") == "kernel" for e in events)
    assert len({e["name"] for e in events if e["ph"] == "C"}) == 2


def test_trace_to_an_unwritable_file_is_a_usage_error(capsys, tmp_path):
    code, _out, err = rvmdbg(capsys, "run", FIB, "5", "--trace", tmp_path / "no" / "t.json")
    assert code == 2 and "cannot write the trace" in err


def test_threads_default_never_oversubscribes():
    assert 1 <= default_threads() <= 2
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with limited(1) as n:
        assert n == 1
        assert all(p["num_threads"] == 1 for p in threadpoolctl.threadpool_info())


def test_profile_of_mobilenet_from_the_command_line(capsys, tmp_path):
    w = workloads.build("mobilenet_v1", small=True)
    path = tmp_path / "mobilenet.relay"
    path.write_text(w.text)
    np.save(tmp_path / "x.npy", w.inputs[0])
    import re
    led = []
    for _attempt in range(3):
        code, out, err = rvmdbg(capsys, "profile", path, f"@{tmp_path / 'x.npy'}", "--warmup",
                                "1")
        assert code == 0, err
        kernels = [line.split() for line in out.splitlines() if line.startswith("vm_mod_")]
        assert kernels, out
        # the table's rows: name, then Duration (us); the convolutions lead as a family in two
        # runs of three (on a busy machine one slow batch_norm call once came first)
        families: dict = {}
        for name, duration, *_rest in kernels:
            family = re.sub(r"_\d+$", "", name)
            families[family] = families.get(family, 0.0) + float(duration.replace(",", ""))
        conv = sum(v for f, v in families.items() if "conv2d" in f)
        led.append(all(conv > v for f, v in families.items() if "conv2d" not in f))
    assert sum(led) >= 2, (led, families)


def test_threads_reach_run_trace_and_each_served_tab(capsys):
    from rvmdbg.serve import child_argv
    assert rvmdbg(capsys, "run", FIB, "7", "--threads", "1")[1].strip() == "13"
    assert rvmdbg(capsys, "trace", FIB, "2", "--threads", "1")[0] == 0
    ns = cli.parse_command_line(["serve", FIB, "--threads", "1"])
    argv = child_argv(ns)
    assert argv[argv.index("--threads") + 1] == "1"
