"""Parsing Relay type syntax: tensor types, tuple and function types, type calls, for `_Parser`
in parser.py.

The mixin relies on the parser's state (`toks`, `pos`, `file`, scopes) and its error helpers.
"""
from __future__ import annotations

import difflib

from rvmdbg.i18n import _, ngettext
from rvmdbg.relay.diagnostics import NameResolutionError, ParseError, RelayTypeError
from rvmdbg.relay.lexer import NAME, NUM
from rvmdbg.relay.parse_common import KNOWN_DTYPES, span_between
from rvmdbg.relay.types import (
    DTYPES, DTYPE_ALIASES, FuncType, IncompleteType, RefType, StorageType, TensorType, TupleType,
    TypeCall, is_vector_dtype,
)


class TypeSyntax:
    """The type part of the Relay text grammar."""

    def type_(self):
        toks = self.toks
        tok = toks[self.pos]
        k = tok[0]
        self.enter()
        try:
            if k == NAME:
                self.pos += 1
                name = tok[1]
                if name in KNOWN_DTYPES or is_vector_dtype(name):
                    return TensorType((), name)
                if name == "Tensor":
                    return self.tensor_type()
                alias = DTYPE_ALIASES.get(name)
                if alias is not None:
                    return TensorType((), alias)
                if name == "Storage" and name not in self.own_types:
                    # the memory dialect's buffer type, which TVM prints `Storage[]`
                    if toks[self.pos][0] == "[" and toks[self.pos + 1][0] == "]":
                        self.pos += 2
                    return StorageType()
                tv = self.tscope.get(name)
                if tv is not None:
                    if toks[self.pos][0] == "[":
                        raise self.error(ParseError, _("type parameter {name} takes no "
                                                       "arguments").format(name=name),
                                         toks[self.pos])
                    return tv
                return self.type_call(tok)
            if k == "(":
                self.pos += 1
                fields = []
                trailing = False
                while toks[self.pos][0] != ")":
                    fields.append(self.type_())
                    trailing = toks[self.pos][0] == ","
                    self.separator(")", _("`,` or `)` in a tuple type"))
                self.pos += 1
                if len(fields) == 1 and not trailing and self.legacy_header is not None:
                    return fields[0]  # text format 0.0.4's grammar: `(T)` is T in parentheses
                # TVM: `(T)` is a one-element tuple type, like `(T,)`
                return TupleType(tuple(fields))
            if k == "fn":
                self.pos += 1
                tmark = len(self.tundo)
                tparams = self.type_params() if toks[self.pos][0] == "[" else []
                if toks[self.pos][0] != "(":
                    raise self.expected(_("`(` after `fn` in a function type"))
                self.pos += 1
                params = []
                while toks[self.pos][0] != ")":
                    params.append(self.type_())
                    self.separator(")", _("`,` or `)` in a function type"))
                self.pos += 1
                if toks[self.pos][0] != "->":
                    raise self.expected(_("`->` and the result type of the function type"))
                self.pos += 1
                ret = self.type_()
                self.unbind_types(tmark)
                return FuncType(tuple(params), ret, tuple(tparams))
            if k == "_":
                self.pos += 1
                return IncompleteType()
            if k == "ref":
                self.pos += 1
                if toks[self.pos][0] != "(":
                    raise self.expected(_("`(` after `ref` in a reference type"))
                self.pos += 1
                inner = self.type_()
                if toks[self.pos][0] != ")":
                    raise self.expected(_("`)` to close the reference type"))
                self.pos += 1
                return RefType(inner)
            raise self.expected(_("a type"))
        finally:
            self.depth -= 1

    def tensor_type(self):
        toks = self.toks
        if toks[self.pos][0] != "[":
            raise self.expected(_("`[` after `Tensor`"),
                                hint=_("write {example}").format(example="Tensor[(2, 3), float32]"))
        self.pos += 1
        if toks[self.pos][0] != "(":
            raise self.expected(_("the shape in parentheses"),
                                hint=_("write {example}").format(example="Tensor[(2, 3), float32]"))
        self.pos += 1
        dims = []
        while toks[self.pos][0] != ")":
            tok = toks[self.pos]
            if tok[0] == "?":
                dims.append(None)
            elif tok[0] == NUM and not tok[6].is_float and tok[6].value >= 0:
                dims.append(int(tok[6].value))
            else:
                raise self.expected(_("a dimension (a non-negative integer or `?`)"))
            self.pos += 1
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != ")":
                raise self.expected(_("`,` or `)` in the shape"))
        self.pos += 1
        if toks[self.pos][0] != ",":
            raise self.expected(_("`,` and the dtype after the shape"))
        self.pos += 1
        dtok = toks[self.pos]
        dtype = dtok[1] if dtok[0] == NAME else None
        dtype = DTYPE_ALIASES.get(dtype, dtype)
        if dtype not in KNOWN_DTYPES and not (dtype is not None and is_vector_dtype(dtype)):
            raise self.expected(_("a dtype ({dtypes})").format(dtypes=", ".join(DTYPES)))
        self.pos += 1
        if toks[self.pos][0] != "]":
            raise self.expected(_("`]` to close the tensor type"))
        self.pos += 1
        return TensorType(tuple(dims), dtype)

    def type_call(self, tok):
        """An ADT name with optional arguments: `List[A]`, `nat`."""
        toks = self.toks
        name = tok[1]
        arity = self.own_types.get(name)
        if arity is None:
            td = self.env.type_defs.get(name) if self.env is not None else None
            if td is None:
                cands = list(self.own_types) + list(self.tscope) + list(DTYPES)
                if self.env is not None:
                    cands += list(self.env.type_defs)
                close = difflib.get_close_matches(name, cands, 1)
                raise self.error(NameResolutionError, _("unknown type {name}").format(name=name),
                                 tok, _("did you mean {name}?").format(name=close[0])
                                 if close else None)
            arity = len(td.type_params)
            self.info.env_uses.setdefault(("type", name), self.tspan(tok))
        if self.cur_deps is not None:
            self.cur_deps.add(("type", name))
        args = []
        end = tok
        if toks[self.pos][0] == "[":
            self.pos += 1
            while toks[self.pos][0] != "]":
                args.append(self.type_())
                k = toks[self.pos][0]
                if k == ",":
                    self.pos += 1
                elif k != "]":
                    raise self.expected(_("`,` or `]` in the arguments of {name}").format(
                        name=name))
            end = toks[self.pos]
            self.pos += 1
        if len(args) != arity:
            raise self.error(RelayTypeError, ngettext(
                "type {name} takes {n} type argument, given {given}",
                "type {name} takes {n} type arguments, given {given}", arity).format(
                    name=name, n=arity, given=len(args)), span_between(tok, end, self.file))
        return TypeCall(name, tuple(args))
