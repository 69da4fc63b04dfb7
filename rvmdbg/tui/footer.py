"""Textual's footer with the bindings' words in the language in use.

Binding descriptions and tooltips are written in class bodies (`N_`), before the language
is chosen: the footer translates each key's words as it builds them.
"""
from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from rvmdbg.i18n import _


class TranslatedFooter(Footer):
    def compose(self):
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.description = _(widget.description) if widget.description else ""
                if widget.tooltip:
                    widget.tooltip = _(str(widget.tooltip))
            yield widget


__all__ = ["TranslatedFooter"]
