"""Shared set-up for the screen's tests: one app factory used by Pilot and snapshot tests.

Programs are loaded once per test session (compiling is the slow part) and given by a path
relative to the repository root, so nothing absolute reaches the screen. Every app gets its
own config directory, so saved breakpoints never leak between tests or into the user's.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

_programs: dict = {}


def program(path: str):
    """A loaded program by repository-relative path (cached: programs are not mutated)."""
    from rvmdbg.tui.program import load_program
    if path not in _programs:
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            _programs[path] = load_program(path)
        finally:
            os.chdir(cwd)
    return _programs[path]


def make_app(path: str, args=None, config_dir=None, **kwargs):
    from rvmdbg.tui.app import DebuggerApp
    return DebuggerApp(program(path), args or [], config_dir=config_dir, **kwargs)


async def settle(app, pilot) -> None:
    """Wait until the session has started (or the arguments form is up), any run in the
    worker thread has finished, and its stop is on screen."""
    from textual.screen import ModalScreen
    for _ in range(200):
        if app.session is not None or isinstance(app.screen, ModalScreen) or app._exit:
            break
        await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


@pytest.fixture
def app_factory(tmp_path):
    def factory(path: str, args=None, **kwargs):
        return make_app(path, args, config_dir=str(tmp_path / "config"), **kwargs)
    return factory


def screen_of(app):
    """The debugger screen (under any view or modal pushed over it)."""
    return app.screen_stack[0]


async def press(app, pilot, *keys):
    """Press the keys, then wait until the screen has settled."""
    for key in keys:
        await pilot.press(key)
    await settle(app, pilot)


async def set_scene(app, pilot, breakpoints=(), keys=()):
    """Settle, add the breakpoints (shown in their pane), then press the keys one by one."""
    await settle(app, pilot)
    for spec in breakpoints:
        app.session.breakpoints.add(spec)
    screen_of(app).refresh_breakpoints()
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


async def wait_for(pilot, condition, what: str = "the condition", timeout: float = 30.0) -> None:
    """Let the app run until `condition()` holds (a test never waits a fixed time: under load
    a fixed pause is too short). A condition that queries a widget not mounted yet does not
    hold yet. Fails after `timeout` seconds with `what`."""
    import asyncio
    import time

    from textual.css.query import NoMatches

    def holds() -> bool:
        try:
            return bool(condition())
        except NoMatches:  # e.g. a modal on screen before its fields are mounted (seen under load)
            return False
    deadline = time.monotonic() + timeout
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause()
        await asyncio.sleep(0.01)
