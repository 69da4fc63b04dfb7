"""The footer: Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer recomposes (a widget per key, each styled) on every change of the screen's
bindings: a focus change, a binding enabled or disabled. At startup that happened several times
with the same keys and cost about a quarter of the time to the first frame; here a change that
leaves the shown keys as they are costs nothing.

It also shows the bindings' words in the language in use: descriptions and tooltips are
written in class bodies (`N_`), before the language is chosen, and translated here.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from rvmdbg.i18n import _
from rvmdbg.tui.help_screen import key_text


class KeyFooter(Footer):
    """A Footer that recomposes only when what it would show differs from what it shows."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

    def _keys(self) -> tuple:
        """What compose would show: each shown binding's key, text and state, in order."""
        return tuple((binding.key, binding.description, binding.action, binding.group, enabled,
                      tooltip)
                     for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
                     if binding.show)

    def compose(self):
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.description = _(widget.description) if widget.description else ""
                # keys written as the help writes them (Tab, Esc, F11), not Textual's tab, esc
                shown = key_text(widget.key)
                default = self.app.get_key_display(Binding(widget.key, widget.action))
                arrow = default in ("←", "→", "↑", "↓") and not getattr(self.app, "ascii_only", False)
                if widget.key_display in (default, widget.key) and not arrow:
                    widget.key_display = shown
                if widget.tooltip:
                    widget.tooltip = _(str(widget.tooltip))
            yield widget

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        keys = self._keys()
        if keys != self._shown:
            self._shown = keys
            await self.recompose()


__all__ = ["KeyFooter"]
