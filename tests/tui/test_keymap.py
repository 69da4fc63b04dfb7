"""Rebinding keys: the keys file's syntax, its located errors, and a rebound key on screen."""
from __future__ import annotations

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
