"""The graph executor under --max-bytes (issue 29, item 1): a fused kernel's intermediates
count beside the pool, checked from the static types before anything runs, as the VM checks
them before calling the kernel."""
from __future__ import annotations

from rvmdbg import cli

BIG = ('#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 {\n'
       '  sum(multiply(ones(shape=[10000, 10000], dtype="float32"), %x))\n}\n')


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_intermediates_of_a_fused_kernel_count_against_max_bytes(tmp_path, capsys):
    path = tmp_path / "fused_big.relay"
    path.write_text(BIG)
    code, out, err = rvmdbg(capsys, "run", path, "2f", "--executor", "graph",
                            "--max-bytes", "100000000")
    assert code == 1 and out == ""
    assert ("kernel fused_ones_multiply_sum would hold 800000000 bytes of intermediates"
            in err and "limit max_bytes=100000000" in err), err
    # the VM stops at the same kernel for the same reason
    code, _, err = rvmdbg(capsys, "run", path, "2f", "--max-bytes", "100000000")
    assert code == 1 and "would hold 800000000 bytes of intermediates" in err


def test_a_kernel_that_fits_still_runs(tmp_path, capsys):
    path = tmp_path / "small.relay"
    path.write_text(BIG.replace("10000, 10000", "100, 100"))
    code, out, err = rvmdbg(capsys, "run", path, "2f", "--executor", "graph",
                            "--max-bytes", "100000")
    assert code == 0 and out.strip() == "20000f", err
    code, out, err = rvmdbg(capsys, "run", path, "2f", "--executor", "graph",
                            "--max-bytes", "60000")
    assert code == 1 and "bytes of intermediates" in err and "max_bytes=60000" in err
