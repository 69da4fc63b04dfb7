"""Type errors in Chinese through `rvmdbg check`: a table of real ill-typed programs (one per
operator family, and the type checker's common errors) checked with `--lang zh_CN` and with
`--lang en`. The location `FILE:LINE:COL`, the `error:` tag, the quoted source line and the
caret are the same in both languages; the message is Chinese with the Relay text in it (types,
operator and attribute names) as written; no message looked up lacks a translation."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rvmdbg import cli, i18n

ROOT = Path(__file__).resolve().parents[2]
HAN = re.compile(r"[\u4e00-\u9fff]")

# (name, program body after the version line, (line, col) of the error, words the Chinese
# message has: Relay text as written and a Chinese phrase)
ERRORS = [
    # one per operator family (rvmdbg/relay/ops/*.py) and the attribute checks they share
    ("conv", """def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 2, 3, 3), float32]) {
  nn.conv2d(%x, %w, channels=4, kernel_size=[3, 3])
}""", (3, 3), ["nn.conv2d：", "属性 'groups'", "Tensor[(4, 2, 3, 3), float32]", "通道"]),
    ("core-attribute", """def @main(%x: Tensor[(3, 4), float32]) {
  sum(%x, axiz=[0])
}""", (3, 3), ["sum：", "未知的属性 'axiz'", "'axis'"]),
    ("core-attribute-kind", """def @main(%x: Tensor[(3, 4), float32]) {
  sum(%x, axis="rows")
}""", (3, 3), ["属性 'axis'", "整数"]),
    ("core-required", """def @main(%x: Tensor[(3), float32]) {
  reshape(%x)
}""", (3, 3), ["缺少必需的属性 'newshape'"]),
    ("core-dtypes", """def @main(%x: Tensor[(3, 4), float32], %y: Tensor[(3, 4), int32]) {
  add(%x, %y)
}""", (3, 3), ["add：", "数据类型 float32 与 int32 不同"]),
    ("elemwise", """def @main(%x: Tensor[(3, 4), float32], %y: Tensor[(5, 4), float32]) {
  multiply(%x, %y)
}""", (3, 3), ["无法广播", "Tensor[(3, 4), float32] 与 Tensor[(5, 4), float32]"]),
    ("elemwise-full", """def @main(%x: Tensor[(3, 4), float32]) {
  full(%x, shape=[2, 2], dtype="float32")
}""", (3, 3), ["full：", "填充值必须是标量"]),
    ("index", """def @main(%x: Tensor[(3, 4), float32], %i: Tensor[(3, 4), float32]) {
  take(%x, %i, axis=0)
}""", (3, 3), ["take：", "indices 必须是整数张量"]),
    ("layouts", """def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  nn.conv2d(%x, %w, strides=[1, 1, 1], kernel_size=[3, 3])
}""", (3, 3), ["属性 'strides' 必须有 2 个值", "[1, 1, 1]"]),
    ("nn", """def @main(%x: Tensor[(2, 5), float32], %w: Tensor[(4, 3), float32]) {
  nn.dense(%x, %w, units=4)
}""", (3, 3), ["nn.dense：", "5 个输入特征", "(units, in_features)"]),
    ("norm", """def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(5), float32],
          %b: Tensor[(4), float32]) {
  nn.layer_norm(%x, %g, %b, axis=-1)
}""", (4, 3), ["nn.layer_norm：", "gamma", "属性 'axis'", "不匹配"]),
    ("pool", """def @main(%x: Tensor[(1, 3, 2, 2), float32]) {
  nn.max_pool2d(%x, pool_size=[3, 3])
}""", (3, 3), ["nn.max_pool2d：", "属性 'pool_size' [3, 3]", "窗口"]),
    ("qnn", """def @main(%x: Tensor[(3, 4), float32]) {
  qnn.quantize(%x, 0.05f, 3f, out_dtype="uint8")
}""", (3, 3), ["qnn.quantize：", "output_zero_point 必须是 int32"]),
    ("reduce", """def @main(%x: Tensor[(3, 4), float32]) {
  sum(%x, axis=[2])
}""", (3, 3), ["sum：", "axis 2 超出了 2 维张量的范围", "[-2, 1]"]),
    ("transform", """def @main(%x: Tensor[(3, 4), float32]) {
  reshape(%x, newshape=[5, -1])
}""", (3, 3), ["reshape：", "无法把 (3, 4)", "[5, -1]"]),
    ("dyn", """def @main(%x: Tensor[(3, 4), float32], %s: Tensor[(2, 2), int64]) {
  dyn.reshape(%x, %s)
}""", (3, 3), ["dyn.reshape：", "1 维整数张量"]),
    ("image", """def @main(%x: Tensor[(1, 3, 4), float32]) {
  image.resize2d(%x, size=[8, 8])
}""", (3, 3), ["image.resize2d：", "需要 4 维张量（NCHW）"]),
    # the memory dialect of a printed late pass stage
    ("dialect", """def @main(%x: (Tensor[(3), float32],)) {
  vm.shape_of(%x)
}""", (3, 3), ["vm.shape_of：", "参数必须是张量", "(Tensor[(3,), float32],)"]),
    ("dialect-arity", """def @main(%x: Tensor[(3), float32]) {
  vm.shape_of(%x, %x)
}""", (3, 3), ["vm.shape_of 接受 1 个参数，实际给了 2 个"]),
    # the type checker's own errors
    ("argument-mismatch", """def @f(%a: Tensor[(3), float32]) { %a }
