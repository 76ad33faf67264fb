"""Every output the package puts in a notebook goes out here: static HTML, or a live widget with its static form.

A widget view lives in the kernel that made it. Saved and reopened, exported to HTML, opened untrusted or on
GitHub, a widget alone is "Error displaying widget: model not found", a blank, or ``VBox(...)``. So:

* what needs no clicks is plain HTML (:func:`show_html`; ``%agent browser``'s page, tables, diffs);
* a live widget (a run, a map, an evaluation) is shown by :class:`LiveOutput` in one display bundle with its
  static form beside it (``text/html``, and ``text/plain``): exported HTML, untrusted notebooks and viewers
  without the widget manager take that form; and when the work ends, :meth:`LiveOutput.settle` replaces the
  whole output with the finished static form (a run's record, pictures included), which a reopened notebook
  shows too. The static form is written once while the widget lives: sending it again re-creates the live view
  in the front end (losing what a person is typing in it), so it changes only when the work ends.

Nothing else in the package calls ``display`` or reads a widget's mime bundle (tests/notebook/test_saved_outputs.py
checks the source), so a new widget cannot be shown without a static form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.text.shown import html_block, shown

if TYPE_CHECKING:
    import ipywidgets as w

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""The mime type of a widget view in a display bundle."""


def show_html(html: str, text: str) -> Any:
    """Show ``html`` (one ``html_block``) with ``text`` as its plain form; returns the display handle."""
    from IPython.display import display

    return display({"text/html": html, "text/plain": shown(text, "plain")}, raw=True, display_id=True)


def waiting_html(title: str, what: str) -> str:
    """The static form of a live view before its work ends: what it is, and where the live view is."""
    return html_block(
        f"<b>{shown(title)}</b><div style='color:#57606a'>{shown(what)} (the live view needs the kernel that ran it; "
        "its record takes this place when the work ends)</div>",
        cls="na-record",
        style="border:1px solid #d0d7de;border-radius:8px;padding:8px;font-family:system-ui,sans-serif",
    )


class LiveOutput:
    """One live widget in the current cell, with its static form beside it, until :meth:`settle`."""

    def __init__(self, widget: w.DOMWidget, html: str, text: str) -> None:
        from IPython.display import display

        bundle = dict(widget._repr_mimebundle_() or {})
        bundle["text/html"] = html
        bundle["text/plain"] = shown(text, "plain")
        self.bundle = bundle
        self.handle: Any = display(bundle, raw=True, display_id=True)

    def settle(self, html: str, text: str) -> None:
        """The work ended: the output becomes ``html`` (and ``text``) alone, with no widget."""
        if self.handle is not None:
            self.handle.update({"text/html": html, "text/plain": shown(text, "plain")}, raw=True)
