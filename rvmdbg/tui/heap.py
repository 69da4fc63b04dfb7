"""The ADT heap of the selected frame as an expandable tree.

One root per register that holds an ADT value, tuple, reference or closure; expanding a node
adds its fields (lazily: a list of 100,000 cells costs nothing until opened). A node shows
the constructor, its tag and its field count; a value reachable along more than one path from
the frame's registers is marked shared with a short `#k` name, so sharing is visible without
following pointers by hand. Counting the sharing walks at most `SHARING_BUDGET` objects.
"""
from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree

from rvmdbg.tui.glyphs import UNICODE, Glyphs
from rvmdbg.tui.line_pane import set_title, use_ascii_scrollbars
from rvmdbg.tui.summary import children_of, heap_registers, is_heap_object, value_summary, value_type
from rvmdbg.values import ADTValue, RefCell
from rvmdbg.i18n import N_, _

SHARING_BUDGET = 50_000
MAX_ROOTS = 500


def count_references(roots) -> dict[int, int]:
    """id -> number of references to each heap object reachable from `roots` (bounded)."""
    return _walk(roots)[0]


def _walk(roots) -> tuple[dict[int, int], bool]:
    """(reference counts, whether a mutable reference cell is reachable)."""
    counts: dict[int, int] = {}
    stack = [v for v in roots if is_heap_object(v)]
    visited = 0
    has_refs = False
    while stack and visited < SHARING_BUDGET:
        v = stack.pop()
        key = id(v)
        n = counts.get(key, 0)
        counts[key] = n + 1
        visited += 1
        if n == 0:
            if isinstance(v, RefCell):
                has_refs = True
            stack.extend(c for _, c in children_of(v) if is_heap_object(c))
    return counts, has_refs or visited >= SHARING_BUDGET


