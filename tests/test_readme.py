"""README.md stays true to the code: its Operators section names exactly the operators in the
registry (rvmdbg/relay/ops), and its prose keeps to 100 characters a line (tables and code
blocks are exempt: a table row is one line, a command is copied whole)."""
from __future__ import annotations

import re
from pathlib import Path

from rvmdbg.relay.ops import OPS

README = Path(__file__).resolve().parents[1] / "README.md"
WIDTH = 100


def _outside_parentheses(text: str) -> str:
    """`text` without its parenthesised asides (outside backticks): they name files and TVM's
    Python spellings (`ops/pool.py`, `relay.reverse_reshape`), not operators."""
    out, depth, quoted = [], 0, False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
            continue
        if depth == 0:
            out.append(ch)
    return "".join(out)


def readme_operators(text: str) -> list[str]:
    """The operators the README lists: the words of the backticked spans in the bullets of its
    `## Operators` section, outside parentheses (`- family (`ops/x.py`): `a b c`; `d` (...)`)."""
    section = text.split("\n## Operators\n", 1)[1].split("\n## ", 1)[0]
    names = []
    for bullet in re.split(r"\n- ", section)[1:]:
        for span in re.findall(r"`([^`]*)`", _outside_parentheses(bullet)):
            names.extend(span.split())
    return names


def test_readme_lists_every_registered_operator_once_and_nothing_else():
    listed = readme_operators(README.read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), sorted(n for n in set(listed) if listed.count(n) > 1)
    assert sorted(set(OPS) - set(listed)) == [], "registered but not in README.md's Operators"
    assert sorted(set(listed) - set(OPS)) == [], "in README.md's Operators but not registered"


def test_readme_operator_list_reads_the_readmes_form():
    """The parser itself: asides in parentheses are not operators, nested ones neither."""
    text = ("intro\n\n## Operators\n\nSome prose `not.listed`.\n\n"
            "- family (`ops/x.py`, `ops/y.py`): `a b\n  c`; `d` (`relay.d_api`, with (`e`)),\n"
            "  `f`\n- other: `g`\n\n## Layout\n\n- `h`\n")
    assert readme_operators(text) == ["a", "b", "c", "d", "f", "g"]


def test_readme_prose_lines_fit_100_characters():
    long, in_code = [], False
    for number, line in enumerate(README.read_text(encoding="utf-8").split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and not line.startswith("|") and len(line) > WIDTH:
            long.append((number, len(line)))
    assert long == []
