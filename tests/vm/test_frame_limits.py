"""Limits that keep memory from running away (issue 29, item 13): call frames count against
--max-bytes beside the live tensors, on the VM and in the interpreter, so a huge --max-depth
is stopped by the byte limit long before the machine runs out; and --max-bytes's default is
lower when the process cannot get 2 GiB, so the default limits stop first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rvmdbg import cli
from rvmdbg.limits import DEFAULT_LIMITS, FRAME_FLOOR, default_max_bytes, vm_frame_bytes

ROOT = Path(__file__).resolve().parents[2]
DEEP = ('#[version = "0.0.5"]\ndef @down(%n: int32) -> int32 {\n'
        '  if (%n == 0) { 0 } else { 1 + @down(%n - 1) }\n}\n'
        'def @main(%n: int32) -> int32 { @down(%n) }\n')
DOUBLING = ('#[version = "0.0.5"]\n'
            'def @grow(%x: Tensor[(?), float32]) -> Tensor[(?), float32] {\n'
            '  @grow(concatenate((%x, %x)))\n}\n'
            'def @main() -> Tensor[(?), float32] {\n  @grow(ones(shape=[1], dtype="float32"))\n}\n')


@pytest.mark.parametrize("executor, words", [("vm", "frames of"), ("interp", "activations of")])
def test_frames_count_against_max_bytes(tmp_path, capsys, executor, words):
    path = tmp_path / "deep.relay"
    path.write_text(DEEP)
    code = cli.main(["run", str(path), "10000000", "--executor", executor,
                     "--max-depth", "10000000", "--max-bytes", str(2 * FRAME_FLOOR)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err, err
    assert words in err and "--max-bytes" in err, err
    # the stop comes near the bytes allowed, far below the depth asked for
    depth = int(err.split("call depth ")[1].split(":")[0])
    assert 1000 < depth < 400_000


def test_a_shallow_program_at_a_tiny_byte_limit_still_calls(tmp_path, capsys):
    path = tmp_path / "deep.relay"
    path.write_text(DEEP)
    for executor in ("vm", "interp"):
        assert cli.main(["run", str(path), "100", "--executor", executor,
                         "--max-bytes", "10000"]) == 0
        assert capsys.readouterr().out.strip() == "100"


def test_frame_bytes_grow_with_the_register_file():
    assert vm_frame_bytes(10) < vm_frame_bytes(1000)
    assert DEFAULT_LIMITS.max_bytes <= 2 * 1024 ** 3


def test_under_an_address_space_cap_the_default_limit_stops_first(tmp_path):
    path = tmp_path / "doubling.relay"
    path.write_text(DOUBLING)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, "
            "resource.RLIM_INFINITY)); from rvmdbg import cli; from rvmdbg.limits import "
            "DEFAULT_LIMITS; print(DEFAULT_LIMITS.max_bytes, file=sys.stderr); "
            f"sys.exit(cli.main(['run', {str(path)!r}, '--executor', sys.argv[1]]))")
    for executor in ("interp", "vm"):
        proc = subprocess.run([sys.executable, "-c", code, executor], capture_output=True,
                              text=True, timeout=300, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 1, proc.stderr
        assert int(proc.stderr.split("\n")[0]) < 2 * 1024 ** 3
        assert "out of memory" not in proc.stderr and "max-bytes" in proc.stderr, proc.stderr
    assert default_max_bytes() > 0
