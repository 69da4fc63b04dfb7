"""Run-time failures in Chinese through the command line: a program that fails on the VM, on
the reference interpreter and on the graph executor, the limits (--max-steps, --max-bytes,
--max-depth), a tampered or truncated `.rvmx`, `print $N[...]`'s index errors and `set
logging` in batch mode. Each keeps its location, opcodes and registers as they are, says
its words in Chinese, and looks up no msgid the catalog lacks (the recording fallback)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rvmdbg import cli

ROOT = Path(__file__).resolve().parents[2]
FIB = str(ROOT / "programs" / "fib.relay")
MLP = str(ROOT / "programs" / "mlp.relay")
HEADER = '#[version = "0.0.5"]\n'


def _main(capsys, monkeypatch, *argv):
    monkeypatch.setenv("LANGUAGE", "en")   # main() exports --lang for the processes it starts
    code = cli.main([*map(str, argv), "--lang", "zh_CN"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture
def big_add(tmp_path):
    prog = tmp_path / "big.relay"
    prog.write_text(HEADER + "def @main(%x: Tensor[(64, 64), float32]) {\n"
                    "  add(%x, %x)\n}\n")
    return str(prog)


@pytest.fixture
def saved_fib(tmp_path, capsys):
    path = tmp_path / "fib.rvmx"
    assert cli.main(["compile", FIB, "-o", str(path)]) == 0
    capsys.readouterr()
    return path


@pytest.mark.parametrize("argv, code, words", [
    ([FIB, "--max-steps", "5"], 1, ["程序执行了 5 条指令仍未结束", "位于 @fib pc=", "invoke_packed"]),
    ([FIB, "--max-steps", "5", "--executor", "interp"], 1, ["超出步数上限 5（用 --max-steps 调高）"]),
    ([FIB, "--executor", "graph"], 2, ["图执行器：", "需要在运行时分支；请在虚拟机上运行", "fib.relay:"]),
    ([FIB, "--max-depth", "99999999999"], 2, ["--max-depth 99999999999 无法满足：最多为 10000000",
                                                "--max-bytes 不计入它"]),
], ids=["vm-steps", "interp-steps", "graph-refusal", "depth-ceiling"])
def test_run_failures_in_chinese(chinese, capsys, monkeypatch, argv, code, words):
    got, out, err = _main(capsys, monkeypatch, "run", *argv)
    assert got == code, err
    for w in words:
        assert w in err, err
    assert chinese == set(), sorted(chinese)


@pytest.mark.parametrize("executor, where", [("vm", "内核 vm_mod_fused_take："),
                                             ("interp", ": error: take: ")])
def test_a_failing_kernel_in_chinese(chinese, capsys, monkeypatch, tmp_path, executor, where):
    """An operator's run-time refusal: its name stays first, once, on both executors."""
    prog = tmp_path / "take.relay"
    prog.write_text(HEADER + "def @main(%x: Tensor[(2), float32], %i: int32) {\n"
                    '  take(%x, %i, mode="fast")\n}\n')
    got, out, err = _main(capsys, monkeypatch, "run", prog, "[1.0, 2.0]", "5",
                          "--executor", executor)
    assert got == 1, err
    assert where in err and "索引 5 超出大小为 2 的轴的范围（mode=\"fast\" 不做截断）" in err, err
    assert "take: take:" not in err
    assert chinese == set(), sorted(chinese)


def test_max_bytes_stop_in_chinese(chinese, capsys, monkeypatch, big_add, tmp_path):
    import numpy as np
    np.save(tmp_path / "x.npy", np.ones((64, 64), dtype="float32"))
    for executor, words in [("vm", "限制 max_bytes=100"), ("interp", "超过上限 100")]:
        got, out, err = _main(capsys, monkeypatch, "run", big_add, f"@{tmp_path / 'x.npy'}",
                              "--max-bytes", "100", "--executor", executor)
        assert got == 1, err
        assert words in err and "--max-bytes" in err, err
    assert chinese == set(), sorted(chinese)


@pytest.mark.parametrize("tamper, words", [
    (lambda d: d[:-1] + bytes([d[-1] ^ 1]), "文件已损坏（校验和不符）"),
    (lambda d: d[:40], "文件被截断"),
    (lambda d: b"JUNK" + d[4:], "不是 rvmdbg 可执行文件（魔数错误）"),
    (lambda d: d + b"\0\0", "文件已损坏（负载之后多出 2 字节）"),
], ids=["checksum", "truncated", "magic", "trailing"])
def test_tampered_executable_in_chinese(chinese, capsys, monkeypatch, saved_fib, tamper, words):
    bad = saved_fib.with_name("bad.rvmx")
    bad.write_bytes(tamper(saved_fib.read_bytes()))
    got, out, err = _main(capsys, monkeypatch, "run", bad)
    assert got == 2
    assert f"{bad}: " in err and words in err, err      # the file's name stays first
    assert chinese == set(), sorted(chinese)


