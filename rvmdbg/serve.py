"""`rvmdbg serve PROGRAM [ARG...]`: the debugger screen in a browser, through textual-serve.

textual-serve (the Textual project's web server) starts one process per browser tab and
relays its terminal over a websocket; the process it starts is `python -m rvmdbg screen
PROGRAM ARG...` with the screen options the user gave (`child_command`), so each tab is a
debugger of its own. The program, its arguments and the screen settings are checked before
the server starts, with the messages and exit code 2 of `rvmdbg PROGRAM`.

The server binds 127.0.0.1 unless told otherwise. Its pages and websocket answer only
requests addressed to it by a loopback name when it listens on loopback (a page elsewhere
that renames itself to 127.0.0.1, DNS rebinding, is refused), and a websocket opened from
another site's page is refused always (any page may open a websocket to any address).
"""
from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import sys
from urllib.parse import urlsplit
from rvmdbg.i18n import _

DEFAULT_HOST, DEFAULT_PORT, PUBLIC_HOST = "127.0.0.1", 8000, "0.0.0.0"
LOOPBACK_NAMES = ("localhost", "localhost.")
DEFAULT_MAX_TABS = 4  # each tab is a shell and a debugger process (about 50 MB and up)
SHUTDOWN_SECONDS = 10  # for the screens of open tabs to quit once the server is stopped
# textual-serve names Textual's web driver in the environment of each process it starts
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def served_in_browser(env=os.environ) -> bool:
    """Whether this process is a screen textual-serve started: stdin and stdout are then its
    pipes, which carry the terminal, not commands for batch mode."""
    return env.get("TEXTUAL_DRIVER") == WEB_DRIVER


def add_serve_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                   help=_("the TCP port to listen on (default {port})").format(port=DEFAULT_PORT))
    p.add_argument("--host", default=None, metavar="ADDRESS",
                   help=_("the address to listen on (default {host}: this machine only)").format(
                       host=DEFAULT_HOST))
    p.add_argument("--max-tabs", type=int, default=DEFAULT_MAX_TABS, metavar="N",
                   help=_("at most N browser tabs open at once, each a debugger process; "
                          "more get a page saying so (default {n})").format(n=DEFAULT_MAX_TABS))
    p.add_argument("--public", action="store_true",
                   help=_("listen on every address ({host}): anyone who can reach the port can "
                          "run programs").format(host=PUBLIC_HOST))


def listen_host(ns: argparse.Namespace) -> str:
    """The address to bind: --host, else 0.0.0.0 with --public, else 127.0.0.1."""
    if ns.host is not None:
        return ns.host
    return PUBLIC_HOST if ns.public else DEFAULT_HOST


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name) reaches this machine only."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def screen_options(ns: argparse.Namespace, screen_parser: argparse.ArgumentParser) -> list[str]:
    """The options of `rvmdbg screen` that `ns` sets to something other than their default,
    as command-line words (so a new screen option is passed on without a change here)."""
    words: list[str] = []
    for action in screen_parser._actions:  # argparse keeps no public list of them
        if not action.option_strings or action.dest == "help":
            continue
        value = getattr(ns, action.dest, action.default)
        if value == action.default:
            continue
        flag = max(action.option_strings, key=len)  # the long form reads best in a command
        if action.nargs == 0:  # store_true / store_const: the flag whose constant it is
            if value == action.const:
                words.append(flag)
        elif isinstance(value, list):
            for item in value:
                words += [flag, str(item)]
        else:
            words += [flag, str(value)]
    return words


def child_argv(ns: argparse.Namespace) -> list[str]:
    """The command each browser tab runs: this Python, `-m rvmdbg screen`, the screen options
    given, PROGRAM and its ARGs. A browser draws Unicode whatever this machine's locale is,
    so Unicode glyphs are asked for unless --ascii was."""
    from rvmdbg.cmdline import configure_screen
    ns = argparse.Namespace(**vars(ns))
    if ns.ascii is None:
        ns.ascii = False
    screen_parser = argparse.ArgumentParser()
    configure_screen(screen_parser)  # the screen command's own options, as `cli` builds them
    options = screen_options(ns, screen_parser)
    # `--` would end the options, not start the ARGs: negative numbers read as values anyway
    return [sys.executable, "-m", "rvmdbg", "screen", *options, ns.program, *ns.args]


