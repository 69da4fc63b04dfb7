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
