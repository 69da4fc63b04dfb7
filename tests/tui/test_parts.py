"""The screen's Textual-free parts: arrow lanes, value summaries, types by position, source
links, lexing, and the help's key names."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from rvmdbg.tui.arrows import Edge, GutterLayout, jump_edges
from rvmdbg.tui.expr_types import ExpressionTypes
from rvmdbg.tui.glyphs import ASCII, UNICODE
from rvmdbg.tui.help_screen import key_text
from rvmdbg.tui.links import PALETTE_SIZE, SourceLinks
from rvmdbg.tui.source_view import lex_lines
from rvmdbg.tui.summary import value_summary, value_type
from rvmdbg.values import ADTValue, RefCell
from rvmdbg.vm import bytecode as bc

from conftest import program


def draw(layout, lines, active=frozenset(), glyphs=UNICODE):
    return ["".join(t for t, _ in layout.line(i, glyphs.light, glyphs.heavy, glyphs.arrow_head, active))
            for i in range(lines)]


def test_nested_jumps_take_inner_lanes_first():
    # 0 -> 5 encloses 1 -> 3: the short one gets lane 0 (next to the text)
    layout = GutterLayout([Edge(0, 5), Edge(1, 3)], max_lanes=4)
    assert layout.lane_of == [1, 0] and layout.width == 3
    assert draw(layout, 6) == ["╭──", "│╭─", "││ ", "│╰▶", "│  ", "╰─▶"]


def test_disjoint_jumps_share_a_lane():
    layout = GutterLayout([Edge(0, 2), Edge(3, 5)], max_lanes=4)
    assert layout.lanes == 1 and layout.lane_of == [0, 0]


def test_backward_jump_and_crossing():
    # a backward edge 4 -> 1 crossed by a forward one 2 -> 6 (they overlap: two lanes)
    layout = GutterLayout([Edge(4, 1), Edge(2, 6)], max_lanes=4)
    assert draw(layout, 7) == ["   ", " ╭▶", "╭┼─", "││ ", "│╰─", "│  ", "╰─▶"]


def test_edges_touching_the_pc_are_heavy_and_only_they():
    layout = GutterLayout([Edge(0, 5), Edge(1, 3)], max_lanes=4)
    active = layout.active_edges(3)
    assert active == frozenset({1})
    rows = draw(layout, 6, active)
    assert rows[1] == "│┏━" and rows[3] == "│┗▶" and rows[0] == "╭──"


def test_ascii_gutters():
    layout = GutterLayout([Edge(0, 5), Edge(1, 3)], max_lanes=4)
    rows = draw(layout, 6, layout.active_edges(3), ASCII)
    assert all(ord(c) < 128 for row in rows for c in row)
    assert rows[0] == "+--" and rows[1] == "|#=" and rows[3] == "|#>"


def test_too_many_edges_overflow_instead_of_growing():
    edges = [Edge(0, 10 + i) for i in range(5)]
    layout = GutterLayout(edges, max_lanes=3)
    assert layout.lanes == 3 and len(layout.overflow) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=12))
def test_lanes_never_overlap(pairs):
    edges = [Edge(a, b) for a, b in pairs if a != b]
    layout = GutterLayout(edges, max_lanes=5)
    by_lane: dict = {}
    for e, lane in zip(edges, layout.lane_of):
        if lane is not None:
            by_lane.setdefault(lane, []).append((min(e.src, e.dst), max(e.src, e.dst)))
    for spans in by_lane.values():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a1 < b0
    # every drawn line has exactly `width` cells, precomputed or on demand
    lazy = GutterLayout(edges, max_lanes=5, precompute=False)
    for i in range(32):
        assert len(draw(layout, i + 1)[i]) == layout.width
        assert draw(layout, i + 1)[i] == draw(lazy, i + 1)[i]


def test_jump_edges_leave_out_fall_through():
    code = [bc.LoadConsti(1, 0), bc.If(0, 0, 1, 3), bc.Move(0, 1), bc.Goto(2), bc.Move(1, 0),
            bc.Ret(0)]
    assert jump_edges(code) == [Edge(1, 4), Edge(3, 5)]


def test_value_types_and_summaries():
    assert value_type(np.array(5, dtype="int32")) == "int32"
    assert value_type(np.zeros((2, 3), dtype="float32")) == "float32[2, 3]"
    # elements as NumPy prints them (the dtype is in the type column), then the statistics
    assert value_summary(np.arange(6, dtype="float32").reshape(2, 3), 60) == \
        "[0, 1, 2, 3, …] min 0, max 5, mean 2.5"
    nil = ADTValue(1, "Nil", ())
    lst = nil
    for i in range(100):
        lst = ADTValue(0, "Cons", (np.array(i, dtype="int32"), lst))
    assert value_type(lst, {"Cons": "List"}) == "List"
    text = value_summary(lst, 30)
    assert text.startswith("Cons(99, Cons(98,") and len(text) <= 30 and text.endswith("…")
    assert value_summary(ADTValue(0, None, (np.array(1, dtype="int32"),))) == "(1,)"
    assert value_type(ADTValue(0, None, (1, 2))) == "tuple/2"
    assert value_summary(RefCell(np.array(2, dtype="int32"))) == "ref(2)"
    assert value_summary(None) == "-"

    class Odd:
        def __repr__(self):
            raise RuntimeError("no")
    assert value_summary(Odd()).startswith("<Odd")


def test_long_lists_summarise_without_deep_recursion():
    lst = ADTValue(1, "Nil", ())
    for i in range(200_000):
        lst = ADTValue(0, "Cons", (np.array(i, dtype="int32"), lst))
    assert len(value_summary(lst, 60)) <= 60


def test_types_by_position():
    prog = program("programs/sum_up.relay")
    types = prog.expression_types
    n = types.innermost_at(5, 14)          # `%n` in `def @sum_up(%n: int32)`
    assert n.kind == "Var" and n.name == "n" and str(n.type) == "int32"
    callee = types.innermost_at(9, 10)     # `@sum_up` in `%n + @sum_up(%n - 1)`
    assert callee.kind == "GlobalVar" and str(callee.type) == "fn (int32) -> int32"
    minus = types.innermost_at(9, 20)      # the space after `%n` in `%n - 1`
    assert minus.kind == "Call" and str(minus.type) == "int32"
    assert (minus.line, minus.col, minus.end_col) == (9, 18, 24)
    assert types.innermost_at(1, 1) is None
    assert ExpressionTypes(None, None).innermost_at(1, 1) is None


def test_source_links_colour_lines_and_find_instructions():
    prog = program("programs/sum_up.relay")
    links = SourceLinks(prog.exe, prog.source_file)
    lines = sorted(links.locations_by_line)
    assert lines and all(0 <= links.colour_of_line[l] < PALETTE_SIZE for l in lines)
    # neighbouring lines that have code get different colours
    for a, b in zip(lines, lines[1:]):
        assert links.colour_of_line[a] != links.colour_of_line[b]
    main = prog.exe.func_index("main")
    assert links.best_location(14, main) == (main, 0)
    assert links.line_of(main, 0) == 14
    assert links.best_location(2) is None


def test_lexing_keeps_every_character():
    text = (program("programs/bst.relay").source_text)
    lines = lex_lines(text)
    assert ["".join(t for _, t in runs) for runs in lines] == text.rstrip("\n").split("\n")
    classes = {cls for runs in lines for cls, _ in runs}
    assert {"source--keyword", "source--function", "source--variable", "source--comment"} <= classes


def test_key_names_for_the_help():
    assert key_text("shift+f11") == "Shift+F11"
    assert key_text("ctrl+c") == "Ctrl+C"
    assert key_text("question_mark") == "?"
    assert key_text("S") == "S"