def child_command(ns: argparse.Namespace) -> str:
    """`child_argv` as the shell command textual-serve runs."""
    return shlex.join(child_argv(ns))


def public_warning(host: str, port: int) -> str:
    return _("warning: listening on {host}:{port}: anyone who can reach this port can open "
             "the debugger and run programs on this machine as you").format(host=host, port=port)


def check_before_serving(ns: argparse.Namespace) -> int:
    """What `rvmdbg PROGRAM` checks before its screen opens (the environment, the keys file,
    the program, --inputs), then the ARGs: errors print here, not in each browser tab."""
    from rvmdbg.cmdline import load_options_from
    from rvmdbg.tui import run_screen
    from rvmdbg.tui.program import load_program
    code = run_screen(ns.program, ns.args, entry=ns.entry.lstrip("@"), ascii_only=ns.ascii,
                      inputs=ns.inputs, keys_file=ns.keys, check_only=True,
                      missing_meta=load_options_from(ns))
    if code != 0:
        return code
    if ns.args:  # missing ones are asked for in the page, as on the screen
        program = load_program(ns.program, ns.entry.lstrip("@"), load_options_from(ns))
        program.parse_args(program.initial_arg_texts(ns.args))  # ArgumentError: exit 2
    return 0


def full_page(max_tabs: int) -> str:
    """The page a tab gets when `max_tabs` debuggers are open already."""
    text = _("This rvmdbg server already runs {n} debuggers, its limit (--max-tabs). Close "
             "another tab of it, then reload this page.").format(n=max_tabs)
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rvmdbg</title></head>"
            f"<body><p>{escaped}</p></body></html>\n")


def _has_children() -> bool:
    """Has this process a child still running? (Linux's /proc; elsewhere False: no wait.)"""
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                if f.read().strip():
                    return True
    except OSError:
        pass
    return False


