"""`rvmdbg serve` in a real browser: Debian's chromium, headless, driven by playwright-core
(tests/browser/drive_page.js) opens the page, waits for the debugger's first frame, presses
`s` in the page and sees the stop line become `[step 1]`, reading the terminal the page shows.

The npm package comes from this folder's package.json and package-lock.json (`npm ci` when
node_modules is absent); without node or npm, or when that install fails, the test fails
saying so, as the editor tests do. Chromium comes from the system (.ci/run installs Debian's
package where it is missing and apt is available; RVMDBG_CHROMIUM names another build): where
there is none, the test is skipped with the reason.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_serve import SUM_UP, start_server, stop_server  # noqa: E402


def chromium() -> str | None:
    """The browser to drive: $RVMDBG_CHROMIUM, else Debian's chromium on the PATH."""
    given = os.environ.get("RVMDBG_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on the PATH: the browser test of rvmdbg serve needs "
                    f"Node.js 20 and npm (playwright-core drives chromium)")
    return path


@pytest.fixture(scope="module")
def browser() -> tuple[str, Path]:
    """(chromium's path, the drive_page.js script), its npm package installed when absent."""
    path = chromium()
    if path is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium; .ci/run "
                    "installs it where apt is available; or set RVMDBG_CHROMIUM): the page of "
                    "`rvmdbg serve` was not tested in a browser")
    npm = _tool("npm")
    _tool("node")
    if not (HERE / "node_modules" / "playwright-core").exists():
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.fail("installing playwright-core (npm ci in tests/browser) failed: is the npm "
                        f"registry reachable?\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return path, HERE / "drive_page.js"


def drive(browser, url: str, *options: str) -> dict:
    """Run drive_page.js on `url`; its JSON ({"first": lines, "last": lines})."""
    path, script = browser
    try:
        proc = subprocess.run([_tool("node"), str(script), url, "--chromium", path, *options],
                              capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("the browser did not finish in 180 s")
    assert proc.returncode == 0, f"in the browser: {proc.stderr[-6000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stop_line(lines: list[str]) -> str:
    return next(line.strip() for line in lines if line.strip().startswith("[step "))


def test_a_key_pressed_in_the_page_steps_the_vm(browser):
    proc, url = start_server(SUM_UP)
    try:
        seen = drive(browser, url, "--keys", "s", "--expect", "[step 1]")
    finally:
        code, err = stop_server(proc)
    first, last = stop_line(seen["first"]), stop_line(seen["last"])
    assert first.startswith("[step 0] @main pc=0: invoke"), first
    assert last.startswith("[step 1] @sum_up pc=0: load_const"), last
    # the first frame is the whole screen: the source, the listing, the status line
    assert any("Source sum_up.relay" in line for line in seen["first"])
    assert any("Bytecode @main" in line for line in seen["first"])
    assert code == 0 and "Traceback" not in err, err
