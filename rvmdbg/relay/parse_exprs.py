"""Parsing Relay expressions: `let` chains and sequences, binary operators, calls and their
arguments, atoms, names, tuples, `if`, `match` and patterns, for `_Parser` in parser.py.

The mixin relies on the parser's state (`toks`, `pos`, `file`, scopes) and its error helpers.
"""
from __future__ import annotations

import difflib

import numpy as np

from rvmdbg.i18n import _, ngettext
from rvmdbg.relay.ast import (
    Call, Clause, Constant, ConstructorRef, GlobalVar, If, Let, Match, OpRef, PatternConstructor,
    PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem,
    Var,
)
from rvmdbg.relay.diagnostics import (
    LexError, NameResolutionError, ParseError, RelayError, RelayTypeError, Span,
)
from rvmdbg.relay.dialect import DIALECT_OPS
from rvmdbg.relay.lexer import BOOL, EOF, GLOBAL, GRAPH, INT_RANGES, LOCAL, NAME, NUM
from rvmdbg.relay.metadata import attrs_fields, is_attrs_object
from rvmdbg.relay.parse_common import MAX_NESTING, known_ops, span_between

_BINOPS = {
    "*": (3, "multiply"), "/": (3, "divide"),
    "+": (2, "add"), "-": (2, "subtract"),
    "<": (1, "less"), "<=": (1, "less_equal"), ">": (1, "greater"), ">=": (1, "greater_equal"),
    "==": (0, "equal"), "!=": (0, "not_equal"),
}

_ARG_END = frozenset({",", ")"})  # what may follow an argument


def _merge(a: Span | None, b: Span | None, file: str) -> Span | None:
    if a is None:
        return b
    if b is None:
        return a
    return Span(a.line, a.col, b.end_line, b.end_col, file)


