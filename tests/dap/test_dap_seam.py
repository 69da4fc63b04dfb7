"""The seam: the adapter is a client of the debugger protocol; `rvmdbg/debug` knows nothing
of DAP, and the adapter never loads Textual (checked in a fresh interpreter)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_debugger_protocol_knows_nothing_of_dap():
    for path in (ROOT / "rvmdbg" / "debug").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "rvmdbg.dap" not in text and "Debug Adapter" not in text, path


def test_the_adapter_never_loads_textual():
    code = ("import sys, rvmdbg.dap, rvmdbg.dap.server; "
            "print(any(m.split('.')[0] == 'textual' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
