"""Every user-facing error of the listed modules goes through the translation function.

The test reads each module in `MODULES` with `ast` and fails, naming FILE:LINE, where an
error is built from a bare English string: a `raise` of an exception class, or a call of one
of the error constructors and helpers in `MESSAGE_ARGS`, whose message (or hint) argument is
a str literal, an f-string, or a `+`/`%`/conditional of them, instead of `_(...)` /
`ngettext(...)` (with `.format(...)` after it). A message held in a variable, or returned by
another call, is not judged here: the place that builds it is.

To cover a module, add its path to `MODULES`; to teach the test a new error constructor or
helper, add its name (a class, a function, or a method called as `self.NAME`/`obj.NAME`) to
`MESSAGE_ARGS` with the positions and keyword names of its user-facing text arguments. A
text first put in a variable named in `TEXT_VARIABLES` (`hint = "..."`) is judged too. An
internal error the user never sees is exempt when its statement carries the comment
`# not shown to users` (use it sparingly: docs/i18n.md).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The modules whose errors must be translated (paths from the repository root).
MODULES = [
    "rvmdbg/relay/lexer.py",
    "rvmdbg/relay/parser.py",
    "rvmdbg/relay/parse_common.py",
    "rvmdbg/relay/parse_attrs.py",
    "rvmdbg/relay/parse_exprs.py",
    "rvmdbg/relay/parse_meta.py",
    "rvmdbg/relay/parse_types.py",
    "rvmdbg/relay/metadata.py",
    "rvmdbg/relay/loader.py",
    "rvmdbg/relay/dialect.py",
    "rvmdbg/relay/diagnostics.py",
    "rvmdbg/args.py",
    "rvmdbg/fileio.py",
    "rvmdbg/tui/keymap.py",
    "rvmdbg/debug/config.py",
    "rvmdbg/debug/breakpoints.py",
    "rvmdbg/minivm/parser.py",
    "rvmdbg/minivm/machine.py",
    # the type checker, the memory dialect's types, and every operator's type relation
    "rvmdbg/relay/typecheck.py",
    "rvmdbg/relay/match_coverage.py",
    "rvmdbg/relay/check_base.py",
    "rvmdbg/relay/check_calls.py",
    "rvmdbg/relay/unify.py",
    "rvmdbg/relay/types.py",
    "rvmdbg/relay/equal.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rvmdbg/relay/ops").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rvmdbg/passes").glob("*.py")),
    # run-time errors: the VM, executables, the interpreter, the graph executor, the debugger
    "rvmdbg/vm/machine.py",
    "rvmdbg/vm/regions.py",
    "rvmdbg/vm/kernels.py",
    "rvmdbg/vm/executable.py",
    "rvmdbg/vm/serialize.py",
    "rvmdbg/vm/compiler.py",
    "rvmdbg/vm/bytecode.py",
    "rvmdbg/relay/interpreter.py",
    "rvmdbg/graph/executor.py",
    "rvmdbg/graph/lower.py",
    "rvmdbg/graph/graph.py",
    "rvmdbg/limits.py",
    "rvmdbg/debug/indexing.py",
    "rvmdbg/debug/transcript.py",
    "rvmdbg/debug/numbering.py",
    "rvmdbg/argparse_i18n.py",
]

# Error constructors and helpers -> (positions, keyword names) of their user-facing texts.
# A `raise SomeError("...")` of a class not listed here is judged on its first argument.
MESSAGE_ARGS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    # located Relay errors: (message, span, hint, source)
    "RelayError": ((0, 2), ("message", "hint")),
    "RelayWarning": ((0, 2), ("message", "hint")),
    "LexError": ((0, 2), ("message", "hint")),
    "ParseError": ((0, 2), ("message", "hint")),
    "NameResolutionError": ((0, 2), ("message", "hint")),
    "RelayTypeError": ((0, 2), ("message", "hint")),
    "MetadataError": ((0, 2), ("message", "hint")),
    "KeymapError": ((0, 2), ("message", "hint")),
    "MvmSyntaxError": ((0, 2), ("message", "hint")),
    # a refused file: (path, reason)
    "FileRefused": ((1,), ("reason",)),
    # the metadata reader's: _error(message, pos, length, hint), _node_error(index, message)
    "_error": ((0, 3), ("message", "hint")),
    "_node_error": ((1,), ("message",)),
    # local `fail` helpers: fail(message, ...) (metadata, MiniVM: hint as keyword) and the
    # keys file's fail(line, col, width, message, hint); the other positions hold numbers
    "fail": ((0, 3, 4), ("message", "hint")),
    # the parser's helpers: error(cls, message, where, hint), expected(what, hint); the type
    # checker's error(node, message, hint, cls)
    "error": ((1, 2, 3), ("message", "hint")),
    "expected": ((0, 1), ("what", "hint")),
    # the type checker: warnings and notes, a unification failure's reason, and the template
    # _expect translates on a mismatch (an N_-marked msgid, or a function giving the text)
    "TypeWarning": ((0, 2), ("message", "hint")),
    "TypeNote": ((0, 2), ("message", "hint")),
    "_Mismatch": ((2,), ("reason",)),
    "_expect": ((3,), ("template",)),
    # operator type relations: unify_dim(op, a, b, what) says what differs; a kernel TVM's
    # lowering refuses: tvm_lowering_refuses(op, dtype, why, fix), float_intrinsic_refusal(op,
    # dtype) (the operator's name is not text)
    "unify_dim": ((3,), ("what",)),
    "tvm_lowering_refuses": ((2, 3), ("why", "fix")),
    "float_intrinsic_refusal": ((), ()),
    # run-time helpers: the .rvmx reader's _fail(name, reason), a limit's stop
    # _limit_error(name, value, what[, span])
    "_fail": ((1,), ("reason",)),
    "_limit_error": ((2,), ("what",)),
}

# Variables that hold a user-facing text to be passed on (`hint = "..."`, then `hint=hint`).
TEXT_VARIABLES = {"hint"}

EXEMPT = "# not shown to users"
TRANSLATORS = {"_", "ngettext"}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _bare_text(node: ast.expr | None) -> bool:
    """Is this argument English text built in place rather than looked up in a catalog?"""
    if node is None:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.strip() != ""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _bare_text(node.left) or _bare_text(node.right)
    if isinstance(node, ast.IfExp):
        return _bare_text(node.body) or _bare_text(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "format":
        # "...".format(...) is bare; _("...").format(...) is translated
        return _bare_text(node.func.value)
    return False


def _text_args(call: ast.Call, in_raise: bool) -> list[ast.expr]:
    name = _name(call.func)
    spec = MESSAGE_ARGS.get(name or "")
    if spec is None:
        if not in_raise:
            return []
        spec = ((0,), ("message",))
    positions, keywords = spec
    out = [call.args[i] for i in positions if i < len(call.args)
           and not isinstance(call.args[i], ast.Starred)]
    out += [kw.value for kw in call.keywords if kw.arg in keywords]
    return out


def _exempt(lines: list[str], node: ast.AST) -> bool:
    return any(EXEMPT in lines[i - 1] for i in range(node.lineno, node.end_lineno + 1))


def untranslated(path: Path) -> list[str]:
    """FILE:LINE of every error in the module built from bare text."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    raised = {id(n.exc) for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc}
    found = []
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _bare_text(node.value) and any(
                isinstance(t, ast.Name) and t.id in TEXT_VARIABLES for t in node.targets) \
                and not _exempt(lines, node):
            found.append(f"{rel}:{node.lineno}: {ast.get_source_segment(text, node.value)}")
            continue
        if not isinstance(node, ast.Call) or _name(node.func) in TRANSLATORS:
            continue
        in_raise = id(node) in raised
        if not in_raise and _name(node.func) not in MESSAGE_ARGS:
            continue
        bad = [a for a in _text_args(node, in_raise) if _bare_text(a)]
        if bad and not _exempt(lines, node):
            found.append(f"{rel}:{bad[0].lineno}: {ast.get_source_segment(text, bad[0])}")
    return sorted(found, key=lambda s: int(s.split(":")[1]))


