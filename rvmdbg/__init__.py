"""rvmdbg: a terminal step debugger for Relay-VM bytecode."""

__version__ = "0.1.0"
