"""The Debug Adapter Protocol's wire format: each message is `Content-Length: N\\r\\n\\r\\n`
followed by N bytes of UTF-8 JSON.

`MessageReader.read()` returns the next request as a dict, None at the end of the stream, or
raises `BadMessage` for one message it could not use (bad headers, a wrong length, invalid
JSON, not a request): the server answers that with an error response and reads on. A body
larger than `MAX_BODY` is skipped in chunks rather than held in memory. `MessageWriter`
frames outgoing messages, one at a time across threads.
"""
from __future__ import annotations

import json
import re
import threading

from rvmdbg.jsondepth import nesting

MAX_BODY = 64 * 2 ** 20     # bytes: a larger message is skipped, not read into memory
MAX_HEADER_LINE = 8192      # bytes: a longer header line is not a header
_CHUNK = 1 << 16
MAX_NESTING = 200           # levels of JSON arrays and objects in one message
_LENGTH = re.compile(r"[0-9]{1,19}")


class BadMessage(Exception):
    """One incoming message the adapter cannot use; `seq` and `command` when they were read."""

    def __init__(self, text: str, seq: int = 0, command: str = ""):
        super().__init__(text)
        self.text = text
        self.seq = seq
        self.command = command


class MessageReader:
    """Reads framed messages from a binary stream (stdin's buffer, a socket file)."""

    def __init__(self, stream):
        self.stream = stream

    def _header_block(self) -> dict[str, str] | None:
        """The headers up to the blank line (None: the stream ended before any header)."""
        headers: dict[str, str] = {}
        problem = None
        seen = False
        while True:
            line = self.stream.readline(MAX_HEADER_LINE + 1)
            if not line:
                if seen:
                    raise EOFError  # the stream ended inside the headers
                return None
            if len(line) > MAX_HEADER_LINE and not line.endswith(b"\n"):
                # Skip the rest of the over-long line: it cannot be a header.
                while line and not line.endswith(b"\n"):
                    line = self.stream.readline(MAX_HEADER_LINE + 1)
                problem = problem or f"a header line longer than {MAX_HEADER_LINE} bytes"
                seen = True
                continue
            text = line.rstrip(b"\r\n")
            if not text:
                if not seen:
                    continue  # blank lines between messages
                break
            seen = True
            name, sep, value = text.partition(b":")
            if not sep:
                problem = problem or f"a header line without ':': {text[:60]!r}"
                continue
            try:
                key = name.decode("ascii").strip().lower()
                if key in headers:
                    # which of two lengths is meant cannot be known: the message is refused
                    # (its body skipped by the first, so the stream stays in step)
                    problem = problem or f"the header {key!r} is given twice"
                else:
                    headers[key] = value.decode("ascii").strip()
            except UnicodeDecodeError:
                problem = problem or "a header that is not ASCII"
        if problem is not None:
            headers["\0problem"] = problem
        return headers

    def read(self) -> dict | None:
        """The next request; None at the end of the stream; raises BadMessage."""
        try:
            headers = self._header_block()
        except EOFError:
            return None
        if headers is None:
            return None
        length_text = headers.get("content-length")
        problem = headers.get("\0problem")
        if length_text is None:
            raise BadMessage("a message without a Content-Length header"
                             + (f" ({problem})" if problem else ""))
        length = int(length_text) if _LENGTH.fullmatch(length_text) else -1
        if length < 0:
            raise BadMessage(f"Content-Length {length_text[:40]!r} is not a byte count")
        if length > MAX_BODY:
            if not self._skip(length):
                return None
            raise BadMessage(f"a message of {length} bytes is larger than the adapter reads "
                             f"({MAX_BODY} bytes)")
        body = self._exactly(length)
        if body is None:
            return None  # the stream ended inside the body
        if problem is not None:
            raise BadMessage(f"bad message headers: {problem}")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise BadMessage("the message body is not UTF-8") from None
        depth = nesting(body)[0]
        if depth > MAX_NESTING:
            raise BadMessage(f"the message is nested {depth} deep; the adapter reads at most "
                             f"{MAX_NESTING} levels")
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:
            # ValueError: invalid JSON, or an integer longer than Python converts
            raise BadMessage(f"the message body is not JSON: {str(exc)[:200]}") from None
        return check_request(message)

    def _exactly(self, n: int) -> bytes | None:
        parts, left = [], n
        while left > 0:
            chunk = self.stream.read(min(left, _CHUNK))
            if not chunk:
                return None
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def _skip(self, n: int) -> bool:
        """Read and drop n bytes; False when the stream ends first."""
        left = n
        while left > 0:
            chunk = self.stream.read(min(left, _CHUNK))
            if not chunk:
                return False
            left -= len(chunk)
        return True


def check_request(message) -> dict:
    """`message` if it is a well-formed request, else BadMessage saying what is wrong."""
    if not isinstance(message, dict):
        raise BadMessage(f"a message must be a JSON object, not {type(message).__name__}")
    seq = message.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
    command = message.get("command")
    command = command if isinstance(command, str) else ""
    kind = message.get("type")
    if kind != "request":
        raise BadMessage(f"the adapter reads requests; this message has type {kind!r}",
                         seq, command)
    if not isinstance(message.get("seq"), int) or isinstance(message.get("seq"), bool):
        raise BadMessage("a request needs a whole-number 'seq'", seq, command)
    if not command:
        raise BadMessage("a request needs a 'command' string", seq, command)
    args = message.get("arguments")
    if args is not None and not isinstance(args, dict):
        raise BadMessage("a request's 'arguments' must be an object", seq, command)
    return message


class MessageWriter:
    """Frames and writes messages, numbering them; safe to call from several threads."""

    def __init__(self, stream):
        self.stream = stream
        self._lock = threading.Lock()
        self._seq = 0
        self.closed = False

    def send(self, message: dict) -> None:
        with self._lock:
            if self.closed:
                return
            self._seq += 1
            message["seq"] = self._seq
            # ASCII with \u escapes: any string (a lone surrogate echoed from a request
            # included) is encodable and still valid JSON
            body = json.dumps(message, ensure_ascii=True, default=str).encode("ascii")
            try:
                self.stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self.stream.flush()
            except (OSError, ValueError):
                self.closed = True  # the client went away: later messages go nowhere


__all__ = ["MessageReader", "MessageWriter", "BadMessage", "check_request", "MAX_BODY"]