def make_server(command: str, host: str, port: int, title: str, announce=None,
                max_tabs: int = DEFAULT_MAX_TABS):
    """The textual-serve server for `command` (imported here: only `serve` needs aiohttp);
    at most `max_tabs` websockets, each a debugger process, open at once."""
    import asyncio

    from aiohttp import web
    from textual_serve.server import Server

    class DebuggerServer(Server):
        """textual-serve's server, with rvmdbg's own start-up line, the URLs of its page taken
        from the request (so a --public server works under any of its names), the checks of
        where a request comes from, and open tabs' screens stopped with the server."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.tabs: set[asyncio.Task] = set()  # the handlers of the open websockets
            self.max_tabs = max_tabs

        def _refused(self, request) -> str | None:
            name = (urlsplit(f"//{request.host}").hostname or "")
            if is_loopback(self.host) and not is_loopback(name):
                return _("this server answers requests for 127.0.0.1 or localhost, not {name}").format(
                    name=repr(name))
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc != request.host \
                    and request.path == "/ws":
                return _("a page from {origin} may not open this debugger").format(origin=origin)
            return None

        @web.middleware
        async def _checked(self, request, handler):
            """Every path (the page, the websocket, /static, /download) behind the same
            checks of where the request comes from."""
            reason = self._refused(request)
            if reason is not None:
                raise web.HTTPForbidden(text=reason)
            return await handler(request)

        async def _make_app(self):
            # textual-serve's is a coroutine in some versions; aiohttp's run_app awaits either
            app = super()._make_app()
            if asyncio.iscoroutine(app):
                app = await app
            app.middlewares.append(self._checked)
            app.on_cleanup.append(self._close_transports)
            return app

        async def _close_transports(self, app) -> None:
            """Let the tabs' screen processes end, then collect their asyncio subprocess
            transports while the loop still runs. textual-serve never closes one; collected
            after aiohttp has closed the loop (the child watcher holds it until its process
            ends), its close raised "Event loop is closed" into stderr ("Exception ignored in
            BaseSubprocessTransport.__del__", seen once in the suite's browser test)."""
            import gc
            loop = asyncio.get_running_loop()
            deadline = loop.time() + SHUTDOWN_SECONDS
            while _has_children() and loop.time() < deadline:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0)   # the child watcher's exit callbacks
            gc.collect()
            await asyncio.sleep(0)   # the closed transports' connection_lost callbacks

        async def handle_index(self, request):
            reason = self._refused(request)
            if reason is not None:
                raise web.HTTPForbidden(text=reason)
            if len(self.tabs) >= self.max_tabs:
                return web.Response(status=503, text=full_page(self.max_tabs),
                                    content_type="text/html")
            # no await before textual-serve's handler reads it: no other request interleaves
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def handle_websocket(self, request):
            reason = self._refused(request)
            if reason is not None:
                raise web.HTTPForbidden(text=reason)
            if len(self.tabs) >= self.max_tabs:
                # no await since the count: two tabs cannot both take the last place
                raise web.HTTPServiceUnavailable(text=full_page(self.max_tabs),
                                                 content_type="text/html")
            tab = asyncio.current_task()
            self.tabs.add(tab)
            try:
                return await super().handle_websocket(request)
            finally:
                self.tabs.discard(tab)

        async def on_startup(self, app) -> None:
            pass  # textual-serve's banner: the URL is announced once the port is open

        async def on_shutdown(self, app) -> None:
            # Each open tab's handler, cancelled, tells its screen to quit and waits for it
            # (left alone, aiohttp would wait for the browser to close the tab)
            tabs = list(self.tabs)
            for tab in tabs:
                tab.cancel()
            if tabs:
                await asyncio.wait(tabs, timeout=SHUTDOWN_SECONDS)

        def serve(self, debug: bool = False) -> None:
            import signal
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            stopping = []

            def stop() -> None:  # Ctrl+C ends the server cleanly; again, while it stops, waits
                if not stopping:
                    stopping.append(True)
                    self.request_exit()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop)
            web.run_app(self._make_app(), host=self.host, port=self.port,
                        handle_signals=False, loop=loop, shutdown_timeout=SHUTDOWN_SECONDS,
                        print=lambda *_: announce and announce())

    return DebuggerServer(command, host=host, port=port, title=title)


def cmd_serve(ns: argparse.Namespace) -> int:
    from rvmdbg.cmdline import EXIT_OK
    from rvmdbg.program import UsageError
    if not 1 <= ns.port <= 65535:
        raise UsageError(f"--port {ns.port}: " + _("a TCP port is 1..65535"))
    max_tabs = getattr(ns, "max_tabs", DEFAULT_MAX_TABS)
    if not 1 <= max_tabs <= 10_000:
        raise UsageError(f"--max-tabs {max_tabs}: " + _("between 1 and 10000 tabs"))
    code = check_before_serving(ns)
    if code != 0:
        return code
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        raise UsageError(_("rvmdbg serve needs the textual-serve package "
                           "(pip install textual-serve)")) from None
    host = listen_host(ns)
    if not is_loopback(host):
        print(public_warning(host, ns.port), file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{ns.port}"

    def announce() -> None:
        print("rvmdbg serve: " + _("{program} on {url} (one debugger per browser tab; "
                                   "Ctrl+C stops)").format(program=ns.program, url=url), flush=True)
    server = make_server(child_command(ns), host, ns.port, f"rvmdbg {os.path.basename(ns.program)}",
                         announce, max_tabs=max_tabs)
    try:
        server.serve()
    except OSError as e:
        raise UsageError(_("cannot listen on {place}: {reason}").format(
            place=f"{host}:{ns.port}", reason=e.strerror or e)) from None
    return EXIT_OK


__all__ = ["add_serve_options", "child_argv", "child_command", "cmd_serve", "is_loopback",
           "listen_host", "public_warning", "screen_options", "served_in_browser"]
