"""The zh_CN catalog against the code: every string marked in the code (`_`, `N_`,
`ngettext`, as `pybabel extract` finds them) has a translation, no catalog entry is stale,
the shipped .mo is compiled from the .po, and the translation layer picks the language as
gettext does."""
from __future__ import annotations

import ast
import functools
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rvmdbg import i18n

ROOT = Path(__file__).resolve().parents[2]
TERMS = ["字节码", "操作码", "操作数", "虚拟寄存器", "执行循环", "取指/解码/执行", "读集", "写集",
         "数据依赖", "控制流", "图执行器", "内存复用"]


@functools.cache
def _catalog_tool():
    """scripts/i18n.py, loaded once per worker; its extraction (babel reading every file of the
    package, the slow part) done once and shared: no test here changes the catalog it returns."""
    spec = importlib.util.spec_from_file_location("i18n_catalog", ROOT / "scripts" / "i18n.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.extract = functools.cache(module.extract)
    return module


def test_catalog_matches_the_code():
    pytest.importorskip("babel")
    problems = _catalog_tool().problems("zh_CN")
    assert problems == [], "\n".join(problems[:40]) + (
        "\n(run `python3 scripts/i18n.py update`, translate, then `... compile`; docs/i18n.md)")


def test_the_check_sees_a_stale_and_a_missing_entry(tmp_path, monkeypatch):
    """The catalog check can fail: a msgid gone from the code and one not in the catalog."""
    pytest.importorskip("babel")
    tool = _catalog_tool()
    real = tool.extract()
    from babel.messages.catalog import Catalog
    fake = Catalog(locale="zh_CN")
    for m in real:
        if m.id and m.id != "Bytecode":
            fake.add(m.id, None)
    fake.add("a string only this test has", None)
    monkeypatch.setattr(tool, "extract", lambda: fake)
    found = "\n".join(tool.problems("zh_CN"))
    assert "stale in zh_CN (no longer in the code): 'Bytecode'" in found
    assert "missing in zh_CN: 'a string only this test has'" in found


def test_placeholders_survive_translation():
    """A translation keeps exactly the `{name}` fields of its msgid (else .format fails)."""
    pytest.importorskip("babel")
    catalog = _catalog_tool().read_po("zh_CN")
    field = re.compile(r"\{[a-z_]*\}")
    bad = []
    for m in catalog:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        for s in strings:
            if s and sorted(field.findall(s)) != sorted(field.findall(ids[0])):
                bad.append((ids[0], s))
    assert bad == []


def test_established_terms_are_used():
    text = (ROOT / "rvmdbg/locale/zh_CN/LC_MESSAGES/rvmdbg.po").read_text(encoding="utf-8")
    for term in TERMS:
        assert term in text, term


def _own_nodes(fn):
    """The nodes of a function's own scope (comprehensions and inner functions have theirs)."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                                 ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _functions_binding_underscore(tree):
    """Functions that assign `_` (a throwaway loop variable) and also call `_()`: the call
    would hit the local variable."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        binds = any(isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)
                    for n in _own_nodes(fn))
        # looked for only where `_` is bound (rare): walking every function twice was slow
        if binds and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                         and n.func.id == "_" for n in ast.walk(fn)):
            out.append(f"{fn.name}:{fn.lineno}")
    return out


def test_no_function_shadows_the_translation_function():
    bad = []
    for path in (ROOT / "rvmdbg").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "_(" not in text:
            continue
        found = _functions_binding_underscore(ast.parse(text))
        bad += [f"{path.relative_to(ROOT)}:{f}" for f in found]
    assert bad == []


@pytest.mark.parametrize("env, lang", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ({"LANG": "zh_TW.UTF-8"}, "zh_CN"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh_CN"),
    ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),          # LC_ALL before LANG
    ({"LC_MESSAGES": "zh_CN", "LANG": "C"}, "zh_CN"),
    ({"LANGUAGE": "zh_CN", "LC_ALL": "en_US.UTF-8"}, "zh_CN"),  # LANGUAGE first
    ({"LANGUAGE": "fr:zh", "LANG": "C"}, "zh_CN"),            # its first entry rvmdbg has
    ({"LANGUAGE": "", "LC_ALL": "", "LANG": "zh_CN"}, "zh_CN"),  # empty ones are skipped
    ({"LANG": "fr_FR.UTF-8"}, "en"),
])
def test_language_from_the_environment(env, lang):
    assert i18n.language_from_env(env) == lang


def test_switching_language_and_recording(chinese):
    assert i18n._("Bytecode") == "字节码"
    assert i18n._("a string nobody marked") == "a string nobody marked"
    assert "a string nobody marked" in chinese
    chinese.discard("a string nobody marked")
    assert i18n.ngettext("({n} place)", "({n} places)", 3).format(n=3) == "(3 处)"


def test_english_needs_no_catalog():
    i18n.set_language("en")
    assert i18n._("Bytecode") == "Bytecode"
    with pytest.raises(ValueError):
        i18n.normalize("fr")


def test_i18n_does_not_import_textual():
    code = "import sys, rvmdbg.i18n; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_a_context_tells_one_english_word_from_another(chinese):
    """"Next" is step over on the screen and the next question in the quiz: gettext contexts
    (`pgettext`, and `NP_` in class bodies, whose str carries its context to `_()`)."""
    assert i18n._("Next") == "步过"
    assert i18n.pgettext("quiz", "Next") == "下一题"
    marked = i18n.NP_("quiz", "Next")
    assert marked == "Next" and i18n._(marked) == "下一题"
    assert i18n.pgettext("nowhere", "Next") == "Next"
    assert chinese == {"nowhere|Next"}
    chinese.clear()
    i18n.set_language("en")
    assert i18n._(marked) == "Next" and i18n.npgettext("quiz", "a", "b", 2) == "b"


def test_the_extraction_keeps_contexts():
    pytest.importorskip("babel")
    template = _catalog_tool().extract()
    assert template.get("Next", context="quiz") is not None
    assert template.get("Next") is not None          # step over, without a context
