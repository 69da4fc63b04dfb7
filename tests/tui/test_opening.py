"""Opening programs: arguments from the command line, the `// args:` line or the form; saved
executables with and without source; ASCII glyphs; small terminals."""
from __future__ import annotations

import re

import numpy as np

from rvmdbg.tui.args_modal import ArgumentsModal
from rvmdbg.tui.listing import BytecodeListing
from rvmdbg.tui.program import ProgramLoadError, load_program, load_program_kept
from rvmdbg.tui.screen import DebuggerScreen

import pytest

from conftest import ROOT, settle, wait_for

TWO = "tests/tui/programs/two_params.relay"


async def test_missing_arguments_open_a_form_that_validates(app_factory):
    app = app_factory(TWO)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsModal), "the form")
        assert app.session is None
        labels = [str(w.render()) for w in app.screen.query(".dialog--label")]
        assert labels == ["%xs: List[int32]", "%k: int32"]
        await pilot.press(*"Cons(1, Cons(2, Nil))", "enter")   # moves on to %k
        await pilot.press(*"abc", "enter")
        error = app.screen.query_one("#args-error")
        await wait_for(pilot, lambda: "argument 2" in str(error.render()), "the reason")
        assert isinstance(app.screen, ArgumentsModal)
        await pilot.press(*["backspace"] * 3, "3", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DebuggerScreen)
        assert app.session is not None
        await pilot.press("c")
        await settle(app, pilot)
        assert "returned Cons(3, Cons(6, Nil))" in app.screen.status.stop_text


async def test_a_partial_command_line_prefills_the_form(app_factory):
    app = app_factory(TWO, ["Cons(4, Nil)"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsModal)
                       and app.focused is app.screen.query_one("#arg-1"),
                       "the form, with the first missing argument focused")
        assert app.screen.query_one("#arg-0").value == "Cons(4, Nil)"
        await pilot.press("2", "enter")
        await settle(app, pilot)
        assert app.session is not None


async def test_bad_arguments_on_the_command_line_show_in_the_form(app_factory):
    app = app_factory("programs/sum_up.relay", ["Cons(1, Nil)"])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ArgumentsModal)
        assert "argument 1" in str(app.screen.query_one("#args-error").render())


async def test_quitting_the_form_exits(app_factory):
    app = app_factory(TWO)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsModal), "the form")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.return_code == 2, "the exit")


def _saved(tmp_path, keep_source: bool):
    from rvmdbg.vm import serialize
    prog = load_program(str(ROOT / "programs" / "sum_up.relay"))
    exe = prog.exe
    if not keep_source:
        exe = serialize.loads(serialize.dumps(exe))
        exe.source_text = None
        exe.source_name = None
    path = tmp_path / ("with_source.rvmx" if keep_source else "bare.rvmx")
    serialize.save(exe, str(path))
    return str(path)


