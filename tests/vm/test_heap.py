"""rvmdbg.heap: freed tensor memory stays in the process (glibc's thresholds, set once), so a
kernel's next output faults no pages in; the environment's own settings win. Each case runs
in a fresh interpreter: the thresholds are the process's."""
from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                           reason="the thresholds are glibc's")

# three arrays of 4 MiB alive at once, then freed, 20 times, as a model's kernels make and
# drop their outputs: the page faults of the last 19 rounds (writing 4 MiB of fresh pages
# faults about 1,024 times). With glibc's defaults at least one array a round is new memory
# (19,419 faults measured: its trim threshold follows the largest array freed, 8 MiB here)
FAULTS = """
import resource, sys
import numpy as np
{setup}
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def round():
    arrays = [np.ones(1 << 20, np.float32) for _ in range(3)]
    del arrays
round()
before = faults()
for _ in range(19):
    round()
print(kept, faults() - before)
"""


def _run(setup: str, env_extra: dict | None = None) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", FAULTS.format(setup=setup)], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    return out[0], int(out[1])


@glibc
def test_freed_arrays_are_reused_without_page_faults():
    kept, faults = _run("from rvmdbg.heap import keep_freed_memory\nkept = keep_freed_memory()")
    assert kept == "True"
    assert faults < 1000          # 19 x 3 x 1,024 pages if each array were new memory


@glibc
def test_without_it_each_array_is_new_memory():
    # the measurement above can fail: glibc's defaults fault every array of 4 MiB in again
    kept, faults = _run("kept = None")
    assert faults > 19 * 500


@glibc
def test_the_environments_settings_win():
    kept, _ = _run("from rvmdbg.heap import keep_freed_memory\nkept = keep_freed_memory()",
                   {"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert kept == "False"


@glibc
def test_the_vm_and_the_interpreter_keep_it():
    setup = ("import rvmdbg.heap as heap\n"
             "from rvmdbg.relay.loader import load_module\n"
             "from rvmdbg.vm.compiler import compile_module\n"
             "mod = load_module('#[version = \"0.0.5\"]\\ndef @main() { 1 }', 'one.relay')\n")
    for make in ("from rvmdbg.vm.machine import VirtualMachine\n"
                 "VirtualMachine(compile_module(mod))",
                 "from rvmdbg.relay.interpreter import Interpreter\n"
                 "Interpreter(mod)"):
        # set by the constructor: the call below only reads the cached answer
        kept, faults = _run(setup + make + "\nkept = (heap.keep_freed_memory.cache_info()"
                            ".currsize == 1 and heap.keep_freed_memory())")
        assert kept == "True" and faults < 1000