@pytest.mark.parametrize("module", MODULES)
def test_errors_go_through_the_catalog(module):
    path = ROOT / module
    assert path.is_file(), f"{module} is listed in MODULES but does not exist"
    found = untranslated(path)
    assert not found, ("errors built from bare text (wrap them in _() / ngettext()):\n  "
                       + "\n  ".join(found))


def _lint_source(tmp_path, source: str) -> list[str]:
    path = tmp_path / "probe.py"
    path.write_text(source)
    return untranslated(path)


def test_the_lint_sees_what_it_should(tmp_path):
    source = '''
def f(self, x):
    raise ValueError("plain")
    raise ValueError(f"an f-string {x}")
    raise ValueError("a" + str(x))
    raise ValueError("%s" % x)
    raise ValueError("{x}".format(x=x))
    raise LexError(_("fine"), None, "a bare hint")
    raise self.error(ParseError, "helper", x)
    raise self.expected("a thing" if x else "another")
    w = RelayWarning(f"warned {x}", None)
    raise ValueError(_("fine {x}").format(x=x))
    raise ValueError(ngettext("{n} one", "{n} many", x).format(n=x))
    raise ValueError(message)
    raise ValueError("internal")  # not shown to users
    raise self.expected(_("fine"), hint=_("fine too"))
    hint = f"did you mean {x}?" if x else None
    hint = _("did you mean {x}?").format(x=x) if x else None
'''
    found = _lint_source(tmp_path, source)
    lines = [int(f.split(":")[1]) for f in found]
    assert lines == [3, 4, 5, 6, 7, 8, 9, 10, 11, 17], found