def @main(%x: Tensor[(4), float32]) {
  @f(%x)
}""", (4, 3), ["@f 第 1 个参数的类型不匹配", "Tensor[(3,), float32]", "第 0 维是 4，应为 3"]),
    ("argument-count", """def @f(%a: Tensor[(3), float32]) { %a }
def @main(%x: Tensor[(3), float32]) {
  @f(%x, %x)
}""", (4, 3), ["@f 接受 1 个参数，实际给了 2 个"]),
    ("return-type", """def @main(%x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), int32] {
  add(%x, 1f)
}""", (3, 3), ["@main 声明返回 Tensor[(3, 4), int32]"]),
    ("literal-hint", """def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  add(%x, 1)
}""", (3, 3), ["数据类型 float32 与 int32 不同", "提示：float32 字面量请写成 1f"]),
    ("let-annotation", """def @main(%x: Tensor[(3), float32]) {
  let %y: Tensor[(3), int32] = %x;
  %y
}""", (3, 7), ["%y 声明为 Tensor[(3,), int32]"]),
    ("if-condition", """def @main(%x: Tensor[(3), float32]) {
  if (%x) { %x } else { %x }
}""", (3, 3), ["if 的条件必须是 bool 标量"]),
    ("if-branches", """def @main(%c: bool, %x: Tensor[(3), float32]) {
  if (%c) { %x } else { (%x, %x) }
}""", (3, 25), ["if 的两个分支类型不同"]),
    ("tuple-index", """def @main(%x: Tensor[(3), float32]) {
  let %t = (%x, %x);
  %t.2
}""", (4, 3), ["元组下标 2 越界", "2 个字段"]),
    ("not-a-tuple", """def @main(%x: Tensor[(3), float32]) {
  %x.0
}""", (3, 3), ["不是元组"]),
    ("not-a-function", """def @main(%x: Tensor[(3), float32]) {
  %x(%x)
}""", (3, 3), ["不是函数"]),
    ("match-clauses", """def @main(%l: List[Tensor[(3), float32]]) {
  match (%l) {
    Cons(%h, _) => %h,
    Nil => 0f,
  }
}""", (5, 12), ["第 2 个 match 分支的类型是 float32"]),
    ("match-exhaustive", """def @main(%l: List[Tensor[(3), float32]]) {
  match (%l) {
    Cons(%h, _) => %h,
  }
}""", (3, 3), ["模式匹配不完全：缺少 Nil", "提示：", "`match?`"]),
    ("ref-write", """def @main(%x: Tensor[(3), float32]) {
  let %r = ref(%x);
  ref_write(%r, 1)
}""", (4, 17), ["ref_write 把 int32 存入"]),
    ("operator-as-value", """def @main(%x: Tensor[(3), float32]) {
  let %f = nn.relu;
  %f(%x)
}""", (3, 12), ["算子 `nn.relu` 必须直接调用", "提示：fn (%x0) { nn.relu(%x0) }"]),
    ("cannot-infer", """def @main() {
  let %f = fn (%a) { nn.relu(%a) };
  0f
}""", (3, 16), ["无法推断 %a 的类型"]),
    ("integer-literal", """def @main() {
  full(300, shape=[2], dtype="int8")
}""", (3, 8), ["full：300 超出了 int8 的范围（-128 到 127）", "提示：", "cast(...)"]),
]

# programs that check, with a located note or warning
NOTES = [
    ("generalised", """def @id(%a) { %a }
