"""Resource limits shared by the reference interpreter and the VM, with their defaults.

Hitting a limit is a clear stop with a message naming the limit and its flag, never a hang
or an out-of-memory kill.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from rvmdbg.i18n import _


# The deepest call stack a limit may allow: each VM frame holds a register file (hundreds of
# bytes and more), so ten million frames already take gigabytes that --max-bytes does not see.
MAX_DEPTH_CEILING = 10_000_000
# Python integers have no bound; counts beyond this are no limit at all, only a mistake.
MAX_COUNT = 1 << 62


class LimitValueError(ValueError):
    """A limit that cannot be honoured; the message names the flag and the allowed range."""


# What one call frame costs, counted against --max-bytes beside the live tensors: a VM frame
# is its object (six slots), its register list's header and 8 bytes a register (256 + 8n
# measures a 10-register frame at 336 bytes; tracemalloc sees 256 before allocator slack).
VM_FRAME_BYTES = 256
VM_REGISTER_BYTES = 8
# one Relay call in the interpreter: its Python frames and the environment it binds
INTERPRETER_FRAME_BYTES = 4096
# frames may always take this much, whatever the tensors hold: so a byte limit of a few
# hundred bytes still lets a program call (tests of tensor accounting), while a deep stack of
# gigabytes is stopped
FRAME_FLOOR = 16 << 20
# the stack of the thread programs run on (rvmdbg.relay.interpreter.call_with_deep_stack)
DEEP_STACK_BYTES = 2 << 30
# the most --max-bytes defaults to; less when the process may not have that much to give
_DEFAULT_MAX_BYTES = 2 * 1024 ** 3


def vm_frame_bytes(register_file_size: int) -> int:
    """The bytes one VM frame with this many registers is counted at."""
    return VM_FRAME_BYTES + VM_REGISTER_BYTES * register_file_size


def address_room() -> int | None:
    """The bytes of address space this process may still map under its RLIMIT_AS (None: no
    such limit, or it cannot be read)."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return soft - mapped
    except (ImportError, OSError, ValueError, IndexError):
        return None


def _memory_room() -> int | None:
    """The bytes this process can still get: the address-space limit less what it maps
    now, and physical memory; None when neither can be read."""
    room = []
    left = address_room()
    if left is not None:
        # the deep stack the runs take (call_with_deep_stack) is reserved from it too
        room.append(left - min(DEEP_STACK_BYTES, left // 2))
    try:
        room.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        pass
    return min(room) if room else None


def default_max_bytes() -> int:
    """--max-bytes's default: 2 GiB, or a third of the memory the process can get when that is
    less (tensors, the frames and the copies a kernel makes while it computes share it), so
    the default limit stops a program before the machine does."""
    room = _memory_room()
    if room is None:
        return _DEFAULT_MAX_BYTES
    return max(1 << 20, min(_DEFAULT_MAX_BYTES, room // 3))


def depth_stop(limits: "Limits", depth: int, frame_bytes: int, live: int,
               func: str) -> tuple[str, int, str]:
    """(limit name, its value, what happened) for a call refused at `depth`: by --max-depth,
    or because `depth` frames of `frame_bytes` (past FRAME_FLOOR) beside `live` bytes of
    tensors pass --max-bytes."""
    if depth >= limits.max_depth:
        return ("max_depth", limits.max_depth,
                _("call depth exceeded {n} frames calling @{func}").format(
                    n=limits.max_depth, func=func))
    return ("max_bytes", limits.max_bytes,
            _("calling @{func} at call depth {depth}: {depth} frames of {size} bytes with "
              "{live} bytes of live tensors would pass the byte limit").format(
                  func=func, depth=depth, size=frame_bytes, live=live))


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200_000_000       # instructions (VM) or evaluation steps (interpreter); --max-steps
    max_depth: int = 200_000           # call depth; --max-depth
    # bytes of tensors allocated and live at once, with the call frames; --max-bytes
    max_bytes: int = field(default_factory=default_max_bytes)

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
