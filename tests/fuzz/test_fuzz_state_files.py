"""A state-file corruption suite: the saved breakpoints of a program and the default keys file,
damaged at random (bytes flipped or cut, fields given wrong types and extreme values, nesting
thousands deep, a byte-order mark, not UTF-8, a symlink to a device), are read by a session
(`debug --saved-breakpoints --batch`) and by the screen's start-up checks. The user is never
locked out: a note and a fresh start with the rest kept, exit 0, no traceback; the commands
of the script still work.

Hypothesis draws the damage; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from harness import assert_clean, brief, long, run_cases

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "sum_up.relay"
TEXT = (ROOT / "programs" / PROGRAM).read_text()
GOOD_BREAKPOINTS = {"format": 1, "program": "PATH", "breakpoints": [
    {"kind": "function", "spec": "@sum_up", "enabled": True, "condition": None,
     "function": "sum_up", "pc": 0, "text": "load_const $1 Const[0] 0"},
    {"kind": "instruction", "spec": "@sum_up:15", "enabled": True, "condition": "$0 == 1",
     "function": "sum_up", "pc": 15, "text": "invoke $12 VMFunc[0]($11)"}]}
GOOD_KEYS = "next = y\nstep = s, f11\n# a comment\nbreak = B\n"
ODD_VALUES = [None, True, 0, -1, 2 ** 63, 1e308, "", "x" * 10000, [], {}, [[[]]],
              {"kind": "function"}, "\x1b[2J", "@sum_up:99999999999999999999", "$0 == (" * 50]
DEVICES = ["/dev/zero", "/dev/null", "/dev/urandom", "/proc/self/mem", "/"]


def _latin1(data: bytes) -> str:
    return data.decode("latin-1")


@st.composite
def damaged_breakpoints(draw):
    kind = draw(st.sampled_from(["field", "bytes", "cut", "deep", "bom", "symlink", "big"]))
    doc = json.loads(json.dumps(GOOD_BREAKPOINTS))
    if kind == "field":
        target = draw(st.sampled_from(["top", "list", "entry"]))
        value = draw(st.sampled_from(ODD_VALUES))
        if target == "top":
            doc[draw(st.sampled_from(["format", "program", "breakpoints", "extra"]))] = value
        elif target == "list":
            doc["breakpoints"].append(value)
        else:
            entry = doc["breakpoints"][draw(st.integers(0, 1))]
            entry[draw(st.sampled_from(sorted(entry)))] = value
        return _latin1(json.dumps(doc).encode())
    data = json.dumps(doc).encode()
    if kind == "bytes":
        raw = bytearray(data)
        for _ in range(draw(st.integers(1, 6))):
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        return _latin1(bytes(raw))
    if kind == "cut":
        return _latin1(data[:draw(st.integers(0, len(data) - 1))])
    if kind == "deep":
        depth = draw(st.sampled_from([1000, 100_000]))
        return "[" * depth + "]" * depth
    if kind == "bom":
        return _latin1(b"\xef\xbb\xbf" + data)
    if kind == "symlink":
        return {"symlink": draw(st.sampled_from(DEVICES))}
    # big: thousands of entries, most of them for instructions that do not exist
    doc["breakpoints"] = doc["breakpoints"] * 2 + [
        dict(GOOD_BREAKPOINTS["breakpoints"][1], spec=f"@sum_up:{pc}", pc=pc)
        for pc in range(draw(st.sampled_from([100, 5000])))]
    return _latin1(json.dumps(doc).encode())


@st.composite
def damaged_keys(draw):
    kind = draw(st.sampled_from(["line", "bytes", "bom", "symlink", "binary"]))
    if kind == "line":
        extra = draw(st.sampled_from(["stpe = q", "step =", "= s", "step = s\x00", "next = n, n",
                                      "continue = s", "x" * 5000, "step = ctrl+", "[[[["]))
        return GOOD_KEYS + extra + "\n"
    if kind == "bytes":
        raw = bytearray(GOOD_KEYS.encode())
        raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        return _latin1(bytes(raw))
    if kind == "bom":
        return _latin1(b"\xef\xbb\xbf" + GOOD_KEYS.encode())
    if kind == "symlink":
        return {"symlink": draw(st.sampled_from(DEVICES))}
    return _latin1(bytes(range(256)))


@st.composite
def cases(draw, n: int):
    out = []
    for _ in range(n):
        if draw(st.booleans()):
            bp = draw(damaged_breakpoints())
            if isinstance(bp, str):
                bp = bp.replace("PATH", "programs/sum_up.relay")
            out.append({"argv": ["debug", "--saved-breakpoints", PROGRAM, "--batch", "-"],
                        "files": {PROGRAM: TEXT},
                        "stdin": "info breakpoints\nbreak @sum_up:3\ncontinue\n",
                        "state": {"program": PROGRAM, "breakpoints": bp}})
        else:
            out.append({"argv": ["screen", PROGRAM], "files": {PROGRAM: TEXT},
                        "state": {"program": PROGRAM, "keys": draw(damaged_keys())}})
    return out


def _campaign(batch, tmp_path):
    outcomes = run_cases(batch, tmp_path / "config")
    assert_clean(batch, outcomes)
    for case, out in zip(batch, outcomes):
        if case["argv"][0] == "debug":
            # a fresh start: the script's own commands all succeed
            assert out["code"] == 0 and out["error_lines"] == 0, (case, out)
        else:
            # the keys are checked, then the screen is refused for want of a terminal
            assert out["code"] == 2 and "terminal" in out["stderr"], (case, out)


@brief()
@given(batch=cases(16))
def test_damaged_state_files_give_a_note_and_a_fresh_start(batch, tmp_path):
    _campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(50)
@given(batch=cases(40))
def test_damaged_state_files_long(batch, tmp_path):
    _campaign(batch, tmp_path)
