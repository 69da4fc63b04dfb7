"""Running fuzz cases in a child process under a memory cap (tests/fuzz/child.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "child.py"
# what a case may take at most: far below the machine's memory, far above any sane case
MEMORY_CAP = 3 << 30


_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


def brief(examples: int = 3):
    """The suite's campaign: a few batches, the same every run (derandomized)."""
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=_QUIET)


def long(examples: int):
    """The `-m fuzz` campaign: many batches, new ones every run."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=_QUIET)


def run_cases(cases: list[dict], config_home, timeout: float = 600.0) -> list[dict]:
    """Each case's outcome, run in one child process with its address space capped
    (`config_home`: the child's XDG_CONFIG_HOME, so no user setup is read or written)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), RVMDBG_FUZZ_MEMORY=str(MEMORY_CAP),
               XDG_CONFIG_HOME=str(config_home))
    proc = subprocess.run([sys.executable, str(CHILD)], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    assert proc.returncode == 0, f"the child died ({proc.returncode}): {proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def assert_clean(cases: list[dict], outcomes: list[dict], codes=(0, 1, 2)) -> dict:
    """No traceback, no exception out of main, an exit code of the contract; the count of
    each exit code."""
    seen: dict = {}
    for case, out in zip(cases, outcomes):
        where = json.dumps(case)[:1500]
        assert out["exception"] is None, f"{out['exception']}\n{out['stderr']}\ncase: {where}"
        assert not out["traceback"], f"{out['stderr']}\ncase: {where}"
        assert out["code"] in codes, f"exit {out['code']}: {out['stderr']}\ncase: {where}"
        seen[out["code"]] = seen.get(out["code"], 0) + 1
    return seen


def campaign(batch: list[dict], tmp_path, codes=(0, 1, 2), check=None, **figures) -> dict:
    """One batch in the child, each outcome held by `assert_clean` (and `check(case, outcome)`
    when given); the figures are printed (`pytest -m fuzz -s` shows them): inputs, clean, the
    exit codes, and each of `figures` (a name and a function of the outcomes)."""
    outcomes = run_cases(batch, tmp_path / "config")
    seen = assert_clean(batch, outcomes, codes)
    if check is not None:
        for case, out in zip(batch, outcomes):
            check(case, out)
    shown = {"inputs": len(batch), "clean": len(batch), "codes": seen}
    shown.update({name: f(outcomes) for name, f in figures.items()})
    print("fuzz figures:", json.dumps(shown))
    return seen
