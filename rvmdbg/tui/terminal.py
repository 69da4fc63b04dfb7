"""What the terminal and its environment allow, decided before the screen opens.

`environment_error(env)` checks the environment settings Textual reads (an unknown value of
TEXTUAL_COLOR_SYSTEM used to end in a traceback from deep inside Rich) and names the valid
values. `wants_ascii(env)` says when to draw with the ASCII glyph set without being asked:
where the locale's character set is not UTF-8, or on the Linux console, whose font has no
box-drawing arcs, triangles or braille.
"""
from __future__ import annotations

from typing import Mapping

# variable -> its valid values (lower case), as Textual 8 and Rich read them
CHOICES: dict[str, tuple[str, ...]] = {
    "TEXTUAL_COLOR_SYSTEM": ("auto", "standard", "256", "truecolor", "windows"),
    "TEXTUAL_ANIMATIONS": ("none", "basic", "full"),
}


def _theme_names() -> tuple[str, ...]:
    from textual.theme import BUILTIN_THEMES
    return tuple(BUILTIN_THEMES)


def environment_error(env: Mapping[str, str]) -> str | None:
    """A one-line error naming the setting and its valid values, or None when all is well."""
    for name, valid in CHOICES.items():
        value = env.get(name)
        if value is not None and value.strip().lower() not in valid:
            hint = " (16 colours is `standard`)" if name == "TEXTUAL_COLOR_SYSTEM" else ""
            return (f"error: {name}={value!r} is not a valid value; use one of "
                    f"{', '.join(valid)}{hint}")
    themes = env.get("TEXTUAL_THEME")
    if themes:
        known = _theme_names()
        for theme in themes.split(","):
            if theme.strip() and theme.strip() not in known:
                return (f"error: TEXTUAL_THEME={themes!r}: no theme {theme.strip()!r}; use one "
                        f"of {', '.join(known)}")
    delay = env.get("ESCDELAY")
    if delay is not None and not (delay.strip().isdigit() and int(delay) >= 1):
        return f"error: ESCDELAY={delay!r} is not a valid value; use a whole number of ms, 1 or more"
    return None


def colour_classes(env: Mapping[str, str]) -> list[str]:
    """The screen's classes for the colours the terminal gets: `-ansi16` for 16 colours
    (TEXTUAL_COLOR_SYSTEM=standard), `-no-color` under NO_COLOR (any value, as no-color.org
    says)."""
    classes = []
    if env.get("TEXTUAL_COLOR_SYSTEM", "").strip().lower() == "standard":
        classes.append("-ansi16")
    if "NO_COLOR" in env:
        classes.append("-no-color")
    return classes


def locale_is_utf8(env: Mapping[str, str]) -> bool:
    """Whether the locale's character set is UTF-8: the first of LC_ALL, LC_CTYPE and LANG
    that is set decides, as in C's setlocale; none set is the C locale."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = env.get(name)
        if value:
            charset = value.split(".", 1)[1] if "." in value else ""
            charset = charset.split("@", 1)[0].lower().replace("-", "")
            return charset == "utf8"
    return False


def wants_ascii(env: Mapping[str, str]) -> bool:
    """Draw with ASCII: the locale is not UTF-8, or the terminal is the Linux console."""
    return env.get("TERM") == "linux" or not locale_is_utf8(env)


__all__ = ["environment_error", "locale_is_utf8", "wants_ascii", "colour_classes", "CHOICES"]
