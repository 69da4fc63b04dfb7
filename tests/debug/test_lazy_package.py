"""rvmdbg.debug loads its modules on first use: reading the config directory (the keys file,
on the screen's cold start) loads no session, and every name the package exports still
resolves."""
import subprocess
import sys

SCRIPT = """
import sys
import rvmdbg.debug.config
print("LOADED:" + ",".join(sorted(m for m in sys.modules if m.startswith("rvmdbg.debug."))))
import rvmdbg.debug as debug
for name in debug.__all__:
    assert getattr(debug, name).__name__ == name, name
from rvmdbg.debug import *  # noqa: F401,F403
try:
    debug.NoSuchName
except AttributeError as e:
    print("MISSING:" + str(e))
"""


def test_the_package_loads_its_modules_on_first_use():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines())
    assert lines["LOADED"] == "rvmdbg.debug.config"
    assert "NoSuchName" in lines["MISSING"]
