"""Parsing call attributes: `name=value` lists, attribute values (numbers, strings, shapes,
dtypes, TVM's `{...}` object reprs) and attribute maps, for `_Parser` in parser.py.

The mixin relies on the parser's state (`toks`, `pos`, `file`, scopes) and its error helpers.
"""
from __future__ import annotations

from rvmdbg.i18n import _
from rvmdbg.relay.ast import AttrMap, AttrObject
from rvmdbg.relay.diagnostics import ParseError
from rvmdbg.relay.lexer import BOOL, NAME, NUM, STR
from rvmdbg.relay.parse_common import KNOWN_DTYPES
from rvmdbg.relay.types import DTYPE_ALIASES

# the casts TVM's printer writes before a value in an object's repr: `attrs={'x': (bool)0}`
_REPR_CASTS = {"bool": bool, "int": int, "int32": int, "int64": int, "float": float,
               "float32": float, "float64": float}


class AttrSyntax:
    """The attribute part of the Relay text grammar."""

    def attributes(self, close: str) -> dict:
        """`name=value, ...` up to (not including) `close`."""
        toks = self.toks
        attrs = {}
        while True:
            tok = toks[self.pos]
            eq = self.attr_key_end(self.pos) if tok[0] == NAME else None
            if eq is None:
                if tok[0] == close:
                    return attrs
                raise self.expected(_("an attribute `name=value` (attributes come last)"))
            # TVM's keys are hierarchical names: `relay.reshape_only=1`
            name = "".join(t[1] for t in toks[self.pos:eq])
            if name in attrs:
                raise self.error(ParseError, _("duplicate attribute {name}").format(name=name),
                                 tok)
            self.pos = eq + 1
            attrs[name] = self.attr_value()
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k == close:
                return attrs
            else:
                raise self.expected(_("`,` or `{close}` after the attribute {name}").format(
                    close=close, name=name))

    def attr_key_end(self, pos: int) -> int | None:
        """The index of the `=` after an attribute key (`name` or `a.b.c`) starting at pos,
        or None when the tokens there are no key."""
        toks = self.toks
        while True:
            if toks[pos][0] != NAME:
                return None
            k = toks[pos + 1][0]
            if k == "=":
                return pos + 1
            if k != ".":
                return None
            pos += 2

    def attr_value(self):
        tok = self.toks[self.pos]
        k = tok[0]
        self.pos += 1
        if k == NUM:
            return tok[6].value
        if k == STR:
            return tok[6]
        if k == BOOL:
            return tok[6]
        if k == NAME and tok[1] in ("None", "null", "nullptr"):
            return None
        if k == "?":
            # TVM's printer writes an unknown dimension in a shape attribute as `?`
            # (`assert_shape=[?, 4]` after ManifestAlloc); it is None, as an unknown dim
            return None
        if k == NAME and tok[1] == "meta" and self.toks[self.pos][0] == "[":
            self.pos -= 1
            return self.meta_ref(as_expr=False)[0]
        if k == "(":
            if (self.toks[self.pos][0] == NAME and self.toks[self.pos][1] in _REPR_CASTS
                    and self.toks[self.pos + 1][0] == ")"):
                # `(bool)0`, as TVM's printer writes a typed value inside an object's repr
                cast = _REPR_CASTS[self.toks[self.pos][1]]
                self.pos += 2
                if self.toks[self.pos][0] not in (NUM, BOOL):
                    raise self.expected(_("a number after the cast `({name})`").format(
                        name=self.toks[self.pos - 2][1]))
                return cast(self.attr_value())
            # TVM: `(v)` is v; a parenthesised list is accepted as a list
            self.enter()
            first = self.attr_value()
            if self.toks[self.pos][0] == ")":
                self.pos += 1
                self.depth -= 1
                return first
            if self.toks[self.pos][0] != ",":
                raise self.expected(_("`)` after the attribute value"))
            self.pos += 1
            out = [first]
            while self.toks[self.pos][0] != ")":
                out.append(self.attr_value())
                self.separator(")", _("`,` or `)` in an attribute list"))
            self.pos += 1
            self.depth -= 1
            return out
        if k == "[":
            close = "]"
            self.enter()
            out = []
            while self.toks[self.pos][0] != close:
                out.append(self.attr_value())
                self.separator(close, _("`,` or `{close}` in an attribute list").format(
                    close=close))
            self.pos += 1
            self.depth -= 1
            return out
        if k == "{":
            return self.attr_map()
        if k == NAME and self.toks[self.pos][0] == "(":
            return self.attr_object(tok[1])
        self.pos -= 1
        hint = None
        if k == NAME and (tok[1] in KNOWN_DTYPES or tok[1] in DTYPE_ALIASES):
            hint = _("dtypes are strings in attributes: {dtype}").format(dtype=f'"{tok[1]}"')
        raise self.expected(
            _("an attribute value (number, string, True/False, list, map or None)"), hint=hint)

    def separator(self, close: str, expected: str) -> None:
        """Between the items of a list closed by `close`: a `,` is consumed, `close` left for
        the caller; anything else is the error `expected`."""
        k = self.toks[self.pos][0]
        if k == ",":
            self.pos += 1
        elif k != close:
            raise self.expected(expected)

    def attr_object(self, name: str):
        """After `Name`: `(key=value, ...)`, an object TVM's printer wrote inline
        (`VirtualDevice(device_type=1, target=Target(kind='llvm', keys={'cpu'}))`)."""
        self.pos += 1  # the `(`
        self.enter()
        fields = self.attributes(")")
        self.pos += 1
        self.depth -= 1
        return AttrObject(name, fields)

    def attr_map(self):
        """After `{`: a map `{"key"=value, name=value}` (call_lowered's metadata) or, with no
        `=`, a set as TVM's printer writes one inside an object (`keys={'cpu'}`), a list."""
        toks = self.toks
        self.enter()
        items: dict = {}
        bare = set()
        as_set = None
        while toks[self.pos][0] != "}":
            tok = toks[self.pos]
            # `"key"=value` as TVM's text printer writes a map, `'key': value` as its repr
            keyed = tok[0] in (STR, NAME) and toks[self.pos + 1][0] in ("=", ":")
            if as_set is None:
                as_set = not keyed
            if as_set:
                items[len(items)] = self.attr_value()
            else:
                if not keyed:
                    raise self.expected(_("a map entry `\"key\"=value`"))
                key = tok[6] if tok[0] == STR else tok[1]
                if tok[0] == NAME:
                    bare.add(key)
                if key in items:
                    raise self.error(ParseError, _("duplicate key {key} in a map").format(
                        key=key), tok)
                self.pos += 2
                items[key] = self.attr_value()
            self.separator("}", _("`,` or `}` in a map"))
        self.pos += 1
        self.depth -= 1
        if as_set:
            return list(items.values())
        return AttrMap(items, bare)
