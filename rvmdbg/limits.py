"""Resource limits shared by the reference interpreter and the VM, with their defaults.

Hitting a limit is a clear stop with a message naming the limit and its flag, never a hang
or an out-of-memory kill.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200_000_000       # instructions (VM) or evaluation steps (interpreter); --max-steps
    max_depth: int = 200_000           # call depth; --max-depth
    max_bytes: int = 2 * 1024 ** 3     # bytes of tensors allocated and live at once; --max-bytes

    @staticmethod
    def flag_for(name: str) -> str:
        return "--" + name.replace("_", "-")


DEFAULT_LIMITS = Limits()
