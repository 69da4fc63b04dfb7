"""`rvmdbg serve`: the command each browser tab runs, where the server listens, the warning of a
public bind, the errors reported before serving, and a real server that answers HTTP and a
websocket on a free port and stops on SIGINT. (The page in a real browser:
tests/browser/test_serve_browser.py.)"""
from __future__ import annotations

import asyncio
import io
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rvmdbg import cli, serve

ROOT = Path(__file__).resolve().parents[1]
SUM_UP = str(ROOT / "programs" / "sum_up.relay")
HEADER = '#[version = "0.0.5"]\n'


def parse(*argv: str):
    return cli.parse_command_line(["serve", *argv])


def rvmdbg(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, out, err


@pytest.fixture
def no_server(monkeypatch):
    """The server never starts: the test fails if the command gets that far."""
    def refuse(*a, **kw):
        pytest.fail("the server was started")
    monkeypatch.setattr(serve, "make_server", refuse)


@pytest.fixture
def fake_server(monkeypatch):
    """Records what the server would have been made with, and serves nothing."""
    made = {}

    class Server:
        def serve(self):
            made["announce"]()

    def make(command, host, port, title, announce=None, max_tabs=serve.DEFAULT_MAX_TABS):
        made.update(command=command, host=host, port=port, title=title, announce=announce,
                    max_tabs=max_tabs)
        return Server()
    monkeypatch.setattr(serve, "make_server", make)
    return made


# ---------------------------------------------------------------------------- the tab's command

def test_the_tab_runs_the_screen_on_the_program_and_its_args():
    argv = serve.child_argv(parse(SUM_UP, "7"))
    assert argv[:4] == [sys.executable, "-m", "rvmdbg", "screen"]
    assert argv[-2:] == [SUM_UP, "7"]
    assert "--port" not in argv and "--host" not in argv and "--public" not in argv


def test_the_screen_options_given_are_passed_on_and_read_back_the_same():
    ns = parse(SUM_UP, "-3", "--keys", "my keys.conf", "--max-steps", "1_000", "--history-mb", "64",
               "--entry", "sum_up", "--no-mouse", "--ascii", "--inputs", "x.npz",
               "--port", "9000", "--public")
    argv = serve.child_argv(ns)
    back = cli.parse_command_line(argv[3:])  # what the tab's `python -m rvmdbg` parses
    assert back.command == "screen"
    for name in ("program", "args", "keys", "max_steps", "history_mb", "entry", "no_mouse",
                 "ascii", "inputs", "max_depth", "max_bytes"):
        assert getattr(back, name) == getattr(ns, name), name
    assert back.args == ["-3"] and back.max_steps == 1000


def test_options_left_at_their_default_are_not_written_out():
    argv = serve.child_argv(parse(SUM_UP))
    # a browser draws Unicode whatever the server's locale: --unicode unless --ascii
    assert argv[4:] == ["--unicode", SUM_UP]
    assert "--ascii" in serve.child_argv(parse(SUM_UP, "--ascii"))


def test_the_shell_command_quotes_every_word():
    ns = parse("my prog; rm -rf $(x).relay", "Cons(1, Nil)")
    command = serve.child_command(ns)
    assert shlex.split(command) == serve.child_argv(ns)


# ---------------------------------------------------------------------------- where it listens

@pytest.mark.parametrize("argv, host", [([], "127.0.0.1"), (["--public"], "0.0.0.0"),
                                        (["--host", "::1"], "::1"),
                                        (["--public", "--host", "10.0.0.5"], "10.0.0.5")])
def test_the_address_listened_on(argv, host):
    assert serve.listen_host(parse(SUM_UP, *argv)) == host


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.8.0.1", True),
                                            ("::1", True), ("[::1]", True), ("localhost", True),
                                            ("0.0.0.0", False), ("10.0.0.5", False),
                                            ("example.org", False), ("::", False)])
def test_loopback_addresses(host, loopback):
    assert serve.is_loopback(host) is loopback


