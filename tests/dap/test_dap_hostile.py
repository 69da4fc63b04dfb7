"""Requests built to break the adapter (issue 29): a lone surrogate, numbers of thousands of
digits, duplicate headers, deep nesting, NUL bytes, motions before launch, `source` of a
device or a FIFO. Each gets an error response naming the problem, and the session goes on."""
from __future__ import annotations

import json
import os
import threading

from dap_client import PROGRAMS
from test_dap_framing import frame, request, run_adapter, parse_output, serve

FIB = str(PROGRAMS / "fib.relay")


def _responses(msgs) -> dict:
    return {m["request_seq"]: m for m in msgs if m["type"] == "response"}


def _launched(*more: bytes) -> list[dict]:
    return serve(request(1, "initialize", {}) + request(2, "launch", {"program": FIB, "stopOnEntry": True})
                 + request(3, "configurationDone") + b"".join(more)
                 + request(99, "disconnect"))


def test_a_lone_surrogate_command_gets_an_error_response_in_ascii():
    body = b'{"seq": 1, "type": "request", "command": "\\ud800"}'
    proc = run_adapter(frame(body) + request(2, "threads"))
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    by_seq = _responses(parse_output(proc.stdout))
    assert by_seq[1]["success"] is False and "does not support" in by_seq[1]["message"]
    assert by_seq[2]["success"] is True
    proc.stdout.decode("ascii")  # every reply is encodable


def test_a_number_of_5000_digits_is_an_error_response_and_the_session_goes_on():
    body = b'{"seq": 1, "type": "request", "command": "threads", "arguments": {"x": ' \
        + b"7" * 5000 + b"}}"
    by_seq = _responses(serve(frame(body) + request(2, "threads") + request(3, "disconnect")))
    assert any(not m["success"] and "not JSON" in m["message"] for m in by_seq.values())
    assert by_seq[2]["success"] is True and by_seq[3]["success"] is True


def test_duplicate_content_length_headers_are_a_framing_error():
    body = json.dumps({"seq": 1, "type": "request", "command": "threads"}).encode()
    dup = b"Content-Length: %d\r\nContent-Length: 999\r\n\r\n" % len(body) + body
    by_seq = _responses(serve(dup + request(2, "threads") + request(3, "disconnect")))
    bad = [m for m in by_seq.values() if not m["success"]]
    assert bad and "given twice" in bad[0]["message"]
    assert by_seq[2]["success"] is True


def test_deep_nesting_in_launch_is_refused_before_parsing():
    deep = b'{"seq": 1, "type": "request", "command": "launch", "arguments": {"program": "x",' \
        b' "args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    proc = run_adapter(frame(deep) + request(2, "threads"))
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    msgs = parse_output(proc.stdout)
    assert any(not m["success"] and "nested 100002 deep" in m.get("message", "") for m in msgs)
    assert _responses(msgs)[2]["success"] is True


def test_motions_before_launch_get_a_specific_error():
    by_seq = _responses(serve(request(1, "continue", {"threadId": 1})
                              + request(2, "stepOut", {"threadId": 1})
                              + request(3, "reverseContinue", {"threadId": 1})
                              + request(4, "source", {"source": {"path": FIB}})
                              + request(5, "disconnect")))
    for seq in (1, 2, 3, 4):
        assert by_seq[seq]["success"] is False
        assert by_seq[seq]["message"] == "no program is launched yet", by_seq[seq]


def test_a_nul_byte_in_the_program_path_is_a_specific_error():
    by_seq = _responses(serve(request(1, "launch", {"program": FIB + "\0x"})
                              + request(2, "disconnect")))
    assert by_seq[1]["success"] is False and "NUL byte" in by_seq[1]["message"]


def test_print_of_a_register_with_5000_digits_is_a_specific_error():
    msgs = _launched(request(4, "evaluate", {"expression": "print $" + "9" * 5000,
                                             "context": "watch"}),
                     request(5, "evaluate", {"expression": "$" + "9" * 5000, "context": "hover"}))
    by_seq = _responses(msgs)
    for seq in (4, 5):
        assert by_seq[seq]["success"] is False
        assert "outside the register file" in by_seq[seq]["message"], by_seq[seq]


def test_source_serves_the_program_and_refuses_other_paths(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def run():
        done.msgs = _launched(request(4, "source", {"source": {"path": FIB}}),
                              request(5, "source", {"source": {"path": "/dev/zero"}}),
                              request(6, "source", {"source": {"path": str(fifo)}}),
                              request(7, "source", {"source": {"path": "/etc/passwd"}}))
        done.set()
    threading.Thread(target=run, daemon=True).start()
    assert done.wait(60), "the adapter hung on a source request"
    by_seq = _responses(done.msgs)
    with open(FIB, encoding="utf-8") as f:
        assert by_seq[4]["body"]["content"] == f.read()
    for seq in (5, 6, 7):
        assert by_seq[seq]["success"] is False
        assert "not a source of the program" in by_seq[seq]["message"]


def test_the_adapter_starts_under_an_address_space_cap():
    # the deep stack it runs on leaves room for its reader thread (it took 2 GiB of a 3 GiB
    # cap, and starting the reader raised "can't start new thread")
    import resource
    import subprocess
    import sys

    from dap_client import ROOT, adapter_env

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "dap"],
                          input=request(1, "initialize", {}) + request(2, "disconnect"),
                          capture_output=True, timeout=60, env=adapter_env(), cwd=ROOT,
                          preexec_fn=cap)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert _responses(parse_output(proc.stdout))[1]["success"] is True
