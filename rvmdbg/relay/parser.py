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

from rvmdbg.i18n import _
from rvmdbg.relay.ast import Constructor, Function, Module, TypeData, Var
from rvmdbg.relay.diagnostics import (
    NameResolutionError, ParseError, RelayError, RelayNote, RelayWarning, Source, Span,
)
from rvmdbg.relay.lexer import ATTR, BOOL, EOF, GLOBAL, GRAPH, LOCAL, NAME, NUM, STR, tokenize
from rvmdbg.relay.metadata import split_metadata
from rvmdbg.relay.parse_attrs import AttrSyntax
from rvmdbg.relay.parse_common import KNOWN_DTYPES, MAX_NESTING, known_ops, span_between
from rvmdbg.relay.parse_exprs import ExprSyntax
from rvmdbg.relay.parse_meta import MetaRefSyntax
from rvmdbg.relay.parse_types import TypeSyntax
from rvmdbg.relay.types import DTYPE_ALIASES, TypeVar

VERSION = "0.0.5"
_known_ops = known_ops  # the name the tests knew it by

# Frames a parser needs per nesting level, with room to spare (see _stack_headroom).
_FRAMES_PER_LEVEL = 10


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


# TVM 0.6's header: the bare version at the start of the text (its grammar's SEMVER token)
_LEGACY_HEADER = re.compile(r"[ \t\r\n]*(v0\.0\.4)(?![\w.])")

# a TIR function as TVM prints one after LowerTE, at the start of a line
_PRIMFN = re.compile(r"^[ \t]*(@[\w.]+)[ \t]*=[ \t]*primfn\(", re.M)


class _Parser(ExprSyntax, AttrSyntax, MetaRefSyntax, TypeSyntax):
    """The parser's state (tokens, position, scopes, what the module defines so far), its entry
    points, errors and the module level: definitions, types, functions; the grammar of
    expressions, attributes, metadata references and types comes from the mixins."""

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
            span = span_between(start, self.toks[self.pos - 1], self.file)
            self.mod.functions["main"] = Function(list(self.free_vars) + meta, e, None, [], {},
                                                  span)

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
        if name in KNOWN_DTYPES or name in DTYPE_ALIASES or name == "Tensor":
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
                if cname in KNOWN_DTYPES or cname in DTYPE_ALIASES:
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
                ctor = Constructor(cname, inputs, len(ctors), name,
                                   span_between(ctok, cend, self.file))
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
        td = TypeData(name, params, ctors, span_between(start, end, self.file), extern=extern)
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
        return Function(params, body, ret, type_params, attrs, span_between(start, end, self.file))


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


def _stack_depth() -> int:
    f = sys._getframe()
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n
