"""The VM's files stay split by concept (docs/architecture.md): handlers, state, blocks, fast
paths, regions, tracing and the machine each in its own file, none of them long, talking
through public names only, and nothing below the machine importing it (the profiler, which
runs a machine, sits above it)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rvmdbg.vm import bytecode as bc
from rvmdbg.vm import handlers
from rvmdbg.vm import machine

VM = Path(__file__).resolve().parents[2] / "rvmdbg" / "vm"
FILES = sorted(VM.glob("*.py"))


def _imports(path: Path):
    """(module, name) for every `from rvmdbg... import name` in the file, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rvmdbg"):
            for alias in node.names:
                yield node.module, alias.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_private_name_crosses_a_file(path):
    # `_` is the i18n lookup, not a private name
    crossing = [f"{mod}.{name}" for mod, name in _imports(path)
                if name.startswith("_") and name not in ("_", "N_")]
    assert crossing == [], f"{path.name} imports private names: {crossing}"


# the machine, and what runs it from above (the profiler drives a VirtualMachine)
ABOVE_THE_MACHINE = ("machine.py", "profile.py")


@pytest.mark.parametrize("path", [p for p in FILES if p.name not in ABOVE_THE_MACHINE],
                         ids=lambda p: p.name)
def test_nothing_below_the_machine_imports_it(path):
    assert all(mod != "rvmdbg.vm.machine" for mod, _name in _imports(path))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_vm_file_is_long(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 900


def test_handlers_are_in_opcode_order_with_the_table_last():
    tree = ast.parse((VM / "handlers.py").read_text(encoding="utf-8"))
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    table = [machine.HANDLERS[op.opcode].__name__ for op in bc.OPCODES]
    assert [name for name in defined if name in table] == table
    last = tree.body[-1]  # the table, then its completeness check
    assert isinstance(last, ast.Assert) and "HANDLERS" in ast.unparse(last)
    assert machine.HANDLERS is handlers.HANDLERS
