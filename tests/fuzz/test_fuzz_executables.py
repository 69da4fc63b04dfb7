"""A tampered-executable corpus: every program of programs/ compiled and saved, then damaged
(bytes flipped, fields overwritten with extreme values, truncated) with the checksum
recomputed so the damage reaches the parser and the verifier. Loading either refuses the file
with an ExecutableFormatError or gives an executable that runs under small limits to a result
or a VMError: never another exception, never a hang.

Seeded and brief by default; `pytest -m fuzz` runs the long version.
"""
import hashlib
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from rvmdbg.args import parse_program_args
from rvmdbg.limits import Limits
from rvmdbg.relay.loader import load_file, program_default_args
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine, VMError
from rvmdbg.vm.serialize import HEADER_SIZE, MAGIC, ExecutableFormatError, dumps, loads

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("*.relay"))
SMALL = Limits(max_steps=20_000, max_depth=200, max_bytes=1 << 24)


def _compiled():
    out = []
    for path in PROGRAMS:
        mod = load_file(path)
        exe = compile_module(mod)
        args = parse_program_args(mod, "main", program_default_args(path.read_text()))
        out.append((path.name, dumps(exe), args))
    return out


@pytest.fixture(scope="module")
def corpus():
    return _compiled()


def reseal(payload: bytes) -> bytes:
    from rvmdbg.vm.serialize import FORMAT_VERSION
    return (MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(payload))
            + hashlib.sha256(payload).digest() + payload)


EXTREMES = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


def mutate(rng: random.Random, data: bytes) -> bytes:
    payload = bytearray(data[HEADER_SIZE:])
    kind = rng.randrange(5)
    if kind == 0:      # flip a few bits
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(payload))
            payload[i] ^= 1 << rng.randrange(8)
    elif kind == 1:    # an extreme u32 somewhere (counts, registers, lines, columns)
        i = rng.randrange(max(1, len(payload) - 4))
        payload[i:i + 4] = struct.pack("<I", rng.choice(EXTREMES))
    elif kind == 2:    # an extreme i64 (instruction fields)
        i = rng.randrange(max(1, len(payload) - 8))
        payload[i:i + 8] = struct.pack("<q", rng.choice([-1, -(1 << 63), (1 << 63) - 1, 1 << 40]))
    elif kind == 3:    # truncate
        del payload[rng.randrange(len(payload)):]
    else:              # duplicate a slice in place of another
        a, b = sorted(rng.randrange(len(payload)) for _ in range(2))
        j = rng.randrange(len(payload))
        payload[j:j + (b - a)] = payload[a:b]
    return reseal(bytes(payload))


def run_one(data: bytes, args) -> str:
    try:
        exe = loads(data, "fuzz.rvmx")
    except ExecutableFormatError as e:
        assert str(e).startswith("fuzz.rvmx: ")
        return "refused"
    vm = VirtualMachine(exe, SMALL)
    try:
        vm.invoke("main", [np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    except VMError as e:
        assert e.format()
        return "vm error"
    except KeyError:
        return "no main"   # a renamed @main: invoke's documented lookup error
    return "ran"


def campaign(corpus, seed: int, rounds: int) -> dict:
    rng = random.Random(seed)
    seen: dict = {}
    for _ in range(rounds):
        name, data, args = rng.choice(corpus)
        outcome = run_one(mutate(rng, data), args)
        seen[outcome] = seen.get(outcome, 0) + 1
    return seen


def test_tampered_executables_are_refused_or_run_cleanly(corpus):
    seen = campaign(corpus, seed=16, rounds=300)
    assert seen.get("refused", 0) > 0   # the damage does reach the checks


@pytest.mark.fuzz
def test_tampered_executables_long(corpus):
    campaign(corpus, seed=1616, rounds=20_000)
