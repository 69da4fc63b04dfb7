"""View 3's ADT heap: the values reachable from a frame's registers drawn as a graph.

Input is the debugger's heap walk (`DebugSession.heap()`: `HeapNode`s with constructor,
fields and reference counts). Each node is drawn once, as a tree under the first register or
field that reaches it; every later reference to it is a `#k` back-reference marked shared.
Long chains (a list of a thousand cells) would indent off the screen, so a chain deeper than
`max_depth` continues as a new top-level entry instead.
"""
from __future__ import annotations

from rvmdbg.views.text import UNICODE
from rvmdbg.i18n import _


def node_title(node) -> str:
    """`#3 Cons tag 0`, `#1 tuple`, `#2 @closure_name`, `#4 ref`."""
    tag = getattr(node.value, "tag", None)
    if node.kind == "adt":
        return f"#{node.id} {node.label} tag {tag}"
    return f"#{node.id} {node.label}"


def draw_heap(nodes: list, symbols=None, max_depth: int = 10, max_rows: int = 500,
              truncated: bool = False) -> list:
    """Rows of (text, role) pieces. Roles: "root" (a register), "node" (a constructed value),
    "shared" (its reference count when more than one), "ref" (a back-reference to a node
    drawn elsewhere), "leaf" (a tensor field), "tree" (branch lines)."""
    symbols = symbols or UNICODE
    rows: list = []
    if not nodes:
        return [[(_("no ADT values, tuples, closures or references in this frame"), "leaf")]]
    by_id = {n.id: n for n in nodes}
    drawn: set = set()
    # top-level entries: registers first; then chains continued past max_depth
    entries = [(f"${r}", n.id) for n in nodes for r in n.roots]
    entries.sort(key=lambda e: int(e[0][1:]))
    queue = list(entries)
    k = 0
    while k < len(queue):
        label, nid = queue[k]
        k += 1
        if len(rows) >= max_rows:
            break
        node = by_id[nid]
        head = [(label, "root"), (f" {symbols.arrow} ", "tree")]
        if nid in drawn:
            rows.append(head + [(f"#{nid}", "ref"), (f" {symbols.shared} " + _("drawn above"), "shared")])
            continue
        _draw_tree(node, by_id, drawn, rows, head, " " * (len(label) + len(symbols.arrow) + 2),
                   symbols, max_depth, max_rows, queue)
    left = len(nodes) - len(drawn)
    if left > 0 and len(rows) >= max_rows:
        rows.append([(f"{symbols.ellipsis} " + _("{n} more nodes").format(n=left), "leaf")])
    if truncated:
        rows.append([(f"{symbols.ellipsis} " + _("the heap walk stopped after {n} nodes").format(n=len(nodes)), "leaf")])
    return rows


def _draw_tree(root, by_id, drawn, rows, head, indent, symbols, max_depth, max_rows, queue):
    # iterative (chains are long): ("row", pieces) or ("node", node, line prefix, child
    # prefix, depth); a node reached again before its turn becomes a back-reference then
    stack: list = [("node", root, head, indent, 0)]
    while stack:
        if len(rows) >= max_rows:
            return
        item = stack.pop()
        if item[0] == "row":
            rows.append(item[1])
            continue
        _kind, node, prefix, child_prefix, depth = item
        if node.id in drawn:
            rows.append(list(prefix) + [(f"#{node.id}", "ref"), (f" {symbols.shared}", "shared")])
            continue
        drawn.add(node.id)
        line = list(prefix) + [(node_title(node), "node")]
        if node.shared:
            line.append((f"  {symbols.shared} {node.refcount} refs", "shared"))
        rows.append(line)
        pending = []
        for i, f in enumerate(node.fields):
            last = i == len(node.fields) - 1
            branch = symbols.last if last else symbols.tee
            cont = child_prefix + ("   " if last else symbols.bar + " ")
            lead = [(child_prefix + branch + " ", "tree"), (f"{f.label}: ", "tree")]
            if f.node is None:
                pending.append(("row", lead + [(f.text, "leaf")]))
                continue
            sub = by_id[f.node]
            if sub.id in drawn:
                pending.append(("row", lead + [(f"#{sub.id}", "ref"), (f" {symbols.shared}", "shared")]))
            elif depth + 1 >= max_depth:
                pending.append(("row", lead + [(f"#{sub.id} {symbols.ellipsis} " + _("continued below"),
                                                "ref")]))
                queue.append((symbols.ellipsis, sub.id))
            else:
                pending.append(("node", sub, lead, cont, depth + 1))
        stack.extend(reversed(pending))


__all__ = ["draw_heap", "node_title"]
