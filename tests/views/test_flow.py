"""View 1's model: stages from source to bytecode and the mapping between them by span."""
from __future__ import annotations

import pytest

from rvmdbg.views.flow import (BYTECODE, EXECUTION, PASS, FlowModel, line_marks, module_nodes,
                               span_within)
from view_helpers import context

LIST = "tests/examples/list_length.relay"


@pytest.fixture(scope="module")
def model():
    return FlowModel(context(LIST, args=None))


def _item(stage, label):
    return next(i for i, it in enumerate(stage.items) if it.label == label)


def test_stage_order_walks_from_source_to_execution(model):
    assert model.names[:3] == ["Source", "AST", "Typed AST"]
    assert model.names[3:-2] == [st.name for st in model.ctx.stages[1:]]
    assert model.names[-2:] == ["Bytecode", "Execution"]
    assert model.kinds[model.bytecode_index] == BYTECODE
    assert model.kinds[model.execution_index] == EXECUTION


def test_source_items_sit_on_their_own_text(model):
    src = model.stage(0)
    add = src.items[_item(src, "Call add")]
    line, col, end_line, end_col = add.region
    assert src.lines[line][col:end_col] == "1 + @length(%rest)"
    rest = src.items[_item(src, "Call @length")]
    assert src.lines[rest.region[0]][rest.region[1]:rest.region[3]] in ("@length(%rest)",
                                                                        "@length(%xs)")


def test_an_expression_is_followed_through_every_pass(model):
    src = model.stage(0)
    origin = src.items[_item(src, "Call add")].origin
    for sm in model.follow(origin):
        assert sm.matches, f"{sm.name}: the addition disappeared"
    fuse = model.stage(model.index_of("FuseOps"))
    labels = {fuse.items[i].label for i in fuse.matches(origin).exact}
    # FuseOps turned the addition into a call of a primitive function that does it
    assert {"Call primitive fn", "Call add"} <= labels


def test_printed_regions_are_the_nodes_text(model):
    st = model.stage(model.index_of("ManifestAlloc"))
    for it in st.items:
        line, col, end_line, end_col = it.region
        text = st.lines[line][col:] if end_line != line else st.lines[line][col:end_col]
        if it.label.startswith("Call memory.alloc_storage"):
            assert text.startswith("memory.alloc_storage(")
        if it.label == "Constant 1":
            assert text == "1"
    assert any(it.label == "Call memory.alloc_storage" for it in st.items)


def test_expression_maps_to_the_instructions_made_from_it(model):
    src = model.stage(0)
    origin = src.items[_item(src, "Call add")].origin
    locs = model.instructions_for(origin)
    exe = model.ctx.exe
    length = exe.func_index("length")
    assert sorted(pc for fi, pc in locs if fi == length) == list(range(5, 11))
    for fi, pc in locs:
        assert exe.span_at(fi, pc) == origin
    # and back: each of those instructions leads to that very expression
    for fi, pc in locs:
        assert model.origin_at(fi, pc) == origin


def test_sub_expressions_are_inside_not_exact(model):
    src = model.stage(0)
    add = src.items[_item(src, "Call add")]
    m = src.matches(add.origin)
    inner = {src.items[i].label for i in m.inside}
    assert "Call @length" in inner and "Constant 1" in inner
    assert all(span_within(src.items[i].origin, add.origin) for i in m.inside)


def test_pass_stage_marks_the_lines_it_changed(model):
    st = model.stage(model.index_of("ManifestLifetimes"))
    added = [st.lines[i].strip() for i, m in enumerate(st.marks) if m == "+"]
    assert added == ["memory.kill(%x_0);"]
    assert st.changed == {"length": "changed"}
    assert model.stage(model.index_of("InferType")).marks == [""] * len(
        model.stage(model.index_of("InferType")).lines)


def test_line_marks_inserted_and_replaced():
    assert line_marks("a\nb\nc", ["a", "x", "c", "d"]) == ["", "~", "", "+"]
    assert line_marks(None, ["a"]) == [""]


def test_nodes_made_by_passes_inherit_their_parents_span(model):
    st = model.stage(model.index_of("ManifestLifetimes"))
    made = [it for it in st.items if not it.own]
    assert any(it.label == "Var %_" for it in made), "the kill's sequencing binder has no span"
    for it in made:
        assert it.origin is not None


def test_outline_shows_types_only_when_typed(model):
    ast, typed = model.stage(1), model.stage(2)
    assert any(line.strip() == "Call add" for line in ast.lines)
    assert any(line.strip() == "Call add  : int32" for line in typed.lines)
    assert len(ast.items) == len(typed.items)


def test_item_at_enclosing_and_preferred(model):
    src = model.stage(0)
    add = _item(src, "Call add")
    line, col = src.items[add].region[:2]
    assert src.item_at(line, col) == _item(src, "Constant 1")  # innermost at that column
    assert src.enclosing(_item(src, "Constant 1")) == add
    st = model.stage(model.index_of("ToANormalForm"))
    chosen = st.items[st.preferred(st.matches(src.items[add].origin))]
    assert chosen.label == "Call primitive fn"   # not the let or the variable bound to it


def test_execution_stage_traces_the_current_instruction(list_length_session):
    ctx = list_length_session
    model = FlowModel(ctx)
    s = ctx.session
    while s.current_instruction().name != "InvokePacked":
        s.step()
    st = model.execution_stage(["earlier"])
    text = "\n".join(st.lines)
    assert "invoke_packed" in text and "fused_add" in text
    assert "1 + @length(%rest)" in text          # the source line, quoted
    assert "FuseOps" in text and "Call primitive fn" in text
    assert st.items[0].origin == s.current_span()
    assert text.rstrip().endswith("earlier")


@pytest.fixture
def list_length_session():
    return context(LIST)


def test_module_nodes_cover_every_function_once():
    ctx = context(LIST, args=None)
    nodes = module_nodes(ctx.module)
    ids = [id(n) for n, _, _ in nodes]
    assert len(ids) == len(set(ids))
    assert {n for n, _, _ in nodes} >= set(ctx.module.functions.values())


@pytest.mark.parametrize("path", ["programs/closures.relay", "programs/mlp.relay",
                                  "programs/refs.relay", "tests/examples/tuple_swap.relay"])
def test_every_stage_builds_and_bytecode_items_match_the_source_map(path):
    model = FlowModel(context(path, args=None))
    for i in range(len(model) - 1):
        st = model.stage(i)
        assert st.items, f"{st.name} has nothing to select"
        if st.kind == PASS:
            assert len(st.marks) == len(st.lines)
    bst = model.stage(model.bytecode_index)
    exe = model.ctx.exe
    assert len(bst.items) == sum(len(f.instructions) for f in exe.functions)
    for it in bst.items:
        assert it.origin == exe.span_at(*it.location)
        assert bst.lines[bst.line_of[it.location]].strip().startswith(f"{it.location[1]}:")
