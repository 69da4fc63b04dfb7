"""`.npy` files and `.npz` archives that are damaged or hostile (issue 29, items 6 and 7): a
damaged zip, a bad CRC, a member that is no array, a file that is no zip, a zip bomb. Each is
a message naming the file and exit 2; nothing is decompressed beyond what --max-bytes allows."""
from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from rvmdbg import cli

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests/examples/reshape_chain.relay"


def run(capsys, *argv):
    code = cli.main(["run", str(PROGRAM), *map(str, argv)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err


def npy_bytes(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def npz(path, members: dict, compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


GOOD = npy_bytes(np.ones((2, 3), dtype=np.float32))


def test_a_good_archive_still_binds(capsys, tmp_path):
    path = npz(tmp_path / "in.npz", {"x.npy": GOOD})
    code, err = run(capsys, "--inputs", path)
    assert code == 0, err
    code, err = run(capsys, f"@{path}:x")
    assert code == 0, err


def test_a_file_that_is_no_zip_is_not_called_pickled_data(capsys, tmp_path):
    path = tmp_path / "in.npz"
    path.write_bytes(b"hello, not an archive at all")
    code, err = run(capsys, "--inputs", path)
    assert code == 2 and "in.npz: not a .npz archive (it is not a zip file)" in err
    assert "pickle" not in err


def test_a_damaged_zip_is_a_message(capsys, tmp_path):
    data = npz(tmp_path / "in.npz", {"x.npy": GOOD}).read_bytes()
    broken = tmp_path / "broken.npz"
    broken.write_bytes(data[:len(data) // 2])  # the central directory is gone
    code, err = run(capsys, "--inputs", broken)
    assert code == 2 and "broken.npz: not a plain .npz archive (a damaged zip archive" in err


def test_a_bad_crc_is_a_message(capsys, tmp_path):
    path = npz(tmp_path / "in.npz", {"x.npy": GOOD}, zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    at = data.index(GOOD) + len(GOOD) - 1
    data[at] ^= 0xFF  # a data byte changed, the CRC kept
    path.write_bytes(bytes(data))
    code, err = run(capsys, f"@{path}:x")
    assert code == 2 and "the member x.npy is damaged" in err and "CRC" in err


def test_a_member_without_the_npy_header_is_a_message(capsys, tmp_path):
    path = npz(tmp_path / "in.npz", {"x.npy": b"just some bytes"})
    code, err = run(capsys, f"@{path}:x")
    assert code == 2 and "the member x.npy is not a .npy array" in err
    code, err = run(capsys, "--inputs", path)
    assert code == 2 and "x.npy is not a .npy array" in err


def test_a_header_that_is_not_a_dict_or_declares_objects_is_a_message(capsys, tmp_path):
    objects = npy_bytes(np.array([None, 1], dtype=object))
    path = npz(tmp_path / "in.npz", {"x.npy": objects})
    code, err = run(capsys, f"@{path}:x")
    assert code == 2 and "holds object data" in err
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00\x10\x00[1, 2, 3]       \n")
    code, err = run(capsys, f"@{bad}")
    assert code == 2 and "bad.npy: not a plain .npy file" in err


def test_a_short_or_long_member_is_a_message(capsys, tmp_path):
    path = npz(tmp_path / "in.npz", {"short.npy": GOOD[:-4], "long.npy": GOOD + b"\0" * 8})
    code, err = run(capsys, f"@{path}:short")
    assert code == 2 and "ends after 20 of the 24 bytes" in err
    code, err = run(capsys, f"@{path}:long")
    assert code == 2 and "more data than the 24 bytes" in err


def test_a_zip_bomb_is_refused_from_its_header_before_decompressing(capsys, tmp_path):
    # 2 GB of zeros declared in the header, compressed into a small archive
    big = io.BytesIO()
    np.lib.format.write_array_header_1_0(big, {"descr": "<f8", "fortran_order": False,
                                               "shape": (250_000_000,)})
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            member.write(big.getvalue())
            zeros = bytes(1 << 20)
            for _ in range(40):
                member.write(zeros)
    assert path.stat().st_size < 200_000
    code, err = run(capsys, f"@{path}:x", "--max-bytes", "100000000")
    assert code == 2 and "2000000000 bytes, more than the limit of 100000000" in err


def test_a_bomb_declaring_a_small_array_stops_at_the_declared_size(tmp_path):
    # the header says 6 floats; the member then inflates to 1 GiB: refused after 25 bytes
    path = tmp_path / "bomb.npz"
    # the fastest level: zeros shrink a thousandfold at any level, and level 6 takes 2x the time
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            member.write(GOOD)
            zeros = bytes(1 << 20)
            for _ in range(1024):
                member.write(zeros)
    # a child under a 600 MB address space: decompressing the member whole would not fit
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (600 << 20, "
            "resource.RLIM_INFINITY)); from rvmdbg import cli; "
            f"sys.exit(cli.main(['run', {str(PROGRAM)!r}, '@{path}:x']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"})
    assert proc.returncode == 2, proc.stderr
    assert "more data than the 24 bytes its header declares" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_plain_npy_is_bounded_by_its_file_not_by_max_bytes(capsys, tmp_path):
    # its data is in the file already (an argument, not an allocation of the program)
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((2, 3), dtype=np.float32))
    code, err = run(capsys, f"@{path}", "--max-bytes", "16")
    assert code == 1 and "allocating 24 bytes" in err  # read; the program's own output stops
    big = io.BytesIO()
    np.lib.format.write_array_header_1_0(big, {"descr": "<f4", "fortran_order": False,
                                               "shape": (2, 3)})
    path.write_bytes(big.getvalue() + b"\0" * 8)
    code, err = run(capsys, f"@{path}")
    assert code == 2 and "ends after 8 of the 24 bytes" in err


def test_a_stored_member_is_bounded_by_its_file(capsys, tmp_path):
    path = npz(tmp_path / "in.npz", {"x.npy": GOOD}, zipfile.ZIP_STORED)
    code, err = run(capsys, f"@{path}:x", "--max-bytes", "16")
    assert code == 1 and "allocating 24 bytes" in err
    path = npz(tmp_path / "in.npz", {"x.npy": GOOD})
    code, err = run(capsys, f"@{path}:x", "--max-bytes", "16")
    assert code == 2 and "24 bytes, more than the limit of 16" in err


def test_a_header_numpy_cannot_tokenize_is_a_message(capsys, tmp_path):
    # found by tests/fuzz/test_fuzz_npz.py: NumPy's header parser raised TokenError
    text = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }"
    header = text + b" " * (64 - (10 + len(text) + 1) % 64) + b"\n"
    path = tmp_path / "x.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
                     + bytes(24))
    code, err = run(capsys, f"@{path}")
    assert code == 2 and "x.npy: not a plain .npy file" in err
