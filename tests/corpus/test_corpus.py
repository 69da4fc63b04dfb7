"""The corpus of real TVM output: every program in tests/corpus/tvm/ (texts TVM printed or
parsed, copied from public sources) is checked, compiled and run on the reference interpreter,
the VM and, where the entry is a static graph, the graph executor; all must agree, and match
the result the source states where it states one.

Files that cannot pass yet are in KNOWN_FAILURES with the reason; such a file must still fail
with a located error (never a Python traceback), and once it passes the test says to remove it
from the list, so the list only shrinks.
"""
from __future__ import annotations

import pytest
from corpus_run import CORPUS_DIR, agree, read_header, run_everywhere

from rvmdbg.args import ArgumentError
from rvmdbg.graph import GraphRefusal, GraphRunError
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.interpreter import InterpreterError
from rvmdbg.vm.compiler import CompileError
from rvmdbg.vm.machine import VMError

FILES = sorted(p.name for p in CORPUS_DIR.glob("*.relay"))

# file -> why it fails today (the missing feature, and who is adding it)
KNOWN_FAILURES = {
    # operators being added (issue 11)
    "legacy_tuning_conv2d.relay": "nn.conv2d is not an operator yet (ops-nn)",
    "sub_graph_conv2d_add_relu.relay": "nn.conv2d is not an operator yet (ops-nn)",
    "auto_quantize_conv2d.relay": "nn.conv2d is not an operator yet (ops-nn)",
    "dataflow_pattern_layout_transform_conv2d.relay":
        "layout_transform (ops-transform) and NHWC/OHWI nn.conv2d (ops-nn)",
    "op_level1_strided_slice_pad.relay": "strided_slice (ops-transform) and nn.pad (ops-nn)",
    "mlf_depthwise_conv2d_fixed_point.relay":
        "depthwise NHWC/HWOI nn.conv2d (ops-nn) and fixed_point_multiply (no one: not in "
        "issue 11's list)",
    # TVM's printed forms (issue 10)
    "relay_mlir_metadata_constant.relay": "#[metadata] and meta[relay.Constant] (metadata)",
    "checkpoint_bare_fn_gradient.relay":
        "a file whose only content is a bare fn expression (tvm-forms) and "
        "collapse_sum_like (ops-transform)",
    "parser_call_attrs.relay": "call attributes on a call of a function (tvm-forms)",
    "lifetimes_simple_linear_after.relay": "memory.kill as TVM prints it (tvm-forms)",
    "lifetimes_simple_if_after.relay": "memory.kill as TVM prints it (tvm-forms)",
    "lifetimes_simple_match_after.relay": "memory.kill as TVM prints it (tvm-forms)",
    "collage_partitioned_byoc_relu.relay":
        "a Primitive=1 function whose body calls a Composite function: the VM cannot build "
        "it as one kernel (tvm-forms: Primitive functions compiled as TVM lowers them)",
    "collage_partitioned_diamond.relay":
        "a Primitive=1 function whose body calls a Composite function: the VM cannot build "
        "it as one kernel (tvm-forms: Primitive functions compiled as TVM lowers them)",
    # type inference as TVM's (issue 10 part 3)
    "dce_live_recursion_log_int.relay":
        "log of an int32: TVM's type relation accepts it, rvmdbg's refuses it (tvm-forms)",
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
        assert agree(header.expect, reference), \
            f"{name}: the source states {header.expect}, we get {reference}"


@pytest.mark.parametrize("name", FILES)
def test_corpus_file(name):
    if name not in KNOWN_FAILURES:
        run_and_compare(name)
        return
    try:
        run_and_compare(name)
    except CLEAN_ERRORS as e:
        pytest.xfail(f"{KNOWN_FAILURES[name]}: {str(e).splitlines()[0]}")
    pytest.fail(f"{name} passes now: remove it from KNOWN_FAILURES")


def test_corpus_is_big_enough_and_every_file_names_its_source():
    assert len(FILES) >= 40
    for name in FILES:
        text = (CORPUS_DIR / name).read_text(encoding="utf-8")
        assert text.startswith("#[version = \"0.0.5\"]"), name
        assert read_header(text).source, f"{name} has no `// source:` line"


def test_known_failures_are_corpus_files():
    assert set(KNOWN_FAILURES) <= set(FILES)
