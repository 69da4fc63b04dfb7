"""The translation catalogs: extract the strings of the code, merge them into the catalogs,
compile the catalogs, and check that code and catalogs agree (docs/i18n.md).

    python3 scripts/i18n.py extract   # rvmdbg/locale/rvmdbg.pot from every _(), N_(), ngettext(),
                                      # and pgettext(), npgettext(), NP_() with their context
    python3 scripts/i18n.py update    # merge the template into each .po (new msgids empty, gone ones dropped)
    python3 scripts/i18n.py compile   # each .po to its .mo (the package ships both)
    python3 scripts/i18n.py check     # exit 1 on a missing, empty, fuzzy or stale entry, or an old .mo

Needs Babel (the `test` extra). The extraction is pybabel's (`pybabel extract -F babel.cfg`
gives the same template); the tests call these functions.
"""
from __future__ import annotations

import datetime
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rvmdbg"
LOCALE = PACKAGE / "locale"
TEMPLATE = LOCALE / "rvmdbg.pot"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2),
            "npgettext": ((1, "c"), 2, 3), "NP_": ((1, "c"), 2)}
FIXED_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def languages() -> list[str]:
    return sorted(p.parent.parent.name for p in LOCALE.glob("*/LC_MESSAGES/rvmdbg.po"))


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / "rvmdbg.po"


def extract():
    """A Babel catalog of every msgid marked in the package's code."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir
    catalog = Catalog(project="rvmdbg", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
            str(PACKAGE), method_map=[("**.py", "python")], keywords=KEYWORDS,
            comment_tags=("i18n:",), strip_comment_tags=True):
        catalog.add(message, None, [(f"rvmdbg/{filename}", lineno)],
                    auto_comments=comments, context=context)
    return catalog


def read_po(lang: str):
    from babel.messages.pofile import read_po as _read
    with open(po_path(lang), "rb") as f:
        return _read(f, locale=lang)


def write_po(catalog, path: Path) -> None:
    from babel.messages.pofile import write_po as _write
    # no line numbers and fixed dates: a catalog changes only where its strings change, so
    # that branches adding strings merge without conflicts on every entry
    catalog.creation_date = catalog.revision_date = FIXED_DATE
    catalog.fuzzy = False
    buf = io.BytesIO()
    _write(buf, catalog, width=100, omit_header=False, sort_output=True, no_location=True,
           include_previous=False, ignore_obsolete=True)
    path.write_bytes(buf.getvalue())


def mo_bytes(catalog) -> bytes:
    from babel.messages.mofile import write_mo
    buf = io.BytesIO()
    write_mo(buf, catalog)
    return buf.getvalue()


def _key(message):
    """What names an entry in the messages below: its msgid, `context|msgid` with a context."""
    msgid = message.id if isinstance(message.id, str) else message.id[0]
    return f"{message.context}|{msgid}" if message.context else msgid


def problems(lang: str) -> list[str]:
    """What is wrong between the code and one catalog (empty when they agree)."""
    template = extract()
    catalog = read_po(lang)
    wanted = {_key(m) for m in template if m.id}
    have = {_key(m): m for m in catalog if m.id}
    out = []
    for msgid in sorted(wanted - set(have)):
        out.append(f"missing in {lang}: {msgid!r}")
    for msgid in sorted(set(have) - wanted):
        out.append(f"stale in {lang} (no longer in the code): {msgid!r}")
    for msgid in sorted(wanted & set(have)):
        m = have[msgid]
        strings = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
        if not all(strings):
            out.append(f"untranslated in {lang}: {msgid!r}")
        elif m.fuzzy:
            out.append(f"fuzzy in {lang}: {msgid!r}")
    mo = po_path(lang).with_suffix(".mo")
    if not mo.exists() or mo.read_bytes() != mo_bytes(catalog):
        out.append(f"{mo.relative_to(ROOT)} is not compiled from its .po: run scripts/i18n.py compile")
    return out


def main(argv: list[str]) -> int:
    what = argv[0] if argv else "check"
    if what == "extract":
        write_po(extract(), TEMPLATE)
        print(f"wrote {TEMPLATE.relative_to(ROOT)}")
    elif what == "update":
        template = extract()
        for lang in languages():
            catalog = read_po(lang)
            catalog.update(template, no_fuzzy_matching=True)
            write_po(catalog, po_path(lang))
            print(f"updated {po_path(lang).relative_to(ROOT)}")
    elif what == "compile":
        for lang in languages():
            mo = po_path(lang).with_suffix(".mo")
            mo.write_bytes(mo_bytes(read_po(lang)))
            print(f"wrote {mo.relative_to(ROOT)}")
    elif what == "check":
        found = [p for lang in languages() for p in problems(lang)]
        print("\n".join(found) or "catalogs agree with the code")
        return 1 if found else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
