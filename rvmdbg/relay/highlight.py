"""Pygments lexer for the Relay text format (TVM's `#[version = "0.0.5"]` programs).

It colours the debugger's source pane and, through the `pygments.lexers` entry point in
pyproject, `pygmentize -l relay FILE`. Token kinds:

- keywords `def fn let if else match match? type extern ref ref_read ref_write` (Keyword,
  with `def type extern` as Keyword.Declaration); `True False` (Keyword.Constant);
- globals `@f` (Name.Function), locals `%x` (Name.Variable), graph bindings `%0`
  (Name.Variable.Anonymous);
- constructors (Name.Constant), type names and type parameters (Name.Class), `Tensor` and
  dtypes (Keyword.Type), operators called by name such as `nn.dense` (Name.Builtin),
  attribute names such as `units=` (Name.Attribute), the wildcard `_` (Name.Builtin.Pseudo);
- integer and float literals with their suffixes, strings, `//` and nested `/* */` comments,
  `#[...]` attributes and a trailing `#[metadata]` section (Comment.Preproc).

A regular expression cannot tell a lowercase constructor (`succ`) from an operator (`add`),
or a type (`nat`) from a name, so the lexer first collects the types and constructors the
text declares (plus the prelude's) and re-tags those names.
"""
from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Whitespace)

__all__ = ["RelayLexer", "GRAPH_VAR", "RULES"]

GRAPH_VAR = Name.Variable.Anonymous

# Names the prelude defines, known to every program.
PRELUDE_TYPES = frozenset({"List", "Option", "Tree", "nat"})
PRELUDE_CONSTRUCTORS = frozenset({"Cons", "Nil", "Some", "None", "Rose", "zero", "succ"})

_IDENT = r"[A-Za-z_]\w*"
_DTYPE = r"(?:bool|u?int(?:8|16|32|64)?|float(?:16|32|64)?|bfloat16)\b"

_TYPE_DECL = re.compile(r"\btype\s+(" + _IDENT + r")")
_TYPE_PARAMS = re.compile(r"(?:\bdef\s+@[\w.]+|\btype\s+" + _IDENT + r"|\bfn)\s*\[([^\]]*)\]")
_DECL_BODY = re.compile(r"\btype\s+" + _IDENT + r"\s*(?:\[[^\]]*\])?\s*\{")


def _constructors_in(body_start: int, text: str) -> list[str]:
    """The constructor names of a `type T {...}` body starting just after its `{`."""
    names, depth, expect_name = [], 0, True
    i, n = body_start, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "}" and depth == 0:
            break
        elif ch == "," and depth == 0:
            expect_name = True
        elif expect_name and depth == 0 and (ch.isalpha() or ch == "_"):
            m = re.compile(_IDENT).match(text, i)
            names.append(m.group(0))
            expect_name = False
            i = m.end()
            continue
        i += 1
    return names


def declared_names(text: str) -> tuple[set[str], set[str]]:
    """(type names and type parameters, constructor names) declared in text, plus the prelude's."""
    types = set(PRELUDE_TYPES)
    constructors = set(PRELUDE_CONSTRUCTORS)
    types.update(m.group(1) for m in _TYPE_DECL.finditer(text))
    for m in _TYPE_PARAMS.finditer(text):
        types.update(p.strip() for p in m.group(1).split(",") if p.strip())
    for m in _DECL_BODY.finditer(text):
        constructors.update(_constructors_in(m.end(), text))
    return types, constructors


