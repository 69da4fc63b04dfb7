"""The child process of the fuzz campaigns: runs cases under a memory cap and reports each.

Reads a JSON list of cases on stdin, caps its own address space (`resource.setrlimit`, so a
case that tries to allocate without bound meets MemoryError, or is killed, instead of taking
the machine), runs each case in-process and prints a JSON list of outcomes on stdout:
`{"code": exit code, "traceback": bool, "exception": "Type: message" | null, "stderr": its
tail, "error_lines": how many lines of stdout start with `error:`}`.

A case is `{"argv": [...], "files": {name: text}, "stdin": text, "state": {...}}`: the files
are written into a fresh directory that is the working directory while `rvmdbg` runs with
`argv`; `state` holds saved files (`breakpoints` of `program`, `keys`) to put in the config
directory first."""
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
