"""The front end's errors in Chinese, through the real command line: a bad program, argument,
input file, keys file or MiniVM program gives its message in Chinese with the location
(`FILE:LINE:COL: error:`), the source line and the caret exactly as in English, and every
message shown has a zh_CN translation (the recording fallback collects any that has not)."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rvmdbg import cli, i18n
from rvmdbg.tui.keymap import load_keymap

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
VECTOR = HEADER + "def @main(%x: Tensor[(2), int32]) {\n  %x\n}\n"
BAD_KEYS = "step = f10\nbogus = x\n"


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


# (id, files {name: text or bytes}, argv with {dir} for the folder, expected Chinese words,
#  the English words the same input gives, the `FILE:LINE:COL` or None when not located)
CASES = [
    ("lex", {"p.relay": HEADER + "def @main() {\n  1 ~ 2\n}\n"},
     ["run", "{dir}/p.relay"], "意外的字符 '~'", "unexpected character '~'", "p.relay:3:5"),
    ("lex-number", {"p.relay": HEADER + "def @main() {\n  %x-1\n}\n"},
     ["run", "{dir}/p.relay"], "未绑定的变量 %x", "unbound variable %x", "p.relay:3:3"),
    ("parse", {"p.relay": HEADER + "def @main(%a: int32) {\n  let %b = %a;\n}\n"},
     ["run", "{dir}/p.relay", "1"], "期望 `;` 之后的表达式，但遇到 `}`",
     "expected an expression after `;`, found `}`", "p.relay:4:1"),
    ("parse-hint", {"p.relay": HEADER + "def @main() {\n  if (True) { 1 } else if (False) "
                    "{ 2 } else { 3 }\n}\n"},
     ["run", "{dir}/p.relay"], "提示：没有 `else if`",
     "hint: there is no `else if`", "p.relay:3:24"),
    ("metadata", {"p.relay": HEADER + "def @main() {\n  meta[relay.Constant][0]\n}\n"
                  "#[metadata]\n[1, 2]\n"},
     ["run", "{dir}/p.relay"], "元数据必须是 JSON 对象", "the metadata must be a JSON object",
     "p.relay:6:1"),
    ("prelude", {"p.relay": HEADER + "type List[A] { Cons(A, List[A]), Nil }\n"
                 "def @main() { @map(fn (%x: int32) { %x }, Nil) }\n"},
     ["run", "{dir}/p.relay"], "提示：它被略去了，因为它用到了 prelude 类型 List，而这个程序定义了"
     "自己的类型 List", "hint: it is left out because it uses the prelude type List", "p.relay:3:15"),
    ("argument-json", {"p.relay": VECTOR}, ["run", "{dir}/p.relay", "[1,2"],
     "参数 1（%x: Tensor[(2,), int32]）：'[1,2' 不是有效的 JSON 数字列表",
     "argument 1 (%x: Tensor[(2,), int32]): '[1,2' is not a valid JSON list of numbers", None),
    ("argument-constructor", {"p.relay": VECTOR}, ["run", "{dir}/p.relay", "Foo(1)"],
     "未知的构造器 Foo；这个程序没有定义构造器",
     "unknown constructor Foo; this program defines no constructors", None),
    ("argument-shape", {"p.relay": VECTOR}, ["run", "{dir}/p.relay", "[1,2,3]"],
     "期望形状 (2,)，却是形状 (3,)", "expected shape (2,), got shape (3,)", None),
    ("npy-bad", {"p.relay": VECTOR, "x.npy": b"not numpy at all"},
     ["run", "{dir}/p.relay", "@{dir}/x.npy"], "x.npy: 不是 .npy 文件",
     "x.npy: not a .npy file (it does not start with the .npy header)", None),
    ("npy-directory", {"p.relay": VECTOR, "x.npy": None}, ["run", "{dir}/p.relay", "@{dir}/x.npy"],
     "x.npy: 这是目录，不是 rvmdbg 能读取的NumPy 文件",
     "x.npy: a directory, not a NumPy file rvmdbg can read", None),
    ("npz-name", {"p.relay": VECTOR, "x.npz": _npz(y=np.arange(2))},
     ["run", "{dir}/p.relay", "--inputs", "{dir}/x.npz"],
     "y 不是 @main 的参数（它的参数：%x）", "y is not a parameter of @main (its parameters: %x)",
     None),
    ("keys-file", {"keys.conf": BAD_KEYS}, ["keys", "--check", "{dir}/keys.conf"],
     "未知的绑定 `bogus`", "unknown binding `bogus`", "keys.conf:2:1"),
    ("minivm-parse", {"p.mvm": "LD r0 5\nADD r0 r1\nHL\n"}, ["run", "{dir}/p.mvm"],
     "ADD 接受 3 个操作数，却给了 2 个：期望 ADD a b dst",
     "ADD takes 3 operands, got 2: expected ADD a b dst", "p.mvm:2:10"),
    ("minivm-label", {"p.mvm": "LD r0 5\nJM nowhere\nHL\n"}, ["run", "{dir}/p.mvm"],
     "期望标签或指令编号，却是 'nowhere'",
     "expected a label or an instruction number, got 'nowhere'", "p.mvm:2:4"),
]


def _run(argv, tmp_path, capsys):
    code = cli.main([a.format(dir=tmp_path) for a in argv])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("files, argv, chinese_words, english_words, where",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_front_end_errors_in_chinese(files, argv, chinese_words, english_words, where,
                                     tmp_path, capsys, monkeypatch, chinese):
    monkeypatch.setenv("LANGUAGE", "en")   # main() exports --lang for the processes it starts
    for name, content in files.items():
        path = tmp_path / name
        if content is None:
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    code_en, english = _run(argv + ["--lang", "en"], tmp_path, capsys)
    code_zh, text = _run(argv + ["--lang", "zh_CN"], tmp_path, capsys)
    assert code_zh == code_en == 2, text
    assert english_words in english and chinese_words in text, (english, text)
    assert "Traceback" not in text
    if where is not None:
        # the location, the tag, the quoted source line and the caret are the same
        located = f"{tmp_path}/{where}: error: "
        assert located in english and located in text, text
        shown = [ln for ln in text.splitlines() if re.match(r"\s+\d+ \| |\s+\^", ln)]
        assert shown and shown == [ln for ln in english.splitlines()
                                   if re.match(r"\s+\d+ \| |\s+\^", ln)], text
    assert chinese == set(), sorted(chinese)


def test_keys_file_notes_in_chinese(tmp_path, chinese):
    """A damaged default keys file is kept but for its bad lines, each a located note."""
    keys = tmp_path / "keys.conf"   # config_dir is the rvmdbg folder itself
    keys.write_text(BAD_KEYS)
    notes: list[str] = []
    load_keymap(None, tmp_path, notes)
    assert len(notes) == 2, notes
    assert notes[0].startswith(f"{keys}:2:1: error: 未知的绑定 `bogus`"), notes
    assert "`f10` 将同时是 `step` 和 `next` 的按键（在主屏幕上）" in notes[1], notes
    assert "提示：给其中一个换个按键" in notes[1]
    keys.write_bytes(b"\xff\xfe")
    notes.clear()
    load_keymap(None, tmp_path, notes)
    assert notes == [f"{keys}: 无法读取按键文件（不是 UTF-8 文本）；使用默认按键"]
    assert chinese == set(), sorted(chinese)


def test_keys_notes_reach_the_user_in_chinese(tmp_path):
    """The notes on stderr before the screen starts (here refused: no terminal)."""
    (tmp_path / "rvmdbg").mkdir()
    (tmp_path / "rvmdbg" / "keys.conf").write_text(BAD_KEYS)
    env = {k: v for k, v in os.environ.items() if k not in i18n.ENV_VARIABLES}
    env.update(PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=str(tmp_path), LANG="zh_CN.UTF-8")
    out = subprocess.run([sys.executable, "-m", "rvmdbg", "screen",
                          str(ROOT / "programs" / "sum_up.relay")], capture_output=True,
                         text=True, env=env, stdin=subprocess.DEVNULL, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert "keys.conf:2:1: error: 未知的绑定 `bogus`" in out.stderr, out.stderr
    assert "调试器界面需要终端" in out.stderr


def test_saved_breakpoint_notes_in_chinese(tmp_path, chinese):
    from rvmdbg.debug.config import _read_records
    bad = tmp_path / "bp.json"
    bad.write_text("{not json")
    assert _read_records(bad) == ([], f"忽略了 {bad} 中保存的断点：不是有效的 JSON")
    bad.write_text('{"breakpoints": [{"kind": "line", "spec": "3"}, 7]}')
    records, note = _read_records(bad)
    assert len(records) == 1 and note == f"跳过了 {bad} 中 1 个无法读取的条目"
    assert chinese == set(), sorted(chinese)
