"""Types of source expressions by position: what the source pane shows on demand.

`ExpressionTypes(module, filename)` walks the type-checked module once and keeps, for every
expression and binder written in `filename`, its span and its `checked_type` (the type object
itself, captured before the compiler's passes run). `innermost_at(line, col)` answers with the
smallest expression whose span covers the position.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from rvmdbg.relay import ast


class TypedExpression(NamedTuple):
    line: int
    col: int
    end_line: int
    end_col: int
    kind: str        # the AST class name: Call, Var, Let, ...
    name: str        # a Var's or global's name, else ""
    type: object     # the checked type (str() gives Relay text)

    def covers(self, line: int, col: int) -> bool:
        return (self.line, self.col) <= (line, col) < (self.end_line, self.end_col)

    @property
    def size(self) -> tuple[int, int]:
        return (self.end_line - self.line, self.end_col - self.col if self.end_line == self.line
                else self.end_col)


class ExpressionTypes:
    def __init__(self, module, filename: str | None):
        self.entries: list[TypedExpression] = []
        if module is None:
            return
        seen: set[int] = set()
        for fn in module.functions.values():
            self._walk(fn, filename, seen)
        self.entries.sort()
        self._starts = [(e.line, e.col) for e in self.entries]

    def _add(self, node, filename, kind: str | None = None) -> None:
        span = getattr(node, "span", None)
        t = getattr(node, "checked_type", None)
        if span is None or t is None or (filename is not None and span.file != filename):
            return
        name = getattr(node, "name", "") if isinstance(node, (ast.Var, ast.GlobalVar)) else ""
        self.entries.append(TypedExpression(span.line, span.col, span.end_line, span.end_col,
                                            kind or type(node).__name__, name, t))

    def _walk(self, root, filename, seen: set[int]) -> None:
        stack = [root]
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            self._add(e, filename)
            if isinstance(e, ast.Function):
                stack.extend(p for p in e.params if id(p) not in seen)
            elif isinstance(e, ast.Let):
                stack.append(e.var)
            elif isinstance(e, ast.Match):
                for clause in e.clauses:
                    stack.extend(v for v in ast.pattern_vars(clause.lhs) if id(v) not in seen)
            stack.extend(ast.children(e))

    def innermost_at(self, line: int, col: int) -> TypedExpression | None:
        """The smallest typed expression covering (line, col), 1-based; None if none does."""
        if not self.entries:
            return None
        # Only entries starting at or before the position can cover it.
        end = bisect_right(self._starts, (line, col))
        best = None
        for e in self.entries[:end]:
            if e.covers(line, col) and (best is None or e.size < best.size):
                best = e
        return best


__all__ = ["ExpressionTypes", "TypedExpression"]
