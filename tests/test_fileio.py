"""Files a user names: kinds and sizes are checked on the open descriptor before reading;
writes are atomic through an O_EXCL temporary file that never outlives a failure."""
import os
import threading

import pytest

from rvmdbg.fileio import FileRefused, read_file, read_text, write_atomic
from rvmdbg.vm.serialize import ExecutableFormatError, load


def test_reads_a_regular_file_and_drops_a_bom(tmp_path):
    p = tmp_path / "a.relay"
    p.write_bytes(b"\xef\xbb\xbfdef @main() { 1 }\n")
    assert read_text(p) == "def @main() { 1 }\n"


def test_a_symlink_to_a_regular_file_is_read(tmp_path):
    (tmp_path / "real").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_file(tmp_path / "link") == b"x"


@pytest.mark.parametrize("target,kind", [("/dev/zero", "a device"), ("/dev/null", "a device")])
def test_devices_are_refused_even_through_a_symlink(tmp_path, target, kind):
    link = tmp_path / "prog.relay"
    link.symlink_to(target)
    for p in (target, link):
        with pytest.raises(FileRefused, match=kind):
            read_file(p)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(FileRefused, match="a directory"):
        read_file(tmp_path)


def test_a_fifo_nobody_writes_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.relay"
    os.mkfifo(fifo)
    result = []
    t = threading.Thread(target=lambda: result.append(_refusal(fifo)), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "reading a FIFO blocked"
    assert "FIFO" in result[0]


def _refusal(path):
    try:
        read_file(path)
    except FileRefused as e:
        return str(e)
    return "read"


def test_size_is_checked_before_reading(tmp_path):
    big = tmp_path / "big.npy"
    with open(big, "wb") as fh:
        fh.truncate(64 << 30)   # sparse: 64 GiB declared, nothing on disk
    with pytest.raises(FileRefused, match="64.0 GiB, larger than the 1.0 KiB a model may be"):
        read_file(big, limit=1024, what="model")


def test_write_atomic_replaces_and_leaves_nothing_behind(tmp_path):
    p = tmp_path / "out.rvmx"
    p.write_bytes(b"old")
    write_atomic(p, b"new")
    assert p.read_bytes() == b"new"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.rvmx"]


def test_write_atomic_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    link = tmp_path / "out.rvmx"
    link.symlink_to(victim)
    write_atomic(link, b"new")
    assert victim.read_text() == "keep me"
    assert not link.is_symlink() and link.read_bytes() == b"new"


def test_write_atomic_removes_its_temporary_file_on_failure(tmp_path):
    target = tmp_path / "sub"
    target.mkdir()   # renaming a file over a directory fails
    with pytest.raises(OSError):
        write_atomic(target, b"data")
    assert [x.name for x in tmp_path.iterdir()] == ["sub"]


def test_loading_an_executable_from_a_device_is_a_format_error(tmp_path):
    with pytest.raises(ExecutableFormatError, match="a device"):
        load("/dev/zero")


def test_cli_refuses_a_device_and_a_fifo_as_program(tmp_path):
    import subprocess
    import sys
    fifo = tmp_path / "p.relay"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo)):
        proc = subprocess.run([sys.executable, "-m", "rvmdbg", "check", target],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert f"{target}: error: cannot read the file:" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_an_npy_argument_that_is_a_fifo_or_device_is_exit_2_not_a_hang(tmp_path):
    import subprocess
    import sys
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        proc = subprocess.run([sys.executable, "-m", "rvmdbg", "run", "programs/fib.relay",
                               "@" + target], capture_output=True, text=True, timeout=60,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert proc.returncode == 2, proc.stderr
        assert f"{target}: a " in proc.stderr and "Traceback" not in proc.stderr
