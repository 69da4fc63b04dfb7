"""A static graph executor, TVM's alternative to the VM, for comparison with it.

`lower_to_graph(mod, entry)` turns a program whose entry is a static dataflow graph into a
`Graph` (or raises `GraphRefusal` naming the first construct that needs the VM),
`plan_memory(graph)` shares storage between tensors whose lifetimes do not overlap, and
`GraphExecutor(graph, plan).run(inputs)` runs it over one preallocated pool.
"""
from rvmdbg.graph.executor import GraphExecutor, GraphRunError, GraphRunStats
from rvmdbg.graph.graph import Graph, GraphNode, GraphRefusal
from rvmdbg.graph.lower import find_refusal, lower_to_graph
from rvmdbg.graph.plan import MemoryPlan, PlanError, plan_memory
from rvmdbg.graph.report import graph_report

__all__ = ["Graph", "GraphNode", "GraphRefusal", "lower_to_graph", "find_refusal",
           "MemoryPlan", "PlanError", "plan_memory", "GraphExecutor", "GraphRunError",
           "GraphRunStats", "graph_report"]
