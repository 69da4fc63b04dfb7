"""The pass pipeline: TVM's order, typed stages, semantics preserved, deterministic output."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_relay import programs
from pass_helpers import HEADER, i32, load, nodes, op_calls_outside_primitives, run, same

from rvmdbg.passes.anf import is_atomic, to_a_normal_form
from rvmdbg.passes.dead_code import dead_code_elimination
from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.passes.lambda_lift import lambda_lift
from rvmdbg.passes.pipeline import (DEFAULT_PASSES, Pass, Pipeline, Stage, changed,
                                    default_pipeline)
from rvmdbg.relay.ast import Call, Function, Let, room_for_recursion
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.typecheck import check_module, is_checked

PROGRAMS_DIR = Path(__file__).resolve().parents[2] / "programs"
PROGRAMS = sorted(PROGRAMS_DIR.glob("*.relay"))

TVM_ORDER = ["RemoveUnusedFunctions", "SimplifyInference", "EtaExpand", "FoldConstant", "FuseOps",
             "ToANormalForm", "InferType", "LambdaLift", "DeadCodeElimination"]
# the AST-to-AST passes of this layer (the memory passes after them have their own tests)
AST_PASSES = [p for p in DEFAULT_PASSES if p.name in TVM_ORDER]


def ast_pipeline() -> Pipeline:
    return Pipeline(AST_PASSES)


def program_cases():
    """(file, args) rows from tests/program_cases.py, or each program with its default args."""
    try:
        from program_cases import CASES
    except ImportError:
        return [(p.name, None) for p in PROGRAMS]
    return [(f, a) for f, a, _expected in CASES if (PROGRAMS_DIR / f).exists()]


def program_args(mod, text: str, args):
    from rvmdbg.args import parse_program_args
    from rvmdbg.relay.loader import program_default_args
    texts = args if args is not None else (program_default_args(text) or [])
    return parse_program_args(mod, "main", texts)


def assert_typed(mod) -> None:
    for fn in mod.functions.values():
        for n in nodes(fn):
            assert n.checked_type is not None, f"untyped {type(n).__name__}"


def test_default_pipeline_is_tvm_order_and_extensible():
    names = default_pipeline().names()
    assert names[:len(TVM_ORDER)] == TVM_ORDER
    extra = Pass("Identity", lambda m: m, "does nothing")
    assert default_pipeline(extra=[extra]).names() == names + ["Identity"]
    assert [p.name for p in AST_PASSES] == TVM_ORDER


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_every_stage_is_typed_and_printed(path):
    text = path.read_text()
    stages = ast_pipeline().run(load_module(text, str(path)))
    assert [s.name for s in stages] == ["Input"] + TVM_ORDER
    for s in stages:
        assert isinstance(s, Stage) and s.description
        assert_typed(s.module)
        assert s.text == print_module(s.module, metadata=False)
    final = stages[-1].module
    assert not op_calls_outside_primitives(final)
    for fn in final.functions.values():
        body = fn.body.body if fn.attrs.get("Closure") else fn.body
        assert not [n for n in nodes(body) if isinstance(n, Function) and not n.is_primitive]
        for n in nodes(body, enter_primitives=False):
            if isinstance(n, Call) and not (isinstance(n.op, Function) and n.op.is_primitive):
                assert all(is_atomic(a) for a in n.args)


def assert_types_agree_with_checker(mod, label: str) -> None:
    """Every node of mod has a type, and checking mod again writes the same ones."""
    written = [(n, n.checked_type) for fn in mod.functions.values() for n in nodes(fn)]
    assert all(t is not None for _, t in written), label
    texts = [str(t) for _, t in written]
    check_module(mod)
    assert [str(n.checked_type) for n, _ in written] == texts, label


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.relay"))


@pytest.mark.parametrize("path", PROGRAMS + EXAMPLES, ids=lambda p: p.name)
def test_passes_that_type_their_output_agree_with_the_checker(path):
    """Every node a typed-output pass makes carries a type, and the type checker, run on that
    output, writes the same types: the check the pipeline skips would change nothing."""
    mod = load_module(path.read_text(), str(path))
    with room_for_recursion():
        mod = check_module(mod)
        for p in AST_PASSES:
            out = p.fn(mod)
            if p.typed_output and p.name != "InferType":
                assert_types_agree_with_checker(out, p.name)
            mod = p.run_checked(mod)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_passes_are_idempotent_on_their_own_output(path):
    """ANF, lambda lifting, DCE and fusion find nothing left to do in the final module
    (a lifted closure's inner fn is its code, not a function to lift again)."""
    final = ast_pipeline().run(load_module(path.read_text(), str(path)))[-1]
    for p in (to_a_normal_form, lambda_lift, dead_code_elimination, fuse_ops):
        assert print_module(check_module(p(final.module)), metadata=False) == final.text, p.__name__


@pytest.mark.parametrize("file, args", program_cases())
def test_semantics_preserved_on_programs(file, args):
    path = PROGRAMS_DIR / file
    text = path.read_text()
    mod = load_module(text, str(path))
    stages = ast_pipeline().run(mod)
    values = program_args(stages[0].module, text, args)
    expected = run(stages[0].module, *values)
    for s in stages[1:]:
        assert same(run(s.module, *program_args(s.module, text, args)), expected), s.name


def failing_cases():
    try:
        from program_cases import FAILING_CASES
    except ImportError:
        return []
    return [(f, a, g) for f, a, g in FAILING_CASES if (PROGRAMS_DIR / f).exists()]


@pytest.mark.parametrize("file, args, function", failing_cases())
def test_run_time_failures_are_preserved(file, args, function):
    from rvmdbg.relay.interpreter import InterpreterError
    path = PROGRAMS_DIR / file
    text = path.read_text()
    stages = ast_pipeline().run(load_module(text, str(path)))
    for s in (stages[0], stages[-1]):
        with pytest.raises(InterpreterError):
            run(s.module, *program_args(s.module, text, args))


def test_changed_names_added_and_changed_globals():
    stages = ast_pipeline().run(load("""
def @make_adder(%n: int32) -> fn (int32) -> int32 { fn (%x: int32) -> int32 { %x + %n } }
def @main(%x: int32) -> int32 { @make_adder(1)(%x) }
"""))
    by_name = {s.name: s for s in stages}
    diff = changed(by_name["InferType"], by_name["LambdaLift"])
    assert diff == {"make_adder": "changed", "make_adder_lifted_0": "added"}
    assert changed(by_name["LambdaLift"], by_name["LambdaLift"]) == {}
    assert "removed" in changed(by_name["LambdaLift"], by_name["Input"]).values()


def test_pipeline_leaves_earlier_stages_intact():
    stages = default_pipeline().run(load("""
def @main(%x: int32) -> int32 { let %f = fn (%y: int32) -> int32 { %y * 2 + 1 }; %f(%x) }
"""))
    for s in stages:
        assert print_module(s.module, metadata=False) == s.text, s.name


def test_apply_gives_the_final_stage():
    mod = load("def @main(%x: int32) -> int32 { %x * 2 + 1 }")
    final = default_pipeline().apply(mod)
    assert print_module(final, metadata=False) == default_pipeline().run(mod)[-1].text


def test_is_checked_follows_the_definitions():
    mod = load_module(HEADER + "def @main(%x: int32) -> int32 { %x + 1 }\n"
                      "def @g(%x: int32) -> int32 { %x }\n", "t.relay")
    assert not is_checked(mod)
    check_module(mod)
    assert is_checked(mod)
    replaced = mod.copy_shallow()
    assert not is_checked(replaced)  # a new module: nobody vouched for it
    mod.functions["g"] = load("def @g(%x: int32) -> int32 { %x * 2 }").functions["g"]
    assert not is_checked(mod)       # a replaced definition is not typed
    check_module(mod)
    del mod.functions["g"]
    assert not is_checked(mod)


def test_the_checker_runs_again_only_after_a_change(monkeypatch):
    """A pass that changes nothing (EtaExpand here) is not followed by a type check, nor is
    InferType on a module checked since its last change, nor the input (`load` checked it),
    nor FuseOps, which types its own output; ANF changes it, so it is."""
    import rvmdbg.passes.pipeline as pipeline
    calls = []
    real = pipeline.check_module
    monkeypatch.setattr(pipeline, "check_module", lambda m: calls.append(m) or real(m))
    mod = load("def @main(%x: int32) -> int32 { %x * 2 + 1 }")
    stages = Pipeline(AST_PASSES).run(mod)
    by_name = {s.name: s.module for s in stages}
    checked = [next(name for name, m in by_name.items() if m is c) for c in calls]
    assert checked == ["ToANormalForm"]
    typed_by_pass = {p.name for p in AST_PASSES if p.typed_output}
    for s in stages:
        assert_typed(s.module)
        assert is_checked(s.module) or s.name in typed_by_pass, s.name


# ---- random programs: deterministic output, same results before and after ----

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(-5, 5), st.integers(-5, 5))
def test_random_programs_deterministic_and_preserved(text, a, b):
    first = default_pipeline().run(load(text))
    second = default_pipeline().run(load(text))
    by_name = {s.name: s for s in first}
    assert [s.text for s in first] == [s.text for s in second]
    expected = run(first[0].module, i32(a), i32(b))
    assert_types_agree_with_checker(by_name["FuseOps"].module, "FuseOps")
    final = by_name["DeadCodeElimination"].module
    assert same(run(final, i32(a), i32(b)), expected)
    assert not op_calls_outside_primitives(final)
    for n in nodes(final.functions["main"]):
        if isinstance(n, Let):
            assert n.var.checked_type is not None
