"""View 3's decision trees: a match's tests recovered from bytecode and run on values."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay import ast as A
from rvmdbg.values import make_tuple
from rvmdbg.views.context import ViewContext
from rvmdbg.views.decision import (GET_FIELD, GET_TAG, IF, LOAD_CONSTI, decision_tree_at,
                                   draw_decision_tree, evaluate, expected_tests,
                                   find_decision_trees, part)
from rvmdbg.views.text import rows_text
from view_helpers import ROOT, int_list, load

PROGRAMS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "programs").glob("*.relay"))

NESTED = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @pairs(%xs: List[int32], %t: (int32, int32)) -> int32 {
  match (%xs) {
    Cons(%a, Cons(%b, Nil)) => %a + %b,
    Cons(_, %rest) => {
      match (%t) {
        (%p, _) => %p,
      }
    },
    _ => 0,
  }
}

def @main(%xs: List[int32]) -> int32 {
  @pairs(%xs, (7, 8))
}
"""


@pytest.fixture(scope="module")
def nested():
    return ViewContext.from_text(NESTED, "nested.relay")


def test_list_length_match(nested):
    ctx, _ = load("tests/examples/list_length.relay")
    fi = ctx.exe.func_index("length")
    (tree,) = find_decision_trees(ctx.exe, fi, ctx.stages[-1].module)
    assert tree.scrutinee == 0 and tree.fatal_pc == 19
    cons, nil = tree.clauses
    assert (cons.pattern, nil.pattern) == ("Cons(_, %rest)", "Nil")
    assert [(t.pc, t.op) for t in cons.tests] == [(0, GET_TAG), (1, LOAD_CONSTI), (2, IF),
                                                  (3, GET_FIELD)]
    assert cons.tests[2].constructor == "Cons" and cons.tests[2].tag == 0
    assert [(b.name, b.register, b.path) for b in cons.bindings] == [("rest", 3, (1,))]
    assert (nil.start, nil.body_pc, nil.exit_pc) == (13, 16, 18)


def test_nested_and_tuple_patterns(nested):
    exe = nested.exe
    fi = exe.func_index("pairs")
    trees = find_decision_trees(exe, fi, nested.stages[-1].module)
    assert len(trees) == 2
    outer = max(trees, key=lambda t: len(t.clauses))
    inner = min(trees, key=lambda t: len(t.clauses))
    assert [c.pattern for c in outer.clauses] == ["Cons(%a, Cons(%b, Nil))", "Cons(_, %rest)",
                                                  "_"]
    ops = [t.op for t in outer.clauses[0].tests]
    assert ops == [GET_TAG, LOAD_CONSTI, IF, GET_FIELD, GET_FIELD,     # Cons, %a, the tail
                   GET_TAG, LOAD_CONSTI, IF, GET_FIELD, GET_FIELD,     # Cons, %b, its tail
                   GET_TAG, LOAD_CONSTI, IF]                           # Nil
    assert [t.path for t in outer.clauses[0].tests if t.op == IF] == [(), (1,), (1, 1)]
    assert outer.clauses[2].always_matches and outer.clauses[2].start is None
    assert [c.pattern for c in inner.clauses] == ["(%p, _)"]
    assert [t.op for t in inner.clauses[0].tests] == [GET_FIELD]
    # every test's pc holds the instruction it claims
    code = exe.functions[fi].instructions
    for tree in trees:
        for c in tree.clauses:
            for t in c.tests:
                assert type(code[t.pc]).__name__.lower().replace("getfield", "get_field") \
                    .replace("gettag", "get_tag").replace("loadconsti", "load_consti") == t.op


def test_evaluate_picks_the_clause_the_vm_takes(nested):
    exe = nested.exe
    fi = exe.func_index("pairs")
    outer = max(find_decision_trees(exe, fi, nested.stages[-1].module),
                key=lambda t: len(t.clauses))
    two = int_list(3, 4)
    ev = evaluate(outer, two)
    assert ev.chosen == 0 and ev.clause_results == ["match", "not reached", "not reached"]
    assert int(ev.bound["a"]) == 3 and int(ev.bound["b"]) == 4
    three = int_list(3, 4, 5)
    ev = evaluate(outer, three)
    assert ev.chosen == 1 and ev.clause_results == ["fail", "match", "not reached"]
    fail_pc = ev.failed_at[0]
    assert ev.test_results[fail_pc] is False
    assert ev.bound["rest"] is three.fields[1]
    ev = evaluate(outer, int_list())
    assert ev.chosen == 2
    # the VM agrees: run @main and compare with what the chosen clause computes
    from rvmdbg.vm.machine import VirtualMachine
    vm = VirtualMachine(exe)
    assert int(vm.invoke("main", [two])) == 7
    assert int(vm.invoke("main", [three])) == 7
    assert int(vm.invoke("main", [int_list()])) == 0


def test_part_follows_field_paths():
    v = make_tuple([int_list(1, 2), np.array(5)])
    assert part(v, (0, 1, 0)).item() == 2
    assert part(v, (1, 0)) is None
    assert part(v, ()) is v


def test_expected_tests_skip_wildcards():
    con = A.Constructor("Cons", [None, None], 0, "List")
    p = A.PatternConstructor("Cons", con, [A.PatternWildcard(), A.PatternVar(A.Var("r"))])
    assert expected_tests(p) == [(GET_TAG, (), None), (LOAD_CONSTI, (), ("Cons", 0)),
                                 (IF, (), ("Cons", 0)), (GET_FIELD, (), 1)]


@pytest.mark.parametrize("path", PROGRAMS)
def test_every_match_of_every_program_is_fitted_to_its_patterns(path):
    ctx, _ = load(path)
    final = ctx.stages[-1].module
    for fi, fn in enumerate(ctx.exe.functions):
        fatals = sum(1 for ins in fn.instructions if ins.name == "Fatal")
        trees = find_decision_trees(ctx.exe, fi, final)
        assert len(trees) == fatals
        for t in trees:
            assert t.match is not None, f"{path} @{fn.name}: match at {t.fatal_pc} not fitted"


def test_without_the_module_later_clauses_are_still_found():
    ctx, _ = load("tests/examples/list_length.relay")
    fi = ctx.exe.func_index("length")
    (tree,) = find_decision_trees(ctx.exe, fi, None)
    assert tree.match is None
    assert [t.pc for t in tree.clauses[1].tests] == [13, 14, 15]
    assert [t.pc for t in tree.clauses[0].tests][:3] == [0, 1, 2]


def test_tree_at_a_pc_and_drawing(nested):
    exe = nested.exe
    fi = exe.func_index("pairs")
    trees = find_decision_trees(exe, fi, nested.stages[-1].module)
    outer = max(trees, key=lambda t: len(t.clauses))
    inner = min(trees, key=lambda t: len(t.clauses))
    assert decision_tree_at(trees, outer.clauses[0].tests[0].pc) is outer
    assert decision_tree_at(trees, inner.clauses[0].tests[0].pc) is inner
    code = exe.functions[fi].instructions
    regs = [None] * 64
    regs[outer.scrutinee] = int_list(3, 4, 5)
    text = rows_text(draw_decision_tree(outer, regs, outer.clauses[0].tests[2].pc, code))
    assert "clause 2 (Cons(_, %rest)) matches" in text
    assert "0 == 0 ✓ go on" in text            # clause 1's first if: a Cons
    assert "✗ → next clause" in text            # its second: Cons where it wants Nil
    assert "bound: %rest = $" in text
    assert "· not reached" in text
    text = rows_text(draw_decision_tree(outer, [None] * 64, None, code))
    assert "the value is not computed yet" in text
