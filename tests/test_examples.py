"""The public examples of the command-line contract: for every case of
tests/examples/expected.json, `rvmdbg run FILE ARGS --json` must print exactly {"result": R}."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rvmdbg import cli

EXAMPLES = Path(__file__).resolve().parent / "examples"
CASES = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))["cases"]
IDS = [f"{c['file']}:{' '.join(c['args'])[:30]}" for c in CASES]


@pytest.mark.parametrize("executor", ["interp", "vm"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_example(capsys, case, executor):
    code = cli.main(["run", str(EXAMPLES / case["file"]), *case["args"], "--json",
                     "--executor", executor])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    assert json.loads(out) == {"result": case["result"]}


FIRST_CASES = list({c["file"]: c for c in reversed(CASES)}.values())


@pytest.mark.parametrize("case", FIRST_CASES, ids=[c["file"] for c in FIRST_CASES])
def test_example_args_line_gives_its_first_case(capsys, case):
    """With no ARG, the `// args:` defaults are used: they are the file's first case."""
    code = cli.main(["run", str(EXAMPLES / case["file"]), "--json", "--executor", "interp"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out) == {"result": case["result"]}


def test_every_example_file_has_a_case():
    files = {p.name for p in EXAMPLES.glob("*.relay")}
    assert files and files == {c["file"] for c in CASES}
