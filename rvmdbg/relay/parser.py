"""The Relay text parser: a hand-written recursive-descent parser from tokens to the AST.

Names are resolved while parsing: locals and graph variables lexically, constructors and types
against the definitions read so far (types may be named before their `type` definition, so
recursive and mutually recursive types work), globals after every definition has been read (so
functions may call each other in any order). An optional environment module (the prelude) makes
its types, constructors and functions visible; the program's own definitions of the same names
take precedence.

Long `let` chains and sequences are parsed in a loop, so their length costs no stack; other
nesting (parentheses, calls, branches) is limited to `MAX_NESTING` levels.
"""
from __future__ import annotations

import contextlib
import difflib
import gc
import re
import sys
from operator import itemgetter

import numpy as np

from rvmdbg.i18n import _, ngettext
from rvmdbg.relay.ast import (
    AttrMap, AttrObject, Call, Clause, Constant, Constructor, ConstructorRef, Function, GlobalVar,
    If, Let, Match, Module, OpRef, PatternConstructor, PatternTuple, PatternVar, PatternWildcard,
    RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, TypeData, Var,
)
from rvmdbg.relay.diagnostics import (
    LexError, NameResolutionError, ParseError, RelayError, RelayNote, RelayTypeError,
    RelayWarning, Source, Span,
)
from rvmdbg.relay.dialect import DIALECT_OPS
from rvmdbg.relay.lexer import (
    _INT_RANGES, ATTR, BOOL, EOF, GLOBAL, GRAPH, LOCAL, NAME, NUM, STR, tokenize,
)
from rvmdbg.relay.metadata import attrs_fields, is_attrs_object, split_metadata
from rvmdbg.relay.types import (
    DTYPE_ALIASES, DTYPES, FuncType, IncompleteType, RefType, StorageType, TensorType, TupleType,
    TypeCall, TypeVar, is_vector_dtype,
)

VERSION = "0.0.5"
MAX_NESTING = 1024

_BINOPS = {
    "*": (3, "multiply"), "/": (3, "divide"),
    "+": (2, "add"), "-": (2, "subtract"),
    "<": (1, "less"), "<=": (1, "less_equal"), ">": (1, "greater"), ">=": (1, "greater_equal"),
    "==": (0, "equal"), "!=": (0, "not_equal"),
}
_DTYPES = frozenset(DTYPES)
# Frames a parser needs per nesting level, with room to spare (see _stack_headroom).
_FRAMES_PER_LEVEL = 10

_ops_table = None


def _known_ops():
    """The operator table (rvmdbg.relay.ops.OPS) or None while it is not importable."""
    global _ops_table
    if _ops_table is None:
        try:
            from rvmdbg.relay.ops import OPS
        except ImportError:
            return None
        _ops_table = OPS
    return _ops_table


class ParseInfo:
    """What a parse learned besides the module: per definition, the global names it refers to
    (for the loader's reachability), and where each name taken from the environment is first
    used."""

    def __init__(self) -> None:
        # definition name -> set of ("global"|"ctor"|"type", name) it refers to
        self.deps: dict[tuple, set] = {}
        # ("global"|"ctor"|"type", name) -> Span of its first use, for names from the environment
        self.env_uses: dict[tuple, Span] = {}


def parse(text: str, filename: str = "<input>", env: Module | None = None,
          extra_ops=(), missing_meta=None) -> Module:
    """Parse a whole program (which must start with `#[version = "0.0.5"]`).

    `env` is a module whose types, constructors and functions the program may use without
    defining them (the loader passes the prelude); they are not copied into the result.
    `extra_ops` are operator names accepted besides the registry's and the memory and device
    dialect of a printed pass stage (`rvmdbg.relay.dialect`), which are always accepted.
    `missing_meta` (a `metadata.MissingConstants`) says what a `meta[relay.Constant][i]` is
    when the file has no #[metadata] section; None makes it an error."""
    return parse_with_info(text, filename, env, extra_ops, missing_meta)[0]


