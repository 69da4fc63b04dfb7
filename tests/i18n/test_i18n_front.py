"""The front end's errors in Chinese, through the real command line: a bad program, argument,
input file, keys file or MiniVM program gives its message in Chinese with the location
(`FILE:LINE:COL: error:`), the source line and the caret exactly as in English, and every
message shown has a zh_CN translation (the recording fallback collects any that has not)."""
from __future__ import annotations

import re

import pytest

from rvmdbg import cli

HEADER = '#[version = "0.0.5"]\n'

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
        if isinstance(content, bytes):
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
