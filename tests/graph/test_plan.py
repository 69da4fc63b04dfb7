"""The memory planner: TVM's reuse rule on hand-made graphs, the MLP's saving, and a property
over random graphs that no two simultaneously live tensors ever share storage."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph_helpers import GRAPH_PROGRAMS, PROGRAMS, load_path
from rvmdbg.graph import Graph, GraphNode, PlanError, lower_to_graph, plan_memory
from rvmdbg.graph.graph import CONSTANT, INPUT, KERNEL
from rvmdbg.graph.plan import MemoryPlan


# ---------------------------------------------------------------------------- synthetic graphs

class Builder:
    """Graphs without functions, for the planner only: sizes in bytes (int8 vectors)."""

    def __init__(self):
        self.nodes, self.shapes, self.dtypes, self.row = [], [], [], [0]

    def _add(self, node, shapes):
        node.num_outputs = len(shapes)
        self.nodes.append(node)
        self.shapes.extend(shapes)
        self.dtypes.extend(["int8"] * len(shapes))
        self.row.append(self.row[-1] + len(shapes))
        return len(self.nodes) - 1

    def input(self, size, kind=INPUT):
        return (self._add(GraphNode("null", f"i{len(self.nodes)}", kind), [(size,)]), 0)

    def kernel(self, inputs, sizes, reshape_only=False):
        nid = self._add(GraphNode("tvm_op", f"k{len(self.nodes)}", KERNEL, inputs=list(inputs),
                                  func_name=f"k{len(self.nodes)}", reshape_only=reshape_only),
                        [(s,) for s in sizes])
        return [(nid, i) for i in range(len(sizes))]

    def reshape(self, entry):
        size = self.shapes[self.row[entry[0]] + entry[1]][-1]
        return self.kernel([entry], [size], reshape_only=True)[0]

    def graph(self, heads):
        return Graph(nodes=self.nodes, node_row_ptr=self.row, shapes=self.shapes,
                     dtypes=self.dtypes, heads=list(heads), result_form=None)


def sid(graph, plan, entry):
    return plan.storage_ids[graph.entry_id(*entry)]


def test_smallest_block_that_fits_is_reused():
    b = Builder()
    x = b.input(1)
    a, = b.kernel([x], [100])
    big, = b.kernel([x], [400])
    c, = b.kernel([a, big], [1])       # a and big are free after this node
    d, = b.kernel([c], [90])           # 100 fits 90 better than 400
    e, = b.kernel([c], [300])          # 400 is left, within 16x of 300
    g = b.graph([d, e])
    plan = plan_memory(g)
    assert sid(g, plan, d) == sid(g, plan, a)
    assert sid(g, plan, e) == sid(g, plan, big)
    assert plan.block_sizes[sid(g, plan, a)] == 100
    plan.check(g)


def test_largest_smaller_block_is_grown():
    b = Builder()
    x = b.input(1)
    a, = b.kernel([x], [64])
    c, = b.kernel([a], [1])
    d, = b.kernel([c], [100])          # no free block >= 100; 64 is within 1/16 and grows
    g = b.graph([d])
    plan = plan_memory(g)
    assert sid(g, plan, d) == sid(g, plan, a)
    assert plan.block_sizes[sid(g, plan, a)] == 100


@pytest.mark.parametrize("free_size,wanted", [(10, 200), (4000, 100)])
def test_blocks_outside_the_16x_range_are_not_reused(free_size, wanted):
    b = Builder()
    x = b.input(1)
    a, = b.kernel([x], [free_size])
    c, = b.kernel([a], [1])
    d, = b.kernel([c], [wanted])
    g = b.graph([d])
    plan = plan_memory(g)
    assert sid(g, plan, d) not in (sid(g, plan, a), sid(g, plan, c))
    assert plan.num_blocks == 4


def test_a_kernel_never_writes_the_block_it_reads():
    b = Builder()
    x = b.input(8)
    a, = b.kernel([x], [8])
    c, = b.kernel([a], [8])            # a dies here, but only after c got its block
    d, = b.kernel([c], [8])            # a's block is free now
    g = b.graph([d])
    plan = plan_memory(g)
    assert sid(g, plan, c) != sid(g, plan, a)
    assert sid(g, plan, d) == sid(g, plan, a)


def test_unused_output_is_freed_at_once():
    b = Builder()
    x = b.input(4)
    used, unused = b.kernel([x], [4, 32])
    c, = b.kernel([used], [32])        # reuses the orphan's block
    g = b.graph([c])
    plan = plan_memory(g)
    assert sid(g, plan, c) == sid(g, plan, unused)


def test_inputs_constants_and_heads_are_never_reused():
    b = Builder()
    x = b.input(16)
    w = b.input(16, kind=CONSTANT)
    h, = b.kernel([x, w], [16])        # a head: must survive the run
    c, = b.kernel([h], [16])
    d, = b.kernel([c], [16])
    e, = b.kernel([d], [16])
    g = b.graph([h, e])
    plan = plan_memory(g)
    reserved = {sid(g, plan, x), sid(g, plan, w), sid(g, plan, h)}
    assert len(reserved) == 3
    assert sid(g, plan, c) not in reserved and sid(g, plan, d) not in reserved
    assert sid(g, plan, e) not in reserved


def test_reshape_aliases_until_both_uses_end():
    b = Builder()
    x = b.input(32)
    a, = b.kernel([x], [32])
    r = b.reshape(a)                   # shares a's block
    c, = b.kernel([r], [32])           # a's block is still busy: a is used below
    d, = b.kernel([a, c], [32])        # now both a and r are done
    e, = b.kernel([d], [32])
    g = b.graph([e])
    plan = plan_memory(g)
    assert sid(g, plan, r) == sid(g, plan, a)
    assert sid(g, plan, c) != sid(g, plan, a)
    assert sid(g, plan, e) == sid(g, plan, a)
    assert plan.aliased == {g.entry_id(*r): g.entry_id(*a)}
    plan.check(g)


def test_check_rejects_two_live_entries_in_one_block():
    b = Builder()
    x = b.input(8)
    a, = b.kernel([x], [8])
    c, = b.kernel([a], [8])
    d, = b.kernel([a, c], [8])
    g = b.graph([d])
    plan = plan_memory(g)
    plan.check(g)
    bad = list(plan.storage_ids)
    bad[g.entry_id(*c)] = bad[g.entry_id(*a)]   # c is written while a is still read
    with pytest.raises(PlanError, match="share storage"):
        MemoryPlan(bad, plan.block_sizes, plan.entry_bytes).check(g)
    small = list(plan.block_sizes)
    small[plan.storage_ids[g.entry_id(*a)]] = 4
    with pytest.raises(PlanError, match="needs 8 bytes"):
        MemoryPlan(plan.storage_ids, small, plan.entry_bytes).check(g)


# ---------------------------------------------------------------------------- real programs

def test_mlp_pool_is_smaller_than_its_tensors():
    mod, _ = load_path(PROGRAMS / "mlp.relay")
    g = lower_to_graph(mod)
    plan = plan_memory(g)
    assert plan.tensor_bytes == 276 and plan.pool_bytes == 264
    assert plan.pool_bytes < plan.tensor_bytes
    # the softmax output reuses the first layer's block
    assert plan.storage_ids[7] == plan.storage_ids[5]
    assert "reuse ratio" in plan.summary() and "pool bytes:        264" in plan.summary()


@pytest.mark.parametrize("name", ["elementwise_chain", "dense_layers", "concat_split",
                                  "reshape_alias", "inline_global"])
def test_plans_of_static_programs_are_valid(name):
    mod, _ = load_path(GRAPH_PROGRAMS / f"{name}.relay")
    g = lower_to_graph(mod)
    plan = plan_memory(g)
    plan.check(g)
    assert plan.pool_bytes <= plan.tensor_bytes


# ---------------------------------------------------------------------------- the property

SIZES = [1, 3, 4, 16, 17, 60, 64, 100, 256, 1000, 1024, 4096]


@st.composite
def random_graphs(draw):
    b = Builder()
    entries = [b.input(draw(st.sampled_from(SIZES)),
                       kind=draw(st.sampled_from([INPUT, CONSTANT])))
               for _ in range(draw(st.integers(1, 3)))]
    for _ in range(draw(st.integers(1, 14))):
        if draw(st.integers(0, 4)) == 0:
            entries.append(b.reshape(draw(st.sampled_from(entries))))
            continue
        inputs = draw(st.lists(st.sampled_from(entries), min_size=1, max_size=3))
        sizes = draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=3))
        entries.extend(b.kernel(inputs, sizes))
    heads = draw(st.lists(st.sampled_from(entries), min_size=1, max_size=3))
    return b.graph(heads)


def independent_live_ranges(g: Graph):
    """[first, last] position per alias group (a reshape-only output joins its input)."""
    n = g.num_entries
    group = list(range(n))
    for nid, node in enumerate(g.nodes):
        if node.reshape_only:
            group[g.entry_id(nid)] = group[g.entry_id(*node.inputs[0])]
    end = len(g.nodes)
    ranges = {}
    for nid, node in enumerate(g.nodes):
        for i in range(node.num_outputs):
            e = g.entry_id(nid, i)
            start, stop = (nid, nid) if node.kind == KERNEL else (-1, end)
            lo, hi = ranges.get(group[e], (start, stop))
            ranges[group[e]] = (min(lo, start), max(hi, stop))
        for src, idx in node.inputs:
            k = group[g.entry_id(src, idx)]
            lo, hi = ranges[k]
            ranges[k] = (lo, max(hi, nid))
    for src, idx in g.heads:
        k = group[g.entry_id(src, idx)]
        ranges[k] = (ranges[k][0], end)
    return group, ranges


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_live_entries_never_share_storage(g):
    """The suite's campaign: the same 60 graphs every run (`-m fuzz` draws 2,000 new ones)."""
    _check_live_entries_never_share_storage(g)


