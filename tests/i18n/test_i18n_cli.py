"""Batch mode and the command line's errors in Chinese: `--lang zh_CN`, or the environment
(LANG, LC_ALL, LANGUAGE), gives Chinese messages with locations, Relay text, opcodes and
registers as they are; `--lang en` forces English; every message a set of batch commands
prints has a zh_CN translation (the recording fallback collects any that has not)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rvmdbg import cli, i18n

ROOT = Path(__file__).resolve().parents[2]
BST = str(ROOT / "programs" / "bst.relay")
BATCH = """break @insert:18
continue
info registers
info frame
info breakpoints
backtrace
print $0
deps
list
source
heap
watch $1
continue
info history
display $0
info display
undisplay 1
delete 2
disable 1
enable 1
condition 1 $1 == 3
last-write $0
frame 0
up
down
step 3
next
finish
rstep
rnext
rfinish
rcontinue
goto 5
run-to @insert:3
search alloc
frobnicate
break @nope
break @insert if $1 <
condition 1 $1 ==
tbreak 9999
print $999
delete 77
info
help
continue
continue
"""


def _run(args, env_extra=None, stdin=None):
    env = {k: v for k, v in os.environ.items() if k not in i18n.ENV_VARIABLES}
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "rvmdbg", *args], capture_output=True,
                          text=True, env=env, input=stdin, cwd=ROOT, timeout=120)


def test_batch_commands_have_every_message_translated(chinese, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LANGUAGE", "en")   # main() exports --lang for the processes it starts
    script = tmp_path / "cmds"
    script.write_text(BATCH)
    code = cli.main(["debug", BST, "--batch", str(script), "--lang", "zh_CN"])
    out = capsys.readouterr()
    assert code == 2, out.err     # the script holds commands that fail, on purpose
    assert "个命令报告了错误" in out.err
    assert "[第 " in out.out and "(断点 1)" in out.out
    assert "invoke_packed" in out.out or "get_tag" in out.out     # opcodes stay
    # the breakpoint and condition errors, which used to stay English
    assert "没有函数 @nope" in out.out and "过早结束" in out.out
    assert "no function" not in out.out and "ends too early" not in out.out
    assert chinese == set(), sorted(chinese)
    assert os.environ["LANGUAGE"] == "zh_CN"


def test_lang_option_and_environment():
    zh = _run(["--lang", "zh_CN", "no/such/file.relay"])
    assert zh.returncode == 2 and "找不到文件" in zh.stderr
    env = _run(["no/such/file.relay"], {"LANG": "zh_CN.UTF-8"})
    assert env.returncode == 2 and "找不到文件" in env.stderr
    forced = _run(["no/such/file.relay", "--lang", "en"], {"LANG": "zh_CN.UTF-8"})
    assert "file not found" in forced.stderr
    c_locale = _run(["no/such/file.relay"], {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"})
    assert "file not found" in c_locale.stderr
    usage = _run(["run", "programs/sum_up.relay", "--executor", "interp", "1", "2", "3",
                  "--lang=zh_CN"])
    assert usage.returncode == 2 and "错误" in usage.stderr
    bad = _run(["--lang", "fr", "x.relay"])
    assert bad.returncode == 2 and "unknown language" in bad.stderr


def test_located_errors_keep_their_location_and_caret(tmp_path):
    prog = tmp_path / "bad.relay"
    prog.write_text('#[version = "0.0.5"]\ndef @main() {\n  %x\n}\n')
    out = _run(["run", str(prog), "--lang", "zh_CN"])
    assert out.returncode == 2
    assert f"{prog}:3:3: error:" in out.stderr     # FILE:LINE:COL and the tag stay
    assert "^" in out.stderr


def test_batch_over_stdin_in_chinese_from_the_environment():
    out = _run(["debug", BST, "--batch", "-"], {"LANGUAGE": "zh_CN"}, stdin="step\nstep\n")
    assert out.returncode == 0, out.stderr
    assert "[第 2 步]" in out.stdout
    assert "$" in out.stdout


# ------------------------------------------------------------------ --help and argparse's words

def _cells(text):
    from rvmdbg.argparse_i18n import cells
    return max((cells(line) for line in text.splitlines()), default=0)


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["debug", "--help"],
                                  ["serve", "--help"], ["quiz", "--help"]])
def test_help_in_chinese_has_every_word_translated(chinese, capsys, monkeypatch, argv):
    monkeypatch.setenv("LANGUAGE", "en")
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main([*argv, "--lang", "zh_CN"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("用法：rvmdbg")
    assert "位置参数:" in out and "选项:" in out and "显示此帮助信息并退出" in out
    assert "usage:" not in out and "options:" not in out and "show this help" not in out
    assert _cells(out) <= 80, out                   # wrapped by cells, not by characters
    assert chinese == set(), sorted(chinese)


def test_run_help_in_chinese_through_the_command_line():
    out = _run(["run", "--help"], {"LANG": "zh_CN.UTF-8", "COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("用法：rvmdbg run [-h]")
    # the usage's continuation lines line up under the first word after the program's name
    assert lines[1].index("[") == len("用法：rvmdbg run ") + 3
    assert "运行程序的入口函数并打印结果" in out.stdout
    assert "--max-steps N" in out.stdout and "执行 N 条指令或求值步骤后停止（默认" in out.stdout


@pytest.mark.parametrize("argv, words", [
    (["run"], "缺少以下必需参数：PROGRAM"),
    (["run", "x.relay", "--executor", "gpu"], "参数 --executor：无效的选择：'gpu'（可选 'vm', 'interp', 'graph'）"),
    (["run", "x.relay", "--max-steps", "0"], "参数 --max-steps：应为正整数，实际为 '0'"),
    (["run", "x.relay", "--json=1"], "参数 --json：忽略了显式给出的参数 '1'"),
    (["run", "x.relay", "--entry"], "参数 --entry：需要一个参数"),
    (["check", "x.relay", "--frob"], "无法识别的参数：--frob"),
])
def test_usage_errors_in_chinese(chinese, capsys, monkeypatch, argv, words):
    monkeypatch.setenv("LANGUAGE", "en")
    assert cli.main([*argv, "--lang", "zh_CN"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("用法：rvmdbg ")
    assert ": error: " + words in err              # argparse's tag stays, as every error's
    assert chinese == set(), sorted(chinese)


def test_english_help_is_argparse_s_own_layout():
    """The cell-measuring formatter changes nothing in English: every parser's help is what
    argparse's own formatter gives."""
    import argparse

    from rvmdbg.argparse_i18n import speaking
    i18n.set_language("en")
    with speaking():
        top, parsers = cli.build_parser()
        for p in [top, *parsers.values()]:
            ours = p.format_help()
            p.formatter_class = argparse.HelpFormatter
            assert p.format_help() == ours


def test_argparse_is_left_as_it_was_after_parsing():
    import argparse
    before = argparse._
    with pytest.raises(SystemExit):
        cli.parse_command_line(["run"])
    assert argparse._ is before


def test_wrapping_by_cells():
    from rvmdbg.argparse_i18n import cells, wrap_cells
    text = "入口函数的参数：Relay 值（10、-3、2.5f、Cons(1, Nil)、(1, 2f)）、JSON 数字或列表，默认取程序的 `// args:` 行"
    for width in (10, 17, 30, 55):
        lines = wrap_cells(text, width)
        assert all(cells(line) <= width for line in lines), lines
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert not any(line.startswith(("，", "、", "）", "：")) for line in lines)