def @main() {
  0f
}""", (2, 9), "note", ["TVM 拒绝 @id", "fn [A](A) -> A"]),
    ("unreachable-clause", """def @main(%l: List[Tensor[(3), float32]]) {
  match (%l) {
    _ => 0f,
    Nil => 1f,
  }
}""", (5, 5), "warning", ["执行不到的 match 分支"]),
]


def _check(path: Path, lang: str, capsys) -> tuple[int, str]:
    code = cli.main(["check", str(path), "--lang", lang])
    return code, capsys.readouterr().err


def _located(err: str, path: Path, line: int, col: int, tag: str) -> list[str]:
    """The diagnostic's head, quoted line and caret (the lines from its location on)."""
    lines = err.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith(f"{path}:{line}:{col}: {tag}: "))
    return lines[start:start + 3]


def _both_languages(tmp_path, monkeypatch, capsys, name, body, where, tag, expect_code):
    monkeypatch.setenv("LANGUAGE", "en")     # main() exports --lang for the processes it starts
    path = tmp_path / f"{name}.relay"
    path.write_text('#[version = "0.0.5"]\n' + body + "\n")
    code_en, err_en = _check(path, "en", capsys)
    code_zh, err_zh = _check(path, "zh_CN", capsys)
    assert code_en == code_zh == expect_code, (err_en, err_zh)
    en = _located(err_en, path, *where, tag)
    zh = _located(err_zh, path, *where, tag)
    assert zh[1:] == en[1:], (en, zh)        # the quoted source line and the caret
    assert "^" in zh[2]
    message = zh[0].split(f": {tag}: ", 1)[1]
    assert HAN.search(message) and not HAN.search(en[0]), (en[0], zh[0])
    return err_zh


@pytest.mark.parametrize("name, body, where, words", ERRORS, ids=[c[0] for c in ERRORS])
def test_type_errors_in_chinese(name, body, where, words, chinese, tmp_path, monkeypatch,
                                capsys):
    err = _both_languages(tmp_path, monkeypatch, capsys, name, body, where, "error", 2)
    for w in words:
        assert w in err, (w, err)
    assert chinese == set(), sorted(chinese)


@pytest.mark.parametrize("name, body, where, tag, words", NOTES, ids=[c[0] for c in NOTES])
def test_notes_and_warnings_in_chinese(name, body, where, tag, words, chinese, tmp_path,
                                       monkeypatch, capsys):
    err = _both_languages(tmp_path, monkeypatch, capsys, name, body, where, tag, 0)
    for w in words:
        assert w in err, (w, err)
    assert chinese == set(), sorted(chinese)


def test_type_error_in_chinese_from_the_environment(tmp_path):
    """A separate process choosing Chinese by LANG prints the operator's message in Chinese."""
    path = tmp_path / "bad.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(3, 4), float32]) {\n'
                    '  sum(%x, axis=[2])\n}\n')
    env = {k: v for k, v in os.environ.items() if k not in i18n.ENV_VARIABLES}
    env.update(LANG="zh_CN.UTF-8", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "rvmdbg", "check", str(path)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert f"{path}:3:3: error: sum：axis 2 超出了 2 维张量的范围；有效范围：[-2, 1]" in out.stderr


def test_an_operator_kernel_error_at_run_time_in_chinese(chinese, tmp_path, monkeypatch, capsys):
    """The operators' own run-time errors (KernelError) are translated like their relations'."""
    monkeypatch.setenv("LANGUAGE", "en")
    path = tmp_path / "div.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(3), int32]) {\n'
                    '  divide(%x, zeros_like(%x))\n}\n')
    code = cli.main(["run", str(path), "[1, 2, 3]", "--lang", "zh_CN"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "divide: 整数除以零" in err
    assert f"{path}:3:3" in err
    assert chinese == set(), sorted(chinese)
