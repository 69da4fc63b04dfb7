"""The graph benchmark still runs at its quick sizes and prints its table (no timing judged)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_graph_quick_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_graph.py"), "--quick"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for label in ("graph us/run", "VM us/run", "VM/graph", "VM instr (packed)",
                  "VM ovh ns/instr"):
        assert label in out
    rows = [line for line in out.splitlines() if line.strip().startswith(("16 ", "64 "))]
    assert len(rows) == 2 and all("27 ( 4)" in r for r in rows)
