"""The VS Code extension under editors/vscode: its grammar is the one generated from the
Pygments lexer's rules, Microsoft's DAP test client (DebugClient, run by mocha) drives
`rvmdbg dap` through the editor scenario, and `vsce package` packages it.

The npm packages come from the extension's own package.json and package-lock.json (`npm ci`
when node_modules is absent). Without node or npm, or when the install fails, these tests
fail saying so: they never skip silently.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
sys.path.insert(0, str(ROOT / "scripts"))

import make_tmgrammar  # noqa: E402


def test_the_committed_grammar_is_the_generated_one():
    committed = (EXT / "syntaxes" / "relay.tmLanguage.json").read_text(encoding="utf-8")
    assert committed == make_tmgrammar.text(), \
        "editors/vscode/syntaxes/relay.tmLanguage.json is stale: run scripts/make_tmgrammar.py"


def test_every_lexer_token_type_has_a_scope():
    from rvmdbg.relay.highlight import RULES
    for entries in RULES.values():
        for _, action, _ in entries:
            for token in (action if isinstance(action, list) else [action]):
                assert token in make_tmgrammar.SCOPES, token


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on the PATH: the VS Code extension's tests need Node.js "
                    f"20 and npm (the DAP suite through DebugClient, vsce package)")
    return path


def _run(cmd: list[str], timeout: int, what: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RVMDBG_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run(cmd, cwd=EXT, capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} took more than {timeout} s: {' '.join(cmd)}")
    if proc.returncode != 0:
        pytest.fail(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
                    f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def node_modules():
    """The extension's npm packages, installed from its lock file when absent."""
    npm = _tool("npm")
    _tool("node")
    if not (EXT / "node_modules" / ".bin" / "mocha").exists():
        _run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"], 600,
             "installing the extension's npm packages (is the npm registry reachable?)")
    return EXT / "node_modules"


def test_debug_client_drives_the_adapter_through_the_editor_scenario(node_modules):
    mocha = node_modules / ".bin" / "mocha"
    proc = _run([str(mocha), "--reporter", "spec", "test/adapter.test.js",
                 "test/grammar.test.js"], 300, "the mocha suite (DebugClient against rvmdbg dap)")
    assert "passing" in proc.stdout and "failing" not in proc.stdout


def test_vsce_packages_the_extension(node_modules, tmp_path):
    vsce = node_modules / ".bin" / "vsce"
    out = tmp_path / "rvmdbg-relay.vsix"
    _run([str(vsce), "package", "--skip-license", "--allow-missing-repository",
          "--out", str(out)], 300, "vsce package")
    names = set(zipfile.ZipFile(out).namelist())
    for name in ("extension/package.json", "extension/extension.js",
                 "extension/syntaxes/relay.tmLanguage.json",
                 "extension/language-configuration.json"):
        assert name in names
    assert not any(n.startswith("extension/node_modules/") for n in names)
