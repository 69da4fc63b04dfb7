"""Issue 29's smaller doors: a saved condition too deep to restore (item 9), escape sequences
in the program text that an executable carries (10), a breakpoints record of the wrong types
(11), `--json` of an uninitialized tensor (12), the float16 warning and a "nested too deeply"
that names no file (15)."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np

from rvmdbg import cli
from rvmdbg.debug.config import breakpoint_file
from rvmdbg.values import to_json
from rvmdbg.vm import serialize
from rvmdbg.vm.objects import StorageObject, TensorPlaceholder

ROOT = Path(__file__).resolve().parents[1]
LOOP = (ROOT / "programs/loop.relay").read_text()


def main(capsys, *argv, stdin: str = ""):
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        code = cli.main([str(a) for a in argv])
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _program(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "loop.relay"
    path.write_text(LOOP)
    return path


def _save(path: Path, records: list) -> Path:
    state = breakpoint_file(str(path))
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"breakpoints": records}))
    return state


def test_a_condition_too_deep_to_restore_is_skipped_with_a_note(tmp_path, monkeypatch, capsys):
    path = _program(tmp_path, monkeypatch)
    deep = " and ".join(["$0 > 0"] * 3000)
    state = _save(path, [{"kind": "line", "spec": "6", "line": 6, "text": "if (%i > %n) {",
                          "condition": deep},
                         {"kind": "line", "spec": "9", "line": 9,
                          "text": "@loop(%i + 1, %n, %acc + %i)"}])
    code, out, err = main(capsys, "debug", path, "3", "--saved-breakpoints", "--batch", "-",
                          stdin="info breakpoints\n")
    assert code == 0, err
    text = out + err
    assert "nested too deeply" in text and str(state) in text
    assert "restored breakpoint" in text  # the other breakpoint still comes back


def test_a_record_with_before_of_the_wrong_type_is_read(tmp_path, monkeypatch, capsys):
    path = _program(tmp_path, monkeypatch)
    _save(path, [{"kind": "line", "spec": "7", "line": 7, "text": "if (%i > %n) {",
                  "before": 12345, "after": {"x": 1}}])
    code, out, err = main(capsys, "debug", path, "3", "--saved-breakpoints", "--batch", "-",
                          stdin="info breakpoints\n")
    assert code == 0, err
    assert "moved to line 6" in out + err


def _exe_with_escapes(tmp_path) -> Path:
    """loop.relay compiled, its carried text given escape sequences at the end of line 6
    and of line 14 (after every span, so each stays valid)."""
    rvmx = tmp_path / "loop.rvmx"
    src = tmp_path / "loop.relay"
    src.write_text(LOOP)
    assert cli.main(["compile", str(src), "-o", str(rvmx)]) == 0
    exe = serialize.load(str(rvmx))
    evil = exe.source_text.replace("if (%i > %n) {", "if (%i > %n) {\x1b]0;pwn\x07\x1b[2J")
    evil = evil.replace("@loop(1, %n, 0)", "@loop(1, %n, 0) \x1b[2J")
    exe.source_text = evil
    exe.sources = {name: (evil if text is not None and name == exe.source_name else text)
                   for name, text in exe.sources.items()}
    rvmx.write_bytes(serialize.dumps(exe))
    return rvmx


def test_text_an_executable_carries_reaches_no_terminal_raw(tmp_path, capsys):
    rvmx = _exe_with_escapes(tmp_path)
    capsys.readouterr()
    code, out, err = main(capsys, "run", rvmx, "3", "--max-steps", "3")
    assert code == 1 and "\x1b" not in err and "\x07" not in err
    assert "if (%i > %n) {\u241b]0;pwn\u2407" in err, err
    code, out, err = main(capsys, "debug", rvmx, "3", "--batch", "-", stdin="source\n")
    assert "\x1b" not in out and "\u241b[2J" in out, out


def test_json_of_an_uninitialized_tensor_and_a_storage():
    storage = StorageObject(64, 16, "float32", None)
    hole = TensorPlaceholder(storage, 0, (2, 3), np.dtype("float32"))
    assert to_json(hole) == {"uninitialized": {"dtype": "float32", "shape": [2, 3]}}
    assert to_json(storage) == {"storage": {"bytes": 64}}
    json.dumps(to_json(object()))


def test_float16_overflow_in_an_argument_is_no_warning(tmp_path, capsys):
    path = tmp_path / "f16.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float16]) {\n'
                    '  add(%x, %x)\n}\n')
    code, out, err = main(capsys, "run", path, "[60000, 1e9]")
    assert code == 0 and "inf" in out and err == ""


def test_nested_too_deeply_names_the_file(tmp_path, capsys):
    path = tmp_path / "deep.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main() {\n  ' + "(" * 100_000 + "1"
                    + ")" * 100_000 + "\n}\n")
    code, out, err = main(capsys, "run", path)
    assert code == 2 and "deep.relay" in err, err


def test_json_of_a_returned_uninitialized_tensor(tmp_path, capsys):
    # an executable whose kernel call is replaced by a move: it returns what no kernel wrote
    from rvmdbg.vm.bytecode import InvokePacked, Move
    src = tmp_path / "add.relay"
    src.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n'
                   '  add(%x, %x)\n}\n')
    rvmx = tmp_path / "hole.rvmx"
    assert cli.main(["compile", str(src), "-o", str(rvmx)]) == 0
    exe = serialize.load(str(rvmx))
    code = exe.functions[0].instructions
    at = next(i for i, ins in enumerate(code) if isinstance(ins, InvokePacked))
    code[at] = Move(0, 0)
    rvmx.write_bytes(serialize.dumps(exe))
    capsys.readouterr()
    code, out, err = main(capsys, "run", rvmx, "[1, 2]", "--json")
    assert code == 0, err
    assert json.loads(out) == {"result": {"uninitialized": {"dtype": "float32", "shape": [2]}}}
