"""Saved breakpoints: concurrent sessions never lose one (read, merge and write under a lock),
and a damaged or hostile state file is a note and a fresh start, never a traceback or a hang."""
import json
import os
import threading

import pytest
from dbg_helpers import ROOT, program

from rvmdbg.debug import DebugSession
from rvmdbg.debug.config import breakpoint_file

PROG = str(ROOT / "programs" / "quicksort.relay")


def session(tmp_path):
    exe, args = program("quicksort.relay")
    return DebugSession(exe, args, config_dir=tmp_path, program_path=PROG)


def _specs(n):
    exe, _ = program("quicksort.relay")
    out = [f"@{fn.name}:{pc}" for fn in exe.functions for pc in range(len(fn.instructions))]
    assert len(out) >= n
    return out[:n]


def test_twenty_concurrent_pairs_lose_no_breakpoint(tmp_path):
    specs = _specs(40)
    sessions = [session(tmp_path) for _ in range(40)]
    start = threading.Barrier(40)
    errors = []

    def add(s, spec):
        try:
            start.wait(30)
            s.breakpoints.add(spec)
        except Exception as e:   # collected: an exception in a thread would pass silently
            errors.append(e)
    threads = [threading.Thread(target=add, args=(s, spec)) for s, spec in zip(sessions, specs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    saved = json.loads(breakpoint_file(PROG, tmp_path).read_text())["breakpoints"]
    assert sorted(r["spec"] for r in saved) == sorted(specs)
    # and the next session restores all 40
    assert len(session(tmp_path).breakpoints) == 40


def test_a_deletion_is_kept_and_another_sessions_breakpoint_is_not_lost(tmp_path):
    a = session(tmp_path)
    bp = a.breakpoints.add("@filter")
    b = session(tmp_path)            # restores @filter
    b.breakpoints.add("@qsort")
    a.delete(bp.id)
    specs = {r["spec"] for r in json.loads(breakpoint_file(PROG, tmp_path).read_text())["breakpoints"]}
    assert specs == {"@qsort"}


@pytest.mark.parametrize("content", [
    b"\xef\xbb\xbf" + json.dumps({"format": 1, "breakpoints": [{"kind": "function", "spec": "@filter",
                                                                "function": "filter", "pc": 0}]}).encode(),
    b"[" * 100000 + b"]" * 100000,           # nested too deeply for the JSON reader
    b'{"breakpoints": "not a list"}',
    b'{"breakpoints": [1, "x", null, {"kind": 5, "spec": []}]}',
    # an unhashable kind raised TypeError (found by tests/fuzz/test_fuzz_state_files.py)
    b'{"breakpoints": [{"kind": [], "spec": "@filter"}, {"kind": "function", "spec": {}}]}',
    b"\xff\xfe garbage",
    b"",
])
def test_damaged_state_files_are_a_fresh_start(tmp_path, content):
    path = breakpoint_file(PROG, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    s = session(tmp_path)                    # never raises
    assert isinstance(s.notes, list)
    s.breakpoints.add("@qsort")          # and saving over it works
    assert "@qsort" in path.read_text()


def test_entries_of_the_wrong_types_are_skipped_and_the_rest_kept(tmp_path):
    path = breakpoint_file(PROG, tmp_path)
    path.parent.mkdir(parents=True)
    good = {"kind": "function", "spec": "@filter", "function": "filter", "pc": 0}
    path.write_text(json.dumps({"format": 1, "breakpoints": [
        {"kind": [], "spec": "@qsort"}, {"kind": "function", "spec": ["@x"]}, good]}))
    s = session(tmp_path)
    assert [b.spec for b in s.breakpoints] == ["@filter"]
    assert any("skipped 2 unreadable entries" in n for n in s.notes)


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_hostile_state_files_are_a_note_not_a_hang(tmp_path, kind):
    path = breakpoint_file(PROG, tmp_path)
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    result = []
    t = threading.Thread(target=lambda: result.append(session(tmp_path)), daemon=True)
    t.start()
    t.join(30)
    assert result, "opening a session hung on the state file"
    assert any("ignored the saved breakpoints" in n for n in result[0].notes)
