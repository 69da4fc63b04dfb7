"""The corpus of real TVM output: every program in tests/corpus/tvm/ (texts TVM printed or
parsed, copied from public sources) is checked, compiled and run on the reference interpreter,
the VM and, where the entry is a static graph, the graph executor; all must agree, and match
the result the source states where it states one. The models `rvmdbg.workloads` generates
(TVM's printed form of an MLP, CNNs, transformers, LSTMs, a while_loop) run the same way.

Files that cannot pass yet are in KNOWN_FAILURES with the reason; such a file must still fail
with a located error (never a Python traceback, never executors that disagree), and once it
passes it shows as XPASS in the summary: remove its entry, so the list only shrinks.
"""
from __future__ import annotations

import pytest
from corpus_run import CORPUS_DIR, agree, matches_expected, read_header, run_everywhere

from rvmdbg import workloads
from rvmdbg.args import ArgumentError
from rvmdbg.graph import GraphRefusal, GraphRunError
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.interpreter import InterpreterError
from rvmdbg.vm.compiler import CompileError
from rvmdbg.vm.machine import VMError

FILES = sorted(p.name for p in CORPUS_DIR.glob("*.relay"))

# file -> why it fails today (the missing feature, and who is adding it)
KNOWN_FAILURES = {
    # TVM's own test only runs a pass on it: log of an int32 type-checks (IdentityRel), here
    # as in TVM, and cannot run, here as in TVM (lowering finds no integer kernel for log)
    "dce_live_recursion_log_int.relay":
        "log of an int32 checks and compiles as in TVM, and has no kernel to run, as in TVM",
}

# the errors a program may stop with while a feature is missing: each names the place
CLEAN_ERRORS = (RelayError, CompileError, VMError, InterpreterError, ArgumentError,
                GraphRefusal, GraphRunError)


def run_and_compare(name: str) -> None:
    text = (CORPUS_DIR / name).read_text(encoding="utf-8")
    header = read_header(text)
    results = run_everywhere(text, name)
    reference = results["interp"]
    for executor, result in results.items():
        assert agree(reference, result), f"{name}: {executor} gives {result}, interp {reference}"
    if header.has_expect:
        assert matches_expected(header.expect, reference), \
            f"{name}: the source states {header.expect}, we get {reference}"


def expect_failure(request, reason: str) -> None:
    """A known failure: it must stop with a located error (anything else, a traceback or a
    disagreement between executors, fails the test); once it passes it shows as XPASS in the
    summary, the sign to remove its entry (not a failure: other people's landings stay green)."""
    request.applymarker(pytest.mark.xfail(reason=reason, raises=CLEAN_ERRORS, strict=False))


@pytest.mark.parametrize("name", FILES)
def test_corpus_file(request, name):
    if name in KNOWN_FAILURES:
        expect_failure(request, KNOWN_FAILURES[name])
    run_and_compare(name)


# ---- generated models (rvmdbg.workloads), at the tests' small sizes, in both printed forms:
# "bound" as TVM prints a model after binding its weights (a #[metadata] section), "unbound"
# as relay.testing prints it before (the weights are @main's parameters)

GENERATED_KNOWN_FAILURES: dict = {}  # every family runs


def run_generated(name: str, bound: bool) -> None:
    w = workloads.build(name, small=True)
    text = w.text if bound else w.unbound_text
    args = list(w.inputs) if bound else list(w.inputs) + list(w.constants)
    results = run_everywhere(text, f"{name}.relay", args)
    assert ("graph" in results) == w.static, f"{name}: static={w.static} but ran {list(results)}"
    for executor, result in results.items():
        assert agree(results["interp"], result), f"{name}: {executor} disagrees with interp"


@pytest.mark.parametrize("bound", [False, True], ids=["unbound", "bound"])
@pytest.mark.parametrize("name", sorted(workloads.WORKLOADS))
def test_generated_model(request, name, bound):
    if name in GENERATED_KNOWN_FAILURES:
        expect_failure(request, GENERATED_KNOWN_FAILURES[name])
    run_generated(name, bound)


def test_generated_text_is_deterministic_and_tvm_shaped():
    a, b = workloads.build("mlp", small=True), workloads.build("mlp", small=True)
    assert a.text == b.text
    assert a.text.startswith('#[version = "0.0.5"]\ndef @main(%data: Tensor[(1, 32), float32]')
    assert "meta[relay.Constant][0] /* ty=Tensor[(16, 32), float32] */" in a.text
    assert "\n#[metadata]\n{" in a.text and '"b64ndarrays": [' in a.text
    assert "meta[" not in a.unbound_text and "%weight_0: Tensor[(16, 32), float32]" in \
        a.unbound_text
    loop = workloads.build("while_loop", small=True).text
    assert "let %while_loop = fn (" in loop and "Tensor[(?, 4), float32]" in loop


def test_corpus_is_big_enough_and_every_file_names_its_source():
    assert len(FILES) >= 40
    for name in FILES:
        text = (CORPUS_DIR / name).read_text(encoding="utf-8")
        # TVM 0.6's header, or none for a file that is one expression (print(func)'s form)
        assert text.startswith(("#[version = \"0.0.5\"]", "v0.0.4\n", "// source:")), name
        assert read_header(text).source, f"{name} has no `// source:` line"


def test_known_failures_are_corpus_files():
    assert set(KNOWN_FAILURES) <= set(FILES)