def test_serving_prints_the_url_and_no_warning_on_loopback(capsys, fake_server):
    code, out, err = rvmdbg(capsys, "serve", SUM_UP, "--port", "8123")
    assert code == 0
    assert "http://127.0.0.1:8123" in out and "warning" not in err
    assert (fake_server["host"], fake_server["port"]) == ("127.0.0.1", 8123)
    assert shlex.split(fake_server["command"])[-1] == SUM_UP


def test_a_public_bind_warns_that_anyone_can_run_programs(capsys, fake_server):
    code, out, err = rvmdbg(capsys, "serve", SUM_UP, "--public")
    assert code == 0 and fake_server["host"] == "0.0.0.0"
    assert "warning" in err and "0.0.0.0:8000" in err and "anyone" in err and "run programs" in err
    code, _, err = rvmdbg(capsys, "serve", SUM_UP, "--host", "192.168.1.9")
    assert "warning" in err and "192.168.1.9" in err


# ---------------------------------------------------------------------------- errors first

def test_a_missing_program_is_reported_before_serving(capsys, no_server):
    code, _, err = rvmdbg(capsys, "serve", "no/such.relay")
    assert code == 2 and "no/such.relay" in err and "not found" in err


def test_a_parse_error_is_located_before_serving(capsys, no_server, tmp_path):
    path = tmp_path / "bad.relay"
    path.write_text(HEADER + "def @main() -> int32 {\n  1 +\n}\n", encoding="utf-8")
    code, _, err = rvmdbg(capsys, "serve", path)
    assert code == 2 and re.search(r"bad\.relay:\d+:\d+: error:", err) and "^" in err


