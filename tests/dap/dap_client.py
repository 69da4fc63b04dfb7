"""The DAP tests' client: `rvmdbg.dap.client` (shared with the benchmark)."""
from rvmdbg.dap.client import PROGRAMS, ROOT, DapClient, adapter_env  # noqa: F401
