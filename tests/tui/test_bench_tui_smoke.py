"""The screen benchmark still runs (at a tiny size) and prints its figures; no timing is
asserted: benchmarks print, the machine's load decides."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_tui_quick_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_tui.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    for label in ("first frame", "first stop shown", "s steps (into @inc and out)", "s 160x48",
                  "S 160x48", "n 160x48", "s 80x24", "s 160x48 back to back", "rows",
                  "target: every key < 10 ms median"):
        assert label in proc.stdout, proc.stdout


def test_bench_tui_model_steps_quick_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_tui.py"), "--quick",
                           "--model-layers", "2"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    for label in ("transformer, 2 layers: 30 kernel calls", "s 160x48 on the 30-kernel model",
                  "S 160x48 on the", "n 160x48 on the", "target: every key < 10 ms median"):
        assert label in proc.stdout, proc.stdout


def test_bench_tui_onnx_quick_runs(tmp_path):
    import pytest
    pytest.importorskip("onnx")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_tui.py"), "--quick",
                           "--onnx", "--baseline", str(ROOT)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    for label in ("light_resnet50.onnx: ", "kernel calls; import+check+compile", "first frame",
                  "s 160x48 on light_resnet50.onnx", "n 160x48 on light_resnet50.onnx",
                  f"before ({ROOT})"):
        assert label in proc.stdout, proc.stdout
