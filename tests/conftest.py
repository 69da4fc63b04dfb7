"""Suite-wide fixtures: every test gets its own config directory, so saved breakpoints from
a user's real sessions (or from other tests) never leak in, and tests never write to $HOME."""
import pytest


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
