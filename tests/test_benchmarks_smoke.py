"""Smoke tests of the benchmark scripts: each still runs at a tiny size and prints its table.

No timing is asserted (benchmarks print figures; the machine's load decides them). What is
checked is that the scripts run, that the toy VM's three dispatchers compute the same correct
sum in the instruction count the benchmark divides by, and that the front-end generator is
deterministic and produces a well-typed program.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import minivm_seed as toy  # noqa: E402
from bench_frontend import generate_program  # noqa: E402


def _run_script(name: str) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / name), "--quick"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_bench_frontend_quick_runs():
    out = _run_script("bench_frontend.py")
    for label in ("parse (load_module)", "type check", "parse + check", "target:"):
        assert label in out


def test_bench_vm_quick_runs():
    out = _run_script("bench_vm.py")
    for label in ("interpreter run", "if/elif on names (seed)", "table dispatch",
                  "direct Python, same 0-d kernels", "plain tree walker", "figure", "target"):
        assert label in out
    if "VM figures skipped" not in out:
        assert "VM run()" in out and "VM step()" in out


def test_bench_models_quick_runs():
    out = _run_script("bench_models.py")
    for label in ("load+check+compile", "VM run", "kernels direct", "graph run", "VM peak",
                  "targets:", "mobilenet_v1", "resnet18", "transformer_encoder",
                  "lstm_sequence"):
        assert label in out
    # the LSTM needs no operator this build lacks: it is always measured
    lstm = next(line for line in out.splitlines() if line.startswith("lstm_sequence"))
    assert "not measured" not in lstm


def test_bench_kernels_quick_runs():
    out = _run_script("bench_kernels.py")
    for label in ("mobilenet-v1 layers", "resnet-18 convolutions", "sum over the list",
                  "max_pool2d", "on the VM: load+check+compile", "naive ms"):
        assert label in out


def test_bench_qnn_dyn_quick_runs():
    out = _run_script("bench_qnn_dyn.py")
    for label in ("qnn.conv2d layer", "qnn.dense", "qnn.requantize TONEAREST",
                  "static shapes", "dyn.reshape + dyn.zeros"):
        assert label in out


@pytest.mark.parametrize("name, n", [("fib.relay", 12), ("loop.relay", 300),
                                     ("sum_up.relay", 50)])
def test_tree_walking_baseline_agrees_with_the_interpreter(name, n):
    from treewalk_baseline import TreeWalker

    from rvmdbg.relay.interpreter import Interpreter, call_with_deep_stack
    from rvmdbg.relay.loader import load_file
    from rvmdbg.relay.typecheck import check_module
    mod = check_module(load_file(ROOT / "programs" / name))
    args = [np.array(n, dtype=np.int32)]
    got = call_with_deep_stack(lambda: TreeWalker(mod).run("main", args))
    assert got.item() == Interpreter(mod).run("main", args).item()


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_toy_dispatchers_agree(n):
    program, init = toy.counting_loop(n)
    expected = n * (n + 1) // 2
    assert toy.run_if_chain_names(program, init) == expected
    assert toy.run_if_chain_numbers(toy.numbered(program), init) == expected
    assert toy.run_table(program, init) == expected


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_toy_instruction_count(n):
    # Count executed instructions by wrapping each decoded handler: the per-instruction
    # figures divide by instructions_executed(n), so it must be exact.
    program, init = toy.counting_loop(n)
    stack, variables, executed = [], list(init), [0]
    handlers = toy.decode(program, stack, variables)

    def counted(h):
        def run():
            executed[0] += 1
            return h()
        return run
    code = [counted(h) for h in handlers]
    pc = 0
    with pytest.raises(toy._Halt) as done:
        while True:
            pc = code[pc]()
    assert done.value.value == n * (n + 1) // 2
    assert executed[0] == toy.instructions_executed(n)


def test_toy_rejects_unknown_opcode():
    with pytest.raises(ValueError):
        toy.run_if_chain_names([("NOP", None)], [0, 0])
    with pytest.raises(ValueError):
        toy.run_table([("NOP", None)], [0, 0])


def test_wrap_int32_matches_relay_loop_result():
    # programs/loop.relay with n = 100000 returns this int32-wrapped sum.
    assert toy.wrap_int32(100_000 * 100_001 // 2) == 705082704
    assert toy.wrap_int32(2 ** 31) == -2 ** 31


def test_frontend_generator_is_deterministic_and_well_typed():
    from rvmdbg.relay.interpreter import Interpreter
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module

    text = generate_program(400)
    assert text == generate_program(400)
    assert text.count("\n") >= 400
    mod = check_module(load_module(text, "<bench>"))
    for kind in ("match (", "let %", "if (", "nn.dense", "type Shape", "@map("):
        assert kind in text
    result = Interpreter(mod).run("main", [np.array(3, dtype=np.int32)])
    assert result.fields[0].dtype == np.int32


def test_bench_transformer_ops_quick_runs():
    out = _run_script("bench_transformer_ops.py")
    for label in ("erf (1, 8, 32)", "strided_slice", "topk k=5", "layout_transform",
                  "VM invoke", "reference interpreter"):
        assert label in out


def test_bench_dap_quick_runs():
    out = _run_script("bench_dap.py")
    for label in ("stepIn (instruction)", "reverseContinue to the last hit",
                  "stackTrace + scopes + variables", "target:"):
        assert label in out


def test_bench_metadata_quick_runs():
    out = _run_script("bench_metadata.py")
    for label in ("load_file (split, JSON, base64, parse)", "check_module", "load + check",
                  "target:", "peak memory"):
        assert label in out


def test_bench_metadata_model_is_a_real_printed_model():
    from bench_metadata import generate_model

    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    text = generate_model(2 * 16 * 16, width=16)
    assert text == generate_model(2 * 16 * 16, width=16)  # deterministic
    mod = check_module(load_module(text, "<model>"))
    assert str(mod.functions["main"].checked_type) == \
        "fn (Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32]"


def test_bench_debug_quick_runs():
    out = _run_script("bench_debug.py")
    for label in ("plain continue", "condition never true", "5 watchpoints",
                  "n over a big call", "finish", "rcontinue, 1 watchpoint", "target:"):
        assert label in out


def test_bench_history_quick_runs_the_model_case():
    """Issue 28 (3): the history benchmark measures `s` against `S` on models."""
    out = _run_script("bench_history.py")
    for label in ("mobilenet_v1", "gpt2_like", "S p95", "target S/s <= 2", "fib(16)"):
        assert label in out


def test_bench_onnx_quick_runs():
    pytest.importorskip("onnx")
    out = _run_script("bench_onnx.py")
    for label in ("import+check+compile", "VM run", "onnxruntime", "VM/ort", "kernels direct",
                  "VM/direct", "targets:", "squeezenet"):
        assert label in out
    row = next(line for line in out.splitlines() if line.startswith("squeezenet"))
    assert "not measured" not in row


def test_bench_relax_quick_runs():
    pytest.importorskip("tvm")
    out = _run_script("bench_relax.py")
    for label in ('TVM vm["main"]', "stepper run()", "stepper in a session", "us/instruction",
                  "instructions", "results: bit-identical"):
        assert label in out, out


def test_bench_tvm_kernels_quick_runs():
    pytest.importorskip("tvm")
    pytest.importorskip("onnx")
    out = _run_script("bench_tvm_kernels.py")
    for label in ("TVM-built", "VM NumPy", "VM +TVM", "onnxruntime", "copies", "max |diff|"):
        assert label in out, out
    row = next(line for line in out.splitlines() if line.startswith("shufflenet"))
    # the TVM-built kernels agree with the NumPy ones and the network with its shipped output
    assert "matches the shipped output" in row, row
