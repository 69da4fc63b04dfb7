"""Small helpers for the words of messages, so that counts read right ("1 argument",
"2 arguments") everywhere a message counts something, and text quoted from a file never
reaches the terminal as control characters."""
from __future__ import annotations

import re


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n word` with the word in the plural unless n is 1 (`many` for irregular plurals)."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {many if many is not None else word + 's'}"


# C0 and C1 control characters and the Unicode line separators: a terminal may act on them
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """Text from a file as a message quotes it: each control character written as its
    Python escape (`\\x1b`), so that a name in a file cannot drive the user's terminal."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def picture_controls(text: str) -> str:
    """A quoted source line with each control character shown as one visible cell (its
    Unicode control picture, or U+FFFD), so that a caret under it still lines up."""
    def picture(m: re.Match) -> str:
        code = ord(m.group())
        if code < 0x20:
            return chr(0x2400 + code)
        return "\u2421" if code == 0x7F else "\ufffd"
    return _CONTROL.sub(picture, text)


__all__ = ["plural", "escape_controls", "picture_controls"]
