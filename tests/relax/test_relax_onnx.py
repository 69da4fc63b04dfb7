"""`--engine tvm` on ONNX networks: TVM's own ONNX frontend and build, the executable stepped
to the end on the Relax VM, against rvmdbg's own import run on its Relay VM (the default
engine), within float tolerance. The three networks of onnx's backend/test/data/light set
that TVM builds fastest here (about 3-5 s each with the "zero" pipeline, measured on a
loaded 2-core machine; each test module's whole work per network stays well under 20 s, so
they are in the default suite). The light networks' weights are constants (ConstantOfShape),
so every class of the final Softmax gets the same probability whatever the input: the
trailing Softmax is cut off (its input becomes the output), so the compared logits depend on
the input."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tvm")
onnx = pytest.importorskip("onnx")

from rvmdbg import cli  # noqa: E402
from rvmdbg.program import LoadOptions, load_program  # noqa: E402
from rvmdbg.relax.machine import to_host  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
NETWORKS = ["squeezenet", "bvlc_alexnet", "zfnet512"]
TVM = LoadOptions(extra={"engine": "tvm"})


def _logits_model(name: str, folder: Path) -> Path:
    src = LIGHT / f"light_{name}.onnx"
    if not src.exists():
        pytest.skip(f"{src} is not in this onnx package")
    model = onnx.load(str(src))
    last = model.graph.node[-1]
    assert last.op_type == "Softmax"
    del model.graph.node[-1]
    model.graph.output[0].name = last.input[0]
    out = folder / f"{name}_logits.onnx"
    onnx.save(model, str(out))
    return out


@pytest.fixture(scope="session")
def tvm_networks(tmp_path_factory):
    """{name: (path, Program)}: each network built once by TVM for the whole session."""
    folder = tmp_path_factory.mktemp("relax_onnx")
    out = {}
    for name in NETWORKS:
        path = _logits_model(name, folder)
        out[name] = (path, load_program(str(path), options=TVM))
    return out


def _input(program, seed=0):
    dtype, shape = program.executable.param_types["main"][0]
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name", NETWORKS)
def test_engine_tvm_matches_the_relay_engine(tvm_networks, name):
    from rvmdbg.debug import DebugSession
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    path, program = tvm_networks[name]
    exe = program.executable
    assert program.kind.machine == "relax" and exe.kind == "relax"
    x = _input(program)
    session = DebugSession(exe, [x])
    session.cont()
    assert session.vm.halted and session.vm.steps > 20
    ours = np.asarray(to_host(session.vm.result))
    relay = load_program(str(path))
    assert relay.kind.name == "onnx" and relay.module is not None   # the default engine
    theirs = np.asarray(VirtualMachine(compile_module(check_module(relay.module))).invoke("main", [x]))
    assert ours.shape == theirs.shape and np.std(ours) > 0
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * float(np.abs(theirs).max()))


def test_engine_tvm_steps_back_through_a_network(tvm_networks):
    from rvmdbg.debug import DebugSession
    _path, program = tvm_networks["squeezenet"]
    x = _input(program, 1)
    session = DebugSession(program.executable, [x], interval=8)
    session.step(40)
    regs = [None if v is None else np.asarray(to_host(v)).copy() if hasattr(v, "numpy") else v
            for v in session.vm.frames[-1].registers]
    session.step(30)
    session.rstep(30)
    assert session.vm.steps == 40
    for a, b in zip(regs, session.vm.frames[-1].registers):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, np.asarray(to_host(b)))


def test_engine_tvm_through_the_command_line(tvm_networks, tmp_path, capsys):
    path, program = tvm_networks["bvlc_alexnet"]
    x = _input(program, 2)
    np.save(tmp_path / "x.npy", x)
    code = cli.main(["run", str(path), "--engine", "tvm", "--json", f"@{tmp_path / 'x.npy'}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert '"dtype": "float32", "shape": [1, 1000]' in out
    code = cli.main(["run", str(LIGHT / "light_bvlc_alexnet.onnx"), "--engine", "relay", "--lib",
                     "x.so", f"@{tmp_path / 'x.npy'}"])
    out, err = capsys.readouterr()
    assert code == 2 and "--lib names the kernel library" in err and "Traceback" not in err


def test_engine_tvm_on_relay_source_is_a_usage_error(tmp_path, capsys):
    src = tmp_path / "p.relay"
    src.write_text("def @main(%x: int32) -> int32 { %x }\n")
    code = cli.main(["run", str(src), "--engine", "tvm", "1"])
    _out, err = capsys.readouterr()
    assert code == 2 and "--engine tvm applies to an ONNX model" in err


def test_without_tvm_engine_tvm_names_the_extra(tmp_path):
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    model = LIGHT / "light_bvlc_alexnet.onnx"
    fake = tmp_path / "p.vmexec"
    fake.write_bytes(b"\x1e\x15\x14B/\xde%\xd2" + b"\0" * 8)
    for argv in (["run", str(model), "--engine", "tvm", "1"],
                 ["run", "--engine", "tvm", "--lib", str(fake), str(fake), "1"]):
        code = ("import sys; sys.modules['tvm'] = None\n"
                "from rvmdbg import cli\n"
                f"raise SystemExit(cli.main({argv!r}))\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=root, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert "pip install 'rvmdbg[tvm]'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A two-node model made here (MatMul by a constant, then Relu): cheap to build."""
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.arange(12, dtype="float32").reshape(3, 4) - 5, "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
         helper.make_node("Relu", ["m"], ["y"], name="relu")], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("tiny") / "tiny.onnx"
    onnx.save(model, str(path))
    return path


def test_engine_tvm_opens_the_screen_and_batch_mode(tiny, tmp_path, capsys):
    from rvmdbg.tui import program as tui_program
    prog = tui_program.load_program(str(tiny), "main", TVM)
    assert prog.exe.kind == "relax" and "@I.ir_module" in prog.source_text
    script = tmp_path / "cmds"
    script.write_text("continue\n")
    code = cli.main(["debug", str(tiny), "--engine", "tvm", "--batch", str(script),
                     "[[1, 2, 3], [-1, 0, 1]]"])
    out, err = capsys.readouterr()
    assert code == 0, err
    want = np.maximum(np.array([[1, 2, 3], [-1, 0, 1]], "float32")
                      @ (np.arange(12, dtype="float32").reshape(3, 4) - 5), 0)
    assert "returned" in out and str(want[0, 1].item()).rstrip("0").rstrip(".") in out, out
    code = cli.main(["trace", str(tiny), "--engine", "tvm", "[[1, 2, 3], [-1, 0, 1]]"])
    out, err = capsys.readouterr()
    assert code == 0 and "call  " in out and "halt:" in out, err
