"""Values that contain themselves through reference cells (issue 16): every printer, the JSON
form, equality and every pane show or compare them in finite time, with `<cycle>` where the
cell comes back, as Python prints `[...]` for a list that contains itself."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rvmdbg.debug.heap import heap_of, same_value, value_text, value_tree
from rvmdbg.values import (ADTValue, RefCell, format_value, to_json, value_summary,
                           values_equal)

ROOT = Path(__file__).resolve().parents[1]
CYCLIC = str(ROOT / "tests" / "tui" / "programs" / "cyclic_ref.relay")


def node_in_its_own_cell():
    cell = RefCell(ADTValue(0, "Leaf", ()))
    node = ADTValue(1, "N", (cell,))
    cell.value = node
    return node


def test_printers_show_the_cycle():
    node = node_in_its_own_cell()
    assert format_value(node) == "N(ref(N(<cycle>)))"
    assert format_value(node.fields[0]) == "ref(N(<cycle>))"
    assert value_summary(node, 60) == "N(ref(N(<cycle>)))"
    assert value_text(node) == "N(ref(N(<cycle>)))"
    assert len(value_tree(node)) < 20


def test_a_shared_cell_that_is_no_cycle_prints_in_full_each_time():
    cell = RefCell(np.array(1, dtype="int32"))
    pair = ADTValue(0, None, (cell, cell))
    assert format_value(pair) == "(ref(1), ref(1))"


def test_json_marks_the_cycle():
    node = node_in_its_own_cell()
    assert to_json(node) == {"con": "N", "fields": [
        {"ref": {"con": "N", "fields": [{"cycle": "ref"}]}}]}
    json.dumps(to_json(node))


def test_cyclic_values_compare_as_what_they_unfold_to():
    a, b = node_in_its_own_cell(), node_in_its_own_cell()
    assert values_equal(a, b) and values_equal(a, a)
    # a two-node cycle unfolds to the same infinite value as a one-node cycle
    c1, c2 = RefCell(None), RefCell(None)
    n1, n2 = ADTValue(1, "N", (c1,)), ADTValue(1, "N", (c2,))
    c1.value, c2.value = n2, n1
    assert values_equal(a, n1)
    leafy = RefCell(ADTValue(0, "Leaf", ()))
    assert not values_equal(a, ADTValue(1, "N", (leafy,)))
    assert same_value(a, a) and not same_value(a, b)   # cells by identity, as before


def test_the_heap_walk_ends():
    node = node_in_its_own_cell()
    nodes, truncated = heap_of([node])
    assert not truncated and len(nodes) <= 3


def _rvmdbg(*argv, stdin=None):
    return subprocess.run([sys.executable, "-m", "rvmdbg", *argv], capture_output=True,
                          text=True, timeout=60, input=stdin, cwd=ROOT)


def test_run_json_trace_and_batch_on_a_cyclic_result():
    for executor in ("vm", "interp"):
        proc = _rvmdbg("run", "--executor", executor, CYCLIC)
        assert proc.returncode == 0 and proc.stdout == "N(ref(N(<cycle>)))\n", proc.stderr
    proc = _rvmdbg("run", "--json", CYCLIC)
    assert json.loads(proc.stdout)["result"]["fields"][0]["ref"]["fields"] == [{"cycle": "ref"}]
    proc = _rvmdbg("trace", CYCLIC)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("halt: N(ref(N(<cycle>)))")
    proc = _rvmdbg("debug", CYCLIC, "--batch", "-", stdin="goto 4\nprint $2\ninfo registers\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "$2 = N(ref(N(<cycle>)))" in proc.stdout
