"""The one place where rvmdbg's words are translated: `_`, `ngettext`, `N_` and the choice
of language.

Strings go through gettext: `rvmdbg/locale/<lang>/LC_MESSAGES/rvmdbg.po`, compiled to the
`.mo` beside it (both are in the package; `scripts/i18n.py compile` rebuilds the .mo).
English is the source language and needs no catalog. The language is chosen once, early, by
the command line (`--lang zh_CN|en`) or, without it, by the environment as gettext does: the
first non-empty of LANGUAGE, LC_ALL, LC_MESSAGES, LANG (LANGUAGE may list several, `a:b`);
a value starting with `zh` is Simplified Chinese, anything else English.

Strings in class bodies (Textual `BINDINGS`, tables built at import time) are marked with
`N_` and translated with `_` where they are shown, so that switching the language in one
process (tests) changes them too. This module never imports Textual: the engine uses it.

A word that means two things in English ("Next": step over, the next question) takes a
context, as gettext's `msgctxt`: `pgettext("quiz", "Next")`, `npgettext(...)`, and in a class
body `NP_("quiz", "Next")`, a str that carries its context so that `_()` where it is shown
looks it up in that context.

`record_missing()` turns on a recording fallback: every msgid looked up while a catalog is
active that has no translation in it is collected (the catalog tests assert there are none).
"""
from __future__ import annotations

import gettext
import os
from pathlib import Path
from typing import Mapping

DOMAIN = "rvmdbg"
LOCALE_DIR = Path(__file__).parent / "locale"
LANGUAGES = ("en", "zh_CN")
ENV_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


class _Recorder(gettext.NullTranslations):
    """The last fallback of a catalog: returns the English and notes the msgid as missing."""

    def __init__(self) -> None:
        super().__init__()
        self.missing: set[str] | None = None

    def gettext(self, message: str) -> str:
        if self.missing is not None:
            self.missing.add(message)
        return message

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        if self.missing is not None:
            self.missing.add(msgid1)
        return msgid1 if n == 1 else msgid2

    def pgettext(self, context: str, message: str) -> str:
        if self.missing is not None:
            self.missing.add(f"{context}|{message}")
        return message

    def npgettext(self, context: str, msgid1: str, msgid2: str, n: int) -> str:
        if self.missing is not None:
            self.missing.add(f"{context}|{msgid1}")
        return msgid1 if n == 1 else msgid2


class Contextual(str):
    """A marked string with its gettext context (`NP_`): `_()` translates it in context."""

    context: str

    def __new__(cls, context: str, message: str) -> "Contextual":
        self = super().__new__(cls, message)
        self.context = context
        return self


_recorder = _Recorder()
_translations: gettext.NullTranslations = gettext.NullTranslations()
_language = "en"


def language_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, by gettext's precedence: the first non-empty
    of LANGUAGE, LC_ALL, LC_MESSAGES, LANG decides; in a LANGUAGE list (`fr:zh_CN`) the
    first entry rvmdbg has (English for C and POSIX)."""
    env = os.environ if environ is None else environ
    for var in ENV_VARIABLES:
        value = env.get(var, "")
        if not value:
            continue
        for entry in value.split(":"):
            lang = _known(entry)
            if lang is not None:
                return lang
        return "en"
    return "en"


def _known(entry: str) -> str | None:
    """`zh_CN.UTF-8`, `zh` or `zh_TW` -> zh_CN; `en_GB`, `C`, `POSIX` -> en; else None."""
    code = entry.strip().split(".")[0].split("@")[0]
    if code.lower().startswith("zh"):
        return "zh_CN"
    if code.lower().startswith("en") or code in ("C", "POSIX"):
        return "en"
    return None


def normalize(lang: str) -> str:
    """A --lang value as one of LANGUAGES; ValueError for one rvmdbg has no catalog for."""
    known = _known(lang)
    if known is None:
        raise ValueError(f"unknown language {lang!r} (choose from {', '.join(LANGUAGES)})")
    return known


def set_language(lang: str) -> str:
    """Translate from now on into `lang` (`en`, `zh_CN`, or what normalize accepts)."""
    global _translations, _language
    lang = normalize(lang)
    if lang == "en":
        _translations = gettext.NullTranslations()
    else:
        with open(LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo", "rb") as f:
            _translations = gettext.GNUTranslations(f)
        _translations.add_fallback(_recorder)
    _language = lang
    return lang


def setup(lang: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """Choose the language once at start: `lang` (the --lang option) or the environment's."""
    return set_language(lang if lang else language_from_env(environ))


def language() -> str:
    """The language in use: `en` or `zh_CN`."""
    return _language


def is_chinese() -> bool:
    return _language == "zh_CN"


def _(message: str) -> str:
    """`message` in the language in use (in its context when `NP_` marked it)."""
    if type(message) is Contextual:
        return _translations.pgettext(message.context, message)
    return _translations.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for a count `n` in the language in use."""
    return _translations.ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """`message` as meant in `context` ("quiz"), in the language in use."""
    return _translations.pgettext(context, message)


def npgettext(context: str, singular: str, plural: str, n: int) -> str:
    """The form for a count `n` of a message meant in `context`."""
    return _translations.npgettext(context, singular, plural, n)


def N_(message: str) -> str:
    """Marks a string for the catalog where it cannot be translated yet (a class body):
    it is translated with `_` where it is shown."""
    return message


def NP_(context: str, message: str) -> str:
    """`N_` with a context: the English `message`, carrying `context` for `_()` to use."""
    return Contextual(context, message)


def record_missing() -> set[str]:
    """Start collecting msgids looked up without a translation; returns the live set."""
    _recorder.missing = set()
    return _recorder.missing


def stop_recording() -> None:
    _recorder.missing = None


__all__ = ["DOMAIN", "LANGUAGES", "LOCALE_DIR", "NP_", "N_", "_", "Contextual", "is_chinese",
           "language", "language_from_env", "ngettext", "normalize", "npgettext", "pgettext",
           "record_missing", "set_language", "setup", "stop_recording"]