def parse_with_info(text: str, filename: str = "<input>", env: Module | None = None,
                    extra_ops=(), missing_meta=None):
    """parse() that also returns the ParseInfo the loader needs."""
    p = _Parser(text, filename, env, None, extra_ops, missing_meta)
    return p.run(p.parse_module), p.info


def parse_expr(text: str, module: Module | None = None, filename: str = "<expr>"):
    """Parse one expression; constructors, types and globals resolve against `module`.
    A version header is optional; `free_var %x: T;` declares a free variable."""
    p = _Parser(text, filename, module, module)
    return p.run(p.parse_expression_text)


def parse_type(text: str, module: Module | None = None, filename: str = "<type>"):
    """Parse one type (`Tensor[(2, ?), float32]`, `List[int32]`, `fn (int32) -> bool`)."""
    p = _Parser(text, filename, module, module)
    return p.run(p.parse_type_text)


def _span(a, b, file: str) -> Span:
    """The span from the start of token/node-span a to the end of token/node-span b."""
    return Span(a[2], a[3], b[4], b[5], file)


# the casts TVM's printer writes before a value in an object's repr: `attrs={'x': (bool)0}`
_REPR_CASTS = {"bool": bool, "int": int, "int32": int, "int64": int, "float": float,
               "float32": float, "float64": float}


# the type TVM prints after an expression: `/* ty=Tensor[(2, 2), float32] span=... */`
_TY_COMMENT = re.compile(r"[ \t]*/\*[ \t]*ty=((?:(?!\*/).)*)\*/", re.S)


def _offset(text: str, line: int, col: int) -> int:
    """The text offset of a 1-based (line, column)."""
    start = 0
    for _n in range(line - 1):
        start = text.index("\n", start) + 1
    return start + col - 1


# TVM 0.6's header: the bare version at the start of the text (its grammar's SEMVER token)
_LEGACY_HEADER = re.compile(r"[ \t\r\n]*(v0\.0\.4)(?![\w.])")

# a TIR function as TVM prints one after LowerTE, at the start of a line
_PRIMFN = re.compile(r"^[ \t]*(@[\w.]+)[ \t]*=[ \t]*primfn\(", re.M)


