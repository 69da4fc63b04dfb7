"""The front door (`rvmdbg.program`): which kind a file is (by content where a kind can tell,
else by suffix, else Relay text), each kind's load, and that a new kind is one registry entry
that every front end then reads."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rvmdbg import cli
from rvmdbg.program import (
    KINDS, LoadOptions, Program, ProgramKind, executable_of, is_minivm, kind_for, kind_named,
    load_program, program_arguments, registry,
)
from rvmdbg.program.base import Debuggable, bind_untyped
from rvmdbg.tui import program as tui_program
from rvmdbg.vm.serialize import save

ROOT = Path(__file__).resolve().parents[2]
FIB = ROOT / "programs/fib.relay"
DEMO = ROOT / "programs/demo.mvm"


def test_the_kinds_and_their_suffixes():
    assert [k.name for k in KINDS] == ["relay", "rvmx", "minivm", "onnx", "relax", "vmexec"]
    assert kind_for("a.relax.py").name == "relax"   # by suffix: tvm is not imported for this
    assert kind_for("a.vmexec").name == "vmexec"
    assert kind_for("a.relay").name == "relay"
    assert kind_for("a.onnx").name == "onnx"
    assert kind_for("a.rvmx").name == "rvmx"
    assert kind_for("a.mvm").name == "minivm"
    assert kind_for("no/such/file.txt").name == "relay"  # Relay's own "file not found"
    assert kind_named("rvmx").compiled and not kind_named("relay").compiled
    assert kind_named("minivm").machine == "minivm"


def test_a_saved_executable_under_a_relay_name_is_told_by_its_magic(tmp_path):
    exe = executable_of(load_program(str(FIB)))
    path = tmp_path / "renamed.relay"
    save(exe, str(path))
    assert kind_for(str(path)).name == "rvmx"
    program = load_program(str(path))
    assert program.module is None and program.kind.name == "rvmx"
    args = program_arguments(program, "main", ["10"])
    assert cli.main(["run", str(path), "10"]) == 0
    assert len(args) == 1


def test_a_relay_file_that_starts_like_text_is_not_sniffed_as_an_executable(tmp_path):
    path = tmp_path / "x.rvmx"
    path.write_text("RVMX but not the magic\n")
    assert kind_for(str(path)).name == "rvmx"   # by suffix: the loader says what is wrong
    with pytest.raises(Exception) as info:
        load_program(str(path))
    assert "rvmx" in str(info.value).lower() or "executable" in str(info.value).lower()


def test_each_kind_loads_as_its_own():
    relay = load_program(str(FIB))
    assert relay.kind.name == "relay" and relay.module is not None and not is_minivm(relay)
    mini = load_program(str(DEMO))
    assert mini.kind.name == "minivm" and is_minivm(mini)
    unchecked = load_program(str(FIB), options=LoadOptions(check=False))
    assert unchecked.module is not None


def test_a_new_kind_is_one_registry_entry(monkeypatch, tmp_path, capsys):
    """A kind recognised by content, loading through the Relay kind: the command line and the
    screen's loader both take it, with its options reaching its `load`."""
    seen = []
    relay = kind_named("relay")

    def load(path, options):
        seen.append(options)
        text = Path(path).read_text()[len("#!toy\n"):]
        real = tmp_path / "inner.relay"
        real.write_text(text)
        return dataclasses.replace(relay.load(str(real), options), kind=toy)

    def debuggable(path, entry, options) -> Debuggable:
        return relay.debuggable(str(tmp_path / "inner.relay"), entry, options)
    toy = ProgramKind("toy", (".toy",), load, relay.bind, debuggable,
                      sniff=lambda head: head.startswith(b"#!toy"))
    monkeypatch.setattr(registry, "KINDS", registry.KINDS + [toy])
    path = tmp_path / "p.txt"
    path.write_text("#!toy\n#[version = \"0.0.5\"]\ndef @main(%x: int32) -> int32 { add(%x, 1) }\n")
    assert kind_for(str(path)) is toy
    assert cli.main(["run", str(path), "41"]) == 0
    assert capsys.readouterr().out.strip() == "42"
    assert seen and seen[0].check and seen[0].shapes is None
    opened = tui_program.load_program(str(path))
    assert opened.module is not None and opened.params() == [("x", "int32")]


def test_load_options_carry_a_kinds_own_settings():
    options = LoadOptions(shapes={"x": (1, 3)}, dtypes={"x": "float32"}, opset=13,
                          extra={"meta_inputs": True})
    assert options.check and options.opset == 13 and options.extra["meta_inputs"]


def test_a_hand_made_program_is_told_its_kind_by_its_path():
    exe = executable_of(load_program(str(FIB)))
    program = Program("saved.rvmx", executable=exe)
    assert bind_untyped(program, "main", ["3"]) == program_arguments(program, "main", ["3"])


def test_the_dap_source_request_says_how_each_kind_is_shown():
    from rvmdbg.dap.adapter import DapAdapter
    shown = {}
    for path in (FIB, DEMO):  # the adapter serves only the launched program's sources
        adapter = DapAdapter(lambda *a: None)
        adapter.req_launch({"program": str(path), "args": ["5"] if path == FIB else []})
        shown[path] = adapter.req_source({"source": {"path": str(path)}})
    assert shown[FIB]["mimeType"] == "text/x-relay" and "@main" in shown[FIB]["content"]
    assert shown[DEMO]["mimeType"] == "text/plain"
