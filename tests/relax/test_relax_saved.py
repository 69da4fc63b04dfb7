"""A saved Relax executable: what TVM wrote with `ex.mod.write_to_file` (`.vmexec`) run with
the kernel library `ex.export_library` made, named with --lib: the result is TVM's, and a
missing --lib, a library that lacks a kernel the executable calls, a truncated file, or
`--engine relay` are each a message, exit 2."""
from __future__ import annotations

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

from rvmdbg import cli  # noqa: E402
from rvmdbg.program import LoadOptions, kind_for, load_program  # noqa: E402
from rvmdbg.relax.check import check, norm  # noqa: E402
from rvmdbg.relax.machine import to_host  # noqa: E402

from tests.relax import programs  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """{name: (vmexec path, so path, TVM's executable)} for two programs."""
    from tvm import relax
    folder = tmp_path_factory.mktemp("saved")
    out = {}
    for name in ("call_tir", "fact"):
        ex = relax.build(tvm.script.from_source(programs.source(name)), target="llvm")
        ex.mod.write_to_file(str(folder / f"{name}.vmexec"), "")
        ex.export_library(str(folder / f"{name}.so"))
        out[name] = (folder / f"{name}.vmexec", folder / f"{name}.so", ex)
    return out


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return code, out, err


def test_the_kind_by_content(saved, tmp_path):
    path = saved["fact"][0]
    assert kind_for(str(path)).name == "vmexec"
    from rvmdbg.program.vmexec import HEAD
    from rvmdbg.relax.executable import MAGIC
    assert HEAD == MAGIC.to_bytes(8, "little")
    other = tmp_path / "renamed.bin"
    other.write_bytes(path.read_bytes())
    assert kind_for(str(other)).name == "vmexec"


@pytest.mark.parametrize("name", ["call_tir", "fact"])
def test_loaded_with_its_library_it_runs_as_tvm_does(saved, name):
    from tvm import relax
    path, lib, ex = saved[name]
    program = load_program(str(path), options=LoadOptions(extra={"engine": "tvm", "lib": str(lib)}))
    exe = program.executable
    assert exe.listing() == ex.as_text()
    assert exe.param_types["main"] == [(str(a.dtype), a.shape) for a in programs.inputs(name)]
    m = exe.machine()
    m.start("main", programs.inputs(name))
    result = m.run()
    vm = relax.VirtualMachine(ex, tvm.cpu())
    want = to_host(vm["main"](*[tvm.runtime.tensor(a) for a in programs.inputs(name)]))
    assert norm(to_host(result)) == norm(want)
    check(exe, "main", programs.inputs(name))   # TVM's own VM on the loaded executable agrees


def test_run_and_batch_from_the_command_line(saved, capsys, tmp_path):
    path, lib, _ex = saved["fact"]
    code, out, err = rvmdbg(capsys, "run", "--engine", "tvm", "--lib", lib, path, "5")
    assert code == 0 and out == "120i64\n", err
    script = tmp_path / "cmds"
    script.write_text("break @fact:16\ncontinue\nrstep 1\ncontinue\ndelete 1\ncontinue\n")
    code, out, err = rvmdbg(capsys, "debug", "--lib", lib, path, "--batch", script, "3")
    assert code == 0, err
    assert "@fact pc=16: call  multiply" in out and "6i64" in out


def test_without_lib_a_wrong_lib_or_engine_relay_is_a_message(saved, capsys):
    path, lib, _ex = saved["call_tir"]
    code, _out, err = rvmdbg(capsys, "run", "--engine", "tvm", path, "[1,2,3,4]")
    assert code == 2 and "--lib FILE.so" in err and "loads only the one you name" in err
    code, _out, err = rvmdbg(capsys, "run", "--engine", "tvm", "--lib", saved["fact"][1], path,
                             "[1,2,3,4]")
    assert code == 2 and "does not hold the kernels this executable calls: addone, scale" in err
    code, _out, err = rvmdbg(capsys, "run", "--engine", "relay", "--lib", lib, path, "[1,2,3,4]")
    assert code == 2 and "use --engine tvm" in err
    code, _out, err = rvmdbg(capsys, "run", "--lib", str(lib) + ".missing", path, "[1,2,3,4]")
    assert code == 2 and "no such file" in err


