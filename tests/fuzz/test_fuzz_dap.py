"""A DAP fuzzer: sessions of requests, damaged at every level a client can damage them —
framing (lengths wrong, duplicated or huge, headers cut or not ASCII), JSON (invalid, numbers of
thousands of digits, nesting thousands deep, lone surrogates), request order (motions before
launch, requests after disconnect, a second launch) and arguments (wrong types, NUL bytes,
paths of devices and FIFOs, huge register numbers). Each session runs in the fuzz child under
its address-space cap, served in-process as `rvmdbg dap` serves stdin; it must end (no hang),
with no traceback and no "internal error" response: a bad request gets an error response and
the session goes on.

Hypothesis draws the sessions; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from harness import brief, campaign, long

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "sum_up.relay"
TEXT = (ROOT / "programs" / PROGRAM).read_text()
COMMANDS = ["initialize", "launch", "configurationDone", "setBreakpoints",
            "setFunctionBreakpoints", "setInstructionBreakpoints", "setExceptionBreakpoints",
            "setDataBreakpoints", "dataBreakpointInfo", "threads", "stackTrace", "scopes",
            "variables", "continue", "next", "stepIn", "stepOut", "stepBack",
            "reverseContinue", "pause", "gotoTargets", "goto", "source", "evaluate",
            "disassemble", "exceptionInfo", "restart", "terminate", "nope", "\ud800", ""]
ODD = [None, True, -1, 0, 2 ** 63, 1e308, "", "x" * 3000, "\0", "\ud800", "/dev/zero",
       "/proc/self/mem", "fifo", "../../etc/passwd", [], {}, [[[[]]]], {"path": "/dev/zero"},
       "$" + "9" * 5000, "print $" + "9" * 5000, "@sum_up:99999999999999999999",
       "info history", "step 100", "\x1b[2J"]
KEYS = ["program", "args", "cwd", "stopOnEntry", "maxSteps", "maxDepth", "maxBytes",
        "inputs", "entry", "threadId", "frameId", "variablesReference", "expression",
        "context", "source", "breakpoints", "lines", "line", "memoryReference",
        "instructionCount", "offset", "granularity", "targetId", "name", "dataId",
        "filter", "start", "count", "sourceReference"]


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(seq: int, command: str, arguments=None) -> bytes:
    msg = {"seq": seq, "type": "request", "command": command}
    if arguments is not None:
        msg["arguments"] = arguments
    return frame(json.dumps(msg).encode())


LAUNCH = {"program": PROGRAM, "args": ["5"], "stopOnEntry": True, "maxSteps": 20000}


@st.composite
def arguments(draw):
    args = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        args[key] = draw(st.sampled_from(ODD + [1, 2, 3, "repl", "watch", PROGRAM]))
    return args


@st.composite
def damaged(draw, seq: int) -> bytes:
    """One message broken at one level."""
    kind = draw(st.sampled_from(["framing", "json", "digits", "deep", "surrogate", "args",
                                 "raw"]))
    good = json.dumps({"seq": seq, "type": "request", "command": "threads"}).encode()
    if kind == "framing":
        how = draw(st.sampled_from(["short", "long", "dup", "huge", "neg", "ascii", "cut",
                                    "noheader", "underscore"]))
        return {"short": b"Content-Length: %d\r\n\r\n" % (len(good) - 3) + good,
                "long": b"Content-Length: %d\r\n\r\n" % (len(good) + 2) + good,
                "dup": b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(good) + good,
                "huge": b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + good,
                "neg": b"Content-Length: -1\r\n\r\n" + good,
                "ascii": b"Content-L\xe9ngth: 3\r\n\r\n" + good,
                "cut": b"Content-Length: 10\r\n",
                "noheader": good + b"\r\n\r\n",
                "underscore": b"Content-Length: 1_0\r\n\r\n" + good}[how] + b"\r\n\r\n"
    if kind == "json":
        text = good.decode()
        cut = draw(st.integers(0, len(text) - 1))
        return frame(text[:cut].encode() + draw(st.sampled_from([b"}", b",", b"\xff", b"]"])))
    if kind == "digits":
        return frame(b'{"seq": %d, "type": "request", "command": "threads", "arguments": '
                     b'{"x": %s}}' % (seq, b"7" * draw(st.sampled_from([4301, 5000, 20000]))))
    if kind == "deep":
        depth = draw(st.sampled_from([300, 5000, 100_000]))
        return frame(b'{"seq": %d, "type": "request", "command": "launch", "arguments": '
                     b'{"program": "x", "args": %s}}' % (seq, b"[" * depth + b"]" * depth))
    if kind == "surrogate":
        return frame(b'{"seq": %d, "type": "request", "command": "\\ud800", "arguments": '
                     b'{"expression": "\\udfff"}}' % seq)
    if kind == "args":
        return request(seq, draw(st.sampled_from(COMMANDS)), draw(arguments()))
    return draw(st.binary(max_size=60))


@st.composite
def sessions(draw, n: int):
    out = []
    for _ in range(n):
        parts, seq = [], 1
        launched = draw(st.booleans())
        if launched:
            parts += [request(1, "initialize", {}), request(2, "launch", dict(LAUNCH)),
                      request(3, "configurationDone")]
            seq = 4
        for _ in range(draw(st.integers(1, 8))):
            if draw(st.booleans()):
                parts.append(draw(damaged(seq)))
            else:
                command = draw(st.sampled_from(COMMANDS))
                parts.append(request(seq, command, draw(arguments())
                                     if command != "launch" else dict(LAUNCH)))
            seq += 1
        if draw(st.booleans()):
            parts.append(request(seq, "disconnect"))
            parts.append(request(seq + 1, "threads"))  # after the disconnect: unread
        out.append({"dap": b"".join(parts).decode("latin-1"), "files": {PROGRAM: TEXT}})
    return out


def _no_internal_error(case, out):
    # an "internal error" response is an unexpected exception inside the adapter
    # (a session may get no response at all: its stream can end inside the first message)
    assert out["error_lines"] == 0, (out["stderr"], case["dap"][:1500])


def _campaign(batch, tmp_path) -> dict:
    return campaign(batch, tmp_path, codes=(0,), check=_no_internal_error,
                    **{"failed responses": lambda outs: sum(o["failed"] for o in outs)})


@brief()
@given(batch=sessions(12))
def test_damaged_dap_sessions_get_error_responses(batch, tmp_path):
    _campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(60)
@given(batch=sessions(30))
def test_damaged_dap_sessions_long(batch, tmp_path):
    _campaign(batch, tmp_path)
