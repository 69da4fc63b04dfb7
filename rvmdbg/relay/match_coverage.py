"""Exhaustiveness and redundancy of `match`: Maranget's pattern-matrix algorithms over the
constructors appearing in each column (the pattern itself says which ADT or tuple a column
holds). A mixin of the type checker (`typecheck.TypeChecker`), which reports what they find;
they read only the module's constructors and type definitions (`self.mod`)."""
from __future__ import annotations

from rvmdbg.relay.ast import PatternConstructor, PatternTuple, PatternVar, PatternWildcard

_MAX_WITNESSES = 8  # missing-case examples listed in a non-exhaustive match error


def _is_wild(p) -> bool:
    return isinstance(p, (PatternWildcard, PatternVar))


class PatternMatrix:
    """The pattern-matrix algorithms: which values no clause matches, and whether a clause
    matches anything the clauses before it do not."""

    def column_kind(self, rows: list):
        """('adt', TypeData) / ('tuple', arity) / ('any', None) for the first column of rows."""
        for r in rows:
            h = r[0]
            if isinstance(h, PatternConstructor):
                con = h.constructor or self.mod.constructors.get(h.name)
                return "adt", self.mod.type_defs.get(con.type_name)
            if isinstance(h, PatternTuple):
                return "tuple", len(h.patterns)
        return "any", None

    @staticmethod
    def specialize(rows: list, name: str | None, arity: int) -> list:
        """Rows that can match constructor `name` (None: the tuple), its fields spliced in."""
        out = []
        for r in rows:
            h = r[0]
            if _is_wild(h):
                out.append([PatternWildcard()] * arity + r[1:])
            elif name is None:
                if isinstance(h, PatternTuple):
                    out.append(list(h.patterns) + r[1:])
            elif isinstance(h, PatternConstructor) and h.name == name:
                out.append(list(h.patterns) + r[1:])
        return out

    def missing_cases(self, rows: list, width: int) -> list:
        """Value shapes (one text per column) that no row matches; at most _MAX_WITNESSES."""
        if width == 0:
            return [] if rows else [[]]
        kind, info = self.column_kind(rows)
        out: list = []
        if kind == "tuple":
            k = info
            for w in self.missing_cases(self.specialize(rows, None, k), k + width - 1):
                out.append(["(" + ", ".join(w[:k]) + ("," if k == 1 else "") + ")"] + w[k:])
            return out
        if kind == "adt" and info is not None:
            used = {r[0].name for r in rows if isinstance(r[0], PatternConstructor)}
            ctors = info.constructors
            if all(c.name in used for c in ctors):
                for c in ctors:
                    k = len(c.inputs)
                    for w in self.missing_cases(self.specialize(rows, c.name, k), k + width - 1):
                        head = c.name if k == 0 else f"{c.name}({', '.join(w[:k])})"
                        out.append([head] + w[k:])
                        if len(out) >= _MAX_WITNESSES:
                            return out
                return out
            rest = self.missing_cases([r[1:] for r in rows if _is_wild(r[0])], width - 1)
            if not rest:
                return []
            heads = [c.name + ("(" + ", ".join(["_"] * len(c.inputs)) + ")" if c.inputs else "")
                     for c in ctors if c.name not in used]
            return [[h] + w for h in heads for w in rest][:_MAX_WITNESSES]
        rest = self.missing_cases([r[1:] for r in rows if _is_wild(r[0])], width - 1)
        return [["_"] + w for w in rest]

    def useful(self, rows: list, vec: list) -> bool:
        """Whether a value matched by vec escapes every row (Maranget's U)."""
        if not vec:
            return not rows
        h = vec[0]
        if isinstance(h, PatternConstructor):
            return self.useful(self.specialize(rows, h.name, len(h.patterns)),
                                list(h.patterns) + vec[1:])
        if isinstance(h, PatternTuple):
            return self.useful(self.specialize(rows, None, len(h.patterns)),
                                list(h.patterns) + vec[1:])
        kind, info = self.column_kind(rows)
        if kind == "tuple":
            return self.useful(self.specialize(rows, None, info),
                                [PatternWildcard()] * info + vec[1:])
        if kind == "adt" and info is not None:
            used = {r[0].name for r in rows if isinstance(r[0], PatternConstructor)}
            if all(c.name in used for c in info.constructors):
                return any(self.useful(self.specialize(rows, c.name, len(c.inputs)),
                                        [PatternWildcard()] * len(c.inputs) + vec[1:])
                           for c in info.constructors)
        return self.useful([r[1:] for r in rows if _is_wild(r[0])], vec[1:])
