"""The layering of rvmdbg, read from the real import graph (every `import` in a module, also
those inside functions, parsed with `ast`): the engine never imports Textual, nothing but
`__main__` imports the command line, Relay imports nothing above it, and the modules import
one another without circles (but for the named allowance below)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rvmdbg"

# The engine: below every front end (cli, tui, dap, serve), never Textual.
ENGINE = ("relay", "passes", "vm", "debug", "views", "graph", "minivm", "onnx", "program",
          "relax")
# What Relay may import besides itself: the foundation every layer shares.
BELOW_RELAY = ("rvmdbg.i18n", "rvmdbg.wording", "rvmdbg.values", "rvmdbg.scalars",
               "rvmdbg.limits", "rvmdbg.fileio", "rvmdbg.jsondepth", "rvmdbg.heap")
FRONT_ENDS = ("rvmdbg.cli", "rvmdbg.tui", "rvmdbg.dap", "rvmdbg.serve", "rvmdbg.__main__")
# Circles allowed for now, each by name (none since the VM split); a circle that is gone must
# leave it too.
KNOWN_CYCLES: set[frozenset] = set()


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name an import statement of the module names, anywhere in it (a
    `from A import b` names A and A.b: b may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def import_graph(files: dict[str, Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> the rvmdbg modules it imports, module -> every top-level package outside
    rvmdbg it imports). An import of a submodule's own package (`rvmdbg.graph` from
    `rvmdbg.graph.plan`) is no edge: Python loads the package first whatever is written."""
    edges, outside = {}, {}
    for name, path in files.items():
        edges[name], outside[name] = set(), set()
        for imported in imported_names(name, path):
            if imported.split(".")[0] != "rvmdbg":
                outside[name].add(imported.split(".")[0])
                continue
            target = imported
            while target and target not in files:
                target = target.rpartition(".")[0]
            if not target or target == name:
                continue
            if files[target].name == "__init__.py" and name.startswith(target + "."):
                continue
            edges[name].add(target)
    return edges, outside


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


FILES = module_files()
EDGES, OUTSIDE = import_graph(FILES)


def in_layer(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def test_the_graph_is_read_from_the_real_package():
    assert "rvmdbg.cli" in FILES and "rvmdbg.program" in FILES
    assert "rvmdbg.program" in EDGES["rvmdbg.cli"]
    # function-level imports count: the command line opens the screen only when asked
    assert "rvmdbg.tui" in EDGES["rvmdbg.cli"]


@pytest.mark.parametrize("layer", ENGINE)
def test_the_engine_never_imports_textual_nor_a_front_end(layer):
    engine = [m for m in FILES if in_layer(m, "rvmdbg." + layer)]
    textual = {m: sorted(p for p in OUTSIDE[m] if p.startswith("textual")) for m in engine}
    assert {m: t for m, t in textual.items() if t} == {}
    upward = {m: sorted(t for t in EDGES[m] if any(in_layer(t, f) for f in FRONT_ENDS))
              for m in engine}
    assert {m: t for m, t in upward.items() if t} == {}


def test_nothing_but_main_imports_the_command_line():
    importers = sorted(m for m, targets in EDGES.items() if "rvmdbg.cli" in targets)
    assert importers == ["rvmdbg.__main__"]


def test_relay_imports_nothing_above_it():
    upward = {}
    for m in FILES:
        if in_layer(m, "rvmdbg.relay"):
            bad = sorted(t for t in EDGES[m]
                         if not in_layer(t, "rvmdbg.relay") and t not in BELOW_RELAY
                         and t != "rvmdbg")
            if bad:
                upward[m] = bad
    assert upward == {}


def test_no_import_cycles_but_the_named_allowance():
    found = set(cycles(EDGES))
    assert found - KNOWN_CYCLES == set(), "new import circles"
    assert KNOWN_CYCLES - found == set(), "a known circle is gone: take it out of KNOWN_CYCLES"


def test_the_checks_can_fail(tmp_path):
    """The same reading on a small package with each fault: a circle and a Textual import."""
    pkg = tmp_path / "rvmdbg"
    (pkg / "relay").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "relay" / "__init__.py").write_text("")
    (pkg / "relay" / "a.py").write_text("def f():\n    from rvmdbg.relay import b\n")
    (pkg / "relay" / "b.py").write_text("from .a import f\nimport textual.app\n")
    files = module_files(pkg)
    edges, outside = import_graph(files)
    assert cycles(edges) == [frozenset({"rvmdbg.relay.a", "rvmdbg.relay.b"})]
    assert "textual" in outside["rvmdbg.relay.b"]


# Each end of a circle this file removed, and the front door's modules: each imports first in
# a fresh interpreter (a circle broken by import order would fail here, not in the suite).
# (Every module of the package once took 162 fresh interpreters: too slow to repeat each run.)
ALONE = ("rvmdbg.program.registry", "rvmdbg.cmdline", "rvmdbg.dap.server", "rvmdbg.graph.plan",
         "rvmdbg.tui.quiz_screen", "rvmdbg.vm.regions", "rvmdbg.vm.fastpath",
         "rvmdbg.vm.handlers")


def test_each_end_of_a_removed_circle_imports_alone():
    import os
    import subprocess
    import sys
    root = str(PACKAGE.parent)
    script = ("import subprocess, sys\n"
              "bad = [m for m in sys.argv[1:] if subprocess.run([sys.executable, '-c', "
              "'import ' + m]).returncode]\n"
              "print(bad)\n")
    done = subprocess.run([sys.executable, "-c", script, *ALONE], capture_output=True,
                          text=True, cwd=root, env={**os.environ, "PYTHONPATH": root})
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
