"""Damaged saved Relax executables (`.vmexec`, what TVM's `ex.mod.write_to_file` writes): bytes
flipped, counts and fields overwritten with extreme values, truncated, slices duplicated, then
run with their (intact) kernel library, `rvmdbg run --engine tvm --lib K.so P.vmexec ARG`, in
the fuzz child: exit 0, 1 or 2, never a traceback; every truncation is refused (exit 2) with
rvmdbg's reader's message. The file has no checksum, so some damage (a constant's bytes) runs.

Seeded and brief by default; `pytest -m fuzz` runs the long version."""
from __future__ import annotations

import random
import struct

import pytest

from harness import campaign

pytest.importorskip("tvm")

EXTREMES = [-1, -(1 << 63), (1 << 63) - 1, 1 << 40, 0, 1 << 20]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(the .vmexec bytes, the path of its kernel library) of the `fact` test program."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.relax import programs
    import tvm
    from tvm import relax
    folder = tmp_path_factory.mktemp("vmexec")
    ex = relax.build(tvm.script.from_source(programs.source("fact")), target="llvm")
    ex.mod.write_to_file(str(folder / "fact.vmexec"), "")
    ex.export_library(str(folder / "fact.so"))
    return (folder / "fact.vmexec").read_bytes(), str(folder / "fact.so")


def mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    b = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return "flip", bytes(b)
    if kind == 1:
        i = rng.randrange(len(b) - 8)
        b[i:i + 8] = struct.pack("<q", rng.choice(EXTREMES))
        return "extreme", bytes(b)
    if kind == 2:
        return "truncate", bytes(b[:rng.randrange(len(b))])
    a, c = sorted(rng.randrange(len(b)) for _ in range(2))
    j = rng.randrange(len(b))
    b[j:j + (c - a)] = b[a:c]
    return "duplicate", bytes(b)


def batch(saved, seed: int, rounds: int):
    data, lib = saved
    rng = random.Random(seed)
    cases, kinds = [], []
    for _ in range(rounds):
        kind, damaged = mutate(rng, data)
        kinds.append(kind)
        cases.append({"argv": ["run", "--engine", "tvm", "--lib", lib, "p.vmexec", "--max-steps",
                               "20000", "5"],
                      "files": {"p.vmexec": damaged.decode("utf-8", "surrogateescape")}})
    return cases, kinds


def _check(kinds):
    it = iter(kinds)

    def check(case, out):
        if next(it) == "truncate":
            assert out["code"] == 2 and "p.vmexec: " in out["stderr"], out["stderr"]
    return check


def test_damaged_vmexec_files_are_refused_or_run_cleanly(saved, tmp_path):
    cases, kinds = batch(saved, seed=31, rounds=40)
    seen = campaign(cases, tmp_path, check=_check(kinds))
    assert seen.get(2, 0) > 0   # the damage reaches the checks


@pytest.mark.fuzz
def test_damaged_vmexec_files_long(saved, tmp_path):
    cases, kinds = batch(saved, seed=3131, rounds=1500)
    campaign(cases, tmp_path, check=_check(kinds))
