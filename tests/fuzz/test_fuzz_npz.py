"""An `.npz`/`.npy` fuzzer: archives and array files damaged in their zip structure (bytes
flipped, cut, central directory lost, members duplicated or encrypted-flagged), their `.npy`
headers (dtype, order and shape text replaced with odd values), their sizes (declared far
larger or smaller than the data, zip bombs) and their dtypes (objects, strings, structured,
big-endian, float16). Each is given as `--inputs`, `@FILE.npz:x` or `@FILE.npy` to `run` in
the fuzz child under its address-space cap: exit 0, 1 or 2, no traceback, no hang.

Hypothesis draws the damage; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from harness import assert_clean, brief, campaign, long, run_cases

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "reshape_chain.relay"
TEXT = (ROOT / "tests" / "examples" / PROGRAM).read_text()
DTYPES = ["<f4", ">f4", "<f2", "<f8", "<i4", "|b1", "|u1", "<c8", "|O", "<U3", "|S2", "|V4",
          "[('a', '<f4')]", "<M8[s]"]
SHAPES = ["(2, 3)", "(3, 2)", "()", "(0,)", "(6,)", "(-1, 3)", "(2, 3, 1)",
          "(100000, 100000)", "(" + "9" * 30 + ",)", "(2.5, 3)", "'x'", "(2, 3", "None"]


def npy_bytes(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


GOOD = npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3))


def with_header(descr: str, fortran: str, shape: str, data: bytes, version=1) -> bytes:
    text = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else repr(descr), fortran, shape)
    pad = 64 - (10 + len(text) + 1) % 64
    header = (text + " " * pad + "\n").encode("latin-1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data
    return b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header + data


def archive(members: list, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members:
            with z.open(name, "w", force_zip64=len(data) > 1 << 20) as member:
                member.write(data)
    return buf.getvalue()


@st.composite
def npy_member(draw) -> bytes:
    kind = draw(st.sampled_from(["good", "header", "size", "dtype", "bytes", "none"]))
    if kind == "good":
        return GOOD
    if kind == "header":
        return with_header(draw(st.sampled_from(DTYPES)),
                           draw(st.sampled_from(["False", "True", "1", "'x'"])),
                           draw(st.sampled_from(SHAPES)), GOOD[128:],
                           draw(st.sampled_from([1, 2])))
    if kind == "size":
        extra = draw(st.sampled_from([0, 1, 8, 1 << 20, 8 << 20]))
        return GOOD[:draw(st.integers(0, len(GOOD)))] if draw(st.booleans()) \
            else GOOD + bytes(extra)
    if kind == "dtype":
        dtype = draw(st.sampled_from(["float16", ">f4", "int64", "bool", "complex64", "U2",
                                      "S2", "datetime64[s]"]))
        return npy_bytes(np.zeros((2, 3), dtype=dtype))
    if kind == "bytes":
        raw = bytearray(GOOD)
        for _ in range(draw(st.integers(1, 6))):
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        return bytes(raw)
    return draw(st.binary(max_size=200))


@st.composite
def npz_file(draw) -> bytes:
    members = [("x.npy", draw(npy_member()))]
    for _ in range(draw(st.integers(0, 2))):
        members.append((draw(st.sampled_from(["x.npy", "y.npy", "x", "%x.npy", "dir/x.npy",
                                              "\x1b[2J.npy"])), draw(npy_member())))
    data = archive(members, draw(st.sampled_from([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED,
                                                  zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])))
    damage = draw(st.sampled_from(["none", "flip", "cut", "directory", "flags", "junk"]))
    raw = bytearray(data)
    if damage == "flip":
        for _ in range(draw(st.integers(1, 8))):
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    elif damage == "cut":
        raw = raw[:draw(st.integers(0, len(raw) - 1))]
    elif damage == "directory":
        at = raw.rfind(b"PK\x01\x02")
        if at >= 0:
            raw[at:at + 4] = b"XXXX"
    elif damage == "flags":
        at = raw.find(b"PK\x03\x04")
        raw[at + 6] |= 1  # "encrypted"
    elif damage == "junk":
        raw = bytearray(draw(st.sampled_from([b"", b"PK", b"\x80\x04K.", b"hello"]))) + raw
    return bytes(raw)


def _file(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@st.composite
def cases(draw, n: int):
    out = []
    for _ in range(n):
        how = draw(st.sampled_from(["inputs", "member", "npy"]))
        limit = ["--max-bytes", draw(st.sampled_from(["100000000", "1000", "50"]))]
        if how == "npy":
            data = draw(st.one_of(npy_member(), npz_file()))
            out.append({"argv": ["run", PROGRAM, "@x.npy", *limit],
                        "files": {PROGRAM: TEXT, "x.npy": _file(data)}})
            continue
        data = draw(st.one_of(npz_file(), npy_member()))
        argv = (["run", PROGRAM, "--inputs", "in.npz"] if how == "inputs"
                else ["run", PROGRAM, "@in.npz:x"])
        out.append({"argv": [*argv, *limit], "files": {PROGRAM: TEXT, "in.npz": _file(data)}})
    return out


@brief()
@given(batch=cases(20))
def test_damaged_arrays_are_messages(batch, tmp_path):
    campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(40)
@given(batch=cases(40))
def test_damaged_arrays_long(batch, tmp_path):
    campaign(batch, tmp_path)


def test_a_zip_bomb_in_the_campaigns_child_is_refused_under_its_cap(tmp_path):
    # 4 GiB of zeros declared and compressed to a few MB: refused from the header, in a child
    # whose address space could not hold it
    header = with_header("<f4", "False", "(1073741824,)", b"")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            member.write(header)
            zeros = bytes(1 << 22)
            for _ in range(64):
                member.write(zeros)
    case = {"argv": ["run", PROGRAM, "--inputs", "in.npz", "--max-bytes", "100000000"],
            "files": {PROGRAM: TEXT, "in.npz": _file(buf.getvalue())}}
    (out,) = run_cases([case], tmp_path / "config")
    assert_clean([case], [out], codes=(2,))
    assert "more than the limit of 100000000" in out["stderr"]