class ExprSyntax:
    """The expression part of the Relay text grammar."""

    def expr(self):
        """A full expression: bindings (`let`, `%0 = `, `free_var`) and `;`-sequences, in a loop,
        ending with the result expression."""
        toks = self.toks
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.too_deep(toks[self.pos])
        tok = toks[self.pos]
        k = tok[0]
        frames = []  # (var or None for a sequence, value, start token)
        if k == LOCAL and toks[self.pos + 1][0] == "=":
            raise self.not_a_binding(tok)
        if k != "let" and k != GRAPH and k != "free_var":
            # the common case: one value, no bindings
            value = self.binop()
            if toks[self.pos][0] != ";":
                self.depth -= 1
                return value
            self.pos += 1
            frames.append((None, value, tok))
        mark = len(self.undo)
        while True:
            tok = toks[self.pos]
            k = tok[0]
            if k == "let":
                self.pos += 1
                vtok = toks[self.pos]
                if vtok[0] != LOCAL:
                    if vtok[0] == GRAPH:
                        raise self.error(ParseError, _("`let` binds a named variable, not "
                                                       "{name}").format(name=vtok[1]), vtok,
                                         _("write `let %x = ...` or the graph binding "
                                           "`{name} = ...;`").format(name=vtok[1]))
                    raise self.expected(_("a variable such as %x after `let`"))
                self.pos += 1
                ann = None
                if toks[self.pos][0] == ":":
                    self.pos += 1
                    ann = self.type_()
                var = Var(vtok[6], ann, self.tspan(vtok))
                # bound before its value is read: `let %f = fn ...` may call %f (recursion)
                self.bind(vtok[6], var)
                if toks[self.pos][0] != "=":
                    raise self.expected(_("`=` after `let {name}`").format(name=vtok[1]))
                self.pos += 1
                value = self.binop()
                if toks[self.pos][0] != ";":
                    raise self.expected(_("`;` after the value of {name}").format(name=vtok[1]),
                                        hint=self.trap_hint(toks[self.pos]) or
                                        _("a let is `let %x = value; body`"))
                self.pos += 1
                frames.append((var, value, tok))
                continue
            if k == GRAPH and toks[self.pos + 1][0] == "=":
                self.pos += 2
                value = self.binop()
                if toks[self.pos][0] != ";":
                    raise self.expected(_("`;` after the value of {name}").format(name=tok[1]))
                self.pos += 1
                # no node: later uses of %N are the value itself
                self.bind(tok[1], value)
                continue
            if k == "free_var":
                self.pos += 1
                vtok = toks[self.pos]
                if vtok[0] != LOCAL:
                    raise self.expected(_("a variable such as %x after `free_var`"))
                self.pos += 1
                ann = None
                if toks[self.pos][0] == ":":
                    self.pos += 1
                    ann = self.type_()
                fv = Var(vtok[6], ann, self.tspan(vtok))
                self.bind(vtok[6], fv)
                if self.free_vars is not None:
                    self.free_vars.append(fv)
                if toks[self.pos][0] != ";":
                    raise self.expected(_("`;` after `free_var {name}`").format(name=vtok[1]))
                self.pos += 1
                continue
            if k == LOCAL and toks[self.pos + 1][0] == "=":
                raise self.not_a_binding(tok)
            value = self.binop()
            if toks[self.pos][0] == ";":
                self.pos += 1
                frames.append((None, value, tok))
                continue
            body = value
            break
        self.unbind(mark)
        self.depth -= 1
        if not frames:
            return body
        file = self.file
        # the end of the body's last token: a Var's (or graph binding's) span is elsewhere
        last = self.toks[self.pos - 1]
        for var, value, start in reversed(frames):
            if var is None:
                var = Var("_", None, value.span)
            body = Let(var, value, body, Span(start[2], start[3], last[4], last[5], file))
        return body

    def not_a_binding(self, tok) -> RelayError:
        """`%x = ...` without `let`."""
        return self.error(ParseError, _("`{name} = ...` is not a binding: only graph variables "
                                        "(%0, %1, ...) bind without `let`").format(name=tok[1]),
                          tok, _("write `let {name} = ...;`").format(name=tok[1]))

    def binop(self):
        """Operands joined by binary operators, by precedence, left-associative (iterative)."""
        toks = self.toks
        start = self.pos
        lhs = self.operand()
        k = toks[self.pos][0]
        if k not in _BINOPS:
            return lhs
        file = self.file
        # each operand with the span of its own tokens: a Var node's span is its binder's
        operands = [(lhs, span_between(toks[start], toks[self.pos - 1], file))]
        ops = []  # (precedence, op name, token)

        def reduce() -> None:
            _, oname, otok = ops.pop()
            r, rspan = operands.pop()
            left, lspan = operands.pop()
            span = _merge(lspan, rspan, file)
            operands.append((Call(OpRef(oname, self.tspan(otok)), [left, r], None, span), span))

        while k in _BINOPS:
            prec, name = _BINOPS[k]
            tok = toks[self.pos]
            while ops and ops[-1][0] >= prec:
                reduce()
            ops.append((prec, name, tok))
            self.pos += 1
            nk = toks[self.pos][0]
            if nk in ("}", ")", ";", ",", EOF):
                raise self.expected(_("an operand after `{op}`").format(op=tok[1]))
            start = self.pos
            e = self.operand()
            operands.append((e, span_between(toks[start], toks[self.pos - 1], file)))
            k = toks[self.pos][0]
        while ops:
            reduce()
        return operands[0][0]

    def operand(self):
        """Unary minus, then an atom with its call arguments and `.N` projections."""
        toks = self.toks
        tok = toks[self.pos]
        if tok[0] == "-":
            minus = []
            while toks[self.pos][0] == "-":
                minus.append(toks[self.pos])
                self.pos += 1
            if toks[self.pos][0] == NUM and len(minus) % 2 == 1:
                # `- 1` is the literal -1, like `-1`
                ntok = toks[self.pos]
                e = self.number_constant(ntok, negate=True)
                self.pos += 1
                e.span = span_between(minus[0], ntok, self.file)
                return self.postfix(e)
            if toks[self.pos][0] == NUM:
                ntok = toks[self.pos]
                e = self.number_constant(ntok)
                self.pos += 1
                e.span = span_between(minus[0], ntok, self.file)
                return self.postfix(e)
            astart = self.pos
            e = self.postfix(self.atom(), astart)
            for m in reversed(minus):
                e = Call(OpRef("negative", self.tspan(m)), [e], None,
                         span_between(m, toks[self.pos - 1], self.file))
            return e
        astart = self.pos
        e = self.atom()
        k = self.toks[self.pos][0]
        if k == "(" or k == ".":
            return self.postfix(e, astart)
        if type(e) is ConstructorRef and e.constructor is not None and not e.constructor.inputs:
            # a nullary constructor written bare is a call with no arguments
            return Call(e, [], None, e.span)
        return e

    def postfix(self, e, start: int | None = None):
        """Calls and `.N` projections after an atom whose first token is toks[start]."""
        toks = self.toks
        if start is None:
            start = self.pos - 1
        first = toks[start]
        while True:
            k = toks[self.pos][0]
            if k == "(":
                e = self.call_args(e, first)
            elif k == ".":
                self.pos += 1
                itok = toks[self.pos]
                if itok[0] != NUM or itok[6].is_float or itok[6].value < 0:
                    hint = None
                    if itok[0] == NUM and "." in itok[1]:
                        head = toks[self.pos - 2]
                        base = head[1] if head[0] in (LOCAL, GRAPH, GLOBAL) else "%t"
                        a, b = itok[1].split(".", 1)
                        hint = _("`{number}` lexes as one decimal number: write {twice} to "
                                 "project twice").format(number=itok[1], twice=f"({base}.{a}).{b}")
                    raise self.expected(_("a tuple index after `.`"), hint=hint)
                self.pos += 1
                e = TupleGetItem(e, itok[6].value, span_between(first, itok, self.file))
            else:
                break
        if type(e) is ConstructorRef and e.constructor is not None and not e.constructor.inputs:
            # a nullary constructor written bare is a call with no arguments
            return Call(e, [], None, e.span)
        return e

    def call_args(self, callee, first=None):
        toks = self.toks
        open_tok = toks[self.pos]
        self.pos += 1
        args = []
        attrs = None
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.too_deep(open_tok)
        while toks[self.pos][0] != ")":
            tok = toks[self.pos]
            k = tok[0]
            if k == NAME and self.attr_key_end(self.pos) is not None:
                attrs = self.attributes(")")
                if type(callee) is not OpRef and not attrs.get("attrs_type_key"):
                    # TVM's parser builds a non-operator call's attributes from the type key
                    # its printer writes with them
                    raise self.error(ParseError, _("unable to determine the 'attrs_type_key' "
                                                   "with which to represent the call attributes"),
                                     tok, _("`{name}=...` is an attribute: a call of a function or "
                                            "constructor takes them only with "
                                            "attrs_type_key=\"...\", as TVM prints them").format(
                                                name=tok[1]))
                break
            if k == NAME and tok[1] == "meta" and toks[self.pos + 1][0] == "[" and \
                    self.metadata is not None:
                # TVM's parser: a metadata reference closing the list that names an attribute
                # object is the call's attributes (TVM 0.8 printed some that way)
                at = self.pos
                obj, _ref_span = self.meta_ref(as_expr=False)
                if toks[self.pos][0] == ")" and is_attrs_object(obj):
                    attrs = self.attrs_from_object(callee, obj)
                    break
                self.pos = at
            if k == LOCAL and toks[self.pos + 1][0] in _ARG_END:
                # a variable alone, the most common argument: what atom() does with it
                self.pos += 1
                v = self.scope.get(tok[6])
                if v is None:
                    raise self.unbound_local(tok)
                args.append(v)
            elif k == "let" or k == "free_var" or k == GRAPH and toks[self.pos + 1][0] == "=":
                args.append(self.expr())
            else:
                # an argument is one value: a `;` here is far more often a typo than a sequence
                args.append(self.binop())
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != ")":
                hint = None
                if k == ";":
                    hint = _("to sequence expressions inside an argument, wrap them in "
                             "parentheses")
                raise self.expected(_("`)` after the arguments"), hint=hint)
        self.depth -= 1
        end = toks[self.pos]
        self.pos += 1
        span = span_between(first if first is not None else open_tok, end, self.file)
        return Call(callee, args, attrs, span)

    def attrs_from_object(self, callee, obj) -> dict:
        """A call's attributes from an attrs object of the metadata section, its fields read
        by the kinds of the operator's attributes; a call of a function keeps the object's
        type key, as TVM's printer writes it beside inline attributes."""
        from rvmdbg.relay.ops import get_op
        opdef = get_op(callee.name) if type(callee) is OpRef else None
        kinds = {spec.name: spec.kind for spec in opdef.attrs} if opdef is not None else {}
        attrs = attrs_fields(obj, kinds)
        if opdef is None:
            attrs["attrs_type_key"] = obj.type_key
            return attrs
        # the object holds every field of TVM's attrs class; one rvmdbg does not declare
        # (BatchMatmulAttrs' auto_scheduler_rewritten_layout) drops out while it is unset
        unset = {spec.name for spec in opdef.attrs if spec.default is None}
        return {k: v for k, v in attrs.items()
                if (k in kinds and not (v is None and k in unset)) or
                (k not in kinds and v not in ("", None, []))}

    def atom(self):
        toks = self.toks
        tok = toks[self.pos]
        k = tok[0]
        file = self.file
        if k == LOCAL:
            self.pos += 1
            v = self.scope.get(tok[6])
            if v is None:
                raise self.unbound_local(tok)
            return v
        if k == NUM:
            self.pos += 1
            return self.number_constant(tok)
        if k == GRAPH:
            self.pos += 1
            v = self.scope.get(tok[1])
            if v is None:
                raise self.error(NameResolutionError, _("graph variable {name} is not bound")
                                 .format(name=tok[1]), tok,
                                 _("bind it first: `{name} = ...;`").format(name=tok[1]))
            return v
        if k == NAME:
            if tok[1] == "meta" and toks[self.pos + 1][0] == "[":
                data, span = self.meta_ref(as_expr=True)
                # a Var: --meta-inputs made the missing constant a parameter
                return data if type(data) is Var else Constant(data, span)
            return self.name_ref(tok)
        if k == GLOBAL:
            self.pos += 1
            span = self.tspan(tok)
            self.global_uses.append((tok[6], span))
            if toks[self.pos - 3][1] == "call_lowered" and toks[self.pos - 2][0] == "(":
                self.lowered_uses.add(tok[6])
            if self.cur_deps is not None:
                self.cur_deps.add(("global", tok[6]))
            return GlobalVar(tok[6], span)
        if k == "(":
            return self.paren(tok)
        if k == BOOL:
            self.pos += 1
            return Constant(np.array(tok[6], dtype="bool"), self.tspan(tok))
        if k == "if":
            return self.if_(tok)
        if k == "match" or k == "match?":
            return self.match(tok)
        if k == "fn":
            self.pos += 1
            self.enter()
            f = self.function(tok, is_def=False)
            self.depth -= 1
            return f
        if k == "{":
            self.pos += 1
            e = self.expr()
            if toks[self.pos][0] != "}":
                raise self.expected(_("`}` to close the block"))
            self.pos += 1
            return e
        if k == "ref" or k == "ref_read":
            self.pos += 1
            if toks[self.pos][0] != "(":
                raise self.expected(_("`(` after `{keyword}`").format(keyword=k))
            self.pos += 1
            inner = self.expr()
            end = toks[self.pos]
            if end[0] != ")":
                raise self.expected(_("`)` to close `{keyword}(`").format(keyword=k))
            self.pos += 1
            span = span_between(tok, end, file)
            return RefCreate(inner, span) if k == "ref" else RefRead(inner, span)
        if k == "ref_write":
            self.pos += 1
            if toks[self.pos][0] != "(":
                raise self.expected(_("`(` after `ref_write`"))
            self.pos += 1
            ref = self.expr()
            if toks[self.pos][0] != ",":
                raise self.expected(_("`,` between the reference and the value of `ref_write`"))
            self.pos += 1
            val = self.expr()
            end = toks[self.pos]
            if end[0] != ")":
                raise self.expected(_("`)` to close `ref_write(`"))
            self.pos += 1
            return RefWrite(ref, val, span_between(tok, end, file))
        if k == "let":
            raise self.error(ParseError, _("expected an expression, found `let`"), tok,
                             _("a `let` used as a value needs parentheses: (let %x = ...; ...)"))
        if k == "else":
            raise self.error(ParseError, _("`else` without `if`"), tok)
        if self.pos and toks[self.pos - 1][0] == ";" and k in ("}", ")", EOF):
            raise self.expected(_("an expression after `;`"),
                                hint=_("a block ends with the expression it returns: remove the "
                                       "last `;` or add a result after it"))
        raise self.expected(_("an expression"))

    def number_constant(self, tok, negate: bool = False):
        num = tok[6]
        if num.dtype is None:
            lit = tok[1].lstrip("-")
            raise self.error(LexError, _("float literal `{text}` needs a type suffix").format(
                text=tok[1]), tok, _("floats need the f suffix: {literal}").format(
                    literal=lit + "f"))
        value = -num.value if negate else num.value
        if negate and not num.is_float:
            lo, hi = INT_RANGES[num.dtype]
            if not lo <= value <= hi:
                raise self.error(LexError, _("integer literal {text} is out of range for "
                                             "{dtype}").format(text="-" + tok[1],
                                                               dtype=num.dtype), tok)
        return Constant(np.array(value, dtype=num.dtype), self.tspan(tok))

    def unbound_local(self, tok) -> RelayError:
        name = tok[6]
        hint = None
        if "/" in name:
            head, tail = name.split("/", 1)
            if not tail:
                nxt = self.toks[self.pos]
                tail = nxt[1] if nxt[0] != EOF and nxt[2] == tok[4] and nxt[3] == tok[5] else "..."
            hint = _("`/` can be part of a name, so `{name}` is read as one name: write "
                     "{spaced} with spaces").format(name=tok[1], spaced=f"%{head} / {tail}")
        else:
            names = [n for n in self.scope if isinstance(n, str) and not n.startswith("%")]
            close = difflib.get_close_matches(name, names, 1)
            if close:
                hint = _("did you mean {name}?").format(name="%" + close[0])
        return self.error(NameResolutionError, _("unbound variable {name}").format(name=tok[1]),
                          tok, hint)

    def lookup_ctor(self, name: str, tok):
        """The Constructor called `name` visible here, or None."""
        c = self.mod.constructors.get(name)
        if c is not None:
            return c
        if name in self.own_ctors:
            tname = self.own_ctors[name]
            raise self.error(NameResolutionError,
                             _("constructor {name} is used before its type {type} is "
                               "defined").format(name=name, type=tname), tok,
                             _("move `type {type}` above its first use").format(type=tname))
        env = self.env
        if env is not None:
            c = env.constructors.get(name)
            if c is not None and c.type_name not in self.own_types:
                key = ("ctor", name)
                if key not in self.info.env_uses:
                    self.info.env_uses[key] = self.tspan(tok)
                return c
        return None

    def name_ref(self, tok):
        """A bare name in an expression: a constructor or an operator (`nn.dense`)."""
        toks = self.toks
        name = tok[1]
        c = self.lookup_ctor(name, tok)
        if c is not None:
            self.pos += 1
            if self.cur_deps is not None:
                self.cur_deps.add(("ctor", name))
            return ConstructorRef(name, c, self.tspan(tok))
        end = tok
        self.pos += 1
        parts = [name]
        while toks[self.pos][0] == "." and toks[self.pos + 1][0] == NAME:
            end = toks[self.pos + 1]
            parts.append(end[1])
            self.pos += 2
        opname = ".".join(parts)
        span = span_between(tok, end, self.file)
        ops = known_ops()
        if (ops is not None and opname not in ops and opname not in self.extra_ops
                and opname not in DIALECT_OPS):
            cands = list(ops) + list(self.mod.constructors)
            if self.env is not None:
                cands += list(self.env.constructors)
            close = difflib.get_close_matches(opname, cands, 1)
            hint = _("did you mean {name}?").format(name=close[0]) if close else None
            if name in ("None", "null", "nullptr"):
                hint = _("None is a constructor of the prelude's Option type, or an attribute "
                         "value")
            elif name[0].isupper() and not close:
                hint = _("constructors must be defined by a `type` before they are used")
            raise NameResolutionError(_("unknown operator `{name}`").format(name=opname), span,
                                      hint, self.source)
        return OpRef(opname, span)

    def paren(self, tok):
        """`()` unit, `(e)` grouping, `(a,)` and `(a, b, ...)` tuples."""
        toks = self.toks
        self.pos += 1
        if toks[self.pos][0] == ")":
            end = toks[self.pos]
            self.pos += 1
            return Tuple([], span_between(tok, end, self.file))
        first = self.expr()
        k = toks[self.pos][0]
        if k == ")":
            self.pos += 1
            return first
        if k != ",":
            raise self.expected(_("`)` or `,` after the expression in parentheses"))
        fields = [first]
        while True:
            self.pos += 1  # the comma
            if toks[self.pos][0] == ")":
                break
            fields.append(self.expr())
            k = toks[self.pos][0]
            if k == ")":
                break
            if k != ",":
                raise self.expected(_("`,` or `)` in a tuple"))
        end = toks[self.pos]
        self.pos += 1
        return Tuple(fields, span_between(tok, end, self.file))

    def if_(self, tok):
        toks = self.toks
        self.pos += 1
        if toks[self.pos][0] != "(":
            raise self.expected(_("`(` after `if`"), hint=_("the condition goes in parentheses: "
                                                          "if (%c) { ... } else { ... }"))
        self.pos += 1
        cond = self.expr()
        if toks[self.pos][0] != ")":
            raise self.expected(_("`)` after the condition of `if`"))
        self.pos += 1
        if toks[self.pos][0] != "{":
            raise self.expected(_("`{` to open the `if` branch"))
        self.pos += 1
        then = self.expr()
        if toks[self.pos][0] != "}":
            raise self.expected(_("`}` to close the `if` branch"))
        self.pos += 1
        if toks[self.pos][0] != "else":
            raise self.expected(_("`else`"), hint=_("every `if` needs an `else` branch"))
        self.pos += 1
        if toks[self.pos][0] != "{":
            hint = None
            if toks[self.pos][0] == "if":
                hint = _("there is no `else if`: write else { if (...) { ... } else { ... } }")
            raise self.expected(_("`{` after `else`"), hint=hint)
        self.pos += 1
        other = self.expr()
        end = toks[self.pos]
        if end[0] != "}":
            raise self.expected(_("`}` to close the `else` branch"))
        self.pos += 1
        return If(cond, then, other, span_between(tok, end, self.file))

    def match(self, tok):
        toks = self.toks
        complete = tok[0] == "match"
        self.pos += 1
        if toks[self.pos][0] == "{":
            raise self.expected(_("the value to match on"))
        data = self.operand()
        if toks[self.pos][0] != "{":
            raise self.expected(_("`{` to open the match arms"))
        self.pos += 1
        clauses = []
        while toks[self.pos][0] != "}":
            mark = len(self.undo)
            ptok = toks[self.pos]
            self.enter()
            pat = self.pattern({})
            self.depth -= 1
            if toks[self.pos][0] != "=>":
                raise self.expected(_("`=>` after the pattern"))
            self.pos += 1
            rhs = self.expr()
            self.unbind(mark)
            # to the end of the arm's last token (a Var's own span is its binder's)
            clauses.append(Clause(pat, rhs, span_between(ptok, toks[self.pos - 1], self.file)))
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != "}" and toks[self.pos - 1][0] != "}":
                raise self.expected(_("`,` or `}` after a match arm"))
        end = toks[self.pos]
        self.pos += 1
        if not clauses:
            raise self.error(ParseError, _("a match needs at least one arm"), end)
        return Match(data, clauses, complete, span_between(tok, end, self.file))

    def pattern(self, bound: dict):
        toks = self.toks
        tok = toks[self.pos]
        k = tok[0]
        file = self.file
        if k == "_":
            self.pos += 1
            return PatternWildcard(self.tspan(tok))
        if k == LOCAL:
            self.pos += 1
            name = tok[6]
            if name in bound:
                raise self.error(NameResolutionError,
                                 _("{name} is bound twice in this pattern").format(name=tok[1]),
                                 tok)
            ann = None
            if toks[self.pos][0] == ":":
                self.pos += 1
                ann = self.type_()
            span = self.tspan(tok)
            v = Var(name, ann, span)
            bound[name] = v
            self.bind(name, v)
            return PatternVar(v, span)
        if k == NAME:
            self.pos += 1
            c = self.lookup_ctor(tok[1], tok)
            if c is None:
                raise self.error(NameResolutionError,
                                 _("undefined constructor {name}").format(name=tok[1]), tok,
                                 _("to bind a variable write {var}").format(var="%" + tok[1]))
            if self.cur_deps is not None:
                self.cur_deps.add(("ctor", tok[1]))
            subs = []
            end = tok
            if toks[self.pos][0] == "(":
                subs, end = self.pattern_list(bound)
            if len(subs) != len(c.inputs):
                raise self.error(RelayTypeError, ngettext(
                    "constructor {name} has {n} field, the pattern gives {given}",
                    "constructor {name} has {n} fields, the pattern gives {given}",
                    len(c.inputs)).format(name=c.name, n=len(c.inputs), given=len(subs)),
                    span_between(tok, end, file))
            return PatternConstructor(tok[1], c, subs, span_between(tok, end, file))
        if k == "(":
            subs, end = self.pattern_list(bound)
            return PatternTuple(subs, span_between(tok, end, file))
        raise self.expected(_("a pattern (`_`, %x, a constructor or a tuple)"))

    def pattern_list(self, bound: dict):
        """`(p, ...)`: the sub-patterns and the closing token."""
        toks = self.toks
        self.pos += 1
        subs = []
        self.enter()
        while toks[self.pos][0] != ")":
            subs.append(self.pattern(bound))
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != ")":
                raise self.expected(_("`,` or `)` in a pattern"))
        self.depth -= 1
        end = toks[self.pos]
        self.pos += 1
        return subs, end
