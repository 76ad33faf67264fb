"""Who drives a session: one run at a time.

Two runs acting on one tab see and undo each other's work (a click lands on the page the other opened), so a
run claims the session for as long as it acts and a second claim is refused. This is bookkeeping the agent
layer relies on, with nothing of Playwright in it, so it lives apart from the session that exposes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ...core.errors import BusyError


class BrowserBusyError(BusyError):
    """Another run holds this session (see
    :meth:`~notebook_agent.browser.session.browser_session.BrowserSession.claim`)."""


class Ownership:
    """The run holding a session, if any."""

    def __init__(self) -> None:
        self.owner: str | None = None

    @contextlib.contextmanager
    def claim(self, owner: str) -> Iterator[None]:
        """Hold the session for ``owner`` inside the block; raises :class:`BrowserBusyError` if another holds it."""
        if self.owner is not None:
            raise BrowserBusyError(
                f"This browser is already driven by another run ({self.owner}). Wait for it or stop it, or give "
                "each run a browser (or tab) of its own."
            )
        self.owner = owner
        try:
            yield
        finally:
            self.owner = None
