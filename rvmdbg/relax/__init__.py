"""The Relax VM: TVM's own virtual machine (apache-tvm 0.27), stepped one instruction at a time.

`executable.py` reads a `VMExecutable` built by `tvm.relax.build` (its serialized function
table and constant pool, its instructions from `as_text()`); `machine.py` is `RelaxMachine`,
a `debug.machine.Machine` that runs that bytecode calling TVM's compiled kernels and
`vm.builtin.*` functions; `check.py` runs TVM's own VirtualMachine beside it and compares the
calls. `tvm` is imported only here, lazily, through `require_tvm()`.
"""
from __future__ import annotations

from rvmdbg.i18n import _


class MissingTvm(Exception):
    """apache-tvm is not installed; the message names the extra to install (exit 2)."""


def require_tvm():
    """The `tvm` module, or MissingTvm saying how to install it."""
    try:
        import tvm  # noqa: F401  (a 100 MB package: imported only when a Relax program is opened)
        from tvm import relax  # noqa: F401
    except ImportError as exc:
        raise MissingTvm(_("a Relax program needs apache-tvm, which is not installed ({why}); "
                           "install the extra: pip install 'rvmdbg[tvm]'").format(why=exc)) from None
    return tvm


__all__ = ["MissingTvm", "require_tvm"]