def test_a_truncated_or_damaged_file_is_a_message(saved, capsys, tmp_path):
    path, lib, _ex = saved["call_tir"]
    data = path.read_bytes()
    for n, damaged in ((1, data[:len(data) // 2]), (2, data[:-3]), (3, data + b"\0" * 8),
                       (4, b"\x1e\x15\x14B/\xde%\xd2" + b"\xff" * 40)):
        bad = tmp_path / f"bad{n}.vmexec"
        bad.write_bytes(damaged)
        code, _out, err = rvmdbg(capsys, "run", "--engine", "tvm", "--lib", lib, bad, "[1,2,3,4]")
        assert code == 2 and f"bad{n}.vmexec: serialized executable: " in err, err


def test_a_register_outside_the_register_file_is_refused():
    from rvmdbg.relax.executable import GlobalInfo, RelaxExecutable, RelaxFormatError, parse_listing
    table = [GlobalInfo(1, "main", 0, 1, 1, 2, ["x"])]
    with pytest.raises(RelaxFormatError, match="outside its register file"):
        RelaxExecutable(table, [], parse_listing("@main:\n  ret   %7\n"))


def test_the_screen_opens_a_saved_executable(saved):
    from rvmdbg.tui import program as tui_program
    path, lib, ex = saved["fact"]
    prog = tui_program.load_program(str(path), "main", LoadOptions(extra={"lib": str(lib)}))
    assert prog.exe.kind == "relax" and prog.source_text == ex.as_text()
    with pytest.raises(tui_program.ProgramLoadError, match="--lib FILE.so"):
        tui_program.load_program(str(path), "main", LoadOptions())


def test_dap_launch_takes_engine_and_lib(saved):
    """The DAP launch settings `engine` / `lib` are the command line's --engine / --lib."""
    from rvmdbg.dap.client import DapClient
    path, lib, _ex = saved["fact"]
    dap = DapClient.start()
    try:
        ev = dap.launch(str(path), stop_on_entry=True, engine="tvm", lib=str(lib), args=["4"])
        assert ev["event"] == "stopped" and ev["body"]["reason"] == "entry", ev
        ev = dap.motion("continue")
        assert ev["event"] == "terminated", ev
        out = "".join(m["body"].get("output", "") for m in dap.events("output"))
        assert "24" in out, out
    finally:
        dap.close()
    dap = DapClient.start()
    try:
        dap.request("initialize", {"adapterID": "rvmdbg"})
        r = dap.request("launch", {"program": str(path), "engine": "tvm"}, ok=False)
        assert "--lib FILE.so" in r["message"], r
        r = dap.request("launch", {"program": str(path), "engine": "gpu"}, ok=False)
        assert "'engine' must be" in r["message"], r
    finally:
        dap.close()


def test_check_with_engine_tvm_is_a_usage_error(capsys):
    code = cli.main(["check", "--engine", "tvm", "model.onnx"])
    _out, err = capsys.readouterr()
    assert code == 2 and "with --engine tvm the model becomes a Relax executable" in err


def test_a_fifo_named_vmexec_is_refused_unread(saved, tmp_path, capsys):
    import os
    fifo = tmp_path / "p.vmexec"
    os.mkfifo(fifo)
    code, _out, err = rvmdbg(capsys, "run", "--lib", saved["fact"][1], fifo, "3")
    assert code == 2 and "FIFO" in err


def test_graph_with_engine_tvm_is_a_usage_error_and_import_has_no_engine(capsys):
    code = cli.main(["graph", "--engine", "tvm", "model.onnx"])
    _out, err = capsys.readouterr()
    assert code == 2 and "with --engine tvm the model becomes a Relax executable" in err
    code = cli.main(["import", "--engine", "tvm", "model.onnx"])   # it converts to Relay
    _out, err = capsys.readouterr()
    assert code == 2 and "unrecognized arguments: --engine" in err
