"""benchmarks/bench_views.py still runs at a tiny size (no timing is asserted)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_views_quick_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_views.py"),
                           "--quick"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for label in ("pass stages", "stage ManifestLifetimes", "decision trees of every match",
                  "compare_executors", "results equal: True"):
        assert label in proc.stdout
