"""Fixtures for the DAP tests: an adapter process per test, closed afterwards."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dap_client import DapClient  # noqa: E402


@pytest.fixture
def dap():
    client = DapClient.start()
    try:
        yield client
    finally:
        client.close()
