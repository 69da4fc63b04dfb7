"""rvmdbg as a Debug Adapter Protocol server (`rvmdbg dap`): editors drive the debugger.

`framing` reads and writes the protocol's messages, `server` answers them over stdio or TCP,
`adapter` maps each request to the debugger protocol (`rvmdbg.debug`), `variables` shows
register values as expandable variables and `addresses` numbers instructions for the
disassembly view. Like batch mode it is a client of `DebugSession`; it never imports Textual.
"""
from rvmdbg.dap.adapter import CAPABILITIES, DapAdapter, RequestError
from rvmdbg.dap.server import DapServer, serve_stdio, serve_tcp

__all__ = ["DapAdapter", "DapServer", "RequestError", "CAPABILITIES", "serve_stdio", "serve_tcp"]
