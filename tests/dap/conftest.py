"""Fixtures for the DAP tests: an adapter process per test, closed afterwards, and then the
protocol's rule checked over the whole conversation: every request got exactly one
response."""
from __future__ import annotations

import sys
from collections import Counter
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
    answered = Counter(m["request_seq"] for m in client.messages if m["type"] == "response")
    assert all(n == 1 for n in answered.values()), answered
    assert set(range(1, client.seq + 1)) <= set(answered), \
        f"requests without a response: {sorted(set(range(1, client.seq + 1)) - set(answered))}"
