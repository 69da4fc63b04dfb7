"""View 3's ADT heap: each value drawn once, shared ones marked, long chains continued."""
from __future__ import annotations

import numpy as np

from rvmdbg.debug.heap import heap_of
from rvmdbg.values import ADTValue, make_tuple
from rvmdbg.views.heap_graph import draw_heap
from rvmdbg.views.text import ASCII, rows_text
from view_helpers import context, int_list


def test_shared_values_are_drawn_once_and_referenced():
    tail = int_list(6)
    head = ADTValue(0, "Cons", (np.array(5, dtype=np.int32), tail))
    pair = make_tuple([head, tail])
    nodes, _ = heap_of([head, None, pair])
    text = rows_text(draw_heap(nodes))
    assert text.count("Cons tag 0") == 2          # head and tail, each once
    assert "$0 → #0 Cons tag 0" in text
    assert "$2 → #1 tuple" in text
    assert "0: #0 ↺" in text and "1: #2 ↺" in text
    assert "#2 Cons tag 0  ↺ 2 refs" in text or "↺ 2 refs" in text


def test_long_chains_continue_instead_of_indenting_forever():
    nodes, _ = heap_of([int_list(*range(30))])
    rows = draw_heap(nodes, ASCII, max_depth=5)
    text = rows_text(rows)
    assert "... continued below" in text
    width = max(len(r) for r in text.split("\n"))
    assert width < 60
    # every cell of the list is drawn exactly once
    assert text.count("Cons tag 0") == 30


def test_row_budget_and_empty_heap():
    nodes, _ = heap_of([int_list(*range(100))])
    rows = draw_heap(nodes, max_rows=20)
    assert len(rows) <= 21
    assert "more nodes" in rows_text(rows[-1:])
    assert "no ADT values" in rows_text(draw_heap([]))


def test_the_heap_of_a_running_program():
    ctx = context("programs/bst.relay")
    s = ctx.session
    for _ in range(200):
        s.step()
    nodes = s.heap()
    text = rows_text(draw_heap(nodes))
    assert "Node tag 1" in text or "Cons tag 0" in text
    roles = {role for row in draw_heap(nodes) for _, role in row}
    assert {"root", "node", "tree"} <= roles
