"""Parsing `meta[KEY][INDEX]` references into the `#[metadata]` section, and what stands for
a constant when the section is missing (typed from TVM's `/* ty=... */` comment), for
`_Parser` in parser.py.

The mixin relies on the parser's state (`toks`, `pos`, `file`, scopes) and its error helpers.
"""
from __future__ import annotations

import re

from rvmdbg.i18n import _
from rvmdbg.relay.ast import Var
from rvmdbg.relay.diagnostics import NameResolutionError, ParseError, RelayError, Span
from rvmdbg.relay.lexer import NAME, NUM
from rvmdbg.relay.parse_common import span_between
from rvmdbg.relay.types import TensorType, is_vector_dtype

# the type TVM prints after an expression: `/* ty=Tensor[(2, 2), float32] span=... */`
_TY_COMMENT = re.compile(r"[ \t]*/\*[ \t]*ty=((?:(?!\*/).)*)\*/", re.S)


def _offset(text: str, line: int, col: int) -> int:
    """The text offset of a 1-based (line, column)."""
    start = 0
    for _n in range(line - 1):
        start = text.index("\n", start) + 1
    return start + col - 1


class MetaRefSyntax:
    """Metadata references in the Relay text grammar."""

    def meta_ref(self, as_expr: bool):
        """`meta[KEY][INDEX]`: the object from the #[metadata] section, and the reference's span."""
        toks = self.toks
        start = toks[self.pos]
        self.pos += 2  # `meta [`
        first = toks[self.pos]
        if first[0] != NAME:
            raise self.expected(_("a metadata table name such as relay.Constant"))
        parts = [first[1]]
        last = first
        self.pos += 1
        while toks[self.pos][0] == "." and toks[self.pos + 1][0] == NAME:
            last = toks[self.pos + 1]
            parts.append(last[1])
            self.pos += 2
        key_span = span_between(first, last, self.file)
        if toks[self.pos][0] != "]" or toks[self.pos + 1][0] != "[":
            raise self.expected(_("`][` after the table name in {ref}").format(
                ref=f"meta[{'.'.join(parts)}]"))
        self.pos += 2
        num = toks[self.pos]
        if num[0] != NUM or num[6].is_float or num[1].startswith("-"):
            raise self.expected(_("an index (0, 1, ...) in meta[...][INDEX]"))
        self.pos += 1
        end = toks[self.pos]
        if end[0] != "]":
            raise self.expected(_("`]` to close the metadata reference"))
        self.pos += 1
        key = ".".join(parts)
        span = span_between(start, end, self.file)
        if self.metadata is None:
            if self.missing_meta is not None and key == "relay.Constant" and as_expr:
                return self.missing_constant(int(num[6].value), span), span
            raise self.error(NameResolutionError, _("{ref} refers to a #[metadata] section, and "
                                                    "this file has none").format(
                                                        ref=f"meta[{key}][{num[1]}]"), span,
                             _("print the module with its metadata (TVM's astext() does by "
                               "default), or run with --meta-inputs (each constant a named "
                               "input) or --meta-random SEED (seeded values of its ty= type)")
                             if key == "relay.Constant" else
                             _("print the module with its metadata (TVM's astext() does by "
                               "default)"))
        obj = self.metadata.resolve(key, int(num[6].value), key_span, self.tspan(num),
                                    self.source, as_expr)
        return obj, span

    def missing_constant(self, index: int, span: Span):
        """What `meta[relay.Constant][index]` stands for in a file without its section: its type
        from the `/* ty=... */` TVM prints after it, then seeded values (a Constant) or a
        parameter of the global being defined (a Var)."""
        t = self.annotated_type(span)
        if t is None:
            raise self.error(NameResolutionError, _("{ref} has no #[metadata] section and no "
                                                    "`/* ty=... */` after it to give its type")
                             .format(ref=f"meta[relay.Constant][{index}]"), span,
                             _("print the module with types (TVM's astext() does by default)"))
        if not isinstance(t, TensorType) or any(d is None for d in t.shape) or \
                is_vector_dtype(t.dtype):
            raise self.error(ParseError, _("{ref} is annotated {type}: a missing constant "
                                           "needs a tensor type of known shape").format(
                                               ref=f"meta[relay.Constant][{index}]", type=t),
                             span)
        if self.missing_meta.mode == "random":
            return self.missing_meta.value(index, t)
        if self.in_primitive:
            raise self.error(ParseError, _("{ref} is inside a primitive function: it cannot be "
                                           "an input there").format(
                                               ref=f"meta[relay.Constant][{index}]"), span,
                             _("use --meta-random SEED for this file"))
        v = self.meta_params.get(index)
        if v is None:
            v = self.meta_params[index] = Var(self.missing_meta.name(index), t, span)
        elif v.type_annotation != t:
            raise self.error(ParseError, _("{ref} is annotated {type} here and {earlier} "
                                           "before").format(ref=f"meta[relay.Constant][{index}]",
                                                            type=t, earlier=v.type_annotation),
                             span)
        return v

    def annotated_type(self, span: Span):
        """The type in a `/* ty=T ... */` comment right after `span`, or None."""
        offset = _offset(self.text, span.end_line, span.end_col)
        m = _TY_COMMENT.match(self.text, offset)
        if m is None:
            return None
        body = re.split(r"\s+span=", m.group(1), maxsplit=1)[0].strip()
        try:
            # parse_type(body, self.env, self.file), built from the parser's own class: this
            # file sits below parser.py
            p = type(self)(body, self.file, self.env, self.env)
            return p.run(p.parse_type_text)
        except RelayError:
            return None
