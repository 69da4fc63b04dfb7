"""`rvmdbg dap`: the Debug Adapter Protocol served over stdio or one TCP connection.

A reader thread reads requests and queues them; one worker answers them in order through the
`DapAdapter` (a response, then any motion the request started and the events it sends).
`pause` is answered by the reader at once, so it can interrupt a long `continue`. Every request
gets exactly one response: an unknown command, bad arguments or an unreadable message get
`success: false` with a message, and an unexpected failure inside the adapter is reported the
same way rather than ending the connection. The adapter stops when the client disconnects or
the stream ends.
"""
from __future__ import annotations

import queue
import socket
import sys
import threading
import traceback

from rvmdbg.dap.adapter import DapAdapter, RequestError
from rvmdbg.dap.framing import BadMessage, MessageReader, MessageWriter

_END = object()


class DapServer:
    """One client connection: `serve()` returns when the client disconnects or goes away."""

    def __init__(self, reader_stream, writer_stream, log=None):
        self.reader = MessageReader(reader_stream)
        self.writer = MessageWriter(writer_stream)
        self.adapter = DapAdapter(self.event)
        self.log = log           # a text stream for the adapter's own failures (stderr)
        self._queue: queue.Queue = queue.Queue()

    # ------------------------------------------------------------ messages out

    def event(self, name: str, body: dict | None = None) -> None:
        msg = {"type": "event", "event": name}
        if body is not None:
            msg["body"] = body
        self.writer.send(msg)

    def respond(self, request: dict, body=None, error: str | None = None) -> None:
        msg = {"type": "response", "request_seq": request.get("seq", 0),
               "command": request.get("command", ""), "success": error is None}
        if error is not None:
            msg["message"] = error
            msg["body"] = {"error": {"id": 1, "format": error.replace("{", "{{")
                                     .replace("}", "}}"), "showUser": True}}
        elif body is not None:
            msg["body"] = body
        self.writer.send(msg)

    # ------------------------------------------------------------ the two threads

    def serve(self) -> None:
        reader = threading.Thread(target=self._read_loop, name="rvmdbg-dap-reader", daemon=True)
        reader.start()
        self._work_loop()

    def _read_loop(self) -> None:
        while True:
            try:
                request = self.reader.read()
            except BadMessage as bad:
                self.respond({"seq": bad.seq, "command": bad.command}, error=bad.text)
                continue
            except Exception as exc:  # the stream broke (a closed socket): end quietly
                self._note(f"rvmdbg dap: the stream broke ({exc!r}); the session ends")
                request = None
            if request is None:
                self.adapter.pause()  # the client is gone: a running motion need not finish
                self._queue.put(_END)
                return
            if request["command"] == "pause":
                self.adapter.pause()
                self.respond(request)
                continue
            self._queue.put(request)
            if request["command"] == "disconnect":
                self.adapter.pause()  # a running motion ends so the disconnect is answered
                return

    def _work_loop(self) -> None:
        while True:
            request = self._queue.get()
            if request is _END:
                return
            self._answer(request)
            if self.adapter.done:
                return

    def _answer(self, request: dict) -> None:
        args = request.get("arguments") or {}
        try:
            body = self.adapter.handle(request["command"], args)
        except RequestError as exc:
            self.respond(request, error=str(exc) or "the request failed")
            return
        except RecursionError:
            self.respond(request, error="a value is nested too deeply to show")
            return
        except Exception as exc:  # a bug in the adapter: say so, keep serving
            self._note(traceback.format_exc())
            self.respond(request, error=f"internal error in rvmdbg's adapter: {exc!r}")
            return
        self.respond(request, body)
        then, self.adapter.then = self.adapter.then, None
        if then is not None:
            try:
                then()
            except Exception as exc:
                self._note(traceback.format_exc())
                self.event("output", {"category": "stderr",
                                      "output": f"internal error in rvmdbg's adapter: {exc!r}\n"})

    def _note(self, text: str) -> None:
        if self.log is not None:
            try:
                self.log.write(text.rstrip("\n") + "\n")
                self.log.flush()
            except (OSError, ValueError):
                pass


def serve_stdio() -> int:
    """Serve on stdin/stdout. Anything else printed to stdout would break the framing, so
    `sys.stdout` points at stderr while serving."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        DapServer(stdin, stdout, log=sys.stderr).serve()
    finally:
        sys.stdout = saved
    return 0


def serve_tcp(port: int, host: str = "127.0.0.1", ready=None) -> int:
    """Listen on host:port (0: any free port), serve the first client, then return.
    `ready(port)` is called once listening (the CLI prints the port)."""
    with socket.create_server((host, port)) as server:
        if ready is not None:
            ready(server.getsockname()[1])
        conn, _ = server.accept()
        with conn:
            rfile = conn.makefile("rb")
            wfile = conn.makefile("wb")
            try:
                DapServer(rfile, wfile, log=sys.stderr).serve()
            finally:
                for f in (rfile, wfile):
                    try:
                        f.close()
                    except OSError:
                        pass
    return 0


__all__ = ["DapServer", "serve_stdio", "serve_tcp"]
