"""Pausing the cyclic garbage collector's full collections while the debugger runs or
replays the program for a long time (`no_full_collections`, and `quiet_gc`, a decorator for
the session's methods that do so).
"""

from __future__ import annotations

import contextlib
import gc
import threading


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_saved = None


@contextlib.contextmanager
def no_full_collections():
    """Run without the cyclic GC's full collections (young generations still run).

    History keeps many long-lived objects (saved frames); every full collection during a
    long run would rescan all of them, which costs more than recording itself. Nothing the
    VM creates forms reference cycles except reference cells pointing back at themselves,
    and those are collected by the next full collection after the run.
    """
    global _gc_depth, _gc_saved
    with _gc_lock:
        if _gc_depth == 0:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(_gc_saved[0], _gc_saved[1], 1 << 30)
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_saved is not None:
                gc.set_threshold(*_gc_saved)


def quiet_gc(method):
    """Decorator: the method runs inside `no_full_collections()`."""
    def wrapper(*args, **kwargs):
        with no_full_collections():
            return method(*args, **kwargs)
    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper
