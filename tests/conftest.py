"""Suite-wide fixtures: every test gets its own config directory, so saved breakpoints from
a user's real sessions (or from other tests) never leak in, and tests never write to $HOME."""
import pytest


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
