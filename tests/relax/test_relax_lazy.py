"""apache-tvm is imported only when a Relax program is opened: the command line and a Relay
program never import it (runs without tvm installed too)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_relay_path_never_imports_tvm():
    code = ("import sys\n"
            "from rvmdbg import cli\n"
            "from rvmdbg.program import kind_for, load_program\n"
            "load_program('programs/fib.relay')\n"
            "assert kind_for('x.relax.py').name == 'relax'\n"
            "print('tvm' in sys.modules, 'rvmdbg.relax' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]
