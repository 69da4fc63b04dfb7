"""The `.mvm` text format: what it reads, and a located message for each kind of mistake."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from rvmdbg.minivm import ADD, CH, HL, JM, LD, SUB, MvmSyntaxError, parse_mvm
from rvmdbg.relay.diagnostics import RelayError

DEMO = """\
# comment
        LD  r1 3
        LD  r2, 2          ; commas are allowed
        CH  r1 plus
        SUB r1 r2 r0
        JM  done
plus:   add R1 r2 r0       # opcodes and registers are case-insensitive
done:   HL
"""


def test_reads_the_demo():
    p = parse_mvm(DEMO, "demo.mvm")
    assert p.instructions == [LD(1, 3), LD(2, 2), CH(1, 5), SUB(1, 2, 0), JM(6), ADD(1, 2, 0),
                              HL()]
    assert p.register_count == 3
    assert not p.hl_stays
    assert [f.name for f in p.functions] == ["main"] and p.functions[0].params == []
    # each instruction maps to its line, the span covering the instruction's text
    sp = p.span_at(0, 5)
    assert (sp.file, sp.line, sp.col) == ("demo.mvm", 7, 9)
    assert DEMO.split("\n")[6][sp.col - 1:sp.end_col - 1] == "add R1 r2 r0"


def test_numeric_targets_directives_and_several_labels():
    p = parse_mvm(".registers 8\n.hl stays\na: b:\nLD r0 -7\nJM 0\nHL\n")
    assert p.register_count == 8 and p.hl_stays
    assert p.instructions[0] == LD(0, -7) and p.instructions[1] == JM(0)
    assert p.instructions[2] == HL(True) and p.instructions[2].jump_targets(2) == (2,)


def test_text_round_trips():
    p = parse_mvm(DEMO)
    again = parse_mvm("\n".join(i.text() for i in p.instructions))
    assert again.instructions == p.instructions


def test_read_write_sets_and_jumps():
    assert LD(1, 3).reads() == () and LD(1, 3).writes() == (1,)
    assert ADD(1, 2, 0).reads() == (1, 2) and ADD(1, 2, 0).writes() == (0,)
    assert CH(1, 5).reads() == (1,) and CH(1, 5).successors(2) == (3, 5)
    assert JM(6).successors(4) == (6,) and not JM(6).falls_through
    assert HL().successors(6) == () and HL().is_return
    assert HL(True).successors(6) == (6,) and HL(True).is_jump


def _error(text: str) -> MvmSyntaxError:
    with pytest.raises(MvmSyntaxError) as info:
        parse_mvm(text, "bad.mvm")
    return info.value


@pytest.mark.parametrize("text, line, col, words", [
    ("LD r1 3\nMUL r1 r2 r0\n", 2, 1, "unknown opcode 'MUL'"),
    ("LD r1\n", 1, 6, "LD takes 2 operands, got 1: expected LD r imm"),
    ("HL r0\n", 1, 4, "HL takes 0 operands, got 1"),
    ("ADD r1 x r0\n", 1, 8, "expected a register"),
    ("LD r1 three\n", 1, 7, "expected an integer"),
    ("LD r1 99999999999999999999\n", 1, 7, "does not fit a 64-bit register"),
    ("JM nowhere\nHL\n", 1, 4, "expected a label or an instruction number, got 'nowhere'"),
    ("JM 5\nHL\n", 1, 4, "jump target 5 is outside the program (instructions 0..1)"),
    ("a: HL\na: HL\n", 2, 1, "label 'a' is defined twice (first at line 1)"),
    ("LD r300 1\n", 1, 4, "past the last one"),
    (".registers 2\nLD r2 1\n", 1, 12, ".registers 2 is too few: the program uses r2"),
    (".hl sometimes\nHL\n", 1, 5, ".hl takes `halts`"),
    (".speed 3\n", 1, 1, "unknown directive '.speed'"),
    ("# nothing\n", 2, 1, "the program has no instructions"),
])
def test_errors_are_located(text, line, col, words):
    err = _error(text)
    assert isinstance(err, RelayError)   # the command line prints it and exits 2
    assert (err.span.line, err.span.col) == (line, col), err.format()
    assert words in err.message
    shown = err.format().split("\n")
    assert shown[0].startswith(f"bad.mvm:{line}:{col}: error: ")
    if line <= len(text.split("\n")) and text.split("\n")[line - 1]:
        caret = shown[2]
        gutter = shown[1].index("|") + 2
        assert caret.index("^") == gutter + col - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(
    st.builds(lambda d, v: f"LD r{d} {v}", st.integers(0, 7), st.integers(-100, 100)),
    st.builds(lambda o, a, b, d: f"{o} r{a} r{b} r{d}", st.sampled_from(["ADD", "SUB"]),
              st.integers(0, 7), st.integers(0, 7), st.integers(0, 7)),
    st.just("HL")), min_size=1, max_size=12))
def test_listing_text_parses_back(lines):
    p = parse_mvm("\n".join(lines))
    assert parse_mvm("\n".join(i.text() for i in p.instructions)).instructions == p.instructions
