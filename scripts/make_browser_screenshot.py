"""The screenshot of `rvmdbg serve` in a browser for the README, made from the real thing.

Run from anywhere: `python3 scripts/make_browser_screenshot.py` serves programs/fib.relay on a
free port, opens it in Debian's chromium (headless, driven by playwright-core through
tests/browser/drive_page.js: run `npm ci` in tests/browser first), steps into the recursion
and writes screenshots/browser.png.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))

PROGRAM = os.path.join("programs", "fib.relay")
KEYS = "s,s,s,s,s,s,s,n,n,n,n"   # into @fib, on to the operands of its first subtraction


def main() -> int:
    from test_serve import start_server, stop_server
    from test_serve_browser import chromium
    browser = chromium()
    if browser is None:
        print("no chromium: apt-get install chromium (or set RVMDBG_CHROMIUM)", file=sys.stderr)
        return 2
    out = os.path.join(ROOT, "screenshots", "browser.png")
    os.chdir(ROOT)  # the page names the program as given
    proc, url = start_server(PROGRAM)
    try:
        run = subprocess.run(["node", os.path.join(ROOT, "tests", "browser", "drive_page.js"), url,
                              "--chromium", browser, "--keys", KEYS, "--size", "1280x760",
                              "--screenshot", out], capture_output=True, text=True, timeout=300)
    finally:
        stop_server(proc)
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        return 1
    last = json.loads(run.stdout.strip().splitlines()[-1])["last"]
    print(next(line.strip() for line in last if line.strip().startswith("[step ")))
    print(f"wrote {os.path.relpath(out, ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