# The lexer's rules, as data: state -> [(regex, token or a list of tokens, one per group,
# next state)]. Pygments builds `RelayLexer.tokens` from them, and scripts/make_tmgrammar.py the
# editors' TextMate grammar, so the two highlight alike.
RULES: dict[str, list[tuple]] = {
    "root": [
        (r"\s+", Whitespace, None),
        (r"//.*?$", Comment.Single, None),
        (r"/\*", Comment.Multiline, "comment"),
        (r"#\[metadata\]", Comment.Preproc, "metadata"),
        (r"#\[", Comment.Preproc, "attribute"),
        (r'"(?:[^"\\\n]|\\.)*"', String.Double, None),
        (r"'[^'\n]*'", String.Single, None),  # in an object's repr: `kind='llvm'`
        (r"(def)(\s+)(@[\w.]+)", [Keyword.Declaration, Whitespace, Name.Function], None),
        (r"(extern)(\s+)(type)(\s+)(" + _IDENT + ")",
         [Keyword.Declaration, Whitespace, Keyword.Declaration, Whitespace, Name.Class], None),
        (r"(type)(\s+)(" + _IDENT + ")", [Keyword.Declaration, Whitespace, Name.Class], None),
        (r"match\?", Keyword, None),
        (words(("fn", "let", "if", "else", "match", "ref_read", "ref_write", "ref"),
               suffix=r"\b").get(), Keyword, None),
        (words(("True", "False"), suffix=r"\b").get(), Keyword.Constant, None),
        (r"Tensor\b", Keyword.Type, None),
        (_DTYPE, Keyword.Type, None),
        (r"@[\w.]+", Name.Function, None),
        (r"%\d+\b", GRAPH_VAR, None),
        (r"%[A-Za-z_][\w/]*", Name.Variable, None),
        # a float needs the f suffix in Relay; a bare 1.5 is still shown as a number
        (r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?f(?:16|32|64)?\b", Number.Float, None),
        (r"\d+\.\d+(?:[eE][+-]?\d+)?", Number.Float, None),
        (r"\d+[iu](?:8|16|32|64)\b", Number.Integer, None),
        (r"\d+", Number.Integer, None),
        (r"(" + _IDENT + r")(\s*)(=)(?![=>])", [Name.Attribute, Whitespace, Operator], None),
        (r"[A-Z]\w*(?=\s*\[)", Name.Class, None),
        (r"[A-Z]\w*", Name.Constant, None),
        (r"_\b", Name.Builtin.Pseudo, None),
        (r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", Name.Builtin, None),
        (_IDENT + r"(?=\s*\()", Name.Builtin, None),
        (_IDENT, Name, None),
        (r"=>|->|==|!=|<=|>=|[-+*/<>=?]", Operator, None),
        (r"[(){}\[\],;:.]", Punctuation, None),
    ],
    "comment": [
        (r"[^/*]+", Comment.Multiline, None),
        (r"/\*", Comment.Multiline, "#push"),
        (r"\*/", Comment.Multiline, "#pop"),
        (r"[/*]", Comment.Multiline, None),
    ],
    "attribute": [
        (r"\]", Comment.Preproc, "#pop"),
        (r"\s+", Whitespace, None),
        (r'"(?:[^"\\\n]|\\.)*"', String.Double, None),
        (r"\d+(?:\.\d+)?", Number, None),
        (_IDENT, Name.Attribute, None),
        (r"[=,]", Operator, None),
        (r"[^\]\s]", Comment.Preproc, None),
    ],
    "metadata": [
        # everything after #[metadata] is TVM's JSON constant table
        (r"[\s\S]+", Comment.Preproc, None),
    ],
}


def _pygments_rules(rules: dict) -> dict:
    out = {}
    for state, entries in rules.items():
        out[state] = []
        for regex, action, new_state in entries:
            act = bygroups(*action) if isinstance(action, list) else action
            out[state].append((regex, act) if new_state is None else (regex, act, new_state))
    return out


class RelayLexer(RegexLexer):
    """Lexer for Relay IR text (`.relay`, TVM's `.rly`)."""

    name = "Relay"
    aliases = ["relay"]
    filenames = ["*.relay", "*.rly"]
    mimetypes = ["text/x-relay"]
    url = "https://tvm.apache.org/docs/reference/langref/relay_expr.html"

    flags = re.MULTILINE

    tokens = _pygments_rules(RULES)

    def get_tokens_unprocessed(self, text, stack=("root",)):
        types, constructors = declared_names(text)
        for index, token, value in super().get_tokens_unprocessed(text, stack):
            if token in (Name, Name.Builtin, Name.Constant, Name.Class):
                if value in constructors:
                    token = Name.Constant
                elif value in types:
                    token = Name.Class
            yield index, token, value
