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
    for label in ("first frame", "first stop shown", "s (into @inc and out)", "S (reverse step)",
                  "n (next, staying in the", "target < 50 ms"):
        assert label in proc.stdout, proc.stdout


def test_bench_tui_model_steps_quick_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_tui.py"), "--quick",
                           "--model-layers", "2"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    for label in ("transformer, 2 layers: 32 kernel calls", "s on the 32-kernel model",
                  "S on the", "n on the", "target < 50 ms"):
        assert label in proc.stdout, proc.stdout