class HeapTree(Tree):
    title = N_("Heap")

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | {
        "heap--register", "heap--constructor", "heap--tag", "heap--shared", "heap--leaf",
    }

    BINDINGS = [
        Binding("Y", "screen.copy_pane", N_("Copy"), tooltip=N_("Copy the tree as shown (OSC 52)"),
                id="copy-heap"),
    ]

    def __init__(self, glyphs: Glyphs = UNICODE, **kwargs) -> None:
        super().__init__("heap", **kwargs)
        self.glyphs = glyphs
        self.show_root = False
        self.auto_expand = False
        self.constructor_types: dict[str, str] = {}
        self._counts: dict[int, int] = {}
        self._names: dict[int, int] = {}
        self._shown: list = []          # (register, value) pairs the tree was built from
        self._has_refs = False
        self._showing_message = True    # a message, not a register file's tree
        self.border_title = _(self.title)
        if glyphs is not UNICODE:
            self.ICON_NODE = "+ "
            self.ICON_NODE_EXPANDED = "- "
            self.LINES = {key: ("  ", "| ", "`-", "|-") for key in ("default", "bold", "double")}

    def on_mount(self) -> None:
        if self.glyphs is not UNICODE:
            use_ascii_scrollbars(self)

    def set_registers(self, registers, title: str | None = None,
                      heap_regs: list[int] | None = None) -> None:
        """Rebuild the roots from a register file (fields are added when expanded). Nodes
        that were open stay open (by their path of names: `$3`, `[1]`, ...). `heap_regs`:
        the registers holding heap objects, when the caller knows them (the registers pane
        does), so a big register file is not searched again."""
        regs = registers if isinstance(registers, list) else list(registers)
        if heap_regs is None:
            heap_regs = heap_registers(regs)
        holders = [(r, regs[r]) for r in heap_regs]
        # Values are immutable (bar reference cells): the same objects need no new tree.
        if (not self._has_refs and len(holders) == len(self._shown) and not self._showing_message
                and all(a[0] == b[0] and a[1] is b[1] for a, b in zip(holders, self._shown))):
            # the same tree: a new title is a repaint of the frame, a rebuild lays out
            set_title(self, title or _(self.title))
            return
        self._shown = holders
        self._showing_message = False
        opened = self._open_paths()
        cursor = self._path(self.cursor_node) if self.cursor_node is not None else None
        self.clear()
        self._counts, self._has_refs = _walk(v for _, v in holders)
        self._names = {}
        self.border_title = title or _(self.title)
        for r, v in holders[:MAX_ROOTS]:
            self._add(self.root, f"${r}", v, register=True)
        if len(holders) > MAX_ROOTS:
            self.root.add_leaf(Text(_("{n} more registers not shown").format(n=len(holders) - MAX_ROOTS),
                                    style="italic"))
        if not holders:
            self.root.add_leaf(Text(_("no ADT values in this frame"), style="italic"))
        self.set_class(not holders, "-message")
        self.root.expand()
        self._reopen(opened)
        self.cursor_line = 0 if holders else -1
        if cursor is not None:
            node = self._find(cursor)
            if node is not None:
                self.move_cursor(node, animate=False)

    @staticmethod
    def _path(node) -> tuple[str, ...]:
        names = []
        while node is not None and node.parent is not None:
            names.append(node.label.plain.split(" ", 1)[0])
            node = node.parent
        return tuple(reversed(names))

    def _open_paths(self) -> list[tuple[str, ...]]:
        out = []
        stack = list(self.root.children)
        while stack and len(out) < 200:
            node = stack.pop()
            if node.is_expanded:
                out.append(self._path(node))
                stack.extend(node.children)
        return sorted(out, key=len)

    def _find(self, path: tuple[str, ...]):
        node = self.root
        for name in path:
            for child in node.children:
                if child.label.plain.split(" ", 1)[0] == name:
                    node = child
                    break
            else:
                return None
        return node

    def _reopen(self, paths) -> None:
        for path in paths:
            node = self._find(path)
            if node is not None and node.allow_expand:
                self._populate(node)
                node.expand()

    def show_message(self, message: str) -> None:
        self._shown = []
        self._showing_message = True
        self.border_title = _(self.title)
        self.clear()
        self.root.add_leaf(Text(message, style="italic"))
        self.add_class("-message")
        self.root.expand()
        self.cursor_line = -1

    def _label(self, name: str, v, register: bool) -> Text:
        st = self.get_component_rich_style
        text = Text()
        text.append(f"{name} ", st("heap--register", partial=True) if register else None)
        if isinstance(v, ADTValue):
            con = v.con if v.con is not None else "tuple"
            text.append(con, st("heap--constructor", partial=True))
            if v.con is not None:
                text.append(f" tag {v.tag}", st("heap--tag", partial=True))
                ty = self.constructor_types.get(v.con)
                if ty:
                    text.append(f" : {ty}", st("heap--tag", partial=True))
            if v.fields:
                text.append(f"  {value_summary(v, 40, self.glyphs.ellipsis)}", st("heap--leaf", partial=True))
        elif isinstance(v, RefCell):
            text.append("ref", st("heap--constructor", partial=True))
        elif is_heap_object(v):
            text.append(f"closure @{getattr(v, 'name', '?')}", st("heap--constructor", partial=True))
        else:
            kind = value_type(v, self.constructor_types)
            summary = value_summary(v, 60, self.glyphs.ellipsis)
            text.append(f"{summary}", st("heap--leaf", partial=True))
            if kind and not (isinstance(v, (np.ndarray, np.generic)) and v.ndim == 0
                             and kind == "int32"):
                text.append(f"  {kind}", st("heap--tag", partial=True))
        if is_heap_object(v) and self._counts.get(id(v), 0) > 1:
            k = self._names.setdefault(id(v), len(self._names) + 1)
            text.append(f"  {self.glyphs.shared} " + _("shared #{k} x{n}").format(k=k, n=self._counts[id(v)]),
                        st("heap--shared", partial=True))
        return text

    def _add(self, parent, name: str, v, register: bool = False) -> None:
        if is_heap_object(v) and children_of(v):
            parent.add(self._label(name, v, register), data=v, allow_expand=True)
        else:
            parent.add_leaf(self._label(name, v, register), data=v)

    def _populate(self, node) -> None:
        if node.children or node.data is None:
            return
        for label, child in children_of(node.data):
            self._add(node, label, child)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._populate(event.node)

    def text(self) -> str:
        """The tree as far as it is expanded, one node a line, indented by depth."""
        out = []
        stack = [(n, 0) for n in reversed(self.root.children)]
        while stack:
            node, depth = stack.pop()
            out.append("  " * depth + node.label.plain)
            if node.is_expanded:
                stack.extend((c, depth + 1) for c in reversed(node.children))
        return "\n".join(out)

    def search(self, text: str) -> bool:
        """Move the cursor to the next loaded node whose label contains `text`."""
        needle = text.lower()
        nodes = []
        stack = list(reversed(self.root.children))
        while stack:
            node = stack.pop()
            nodes.append(node)
            stack.extend(reversed(node.children))
        if not nodes:
            return False
        current = self.cursor_node
        start = nodes.index(current) + 1 if current in nodes else 0
        for k in range(len(nodes)):
            node = nodes[(start + k) % len(nodes)]
            if needle in node.label.plain.lower():
                parent = node.parent
                while parent is not None:
                    parent.expand()
                    parent = parent.parent
                self.move_cursor(node, animate=False)
                return True
        return False


__all__ = ["HeapTree", "count_references"]
