"""The cold-start benchmark still runs (sum_up.relay, one run per setting) and prints its
figures; no timing is asserted: benchmarks print, the machine's load decides."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_cold_start_quick_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cold_start.py"),
                           "--quick", "--runs", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    for label in ("sum_up.relay", "no bytecode cache", "bytecode cached", "first frame",
                  "first stop", "(CPU", "target < 500 ms", "load average"):
        assert label in proc.stdout, proc.stdout
    assert "Relay path imports tvm: no, rvmdbg.relax: no" in proc.stdout
