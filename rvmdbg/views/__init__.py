"""The teaching views' engine side: data models and measurements, no Textual.

- `context`: what the views look at (typed module, pass stages, executable, session);
- `flow`, `positions`: view 1, the program at every stage and the mapping between stages;
- `executors`, `costmodel`, `plot`: view 2, VM against graph executor, the cost model and
  its chart;
- `cfg`, `decision`, `heap_graph`: view 3, basic blocks and the path taken, match decision
  trees, the ADT heap as a graph;
- `text`: drawings as rows of (text, role) pieces, symbol sets and arrow lanes.
"""
