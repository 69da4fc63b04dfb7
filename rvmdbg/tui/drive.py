"""Driving the session one instruction from a view or the quiz: through the debugger screen when
it is open (so its panes follow), else on the session itself. No Textual here: a leaf that the
views and the quiz screen both use, so neither imports the other for it."""
from __future__ import annotations

from rvmdbg.i18n import _


def drive_session(app, forward: bool = True) -> str | None:
    """One instruction forward or back, through the debugger screen when there is one.
    Returns an error message, or None."""
    session = getattr(app, "session", None)
    if session is None:
        return _("the program has not started")
    debugger = None
    stack = getattr(app, "screen_stack", [])
    if stack and hasattr(stack[0], "drive"):
        debugger = stack[0]
    try:
        if debugger is not None:
            if getattr(debugger, "running", False):
                return _("the debugger is running: wait for it or interrupt it there")
            call = (lambda s: s.step()) if forward else (lambda s: s.rstep())
            debugger.drive("step" if forward else "reverse step", call, threaded=False)
        else:
            session.step() if forward else session.rstep()
    except Exception as exc:  # the view reports it; the session stays usable
        return f"{type(exc).__name__}: {exc}"
    return None
