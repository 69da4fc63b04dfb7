"""Suite-wide fixtures: every test gets its own config directory, so saved breakpoints from
a user's real sessions (or from other tests) never leak in, and tests never write to $HOME."""
import hashlib
import os
import sys
import tempfile
from pathlib import Path

import pytest

# Bytecode: where the environment forbids writing it (PYTHONDONTWRITEBYTECODE, as on CI's
# machines), every one of the suite's ~250 `python -m rvmdbg` subprocesses and each xdist
# worker compiled rvmdbg from source again (0.85 s a start instead of 0.27 s, measured: about
# 150 s of CPU a run). The suite keeps a bytecode cache of its own outside the checkout (the
# checkout stays clean), shared by the workers and every subprocess they start.
if sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
    _ROOT = Path(__file__).resolve().parents[1]
    _PREFIX = os.path.join(tempfile.gettempdir(), "rvmdbg-test-pycache-"
                           + hashlib.sha256(str(_ROOT).encode()).hexdigest()[:12])
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = _PREFIX
    sys.dont_write_bytecode = False
    sys.pycache_prefix = _PREFIX


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores. A third of the suite's time is spent
    waiting (subprocesses starting, a Textual app's refreshes), so two workers on two cores
    left a core idle that often (user time 9m06s in a 7m17s run)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


# The suite reads English: a developer's zh_CN locale must not change what tests (and the
# subprocesses they start) print. Chinese is tested by switching to it explicitly.
import os as _os  # noqa: E402

from rvmdbg import i18n as _i18n  # noqa: E402

if _i18n.language_from_env() != "en":
    _os.environ["LANGUAGE"] = "en"


@pytest.fixture
def chinese():
    """The interface in Simplified Chinese for one test; yields the set of msgids looked up
    without a translation (a test asserts it stays empty)."""
    _i18n.set_language("zh_CN")
    missing = _i18n.record_missing()
    try:
        yield missing
    finally:
        _i18n.stop_recording()
        _i18n.set_language("en")


def pytest_collection_finish(session):
    """What collection leaves (test modules, parametrized items, the ONNX cases) lives all
    session: freeze it out of the collector, so each full collection the tests trigger does not
    scan it again (about a quarter of the collector's time on tests/relay)."""
    import gc
    gc.collect()
    gc.freeze()
