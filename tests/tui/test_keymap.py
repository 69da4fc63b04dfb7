"""Rebinding keys: the keys file's syntax, its located errors, and a rebound key on screen."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvmdbg.tui.help_screen import HelpScreen
from rvmdbg.tui.keymap import (KeymapError, bindings, canonical_key, load_keymap, parse_keymap,
                               template)

from conftest import settle

SUM_UP = "programs/sum_up.relay"


@pytest.mark.parametrize("text, key", [
    ("?", "question_mark"), ("S", "S"), ("s", "s"), ("Ctrl+R", "ctrl+r"), ("F5", "f5"),
    ("shift+F11", "shift+f11"), ("shift+tab", "shift+tab"), ("pageup", "pageup"),
    ("space", "space"), ("[", "left_square_bracket"), (" j ", "j"),
    ("", None), (" ", None), ("ctrl+", None), ("foo", None), ("hyper+hyper+a", None),
    ("cmd+a", None), ("\x01", None), ("ctrl+\x7f", None), ("\ue000", None),
])
def test_canonical_key(text, key):
    assert canonical_key(text) == key


def test_a_keys_file_with_comments_and_several_keys():
    keymap = parse_keymap("# mine\n\nstep = y, F6   # like F11\n  break = B\n", "k.conf")
    assert keymap == {"step": "y,f6", "break": "B"}


def test_the_template_is_a_valid_file_of_the_defaults():
    keymap = parse_keymap(template(), "template.conf")
    ids = {b.id for b in bindings()}
    assert set(keymap) == ids
    assert keymap["step"] == "s,f11" and keymap["help"] == "question_mark"


@pytest.mark.parametrize("text, where, message", [
    ("step y", "k.conf:1:1", "expected `binding-id = key, key`"),
    ("stepp = y", "k.conf:1:1", "unknown binding `stepp`"),
    ("step = y, foo", "k.conf:1:11", "`foo` is not a key"),
    ("step = ,y", "k.conf:1:8", "expected a key"),
    ("step = y, y", "k.conf:1:11", "`y` is listed twice"),
    ("step = y\n\nstep = z", "k.conf:3:1", "`step` was given keys already on line 1"),
    ("step = n", "k.conf:1:1", "`n` would be the key of both `step` and `next` (on the screen)"),
    ("step = b", "k.conf:1:1", "(in the bytecode pane)"),
    ("step = j", "k.conf:1:1", "(in the flow view)"),     # the views share the step binding
    ("step = ctrl+c", "k.conf:1:1", "would be the key of both"),
])
def test_mistakes_are_located(text, where, message):
    with pytest.raises(KeymapError) as info:
        parse_keymap(text, "k.conf")
    shown = info.value.format()
    assert shown.startswith(where + ": error: ") and message in shown
    assert "^" in shown  # the line, with a caret under the place


def test_default_file_and_named_file(tmp_path):
    assert load_keymap(None, tmp_path) == {}           # no keys.conf: the defaults
    (tmp_path / "keys.conf").write_text("next = y\n")
    assert load_keymap(None, tmp_path) == {"next": "y"}
    with pytest.raises(KeymapError, match="no such keys file"):
        load_keymap(tmp_path / "missing.conf")


def test_command_line_keys_and_a_bad_keys_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "rvmdbg", "keys"], capture_output=True,
                         text=True, check=True).stdout
    assert "step = s, f11" in out
    bad = tmp_path / "bad.conf"
    bad.write_text("# ok\nstep = n\n")
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", SUM_UP, "--keys", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{bad}:2:1: error: `n` would be the key of both")
    assert "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "keys", "--check", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and ":2:1: error:" in proc.stderr


async def test_a_rebound_key_steps_and_the_help_shows_it(app_factory):
    app = app_factory(SUM_UP, ["3"], keymap={"step": "y", "break": "B"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        assert app.session.step_count == 0           # s no longer steps
        await pilot.press("y")
        await settle(app, pilot)
        assert app.session.step_count == 1
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = dict((does, keys) for keys, does in app.screen.rows())
        assert rows["Step one instruction, into calls (F11)"] == "y"
        assert rows["Toggle a breakpoint on this instruction"] == "B"


async def test_the_teaching_views_follow_the_keymap(app_factory):
    from rvmdbg.tui.views.base import TeachingScreen
    app = app_factory(SUM_UP, ["3"], keymap={"step": "y", "view-flow": "V"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("V")                       # view 1, on its new key
        await pilot.pause()
        assert isinstance(app.screen, TeachingScreen)
        await pilot.press("y")                       # the views' step shares the binding
        await pilot.pause()
        await settle(app, pilot)
        assert app.session.step_count == 1


_PIECES = ["step", "break", "next", "view-flow", "=", " = ", ",", ", ", "#", "\n", " ", "y",
           "f5", "ctrl+", "shift+tab", "?", "S", "n", "foo", "\t", "é", "+", "0", "\x01",
           "\ue000"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join) | st.text(max_size=80))
def test_any_text_gives_a_keymap_or_a_located_error(text):
    try:
        keymap = parse_keymap(text, "k.conf")
    except KeymapError as exc:
        shown = exc.format()
        assert shown.startswith("k.conf:") and ": error: " in shown
        return
    ids = {b.id for b in bindings()}
    assert set(keymap) <= ids
    for keys in keymap.values():
        assert all(canonical_key(k) == k for k in keys.split(","))


# ------------------------------------------------------------------ a damaged default keys file

def test_a_damaged_default_file_keeps_its_good_lines_and_notes_the_rest(tmp_path):
    (tmp_path / "keys.conf").write_text("next = y\nstpe = q\nstep = c\nbreak = B\n")
    notes: list[str] = []
    keymap = load_keymap(None, tmp_path, notes)
    # the misspelt id and the clashing `step = n` are left out; the rest is kept
    assert keymap == {"next": "y", "break": "B"}
    assert len(notes) == 2
    assert "keys.conf:2:1: error: unknown binding `stpe`" in notes[0]
    assert "keys.conf:3:1: error: `c`" in notes[1]


def test_a_default_keys_file_with_a_byte_order_mark_is_read(tmp_path):
    (tmp_path / "keys.conf").write_bytes("\ufeffnext = y\n".encode("utf-8"))
    assert load_keymap(None, tmp_path, []) == {"next": "y"}


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "binary", "huge"])
def test_an_unreadable_default_keys_file_is_a_note_and_the_defaults(tmp_path, kind):
    path = tmp_path / "keys.conf"
    if kind == "fifo":
        os.mkfifo(path)                      # nobody writes: reading it must not hang
    elif kind == "device":
        path.symlink_to("/dev/zero")         # endless: reading it must not run out of memory
    elif kind == "directory":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(b"next = \xff\xfe\x00y\n")
    else:
        with open(path, "wb") as f:
            f.truncate(2 << 20)              # sparse: 2 MiB of NULs, past the 1 MiB limit
    notes: list[str] = []
    assert load_keymap(None, tmp_path, notes) == {}
    assert len(notes) == 1 and "cannot read the keys file" in notes[0]
    assert "the default keys are used" in notes[0]


def test_a_named_fifo_keys_file_is_a_located_error_not_a_hang(tmp_path):
    path = tmp_path / "keys.fifo"
    os.mkfifo(path)
    with pytest.raises(KeymapError, match="FIFO"):
        load_keymap(path, notes=[])          # --keys is checked strictly, notes or not


def test_escapes_in_a_keys_file_are_shown_escaped(tmp_path):
    (tmp_path / "keys.conf").write_text("\x1b[2J\x1b]0;owned\x07 = y\n")
    notes: list[str] = []
    assert load_keymap(None, tmp_path, notes) == {}
    assert notes and "\x1b" not in notes[0] and "\x07" not in notes[0]


async def test_the_screen_opens_with_a_damaged_keys_file_and_shows_the_note(app_factory,
                                                                           tmp_path):
    from rvmdbg.tui import app as app_module
    config = tmp_path / "config"
    config.mkdir()
    (config / "keys.conf").write_text("next = y\nstpe = q\n")
    notes: list[str] = []
    keymap = load_keymap(None, tmp_path / "config", notes)
    app = app_factory(SUM_UP, ["3"], keymap=keymap)
    app.notes = notes
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.session is not None and keymap == {"next": "y"}
        console = app.screen_stack[0].console
        assert console.shown
        assert any("unknown binding `stpe`" in line for line in console.output.lines)
    assert app_module.run_screen(SUM_UP, ["3"], config_dir=str(tmp_path / "config"),
                                 check_only=True) == 0