class _Parser:
    def __init__(self, text: str, filename: str, env: Module | None, expr_module: Module | None,
                 extra_ops=(), missing_meta=None):
        self.file = filename
        self.extra_ops = frozenset(extra_ops)
        # the JSON after `#[metadata]` is never lexed: split off here, decoded in run()
        text, self.metadata = split_metadata(text, filename)
        self.source = Source(filename, text)
        self.text = text
        self.env = env
        # parse_expr: globals must exist in this module (None: any global is accepted)
        self.expr_module = expr_module
        self.toks: list = []
        self.pos = 0
        self.depth = 0
        self.mod = Module(self.source)
        self.info = ParseInfo()
        # lexical scopes: name -> Var (locals) / Expr (graph bindings), undone via a log
        self.scope: dict = {}
        self.undo: list = []
        self.tscope: dict = {}  # type parameter name -> TypeVar
        self.tundo: list = []
        # names the program defines (from a pre-scan), which hide the environment's
        self.own_types: dict[str, int] = {}  # type name -> number of type parameters
        self.own_ctors: dict[str, str] = {}  # constructor name -> its type's name
        self.global_uses: list = []  # (name, Span) in source order
        self.lowered_uses: set = set()  # globals named as the callee of call_lowered
        self.cur_deps: set | None = None
        self.is_expr = False
        self.free_vars: list | None = None  # the `free_var`s of a file that is one expression
        self.legacy_header: Span | None = None  # where a TVM 0.6 `v0.0.4` header stood
        # --meta-inputs / --meta-random: what a `meta[relay.Constant][i]` with no section is
        self.missing_meta = missing_meta
        self.meta_params: dict = {}  # index -> the Var standing for it in the current global
        self.in_primitive = 0  # how many enclosing functions are primitive

    # ---- entry points ----

    def run(self, body):
        """Lex, then run `body`, turning runaway recursion into a clean error."""
        old = sys.getrecursionlimit()
        need = _stack_depth() + MAX_NESTING * _FRAMES_PER_LEVEL + 200
        if need > old:
            sys.setrecursionlimit(need)
        # The parser makes no reference cycles; pausing the cyclic collector while it allocates
        # a few hundred thousand objects halves the time of a large parse.
        try:
            with paused_gc():
                try:
                    if "primfn" in self.text:
                        self.refuse_tir()
                    self.read_legacy_header()
                    self.toks = tokenize(self.text, self.file, self.source)
                    if self.metadata is not None:
                        self.metadata.load()
                    return body()
                except RecursionError:
                    where = self.toks[min(self.pos, len(self.toks) - 1)] if self.toks \
                        else (EOF, "", 1, 1, 1, 1)
                    raise self.too_deep(where) from None
                finally:
                    # freed by reference counting now, so the collector never has to scan them
                    self.toks = None
                    if self.metadata is not None:
                        self.metadata.release_text()
        finally:
            if need > old and sys.getrecursionlimit() == need:
                sys.setrecursionlimit(old)

    def parse_module(self) -> Module:
        tok = self.toks[0]
        if self.legacy_header is None and (tok[0] != ATTR or not tok[6].startswith("version")) \
                and self.bare_main_allowed(tok):
            # TVM's parse_expr reads an expression without a header; only its module parser
            # needs one
            self.mod.warnings.append(RelayNote(
                _("no version header: the file is read as one expression, as TVM's parse_expr "
                  "reads it"), self.tspan(tok),
                _("a file of definitions starts with {header}").format(
                    header=f'#[version = "{VERSION}"]'), self.source))
        else:
            self.version_header(required=True)
        self.prescan()
        toks = self.toks
        mod = self.mod
        while True:
            tok = toks[self.pos]
            k = tok[0]
            if k == "def":
                self.definition()
            elif k == "type":
                self.type_definition(extern=False)
            elif k == "extern":
                self.pos += 1
                if toks[self.pos][0] != "type":
                    raise self.expected(_("`type` after `extern`"))
                self.type_definition(extern=True, start=tok)
            elif k == EOF:
                break
            elif not mod.functions and not mod.type_defs and self.bare_main_allowed(tok):
                self.bare_main(tok)
                if toks[self.pos][0] != EOF:
                    raise self.expected(_("the end of the file after its expression"),
                                        hint=_("a file is either definitions or one expression"))
            elif k == ATTR:
                raise self.error(ParseError, _("attributes other than the version header are "
                                               "not supported"), tok)
            else:
                hint = None
                if k in (LOCAL, GRAPH, "let", NUM) or k == NAME and toks[self.pos + 1][0] == "(":
                    hint = _("expressions go inside a definition: def @main() { ... }")
                raise self.expected(_("a definition (`def`, `type` or `extern type`)"), hint=hint)
        self.resolve_globals()
        return mod

    def bare_main_allowed(self, tok) -> bool:
        """Does the file's content start an expression (as TVM's expression parser reads a
        file: `fn (%x) {...}` or `free_var %x: T; ...`)?"""
        k = tok[0]
        return k in ("fn", "free_var", "let", "if", "match", "match?", "(", LOCAL, GRAPH, NUM,
                     BOOL, GLOBAL, "ref", "ref_read", "ref_write", "{") or \
            (k == NAME and self.toks[self.pos + 1][0] == "(")

    def bare_main(self, start) -> None:
        """The file's one expression as @main: a closed `fn` is @main itself; anything else
        becomes the body of a @main whose parameters are its `free_var`s."""
        self.cur_deps = self.info.deps.setdefault(("global", "main"), set())
        self.free_vars = []
        self.meta_params = {}
        e = self.expr()
        self.cur_deps = None
        meta = [self.meta_params[i] for i in sorted(self.meta_params)]
        if type(e) is Function and not self.free_vars and not meta:
            self.mod.functions["main"] = e
        elif type(e) is Function and not self.free_vars:
            e.params.extend(meta)  # the constants are the closed fn's own inputs
            self.mod.functions["main"] = e
        else:
            self.mod.functions["main"] = Function(list(self.free_vars) + meta, e, None, [], {},
                                                  _span(start, self.toks[self.pos - 1], self.file))

    def read_legacy_header(self) -> None:
        """TVM 0.6 (text format v0.0.4) starts a file with a bare `v0.0.4`: the rest reads as
        0.0.5 where the syntax is the same; the header is blanked (columns kept) and noted."""
        m = _LEGACY_HEADER.match(self.text)
        if m is None:
            return
        start = m.start(1)
        line = self.text.count("\n", 0, start) + 1
        col = start - (self.text.rfind("\n", 0, start) + 1) + 1
        self.legacy_header = Span(line, col, line, col + len(m.group(1)), self.file)
        self.text = self.text[:start] + " " * len(m.group(1)) + self.text[m.end(1):]
        self.mod.warnings.append(RelayNote(
            _("text format {version} (TVM 0.6) read as {current}: the syntax they share reads "
              "the same").format(version=m.group(1), current=VERSION), self.legacy_header,
            _("TVM 0.7 and later write {header}").format(header=f'#[version = "{VERSION}"]'),
            self.source))

    def parse_expression_text(self):
        self.is_expr = True
        self.version_header(required=False)
        e = self.expr()
        if self.toks[self.pos][0] != EOF:
            raise self.expected(_("the end of the expression"))
        self.resolve_globals()
        return e

    def parse_type_text(self):
        self.is_expr = True
        t = self.type_()
        if self.toks[self.pos][0] != EOF:
            raise self.expected(_("the end of the type"))
        return t

    # ---- errors ----

    def too_deep(self, where) -> RelayError:
        return self.error(ParseError, _("nesting too deep"), where,
                          _("rvmdbg parses at most {n} nested levels").format(n=MAX_NESTING))

    def tspan(self, tok) -> Span:
        return Span(tok[2], tok[3], tok[4], tok[5], self.file)

    def error(self, cls, message: str, where, hint: str | None = None) -> RelayError:
        """An error located at a token or a Span."""
        span = where if isinstance(where, Span) else self.tspan(where)
        return cls(message, span, hint, self.source)

    def expected(self, what: str, hint: str | None = None) -> RelayError:
        """`expected WHAT, found TOKEN`, with a hint for TVM's lexical traps. `what` is a
        translated noun phrase (`_("a type")`)."""
        tok = self.toks[self.pos]
        if hint is None:
            hint = self.trap_hint(tok)
        # i18n: {what} is a noun phrase such as "a type" or "`)` after the arguments";
        # {found} names the token: "`foo`", "the end of the input", "the string "x""
        message = _("expected {what}, found {found}").format(what=what, found=describe(tok))
        return self.error(ParseError, message, tok, hint)

    def trap_hint(self, tok) -> str | None:
        prev = self.toks[self.pos - 1] if self.pos else None
        if tok[0] == NUM and tok[1].startswith("-") and prev is not None:
            left = prev[1] if prev[0] in (LOCAL, GRAPH, GLOBAL, NAME, NUM) else "a"
            return _("write {left} - {right} with spaces: numbers lex greedily, so `{token}` is "
                     "a negative literal").format(left=left, right=tok[1].lstrip("-"),
                                                  token=tok[1])
        if prev is not None and prev[0] in (LOCAL, GLOBAL) and prev[1].endswith("/"):
            return _("`/` can be part of a name, so `{name}` is one name: write {head} / ... "
                     "with spaces").format(name=prev[1], head=prev[1][:-1])
        return None

    # ---- module level ----

    def version_header(self, required: bool) -> None:
        if self.legacy_header is not None:
            return  # TVM 0.6's `v0.0.4`, blanked out before lexing
        tok = self.toks[0]
        if tok[0] != ATTR or not tok[6].startswith("version"):
            if required:
                raise self.error(ParseError, _("missing version header"), tok,
                                 _('start the program with {header}').format(
                                     header=f'#[version = "{VERSION}"]'))
            return
        body = tok[6][len("version"):].strip()
        if not body.startswith("="):
            raise self.error(ParseError, _("malformed version header"), tok,
                             _("write {header}").format(header=f'#[version = "{VERSION}"]'))
        version = body[1:].strip()
        if version != f'"{VERSION}"':
            raise self.error(ParseError, _("unsupported text format version {version}").format(
                version=version), tok, _("rvmdbg reads version {version}: {header}").format(
                    version=f'"{VERSION}"', header=f'#[version = "{VERSION}"]'))
        self.pos = 1

    def prescan(self) -> None:
        """Record the names of every type and constructor the program defines, so types can be
        used before their definition and the program's names hide the environment's."""
        toks = self.toks
        n = len(toks)
        kinds = list(map(itemgetter(0), toks))
        i = self.pos
        while True:
            # `type` is a keyword, so every occurrence starts a definition (or is an error the
            # parse proper reports)
            try:
                i = kinds.index("type", i) + 1
            except ValueError:
                return
            if kinds[i] != NAME:
                continue
            name = toks[i][1]
            j = i + 1
            arity = 0
            if kinds[j] == "[":
                j += 1
                while kinds[j] not in ("]", EOF, "{"):
                    if kinds[j] == NAME:
                        arity += 1
                    j += 1
                j += 1
            self.own_types.setdefault(name, arity)
            if j < n and kinds[j] == "{":
                # constructor names: a NAME right after `{` or a `,` outside brackets
                j += 1
                inner = 0
                expect_name = True
                while j < n and not (inner == 0 and kinds[j] == "}") and kinds[j] != EOF:
                    kj = kinds[j]
                    if kj in ("(", "[", "{"):
                        inner += 1
                    elif kj in (")", "]", "}"):
                        inner -= 1
                    elif inner == 0 and kj == ",":
                        expect_name = True
                        j += 1
                        continue
                    if expect_name and kj == NAME and inner == 0:
                        self.own_ctors.setdefault(toks[j][1], name)
                    expect_name = False
                    j += 1

    def definition(self) -> None:
        toks = self.toks
        start = toks[self.pos]
        self.pos += 1
        tok = toks[self.pos]
        if tok[0] != GLOBAL:
            raise self.expected(_("a function name such as @main after `def`"))
        name = tok[6]
        earlier = self.mod.functions.get(name)
        if earlier is not None:
            # TVM's parser adds every definition to the module with update=True: the last wins
            sp = earlier.span
            self.mod.warnings.append(RelayWarning(
                _("@{name} is defined twice: this definition replaces the one at line {line}, "
                  "as in TVM").format(name=name, line=sp.line), self.tspan(tok),
                _("remove or rename one of them"), self.source))
        self.pos += 1
        self.cur_deps = self.info.deps[("global", name)] = set()
        self.meta_params = {}
        func = self.function(start, is_def=True)
        self.cur_deps = None
        func.params.extend(self.meta_params[i] for i in sorted(self.meta_params))
        self.mod.functions[name] = func

    def type_definition(self, extern: bool, start=None) -> None:
        toks = self.toks
        tok = toks[self.pos]
        if start is None:
            start = tok
        self.pos += 1
        name_tok = toks[self.pos]
        if name_tok[0] != NAME:
            raise self.expected(_("a type name after `type`"))
        name = name_tok[1]
        if name in self.mod.type_defs:
            raise self.error(NameResolutionError,
                             _("duplicate definition of type {name}").format(name=name), name_tok,
                             _("type {name} is already defined at {where}").format(
                                 name=name, where=self.mod.type_defs[name].span))
        if name in _DTYPES or name in DTYPE_ALIASES or name == "Tensor":
            raise self.error(ParseError, _("`{name}` is a built-in type and cannot be "
                                           "redefined").format(name=name), name_tok)
        self.pos += 1
        self.cur_deps = self.info.deps.setdefault(("type", name), set())
        mark = len(self.tundo)
        params = self.type_params() if toks[self.pos][0] == "[" else []
        ctors: list[Constructor] = []
        end = toks[self.pos - 1]
        if toks[self.pos][0] == "{":
            if extern:
                raise self.error(ParseError, _("an extern type has no constructors"),
                                 toks[self.pos])
            self.pos += 1
            while toks[self.pos][0] != "}":
                ctok = toks[self.pos]
                if ctok[0] != NAME:
                    raise self.expected(_("a constructor name"))
                cname = ctok[1]
                if cname in self.mod.constructors:
                    prev = self.mod.constructors[cname]
                    raise self.error(NameResolutionError,
                                     _("duplicate constructor {name}").format(name=cname), ctok,
                                     _("{name} is already a constructor of type {type}").format(
                                         name=cname, type=prev.type_name))
                if cname in _DTYPES or cname in DTYPE_ALIASES:
                    raise self.error(ParseError, _("`{name}` is a type name and cannot be a "
                                                   "constructor").format(name=cname), ctok)
                self.pos += 1
                inputs = []
                cend = ctok
                if toks[self.pos][0] == "(":
                    self.pos += 1
                    if toks[self.pos][0] != ")":
                        while True:
                            inputs.append(self.type_())
                            if toks[self.pos][0] == ",":
                                self.pos += 1
                                if toks[self.pos][0] == ")":
                                    break
                            elif toks[self.pos][0] == ")":
                                break
                            else:
                                raise self.expected(_("`,` or `)` in the fields of {name}")
                                                    .format(name=cname))
                    cend = toks[self.pos]
                    self.pos += 1
                ctor = Constructor(cname, inputs, len(ctors), name, _span(ctok, cend, self.file))
                ctors.append(ctor)
                k = toks[self.pos][0]
                if k == ",":
                    self.pos += 1
                elif k != "}":
                    raise self.expected(_("`,` or `}}` after constructor {name}").format(
                        name=cname))
            end = toks[self.pos]
            self.pos += 1
        self.unbind_types(mark)
        self.cur_deps = None
        td = TypeData(name, params, ctors, _span(start, end, self.file), extern=extern)
        self.mod.type_defs[name] = td
        for c in ctors:
            self.mod.constructors[c.name] = c
        self.own_types.setdefault(name, len(params))

    def type_params(self) -> list:
        """`[A, B]`: binds the names as type parameters (undone by the caller)."""
        toks = self.toks
        self.pos += 1
        params = []
        seen = set()
        while True:
            tok = toks[self.pos]
            if tok[0] != NAME:
                raise self.expected(_("a type parameter name"))
            if tok[1] in seen:
                raise self.error(NameResolutionError,
                                 _("duplicate type parameter {name}").format(name=tok[1]), tok)
            seen.add(tok[1])
            tv = TypeVar(tok[1])
            params.append(tv)
            self.tundo.append((tok[1], self.tscope.get(tok[1])))
            self.tscope[tok[1]] = tv
            self.pos += 1
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
                if toks[self.pos][0] == "]":
                    break
            elif k == "]":
                break
            else:
                raise self.expected(_("`,` or `]` after a type parameter"))
        self.pos += 1
        return params

    def unbind_types(self, mark: int) -> None:
        tundo, tscope = self.tundo, self.tscope
        while len(tundo) > mark:
            name, old = tundo.pop()
            if old is None:
                del tscope[name]
            else:
                tscope[name] = old

    def resolve_globals(self) -> None:
        """Check every `@name` use now that all definitions are known."""
        if self.is_expr and self.expr_module is None:
            return  # parse_expr without a module: any global is accepted
        funcs = self.mod.functions
        known = self.env.functions if self.env is not None else {}
        for name, span in self.global_uses:
            if name in funcs:
                continue
            if name in known:
                self.info.env_uses.setdefault(("global", name), span)
                continue
            close = difflib.get_close_matches(name, list(funcs) + list(known), 1)
            hint = _("did you mean {name}?").format(name="@" + close[0]) if close else None
            if name in self.lowered_uses and hint is None:
                hint = _("call_lowered names a function TVM lowered to TIR, which rvmdbg does not "
                         "read: print the module before LowerTE, or define @{name} as a Relay "
                         "function (Primitive=1)").format(name=name)
            raise NameResolutionError(_("undefined global function {name}").format(
                name="@" + name), span, hint, self.source)

    def refuse_tir(self) -> None:
        """A module TVM printed after LowerTE lists its kernels as TIR (`@f = primfn(...)`),
        which no Relay reader reads: refused at the first one, before lexing (TIR's text is
        no Relay token stream), naming the function."""
        m = _PRIMFN.search(self.text)
        if m is None:
            return
        name = m.group(1)
        line = self.text.count("\n", 0, m.start(1)) + 1
        col = m.start(1) - (self.text.rfind("\n", 0, m.start(1)) + 1) + 1
        raise ParseError(
            _("{name} is a TIR function (primfn), which rvmdbg does not read").format(name=name),
            Span(line, col, line, col + len(name), self.file),
            _("print the module before LowerTE (only its Relay functions), or remove the primfn "
              "definitions and define {name} as a Relay function (Primitive=1)").format(
                name=name), self.source)

    # ---- scopes ----

    def bind(self, name, value) -> None:
        self.undo.append((name, self.scope.get(name)))
        self.scope[name] = value

    def unbind(self, mark: int) -> None:
        undo, scope = self.undo, self.scope
        while len(undo) > mark:
            name, old = undo.pop()
            if old is None:
                del scope[name]
            else:
                scope[name] = old

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.too_deep(self.toks[self.pos])

    # ---- functions ----

    def function(self, start, is_def: bool) -> Function:
        """`[T](%p: t, ..., Attr=v) -> ret { body }` after `def @name` or `fn`."""
        toks = self.toks
        mark, tmark = len(self.undo), len(self.tundo)
        type_params = self.type_params() if toks[self.pos][0] == "[" else []
        if toks[self.pos][0] != "(":
            raise self.expected(_("`(` to open the parameter list") if is_def else
                                _("`(` after `fn`"))
        self.pos += 1
        params = []
        attrs = {}
        seen = {}
        while toks[self.pos][0] != ")":
            tok = toks[self.pos]
            k = tok[0]
            if k == LOCAL:
                self.pos += 1
                ann = None
                param_attrs = None
                if toks[self.pos][0] == "{":
                    # `%x {virtual_device=meta[VirtualDevice][0]}: t`, as TVM prints a parameter
                    # placed on a device
                    self.pos += 1
                    param_attrs = self.attributes("}")
                    self.pos += 1
                if toks[self.pos][0] == ":":
                    self.pos += 1
                    ann = self.type_()
                name = tok[6]
                if name in seen:
                    raise self.error(NameResolutionError, _("duplicate parameter {name}").format(
                        name=tok[1]), tok)
                seen[name] = True
                v = Var(name, ann, self.tspan(tok), param_attrs)
                params.append(v)
                self.bind(name, v)
            elif k == NAME and self.attr_key_end(self.pos) is not None:
                attrs = self.attributes(")")
                break
            elif k == GRAPH:
                raise self.error(ParseError, _("a parameter needs a name, not the graph variable "
                                               "{name}").format(name=tok[1]), tok,
                                 _("write %x or %p0"))
            else:
                raise self.expected(_("a parameter such as %x: int32"))
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != ")":
                raise self.expected(_("`,` or `)` after a parameter"))
        self.pos += 1
        ret = None
        if toks[self.pos][0] == "->":
            self.pos += 1
            ret = self.type_()
        if toks[self.pos][0] != "{":
            raise self.expected(_("`{` to open the function body"))
        self.pos += 1
        primitive = bool(attrs.get("Primitive") or attrs.get("Extern"))
        self.in_primitive += primitive
        body = self.expr()
        self.in_primitive -= primitive
        end = toks[self.pos]
        if end[0] != "}":
            raise self.expected(_("`}` to close the function body"))
        self.pos += 1
        self.unbind(mark)
        self.unbind_types(tmark)
        return Function(params, body, ret, type_params, attrs, _span(start, end, self.file))

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
        if k == NAME and (tok[1] in _DTYPES or tok[1] in DTYPE_ALIASES):
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

    # ---- expressions ----

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
        operands = [(lhs, _span(toks[start], toks[self.pos - 1], file))]
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
            operands.append((e, _span(toks[start], toks[self.pos - 1], file)))
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
                e.span = _span(minus[0], ntok, self.file)
                return self.postfix(e)
            if toks[self.pos][0] == NUM:
                ntok = toks[self.pos]
                e = self.number_constant(ntok)
                self.pos += 1
                e.span = _span(minus[0], ntok, self.file)
                return self.postfix(e)
            astart = self.pos
            e = self.postfix(self.atom(), astart)
            for m in reversed(minus):
                e = Call(OpRef("negative", self.tspan(m)), [e], None,
                         _span(m, toks[self.pos - 1], self.file))
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
                e = TupleGetItem(e, itok[6].value, _span(first, itok, self.file))
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
        span = _span(first if first is not None else open_tok, end, self.file)
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
            span = _span(tok, end, file)
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
            return RefWrite(ref, val, _span(tok, end, file))
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
        key_span = _span(first, last, self.file)
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
        span = _span(start, end, self.file)
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
            return parse_type(body, self.env, self.file)
        except RelayError:
            return None

    def number_constant(self, tok, negate: bool = False):
        num = tok[6]
        if num.dtype is None:
            lit = tok[1].lstrip("-")
            raise self.error(LexError, _("float literal `{text}` needs a type suffix").format(
                text=tok[1]), tok, _("floats need the f suffix: {literal}").format(
                    literal=lit + "f"))
        value = -num.value if negate else num.value
        if negate and not num.is_float:
            lo, hi = _INT_RANGES[num.dtype]
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
        span = _span(tok, end, self.file)
        ops = _known_ops()
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
            return Tuple([], _span(tok, end, self.file))
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
        return Tuple(fields, _span(tok, end, self.file))

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
        return If(cond, then, other, _span(tok, end, self.file))

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
            clauses.append(Clause(pat, rhs, _span(ptok, toks[self.pos - 1], self.file)))
            k = toks[self.pos][0]
            if k == ",":
                self.pos += 1
            elif k != "}" and toks[self.pos - 1][0] != "}":
                raise self.expected(_("`,` or `}` after a match arm"))
        end = toks[self.pos]
        self.pos += 1
        if not clauses:
            raise self.error(ParseError, _("a match needs at least one arm"), end)
        return Match(data, clauses, complete, _span(tok, end, self.file))

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
                    _span(tok, end, file))
            return PatternConstructor(tok[1], c, subs, _span(tok, end, file))
        if k == "(":
            subs, end = self.pattern_list(bound)
            return PatternTuple(subs, _span(tok, end, file))
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

    # ---- types ----

    def type_(self):
        toks = self.toks
        tok = toks[self.pos]
        k = tok[0]
        self.enter()
        try:
            if k == NAME:
                self.pos += 1
                name = tok[1]
                if name in _DTYPES or is_vector_dtype(name):
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
        if dtype not in _DTYPES and not (dtype is not None and is_vector_dtype(dtype)):
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
                    name=name, n=arity, given=len(args)), _span(tok, end, self.file))
        return TypeCall(name, tuple(args))


@contextlib.contextmanager
def paused_gc():
    """Pause the cyclic garbage collector: the front end allocates many small objects and makes
    no reference cycles, and the collector's passes over them would double the time of a large
    parse or print."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_ARG_END = frozenset({",", ")"})  # what may follow an argument


def describe(tok) -> str:
    """How an error message names a token."""
    k = tok[0]
    if k == EOF:
        return _("the end of the input")
    if k == STR:
        return _("the string {text}").format(text=tok[1])
    text = tok[1]
    if len(text) > 30:
        text = text[:27] + "..."
    return f"`{text}`"


def _merge(a: Span | None, b: Span | None, file: str) -> Span | None:
    if a is None:
        return b
    if b is None:
        return a
    return Span(a.line, a.col, b.end_line, b.end_col, file)


def _stack_depth() -> int:
    f = sys._getframe()
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n
