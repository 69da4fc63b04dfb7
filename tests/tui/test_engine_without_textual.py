"""The engine never imports Textual: only the screen (rvmdbg.tui) may.

Checked in a fresh interpreter, as Harlequin does, since this test process has Textual loaded.
"""
import subprocess
import sys

ENGINE = ["rvmdbg.relay", "rvmdbg.vm", "rvmdbg.passes", "rvmdbg.debug", "rvmdbg.dap",
          "rvmdbg.minivm"]

SCRIPT = """
import importlib, pkgutil, sys
for name in {packages!r}:
    pkg = importlib.import_module(name)
    for info in pkgutil.walk_packages(pkg.__path__, name + "."):
        importlib.import_module(info.name)
# a program through the whole engine, as the command line runs it
from rvmdbg.relay.loader import load_file
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine
exe = compile_module(check_module(load_file({program!r})))
VirtualMachine(exe).invoke("main", [__import__("numpy").array(5, dtype="int32")])
loaded = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
print("TEXTUAL:" + ",".join(loaded))
"""


def test_engine_imports_never_load_textual(tmp_path):
    from pathlib import Path
    program = str(Path(__file__).resolve().parents[2] / "programs" / "sum_up.relay")
    code = SCRIPT.format(packages=ENGINE, program=program)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    line = [l for l in out.stdout.splitlines() if l.startswith("TEXTUAL:")][-1]
    assert line == "TEXTUAL:", f"the engine loaded Textual: {line}"


def test_the_screen_package_does_load_textual():
    """The check above can fail: importing the screen really does load Textual."""
    code = "import sys, rvmdbg.tui.app; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