@pytest.mark.fuzz
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_live_entries_never_share_storage_long(g):
    _check_live_entries_never_share_storage(g)


def _check_live_entries_never_share_storage(g):
    plan = plan_memory(g)
    group, ranges = independent_live_ranges(g)
    n = g.num_entries
    for e in range(n):
        assert g.entry_bytes(e) <= plan.block_sizes[plan.storage_ids[e]]
        if group[e] != e:
            assert plan.storage_ids[e] == plan.storage_ids[group[e]]
    reps = sorted(set(group))
    for i, a in enumerate(reps):
        for b in reps[i + 1:]:
            if plan.storage_ids[a] != plan.storage_ids[b]:
                continue
            (lo1, hi1), (lo2, hi2) = ranges[a], ranges[b]
            assert hi1 < lo2 or hi2 < lo1, (a, b, ranges[a], ranges[b])
    # inputs and constants keep a block of their own (shared only with their reshapes)
    for nid, node in enumerate(g.nodes):
        if node.kind != KERNEL:
            e = g.entry_id(nid)
            assert all(group[o] == group[e] for o in range(n)
                       if plan.storage_ids[o] == plan.storage_ids[e])
    assert plan.pool_bytes <= plan.tensor_bytes
    plan.check(g)  # the plan's own verifier agrees
