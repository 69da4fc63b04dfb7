"""The `threads` launch argument (issue 30): the command line's --threads N for a DAP session,
held while it lives and given back at disconnect; a bad count is a clear refusal."""
from __future__ import annotations

from pathlib import Path

import pytest

from rvmdbg.dap.adapter import DapAdapter, RequestError, launch_config

FIB = str(Path(__file__).resolve().parents[2] / "programs" / "fib.relay")


def test_threads_is_read_and_checked():
    assert launch_config({"program": FIB}).threads is None
    assert launch_config({"program": FIB, "threads": 1}).threads == 1
    for bad in (0, -2, 5000, "2", True):
        with pytest.raises(RequestError, match="threads"):
            launch_config({"program": FIB, "threads": bad})


def test_the_session_holds_its_thread_count_until_disconnect():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = [p["num_threads"] for p in threadpoolctl.threadpool_info()]
    adapter = DapAdapter(lambda *a, **k: None)
    adapter.handle("initialize", {"adapterID": "rvmdbg"})
    adapter.handle("launch", {"program": FIB, "threads": 1})
    assert adapter.threads == 1
    assert all(p["num_threads"] == 1 for p in threadpoolctl.threadpool_info())
    adapter.handle("disconnect", {})
    assert [p["num_threads"] for p in threadpoolctl.threadpool_info()] == before
