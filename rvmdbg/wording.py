"""Small helpers for the words of messages, so that counts read right ("1 argument",
"2 arguments") everywhere a message counts something."""
from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n word` with the word in the plural unless n is 1 (`many` for irregular plurals)."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {many if many is not None else word + 's'}"


__all__ = ["plural"]
