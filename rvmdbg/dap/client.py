"""A small DAP client: starts `python -m rvmdbg dap` (or wraps a socket's files), sends
requests, and waits for their responses and for events by condition (never by sleeping).
The DAP tests and `benchmarks/bench_dap.py` drive the adapter with it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "programs"
TIMEOUT = 60.0


def adapter_env() -> dict:
    """The environment for an adapter process that imports this copy of rvmdbg."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class DapClient:
    def __init__(self, rfile, wfile, proc=None):
        self.rfile, self.wfile, self.proc = rfile, wfile, proc
        self.seq = 0
        self.messages: list[dict] = []
        self.cond = threading.Condition()
        self.closed = False
        self.disconnected = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, *extra) -> "DapClient":
        proc = subprocess.Popen([sys.executable, "-m", "rvmdbg", "dap", *extra],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=adapter_env(), cwd=ROOT)
        return cls(proc.stdout, proc.stdin, proc)

    def _read(self):
        while True:
            headers = {}
            while True:
                line = self.rfile.readline()
                if not line:
                    with self.cond:
                        self.closed = True
                        self.cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.partition(b":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers[b"content-length"])
            body = self.rfile.read(n)
            with self.cond:
                self.messages.append(json.loads(body))
                self.cond.notify_all()

    def send_raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def send(self, command: str, arguments: dict | None = None) -> int:
        self.seq += 1
        if command == "disconnect":
            self.disconnected = True
        msg = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            msg["arguments"] = arguments
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def wait_for(self, pred, timeout: float = TIMEOUT, start: int = 0):
        """The first message (from index `start`) satisfying pred."""
        with self.cond:
            def find():
                for m in self.messages[start:]:
                    if pred(m):
                        return m
                return None
            ok = self.cond.wait_for(lambda: find() is not None or self.closed, timeout)
            found = find()
            if found is None:
                raise AssertionError(f"no such message (closed={self.closed}); got "
                                     f"{json.dumps(self.messages[start:])[-3000:]}")
            return found

    def response(self, seq: int) -> dict:
        return self.wait_for(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)

    def request(self, command: str, arguments: dict | None = None, ok: bool = True) -> dict:
        r = self.response(self.send(command, arguments))
        if ok is not None:
            assert r["success"] is ok, r
        return r

    def mark(self) -> int:
        with self.cond:
            return len(self.messages)

    def event(self, name: str, start: int = 0, timeout: float = TIMEOUT) -> dict:
        return self.wait_for(lambda m: m.get("type") == "event" and m.get("event") == name,
                             timeout, start)

    def events(self, name: str, start: int = 0) -> list[dict]:
        with self.cond:
            return [m for m in self.messages[start:]
                    if m.get("type") == "event" and m.get("event") == name]

    # -------------------------------------------------- common sequences

    def launch(self, program: str, stop_on_entry: bool = True, breakpoints=(), **extra) -> dict:
        """initialize, launch, (initialized) setBreakpoints, configurationDone; returns the
        first stopped (or terminated) event. `program`: a name in programs/ or a path."""
        self.request("initialize", {"adapterID": "rvmdbg", "linesStartAt1": True,
                                    "columnsStartAt1": True})
        mark = self.mark()
        path = str(PROGRAMS / program) if not os.path.isabs(program) else program
        args = {"program": path, "stopOnEntry": stop_on_entry, **extra}
        self.request("launch", args)
        self.event("initialized", mark)
        if breakpoints:
            self.request("setBreakpoints", {"source": {"path": path},
                                            "breakpoints": [{"line": n} for n in breakpoints]})
        mark = self.mark()
        self.request("configurationDone")
        return self.wait_for(lambda m: m.get("type") == "event"
                             and m.get("event") in ("stopped", "terminated"), start=mark)

    def motion(self, command: str, arguments: dict | None = None) -> dict:
        """Send a motion; its stopped (or terminated) event."""
        mark = self.mark()
        self.request(command, {"threadId": 1, **(arguments or {})})
        return self.wait_for(lambda m: m.get("type") == "event"
                             and m.get("event") in ("stopped", "terminated"), start=mark)

    def top_frame(self) -> dict:
        return self.request("stackTrace", {"threadId": 1})["body"]["stackFrames"][0]

    def close(self) -> None:
        try:
            if not self.closed and not self.disconnected:
                self.request("disconnect", {}, ok=None)
        except (AssertionError, OSError, ValueError):
            pass
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            for f in (self.proc.stdout, self.proc.stderr):
                f.close()


__all__ = ["DapClient", "adapter_env", "ROOT", "PROGRAMS"]