def test_an_executable_the_verifier_refuses_in_chinese(chinese, capsys, monkeypatch, saved_fib):
    """A well-formed file whose bytecode breaks an invariant: the verifier's refusal."""
    from rvmdbg.vm import serialize
    from rvmdbg.vm.bytecode import Goto
    exe = serialize.load(saved_fib)
    fn = exe.functions[-1]
    fn.instructions[-1] = Goto(0)           # jumps to itself: offset 0
    bad = saved_fib.with_name("goto0.rvmx")
    payload = serialize._payload(exe)     # written as a tool other than rvmdbg could
    import hashlib
    header = serialize._HEADER.pack(serialize.MAGIC, serialize.FORMAT_VERSION, len(payload),
                                    hashlib.sha256(payload).digest())
    bad.write_bytes(header + payload)
    got, out, err = _main(capsys, monkeypatch, "run", bad)
    assert got == 2
    assert "无效的可执行文件：函数 @" in err and "goto 偏移为 0" in err, err
    assert chinese == set(), sorted(chinese)


def test_print_index_errors_and_logging_in_batch_mode(chinese, capsys, monkeypatch, tmp_path):
    script = tmp_path / "cmds"
    script.write_text("print $0[5]\nprint $0[0, 0, 0]\nprint $0[::0]\nprint $0[0\n"
                      "print $0[1:2:3:4]\nprint $0[x]\nprint $0[0, 1:3]\n"
                      "set logging\nset logging file\nnumbering\n")
    got, out, err = _main(capsys, monkeypatch, "debug", MLP, "--batch", script)
    assert got == 2
    assert "索引 5 超出了大小为 1 的轴 0 的范围（形状 (1, 8)）" in out
    assert "数组的索引过多：数组是 2 维的，但用了 3 个索引" in out
    assert "切片步长不能为零：'::0'" in out
    assert "缺少闭合的 `]`" in out and "切片最多有三部分" in out
    assert "应为整数、1:3 这样的切片" in out
    assert "记录已关闭（文件将是 rvmdbg.txt）" in out
    assert "用法：set logging file FILE" in out
    assert "寄存器编号：TVM 的编号" in out
    assert "$0[0, 1:3]" in out                      # the index is written back as it is
    assert chinese == set(), sorted(chinese)


def test_english_stays_as_it_was(capsys, saved_fib):
    """The same failures in English: the words the tests of each layer assert."""
    bad = saved_fib.with_name("bad.rvmx")
    data = saved_fib.read_bytes()
    bad.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert cli.main(["run", str(bad)]) == 2
    assert "file is corrupted (checksum mismatch)" in capsys.readouterr().err
    assert cli.main(["run", FIB, "--max-steps", "5", "--executor", "interp"]) == 1
    assert "step limit 5 exceeded (raise with --max-steps)" in capsys.readouterr().err


def test_the_decoder_names_operand_fields_in_chinese(chinese):
    from rvmdbg.vm import bytecode as bc
    with pytest.raises(bc.BytecodeError) as e:
        bc.Move(-1, 2)
    assert str(e.value) == "寄存器 不能为负，实际为 -1"
    with pytest.raises(bc.BytecodeError) as e:
        bc.decode(99, [])
    assert str(e.value) == "未知的操作码 99"
    assert chinese == set(), sorted(chinese)


def test_graph_report_in_chinese(chinese, capsys, monkeypatch):
    """`rvmdbg graph`: the node lines keep TVM's words (null, tvm_op, sid, heads); the header
    and the memory plan are Chinese, the plan's figures in one column (by cells)."""
    from rich.cells import cell_len
    got, out, err = _main(capsys, monkeypatch, "graph", MLP)
    assert got == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("图 @main：8 个节点")
    assert any("tvm_op fused_nn_softmax(6)" in ln for ln in lines) and "heads: [7]" in out
    plan = lines[lines.index(next(ln for ln in lines if ln.startswith("内存计划："))) + 1:]
    columns = {cell_len(ln[:len(ln) - len(ln.split("：", 1)[1].lstrip())]) for ln in plan}
    assert len(columns) == 1, plan
    assert chinese == set(), sorted(chinese)
