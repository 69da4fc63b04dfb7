"""Real networks the `onnx` package ships with reference outputs, against docs/onnx-support.md's
networks section: each imports, runs on the VM, the interpreter and (where static) the graph
executor and matches the shipped outputs, unless listed there as failing (then it must fail);
`onnx.reference.ReferenceEvaluator` is the oracle on random inputs (without a network's final
Softmax before opset 13, which onnx.reference gets wrong: `networks.oracle_model`) for
SqueezeNet and the folders; for the deeper model-zoo networks (`-m models`) its own float
error is too large and onnxruntime is the oracle.

The default run is brief: SqueezeNet on every executor and against the oracle, and the small
folders (`pytorch-converted`, `pytorch-operator`, `simple`) on every executor. `pytest -m
models` runs the other eight model-zoo networks the same way (minutes: VGG-19 on the
interpreter alone takes several seconds). Regenerate the section with `python3
scripts/onnx_support.py --networks`.
"""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

from rvmdbg.onnx import networks  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "onnx-support.md"
NETS = {n.name: n for n in networks.networks()}
LISTED = networks.listed_networks(DOC.read_text())
BRIEF = ("light/squeezenet",)
LIGHT = sorted(n for n in NETS if n.startswith("light/") and n not in BRIEF)
FOLDERS = sorted(n for n in NETS if not n.startswith("light/"))
# folders the oracle checks in the default run (the models run checks every network)
ORACLE_BRIEF = ("pytorch-operator/test_operator_conv", "pytorch-converted/test_Conv2d",
                "pytorch-converted/test_BatchNorm2d_eval", "simple/test_single_relu_model")


def test_the_nine_networks_and_the_folders_are_found():
    assert len([n for n in NETS if n.startswith("light/")]) == 9
    assert {n.split("/")[0] for n in NETS} == {"light", *networks.FOLDERS}


def test_the_document_lists_only_real_networks():
    assert LISTED <= set(NETS), sorted(LISTED - set(NETS))[:10]


def _held_to_the_document(name: str) -> None:
    outcome = networks.run_network(NETS[name])
    if name in LISTED:
        assert not outcome.passed, (
            f"{name} passes but docs/onnx-support.md lists it as failing: regenerate it")
        return
    assert outcome.passed, f"{name} fails: {outcome.reason}"
    assert "vm" in outcome.ran and "interpreter" in outcome.ran
    # the graph executor runs every static program; only a dynamic one is skipped
    assert "graph" in outcome.ran or "graph" in outcome.skipped


@pytest.mark.parametrize("name", BRIEF + tuple(FOLDERS))
def test_network(name):
    _held_to_the_document(name)


@pytest.mark.models
@pytest.mark.parametrize("name", LIGHT)
def test_model_zoo_network(name):
    _held_to_the_document(name)


def _against_the_oracle(name: str) -> None:
    import warnings

    from onnx.reference import ReferenceEvaluator
    net = NETS[name]
    if name in LISTED:
        pytest.skip("listed as failing in docs/onnx-support.md")
    model, shipped, _expected = networks.load(net)
    model = networks.oracle_model(model)
    feeds = networks.random_feeds(model, seed=7, shipped=shipped)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]
        imp, mod, exe = networks.build(model)
        got = networks.execute("vm", mod, exe, [feeds[n] for n in imp.inputs])
    why = networks.compare(got, expected, networks.ORACLE_TOLERANCE)
    assert why is None, f"{name} on random inputs: {why}"


@pytest.mark.parametrize("name", BRIEF + ORACLE_BRIEF)
def test_against_the_reference_evaluator(name):
    _against_the_oracle(name)


@pytest.mark.models
@pytest.mark.parametrize("name", [n for n in FOLDERS if n not in ORACLE_BRIEF])
def test_against_the_reference_evaluator_models(name):
    _against_the_oracle(name)


@pytest.mark.models
@pytest.mark.parametrize("name", LIGHT)
def test_model_zoo_network_against_onnxruntime(name):
    """On random inputs onnx.reference (1.23) is no oracle for the deep model-zoo networks:
    its logits for ResNet-50, Inception v2, ShuffleNet and DenseNet-121 are 0.3% to 9% off
    both rvmdbg's and onnxruntime's, which agree to 1e-6. onnxruntime (the bench extra) is
    the oracle here."""
    ort = pytest.importorskip("onnxruntime")
    import warnings
    if name in LISTED:
        pytest.skip("listed as failing in docs/onnx-support.md")
    model, shipped, _expected = networks.load(NETS[name])
    feeds = networks.random_feeds(model, seed=7, shipped=shipped)
    sess = ort.InferenceSession(NETS[name].path, providers=["CPUExecutionProvider"])
    expected = sess.run(None, feeds)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        imp, mod, exe = networks.build(model)
        got = networks.execute("vm", mod, exe, [feeds[n] for n in imp.inputs])
    why = networks.compare(got, expected, dict(rtol=1e-5, atol=1e-5))
    assert why is None, f"{name} on random inputs: {why}"


def test_the_networks_section_is_generated_from_outcomes():
    outs = [networks.NetOutcome("light/x", True, seconds={"import+compile": 0.5, "vm": 0.1}),
            networks.NetOutcome("simple/test_y", False, "vm: unknown operator `foo`")]
    section = networks.report_section(outs)
    assert networks.listed_networks(section) == {"simple/test_y"}
    assert "1 of 2 networks pass" in section
    doc = "# ONNX support\n\nbody\n"
    once = networks.replace_section(doc, section)
    assert networks.replace_section(once, section) == once
    assert once.startswith(doc)


def test_the_node_case_listing_does_not_read_network_rows():
    from rvmdbg.onnx import conformance
    assert conformance.listed_failures(DOC.read_text()).isdisjoint(LISTED)
