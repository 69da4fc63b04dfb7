"""Resource limits shared by the reference interpreter and the VM, with their defaults.

Hitting a limit is a clear stop with a message naming the limit and its flag, never a hang
or an out-of-memory kill.
"""
from __future__ import annotations

from dataclasses import dataclass

from rvmdbg.i18n import _


# The deepest call stack a limit may allow: each VM frame holds a register file (hundreds of
# bytes and more), so ten million frames already take gigabytes that --max-bytes does not see.
MAX_DEPTH_CEILING = 10_000_000
# Python integers have no bound; counts beyond this are no limit at all, only a mistake.
MAX_COUNT = 1 << 62


class LimitValueError(ValueError):
    """A limit that cannot be honoured; the message names the flag and the allowed range."""


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200_000_000       # instructions (VM) or evaluation steps (interpreter); --max-steps
    max_depth: int = 200_000           # call depth; --max-depth
    max_bytes: int = 2 * 1024 ** 3     # bytes of tensors allocated and live at once; --max-bytes

    def __post_init__(self):
        for name, ceiling in (("max_steps", MAX_COUNT), ("max_depth", MAX_DEPTH_CEILING),
                              ("max_bytes", MAX_COUNT)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitValueError(_("{flag} must be a whole number of at least 1, got "
                                        "{value}").format(flag=self.flag_for(name),
                                                          value=repr(value)))
            if value > ceiling:
                text = (_("{flag} {value} cannot be honoured: at most {most} (every call frame "
                          "holds a register file in memory that --max-bytes does not count)")
                        if name == "max_depth" else
                        _("{flag} {value} cannot be honoured: at most {most}"))
                raise LimitValueError(text.format(flag=self.flag_for(name), value=value,
                                                  most=ceiling))

    @staticmethod
    def flag_for(name: str) -> str:
        return "--" + name.replace("_", "-")


DEFAULT_LIMITS = Limits()
