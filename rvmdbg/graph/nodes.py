"""The kinds of node a static graph holds (an input, a constant, a kernel call): a leaf that
both the graph and its memory plan read, so the plan needs nothing from `graph.py`."""

INPUT, CONSTANT, KERNEL = "input", "constant", "kernel"
