"""The reading side of :class:`~notebook_agent.browser.session.browser_session.BrowserSession`: the indexed
snapshot of its current tab, its elements found live, and its pictures with the values no picture may show.

One job: reading what a tab shows, the mechanics being :class:`~notebook_agent.browser.page.reader.PageReader`'s
(the snapshot, resolving an index, screenshots) and ``browser/page/mask.py``'s (painting hidden values over).
The session inherits it, so these stay methods of the session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal

from playwright.async_api import ElementHandle, Frame, Page

from ..errors import BrowserTimeoutError, Notices
from ..page.hung_tabs import HungPages
from ..page.mask import HiddenValues, current_values, masked_capture, remember_hidden
from ..page.page_script import op_selector
from ..page.pictures import take_screenshot
from ..page.prefetch import Key, Prefetch
from ..page.reader import SENSITIVE_FIELDS, PageReader, find_table, index_in_snapshot
from ..page.snapshot import FULL_PAGE_MAX_CHARS, ElementInfo, Snapshot
from ..page.tabs import Tabs
from .browser_thread import on_browser_loop


class SessionReading:
    """Snapshots, elements and screenshots of a session's current tab, over the parts the session composes
    (set by its ``__init__``)."""

    _tabs: Tabs
    _reader: PageReader
    _prefetch: Prefetch
    _hung: HungPages
    _notices: Notices
    navigation_timeout: float
    _hidden: HiddenValues | None = None

    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first: the session's."""
        raise NotImplementedError

    # -- reading the page -----------------------------------------------------------------------------------
    @on_browser_loop
    async def snapshot(
        self,
        full_page: bool = False,
        max_elements: int | None = None,
        max_chars: int | None = None,
    ) -> Snapshot:
        """Read the current tab: URL, title, tabs, scroll position, indexed elements and page text.

        Viewport mode (default) lists what is on screen with "N pixels above/below" hints; ``full_page`` lists
        the whole page. ``max_elements``/``max_chars`` cap the text, keeping what is nearest the viewport and
        saying what was cut; a full-page snapshot given neither is capped at ``FULL_PAGE_MAX_CHARS`` (pass a
        larger ``max_chars`` for more). Indices are valid until the next snapshot.
        """
        if full_page and max_chars is None and max_elements is None:
            max_chars = FULL_PAGE_MAX_CHARS
        self._prefetch.drop()
        page = await self.ensure_page()
        try:
            return await self._reader.snapshot(
                page,
                tabs=self._tabs.infos,
                notices=self._notices.take(),
                full_page=full_page,
                max_elements=max_elements,
                max_chars=max_chars,
                load_timeout=self.navigation_timeout,
            )
        except BrowserTimeoutError:
            self._hung.mark_suspect()  # checked (and replaced if it still does not answer) before its next use
            raise

    @on_browser_loop
    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or
        :class:`~notebook_agent.browser.errors.ActionError` saying why not."""
        found = self._prefetch.take(self._prefetch_key(index))
        if found is not None:
            return await found
        return await self._reader.resolve(index, self._tabs.current)

    @on_browser_loop
    async def resolve_table(self, name: str) -> tuple[ElementHandle, Frame]:
        """Table ``name`` ("T1") of the latest snapshot as a live handle, or
        :class:`~notebook_agent.browser.errors.ActionError` saying why not."""
        return await find_table(self._reader, name, self._tabs.current)

    @on_browser_loop
    async def prefetch(self, index: int) -> None:
        """Start finding element ``[index]`` for the action that follows (it only reads the page): the
        :meth:`resolve` of that index on this snapshot and tab takes the handle instead of asking again. A
        snapshot, or :meth:`drop_prefetch`, forgets it (see prefetch.py)."""
        if self._reader.last_snapshot is not None:
            self._prefetch.start(self._prefetch_key(index), self._reader.resolve(index, self._tabs.current))

    @on_browser_loop
    async def drop_prefetch(self) -> None:
        """Forget an element found ahead: the page may have changed since (a person was asked meanwhile)."""
        self._prefetch.drop()

    def _prefetch_key(self, index: int) -> Key:
        snap = self._reader.last_snapshot
        return (snap.snapshot_id if snap is not None else -1, index, self._tabs.current)

    def reference(self, index: int) -> tuple[Frame, str]:
        """Element ``[index]`` of the latest snapshot as its frame and a selector that answers with it there (no round
        trip, nothing checked live), or :class:`~notebook_agent.browser.errors.ActionError` saying why there is none."""
        frame, arg = self._reader.reference(index, self._tabs.current)
        return frame, op_selector(frame, arg)

    @on_browser_loop
    async def index_of(self, element: ElementHandle, frame: Frame) -> int | None:
        """The index ``element`` (of ``frame``) has in the latest snapshot, or None (the reverse of ``resolve``)."""
        return await index_in_snapshot(self._reader, element, frame)

    @on_browser_loop
    async def screenshot(
        self,
        highlight: bool = False,
        format: Literal["png", "jpeg"] = "png",
        full_page: bool = False,
        quality: int | None = None,
        mask_sensitive: bool = True,
    ) -> bytes:
        """A screenshot of the current tab. ``highlight`` draws each indexed element's box and index (taking a snapshot
        first if there is none for this tab), then removes the overlay again. Fields that look sensitive (passwords,
        one-time codes, card numbers, tokens, keys, secrets) are painted over unless ``mask_sensitive=False``, so a
        typed secret never lands in a picture; so is every text, field value or placeholder showing one of the
        :attr:`hidden_values`, in every frame. Raises :class:`~notebook_agent.browser.page.mask.ScreenshotWithheld` when
        those could not be guaranteed hidden (no picture is better than one showing a secret)."""
        page = await self.ensure_page()
        if highlight and (self._reader.last_snapshot is None or self._reader.refs_page is not page):
            await self.snapshot()
        return await masked_capture(
            page,
            list(self.hidden_values),
            lambda: take_screenshot(
                self._reader, page, highlight=highlight, format=format, full_page=full_page, quality=quality
            ),
            selector=SENSITIVE_FIELDS if mask_sensitive else "",
        )

    # -- values no picture may show (see mask.py) ---------------------------------------------------------
    @property
    def hidden_values(self) -> tuple[str, ...]:
        """The values every screenshot of this session paints over (longest first): a run's (see
        :meth:`hide_values`) and the secrets live in the session, between runs too."""
        return tuple(current_values([*current_values(self._hidden), *self._live_values()]))

    def _live_values(self) -> list[str]:
        """The values of the secrets live in the session (the session's door keeps them; none here)."""
        return []

    def hide_values(self, values: HiddenValues | None) -> HiddenValues | None:
        """Paint over ``values`` (strings, or a function returning them, read before each screenshot) in
        every screenshot: the view's, the model's and approval crops. None hides nothing. Returns what was
        hidden before, so a run can put it back (see :meth:`hiding`)."""
        previous, self._hidden = self._hidden, values
        remember_hidden(self, values)  # for the whole context: a trace of it could show them
        return previous

    @contextlib.contextmanager
    def hiding(self, values: HiddenValues | None) -> Iterator[None]:
        """:meth:`hide_values` for the length of a ``with`` block, then the previous values again."""
        previous = self.hide_values(values)
        try:
            yield
        finally:
            self._hidden = previous
