"""Starts `rvmdbg dap` on stdin/stdout for DebugClient, which runs RUNTIME EXECUTABLE with
no arguments (the tests set PYTHONPATH to the repository)."""
import sys

from rvmdbg.cli import main

sys.exit(main(["dap"]))
