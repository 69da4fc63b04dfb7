"""The views' engine side never imports Textual (checked in a fresh interpreter)."""
import subprocess
import sys

SCRIPT = """
import importlib, pkgutil, sys
import rvmdbg.views as pkg
for info in pkgutil.walk_packages(pkg.__path__, "rvmdbg.views."):
    importlib.import_module(info.name)
print("TEXTUAL:" + ",".join(sorted(m for m in sys.modules if m.split(".")[0] == "textual")))
"""


def test_views_engine_never_loads_textual():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "TEXTUAL:"
