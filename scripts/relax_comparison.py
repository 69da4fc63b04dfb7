"""The teaching comparison in docs/relax-vm.md, from real compiles: the same small model
compiled by rvmdbg's Relay VM and by TVM's Relax VM (`rvmdbg.relax.compare`), side by side.

    python3 scripts/relax_comparison.py           # print the block
    python3 scripts/relax_comparison.py --write   # put it between the doc's markers

Needs apache-tvm. tests/relax/test_relax_compare.py checks the doc still holds what the two
compilers give.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "relax-vm.md"
BEGIN = "<!-- comparison: made by scripts/relax_comparison.py -->\n"
END = "<!-- end of comparison -->\n"


def block_in(text: str) -> str | None:
    """The text between the markers, or None without them."""
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def main(argv=None) -> int:
    from rvmdbg.relax.compare import comparison_markdown
    argv = sys.argv[1:] if argv is None else argv
    block = comparison_markdown()
    if "--write" not in argv:
        sys.stdout.write(block)
        return 0
    text = DOC.read_text(encoding="utf-8")
    if block_in(text) is None:
        print(f"{DOC}: no comparison markers", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    DOC.write_text(head + BEGIN + block + END + rest.split(END, 1)[1], encoding="utf-8")
    print(f"{DOC.relative_to(ROOT)}: comparison written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
