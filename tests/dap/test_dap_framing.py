"""The wire format under abuse: truncated headers, wrong lengths, invalid JSON, huge
Content-Length, random bytes. The adapter must answer what it can with an error response and
go on, or end cleanly at the end of the stream; it never dies with a traceback."""
from __future__ import annotations

import io
import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from dap_client import ROOT, adapter_env
from rvmdbg.dap.framing import BadMessage, MessageReader
from rvmdbg.dap.server import DapServer


def frame(obj) -> bytes:
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(seq, command, arguments=None) -> bytes:
    msg = {"seq": seq, "type": "request", "command": command}
    if arguments is not None:
        msg["arguments"] = arguments
    return frame(msg)


def read_all(data: bytes) -> list:
    """What MessageReader makes of a stream: requests, or ('bad', text)."""
    reader = MessageReader(io.BytesIO(data))
    out = []
    while True:
        try:
            msg = reader.read()
        except BadMessage as bad:
            out.append(("bad", bad.text))
            continue
        if msg is None:
            return out
        out.append(msg)


def serve(data: bytes) -> list[dict]:
    """Run the server in this process on `data`; the messages it wrote."""
    out = io.BytesIO()
    DapServer(io.BytesIO(data), out).serve()
    return parse_output(out.getvalue())


def parse_output(raw: bytes) -> list[dict]:
    msgs, reader = [], io.BytesIO(raw)
    while True:
        head = reader.readline()
        if not head:
            return msgs
        assert head.startswith(b"Content-Length: "), head
        n = int(head.split(b":")[1])
        assert reader.readline() == b"\r\n"
        msgs.append(json.loads(reader.read(n)))


def test_reader_reads_requests_and_reports_bad_messages():
    good = request(1, "threads")
    assert read_all(good + good) == [json.loads(good.split(b"\r\n\r\n")[1])] * 2
    assert read_all(b"Content-Length: 5\r\n\r\n{nope" + good)[0][0] == "bad"
    assert read_all(b"Content-Length: 5\r\n\r\n{nope" + good)[1]["command"] == "threads"
    assert "without a Content-Length" in read_all(b"Content-Type: x\r\n\r\n")[0][1]
    assert "not a byte count" in read_all(b"Content-Length: -4\r\n\r\n")[0][1]
    assert "not a byte count" in read_all(b"Content-Length: ten\r\n\r\n")[0][1]
    assert "JSON object" in read_all(frame(b"[1, 2]"))[0][1]
    assert "type" in read_all(frame({"seq": 1, "type": "event", "event": "x"}))[0][1]
    assert "'command'" in read_all(frame({"seq": 1, "type": "request"}))[0][1]
    assert "arguments" in read_all(frame({"seq": 1, "type": "request", "command": "x",
                                          "arguments": [1]}))[0][1]
    assert "UTF-8" in read_all(frame(b"\xff\xfe"))[0][1]


def test_reader_ends_cleanly_on_truncated_input():
    assert read_all(b"Content-Len") == []                       # inside a header
    assert read_all(b"Content-Length: 10\r\n") == []            # before the blank line
    assert read_all(b"Content-Length: 10\r\n\r\n{\"se") == []   # inside the body
    assert read_all(b"Content-Length: 99999999999\r\n\r\n{}") == []  # huge, then the end


def test_reader_skips_a_body_larger_than_it_reads(monkeypatch):
    import rvmdbg.dap.framing as framing
    monkeypatch.setattr(framing, "MAX_BODY", 100)
    big = frame(b" " * 500)
    out = read_all(big + request(2, "threads"))
    assert out[0][0] == "bad" and "larger" in out[0][1] and out[1]["seq"] == 2


def test_wrong_length_messages_get_errors_and_later_requests_answers():
    body = json.dumps({"seq": 1, "type": "request", "command": "threads"}).encode()
    short = b"Content-Length: %d\r\n\r\n" % (len(body) - 3) + body  # 3 bytes left over
    msgs = serve(short + b"\r\n" + request(2, "threads") + request(3, "disconnect"))
    responses = [m for m in msgs if m["type"] == "response"]
    assert responses[0]["success"] is False
    answered = {m["request_seq"]: m["success"] for m in responses}
    assert answered.get(3) is True


@settings(max_examples=60, deadline=None)
@given(junk=st.lists(st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b"Content-Length: 3\r\n\r\n", b"Content-Length: x\r\n\r\n",
                     b"\r\n\r\n", b"Content-Length: 2\r\n\r\n{}", b"{\"seq\": 1}",
                     frame({"seq": 5, "type": "request", "command": "nope"}),
                     frame({"seq": 6, "type": "request", "command": "stackTrace",
                            "arguments": {"threadId": "x"}}),
                     frame({"seq": 7, "type": "request", "command": "launch",
                            "arguments": {"program": 3}}),
                     frame({"seq": 8, "type": "request", "command": "evaluate",
                            "arguments": {"expression": None}}),
                     ])), max_size=6))
def test_the_server_survives_any_junk_before_good_requests(junk):
    data = b"".join(junk)
    # after junk the stream resynchronises at a blank line and a clean header block
    msgs = serve(data + b"\r\n\r\n" + request(900, "initialize", {}) + request(901, "threads")
                 + request(902, "disconnect"))
    assert all(m["type"] in ("response", "event") for m in msgs)
    for m in msgs:
        if m["type"] == "response" and not m["success"]:
            assert m["message"]
    # every request the junk held that was read whole got exactly one response
    seqs = [m["request_seq"] for m in msgs if m["type"] == "response" and m["request_seq"]]
    assert len([s for s in seqs if s >= 900]) == len(set(s for s in seqs if s >= 900))


def run_adapter(data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rvmdbg", "dap"], input=data,
                          capture_output=True, timeout=60, env=adapter_env(), cwd=ROOT)


def test_the_adapter_process_survives_bad_framing_and_exits_cleanly():
    data = (b"Content-Length: 5\r\n\r\n{nope"
            + frame(b"[]")
            + b"Garbage-Header\r\n\r\n"
            + request(1, "initialize", {"adapterID": "x"})
            + request(2, "launch", {"program": 7})
            + b"Content-Length: 99999999999\r\n\r\n{}")
    proc = run_adapter(data)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    msgs = parse_output(proc.stdout)
    by_seq = {m["request_seq"]: m for m in msgs if m["type"] == "response" and m["request_seq"]}
    assert by_seq[1]["success"] is True and by_seq[2]["success"] is False
    assert sum(1 for m in msgs if m["type"] == "response" and not m["success"]) >= 4


def test_the_adapter_process_ends_on_a_truncated_header():
    proc = run_adapter(request(1, "initialize", {}) + b"Content-Le")
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    assert parse_output(proc.stdout)[0]["success"] is True
