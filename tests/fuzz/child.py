"""The child process of the fuzz campaigns: runs cases under a memory cap and reports each.

Reads a JSON list of cases on stdin, caps its own address space (`resource.setrlimit`, so a
case that tries to allocate without bound meets MemoryError, or is killed, instead of taking
the machine), runs each case in-process and prints a JSON list of outcomes on stdout:
`{"code": exit code, "traceback": bool, "exception": "Type: message" | null, "stderr": its
tail, "error_lines": how many lines of stdout start with `error:`}`.

A case is `{"argv": [...], "files": {name: text}, "stdin": text, "state": {...}}`: the files
are written into a fresh directory that is the working directory while `rvmdbg` runs with
`argv`; `state` holds saved files (`breakpoints` of `program`, `keys`) to put in the config
directory first. A file's bytes that are not UTF-8 travel as surrogate escapes. A DAP case,
`{"dap": bytes as latin-1 text, "files": {...}}`, is served by the adapter in-process
(`run_dap_case`)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import traceback


def cap_memory(limit_bytes: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def run_case(case: dict) -> dict:
    if "dap" in case:
        return run_dap_case(case)
    from rvmdbg import cli

    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        for name, text in case.get("files", {}).items():
            with open(os.path.join(folder, name), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(text)
        cwd = os.getcwd()
        os.chdir(folder)
        _write_state(case.get("state"))
        stdin = sys.stdin
        sys.stdin = io.StringIO(case.get("stdin", ""))
        exception = None
        code = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(list(case["argv"]))
        except BaseException as exc:  # escaping main is the defect the campaign looks for
            exception = f"{type(exc).__name__}: {exc}"
            err.write(traceback.format_exc())
        finally:
            sys.stdin = stdin
            os.chdir(cwd)
    text = err.getvalue()
    printed = out.getvalue()
    return {"code": code, "traceback": "Traceback (most recent call last)" in text + printed,
            "exception": exception, "stderr": text[-2000:],
            "error_lines": sum(line.startswith("error:") for line in printed.splitlines())}


def run_dap_case(case: dict) -> dict:
    """A DAP case: `dap` is the bytes a client sends (as latin-1 text), served in-process as
    `rvmdbg dap` serves stdin, with `files` in the working directory. The outcome counts the
    responses, the failed ones, and (as `error_lines`) the "internal error" ones, which are
    defects like a traceback; `stderr` is the adapter's own log."""
    from rvmdbg.dap.server import DapServer
    from rvmdbg.relay.interpreter import call_with_deep_stack

    data = case["dap"].encode("latin-1")
    out, log = io.BytesIO(), io.StringIO()
    exception = None
    with tempfile.TemporaryDirectory() as folder:
        for name, text in case.get("files", {}).items():
            with open(os.path.join(folder, name), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(text)
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            call_with_deep_stack(lambda: DapServer(io.BytesIO(data), out, log=log).serve())
        except BaseException as exc:  # escaping the server is the defect looked for
            exception = f"{type(exc).__name__}: {exc}"
            log.write(traceback.format_exc())
        finally:
            os.chdir(cwd)
    responses, framing = [], None
    raw = io.BytesIO(out.getvalue())
    while framing is None:
        head = raw.readline()
        if not head:
            break
        try:
            n = int(head.split(b":")[1])
            raw.readline()
            msg = json.loads(raw.read(n).decode("ascii"))
        except (ValueError, IndexError) as exc:
            framing = f"unframed output: {exc}"
            break
        if msg.get("type") == "response":
            responses.append(msg)
    if framing is not None and exception is None:
        exception = framing
    text = log.getvalue()
    internal = [m for m in responses if "internal error" in m.get("message", "")]
    return {"code": 0 if exception is None else None, "traceback": "Traceback" in text,
            "exception": exception, "stderr": (text + "".join(
                m["message"] for m in internal))[-2000:],
            "error_lines": len(internal), "responses": len(responses),
            "failed": sum(1 for m in responses if not m.get("success"))}


def _write_state(state: dict | None) -> None:
    """The saved setup of a case: a breakpoints file for its program, a default keys file
    (bytes given as latin-1 text, so any byte can be written)."""
    if not state:
        return
    from rvmdbg.debug.config import breakpoint_file, config_root
    root = config_root()
    for kind, data in state.items():
        if kind == "program":
            continue
        path = breakpoint_file(state["program"]) if kind == "breakpoints" else root / "keys.conf"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        if isinstance(data, dict):      # {"symlink": target}
            path.symlink_to(data["symlink"])
        else:
            path.write_bytes(data.encode("latin-1"))


def main() -> None:
    cases = json.load(sys.stdin)
    cap_memory(int(os.environ.get("RVMDBG_FUZZ_MEMORY", str(3 << 30))))
    import rvmdbg.cli  # noqa: F401 (imported under the cap, as a user's process would be)
    results = [run_case(case) for case in cases]
    json.dump(results, sys.__stdout__)


if __name__ == "__main__":
    main()