async def test_a_saved_executable_without_source_shows_the_listing_only(tmp_path):
    from rvmdbg.tui.app import DebuggerApp
    program = load_program(_saved(tmp_path, keep_source=False))
    assert program.saved and program.module is None and program.source_text is None
    app = DebuggerApp(program, ["5"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert not screen.query("#source")
        assert screen.pane_ids() == ["listing", "registers", "stack", "heap", "breakpoints"]
        screen.action_focus_pane("source")
        await pilot.pause()
        assert "no source" in screen.status.message
        await pilot.press("c")
        await settle(app, pilot)
        assert "returned 15" in screen.status.stop_text


async def test_a_saved_executable_with_source_gets_its_types_back(tmp_path):
    from rvmdbg.tui.app import DebuggerApp
    program = load_program(_saved(tmp_path, keep_source=True))
    assert program.module is not None and program.default_args == ["100"]
    app = DebuggerApp(program, [], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.screen.query("#source")
        assert app.session is not None


def test_load_errors_are_located_messages(tmp_path):
    bad = tmp_path / "bad.relay"
    bad.write_text('#[version = "0.0.5"]\ndef @main() -> int32 {\n  1 +\n}\n')
    with pytest.raises(ProgramLoadError) as info:
        load_program(str(bad))
    assert re.search(r"bad\.relay:\d+:\d+: error", info.value.message)
    junk = tmp_path / "junk.rvmx"
    junk.write_bytes(b"not an executable")
    with pytest.raises(ProgramLoadError):
        load_program(str(junk))
    with pytest.raises(ProgramLoadError) as info:
        load_program(str(ROOT / "programs" / "sum_up.relay"), entry="nope")
    assert "no function @nope" in info.value.message


async def test_ascii_mode_draws_no_box_characters(app_factory):
    app = app_factory("programs/bst.relay", ascii_only=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.session.breakpoints.add("@insert:18")
        await pilot.press("c")
        await settle(app, pilot)
        text = app.export_screenshot()
        # the text content of the screen: every cell drawn in 7-bit ASCII
        cells = re.findall(r">([^<]*)</text>", text)
        drawn = "".join(cells).replace("&#160;", " ").replace("&amp;", "&") \
            .replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#x27;", "'")
        assert drawn and all(ord(c) < 128 for c in drawn), sorted({c for c in drawn if ord(c) >= 128})


async def test_small_and_large_terminals(app_factory):
    app = app_factory("programs/sum_up.relay")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.has_class("-narrow")
        listing = screen.query_one("#listing", BytecodeListing)
        assert listing.display and listing.size.width >= 40
        await pilot.resize_terminal(160, 48)
        await wait_for(pilot, lambda: screen.has_class("-wide"), "the wide layout")
        assert all(screen.query_one(f"#{p}").display for p in screen.pane_ids())
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: screen.has_class("-stacked"), "the stacked layout")


def test_the_command_line_opens_the_screen(monkeypatch, capsys):
    """`rvmdbg PROGRAM ARG --no-mouse --ascii --entry main` reaches the app with those settings
    (App.run is replaced: there is no terminal here)."""
    from rvmdbg import cli
    from rvmdbg.tui.app import DebuggerApp
    seen = {}

    def fake_run(self, *args, mouse=True, **kwargs):
        seen.update(mouse=mouse, ascii=self.ascii_only, args=self.arg_texts,
                    entry=self.program.entry, name=self.program.name)
        return 0

    monkeypatch.setattr(DebuggerApp, "run", fake_run)
    monkeypatch.setattr(cli, "_commands_without_terminal", lambda: None)  # "a terminal"
    monkeypatch.setattr("gc.freeze", lambda: None)  # keep this test process collectable
    monkeypatch.chdir(ROOT)
    code = cli.main(["programs/sum_up.relay", "7", "--no-mouse", "--ascii", "--entry", "main"])
    assert code == 0
    assert seen == {"mouse": False, "ascii": True, "args": ["7"], "entry": "main",
                    "name": "sum_up.relay"}
    code = cli.main(["programs/missing.relay"])
    assert code == 2 and "not found" in capsys.readouterr().err


def test_the_screen_loads_its_program_with_the_collector_paused_then_frozen(monkeypatch):
    """run_screen's load: no cyclic collection while loading, a freeze before the collector
    is back on (as it was), and the same program as load_program; a bad program still fails
    as it does there, with the collector back on."""
    import gc
    events = []
    monkeypatch.setattr("gc.freeze", lambda: events.append(("freeze", gc.isenabled())))
    assert gc.isenabled()
    program = load_program_kept(str(ROOT / "programs/sum_up.relay"))
    assert events == [("freeze", False)] and gc.isenabled()
    plain = load_program(str(ROOT / "programs/sum_up.relay"))
    assert [f.instructions for f in program.exe.functions] == \
        [f.instructions for f in plain.exe.functions]
    with pytest.raises(ProgramLoadError):
        load_program_kept(str(ROOT / "programs/missing.relay"))
    assert gc.isenabled() and len(events) == 1


async def test_inputs_archive_binds_by_name_and_fills_the_form(app_factory, tmp_path):
    # `rvmdbg two_params.relay --inputs k.npz`: %k comes from the archive, %xs is asked for
    archive = tmp_path / "k.npz"
    np.savez(archive, k=np.array(3, dtype=np.int32))
    program = load_program(str(ROOT / TWO))
    with pytest.raises(Exception, match="no value for %xs"):
        program.bind_inputs([], str(archive))
    texts = program.bind_inputs(["Cons(1, Cons(2, Nil))"], str(archive))
    assert texts == ["Cons(1, Cons(2, Nil))", f"@{archive}:k"]
    app = app_factory(TWO, texts)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.session is not None
        await pilot.press("c")
        await settle(app, pilot)
        assert "returned Cons(3, Cons(6, Nil))" in app.screen.status.stop_text


async def test_the_form_takes_an_archive_member_and_a_tuple(app_factory, tmp_path):
    archive = tmp_path / "in.npz"
    np.savez(archive, k=np.array(5, dtype=np.int64))
    app = app_factory(TWO, ["Cons(2, Nil)"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsModal)
                       and app.focused is app.screen.query_one("#arg-1"), "the form")
        await pilot.press(*f"@{archive}:kk", "enter")
        error = app.screen.query_one("#args-error")
        await wait_for(pilot, lambda: str(error.render()).strip(), "the reason")
        assert "has no array named kk; did you mean k?" in str(error.render())
        await pilot.press("backspace", "enter")
        await settle(app, pilot)
        assert app.session is not None
        await pilot.press("c")
        await settle(app, pilot)
        assert "returned Cons(10, Nil)" in app.screen.status.stop_text