def test_the_same_message_as_the_screen_gives(capsys, no_server, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the screen reads commands piped in
    path = tmp_path / "bad.relay"
    path.write_text(HEADER + "def @main(%x: int32) -> int32 {\n  add(%x, 1f)\n}\n",
                    encoding="utf-8")
    served = rvmdbg(capsys, "serve", path)
    screen = rvmdbg(capsys, "screen", path)
    assert served[0] == screen[0] == 2 and served[2] == screen[2]


def test_a_bad_argument_is_reported_before_serving(capsys, no_server):
    code, _, err = rvmdbg(capsys, "serve", SUM_UP, "[1")
    assert code == 2 and "argument 1" in err
    code, _, err = rvmdbg(capsys, "serve", SUM_UP, "1", "2")
    assert code == 2 and "argument" in err


def test_a_bad_keys_file_and_a_bad_port_are_reported_before_serving(capsys, no_server, tmp_path):
    keys = tmp_path / "keys.conf"
    keys.write_text("no_such_binding = x\n", encoding="utf-8")
    code, _, err = rvmdbg(capsys, "serve", SUM_UP, "--keys", keys)
    assert code == 2 and "keys.conf:1" in err
    for port in ("0", "70000"):
        code, _, err = rvmdbg(capsys, "serve", SUM_UP, "--port", port)
        assert code == 2 and "--port" in err


# ---------------------------------------------------------------------------- a real server

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(*argv: str) -> tuple[subprocess.Popen, str]:
    """`rvmdbg serve ARGV` on a free port, once it says it listens: (process, URL)."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "rvmdbg", "serve", *argv, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = read_line_within(proc, 60)
    match = re.search(r"http://\S+:\d+", line)
    assert match, f"no URL in {line!r}; stderr: {proc.stderr.read() if proc.poll() else ''}"
    return proc, match.group(0)


def read_line_within(proc: subprocess.Popen, seconds: float) -> str:
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not got:
        proc.kill()
        pytest.fail(f"rvmdbg serve printed no line in {seconds} s")
    return got[0]


def stop_server(proc: subprocess.Popen) -> tuple[int, str]:
    """SIGINT (again: a second Ctrl+C while it stops changes nothing), then its exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("rvmdbg serve did not stop on SIGINT")
    return proc.returncode, err


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")


def descendants(pid: int) -> set[int]:
    """The processes below `pid` (read from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else []:
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


async def refusals(url: str) -> None:
    import aiohttp
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "/") as page:
            assert page.status == 200
            body = await page.text()
            assert url.replace("http", "ws") + "/ws" in body and "sum_up.relay" in body
        # DNS rebinding: a page under another name that points at 127.0.0.1
        async with http.get(url + "/", headers={"Host": "evil.example"}) as page:
            assert page.status == 403
        # another site's page opening the websocket
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(url + "/ws", headers={"Origin": "http://evil.example"})
        assert refused.value.status == 403


async def open_tab_then_stop(proc: subprocess.Popen, url: str) -> tuple[str, set[int]]:
    """Connect as the page does, collect the terminal output until a stop line shows, then
    SIGINT the server with the tab open and wait until it closes the tab: (the first frame's
    text, the processes the tab started)."""
    import aiohttp
    text = ""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url.replace("http", "ws") + "/ws?width=120&height=36",
                                   headers={"Origin": url}) as ws:
            async for message in ws:
                if message.type == aiohttp.WSMsgType.BINARY:
                    text += ANSI.sub("", message.data.decode("utf-8", "replace"))
                    if re.search(r"\[step \d+\]", text):
                        break
            tab = descendants(proc.pid)
            proc.send_signal(signal.SIGINT)
            async for _ in ws:  # until the server closes the tab
                pass
    return text, tab


def test_the_server_answers_http_and_a_tab_and_stops_with_the_tab_on_sigint():
    proc, url = start_server(SUM_UP)
    try:
        asyncio.run(refusals(url))
        frame, tab = asyncio.run(asyncio.wait_for(open_tab_then_stop(proc, url), 90))
        assert "[step 0] @main pc=0" in frame and "sum_up.relay" in frame
        assert tab or not Path("/proc/self/stat").exists(), "the tab started no process"
    finally:
        code, err = stop_server(proc)
    assert code == 0 and "Traceback" not in err, err
    # the tab's screen (and the shell textual-serve started it with) ended with the server
    assert not {pid for pid in tab if Path(f"/proc/{pid}").exists()}


def test_a_port_in_use_is_an_error_not_a_traceback():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-m", "rvmdbg", "serve", SUM_UP, "--port", str(port)],
                             capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr



async def full_and_fenced(url: str) -> None:
    """With --max-tabs 1 and one tab open: the page and a second websocket get the refusal;
    /static and /download answer only the server's own name (issue 29, item 14)."""
    import aiohttp
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "/static/", headers={"Host": "evil.example"}) as page:
            assert page.status == 403
        async with http.get(url + "/download/abc", headers={"Host": "evil.example"}) as page:
            assert page.status == 403
        async with http.get(url + "/static/") as page:
            assert page.status == 200
        async with http.ws_connect(url.replace("http", "ws") + "/ws?width=80&height=24",
                                   headers={"Origin": url}) as ws:
            async for message in ws:  # the tab's screen is up
                if message.type == aiohttp.WSMsgType.BINARY:
                    break
            async with http.get(url + "/") as page:
                assert page.status == 503
                assert "--max-tabs" in await page.text()
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(url + "/ws", headers={"Origin": url})
            assert refused.value.status == 503


def test_tabs_past_max_tabs_get_a_page_and_every_path_checks_the_host():
    proc, url = start_server(SUM_UP, "--max-tabs", "1")
    try:
        asyncio.run(asyncio.wait_for(full_and_fenced(url), 90))
    finally:
        code, err = stop_server(proc)
    assert code == 0 and "Traceback" not in err, err


def test_max_tabs_is_passed_on_and_checked(capsys, fake_server):
    assert cli.main(["serve", SUM_UP, "--max-tabs", "3"]) == 0
    assert fake_server["max_tabs"] == 3
    assert cli.main(["serve", SUM_UP]) == 0
    assert fake_server["max_tabs"] == serve.DEFAULT_MAX_TABS
    capsys.readouterr()
    assert cli.main(["serve", SUM_UP, "--max-tabs", "0"]) == 2
    assert "--max-tabs 0" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads Linux's /proc")
def test_the_server_sees_its_screens_still_running():
    # it waits for them to end before the loop closes, so their transports close in time
    from rvmdbg.serve import _has_children
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _has_children()
    finally:
        child.kill()
        child.wait()
    alone = subprocess.run([sys.executable, "-c",
                            "from rvmdbg.serve import _has_children; print(_has_children())"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert alone.stdout.strip() == "False", alone.stderr
