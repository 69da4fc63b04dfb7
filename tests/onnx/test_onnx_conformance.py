"""ONNX's backend node tests on the VM, against docs/onnx-support.md: a case listed there as
failing must fail, every other case must pass (regenerate the document with
`python3 scripts/onnx_support.py` after a change that moves a case)."""
from pathlib import Path

import pytest

pytest.importorskip("onnx")

from rvmdbg.onnx import conformance  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "onnx-support.md"
CASES = {c.name: c for c in conformance.cases()}  # built once, at collection
LISTED = conformance.listed_failures(DOC.read_text())


def test_the_readme_states_the_documented_support_level():
    """README's "Debugging an ONNX model" gives the in-scope figures of the document's table."""
    import re
    row = re.search(r"\| in scope:[^|]*\| (\d+) \| (\d+) \(([\d.]+)%\)", DOC.read_text())
    total, passed = int(row[1]), int(row[2])
    readme = (DOC.parents[1] / "README.md").read_text()
    claim = re.search(r"([\d,]+) of the ([\d,]+) in scope pass \(([\d.]+)%\)", readme)
    assert claim, "README does not state the in-scope figures"
    assert (int(claim[1].replace(",", "")), int(claim[2].replace(",", ""))) == (passed, total)
    assert claim[3] == f"{100 * passed / total:.1f}"


def test_the_document_lists_only_real_cases():
    assert LISTED <= set(CASES), sorted(LISTED - set(CASES))[:10]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    outcome = conformance.run_case(CASES[name])
    if name in LISTED:
        assert not outcome.passed, (
            f"{name} passes but docs/onnx-support.md lists it as failing: regenerate it")
    else:
        assert outcome.passed, f"{name} fails: {outcome.reason}"
