"""The browser a run acts in, held for exactly the run's length: :class:`RunBrowser`.

``async with RunBrowser(...) as browser:`` acquires it one of three ways (a browser of the run's own, a tab of
its own in a given browser, or the given browser's tab, claimed so no other run drives it), installs the run's
download policy, navigation guard, effect judge (the network line of the approval policy) and the values no
screenshot may show, and on exit
undoes each step that was done, in reverse, whatever happened: popups the run opened in a shared browser are
closed, the previous download filter, guard and judge come back, a browser or tab of its own is closed, the
claim is released. A failure half-way through acquiring undoes what was already done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable
from types import TracebackType
from typing import Any

from ...browser.door.live import Source as LiveSource
from ...browser.door.route import EffectJudge
from ...browser.session.browser_session import BrowserSession
from ...browser.url_template import refuse_fields
from ...browser.urls import URLError
from ...core.abort import AbortSignal
from ...core.aio import wait_for
from ...core.errors import InputError


class StartUrlError(InputError):
    """The start URL could not be opened (the message says why, for the user)."""


async def _quietly(work: Callable[[], Awaitable[Any]], timeout: float = 10.0) -> None:
    """Teardown never raises: a browser that is already gone has nothing left to undo."""
    with contextlib.suppress(Exception):
        await wait_for(work(), timeout)


class RunBrowser:
    """An async context manager giving a run its :class:`BrowserSession` (see the module docstring)."""

    def __init__(
        self,
        given: BrowserSession | None,
        *,
        own_tab: bool,
        run_id: str,
        download_filter: Callable[[str, str], str | None],
        domain_rule: Callable[[str], str | None] | None,
        effect_judge: EffectJudge | None = None,
        hidden_values: Callable[[], Iterable[str]] | None = None,
        live_secrets: LiveSource | None = None,
    ) -> None:
        self.given = given
        self.own_tab = own_tab
        self.run_id = run_id
        self.download_filter = download_filter
        self.domain_rule = domain_rule
        self.effect_judge = effect_judge
        self.hidden_values = hidden_values
        """What no screenshot may show (the secrets' values, text typed into sensitive fields), read each time."""
        self.live_secrets = live_secrets
        """The run's secrets as the browser's door holds them: live from the run's start until the session
        closes, not only while the run goes on (browser/door/live.py)."""
        self.browser: BrowserSession | None = None
        self._undo = contextlib.AsyncExitStack()
        self._storms = self._refused = 0
        """The browser's counts of popup storms and popups refused when the run began (:meth:`popup_storm`)."""

    @property
    def owns_browser(self) -> bool:
        """The run has a browser or tab of its own (closed at the end), not the given browser's tab."""
        return self.given is None or self.own_tab

    async def __aenter__(self) -> BrowserSession:
        undo = self._undo
        try:
            if self.given is None:
                browser = BrowserSession()
                undo.push_async_callback(_quietly, browser.close)
            elif self.own_tab:
                browser = await self.given.tab_session()
                undo.push_async_callback(_quietly, browser.close)
            else:
                browser = self.given
                undo.enter_context(browser.claim(self.run_id))
            self.browser = browser
            await browser.start()
            popups = browser.popup_mark
            self._storms, self._refused = browser.popup_storms, browser.popups_refused
            if not self.owns_browser and popups:  # a run's popups do not outlive it (nor, after a storm, its tab)
                undo.push_async_callback(
                    _quietly, lambda: browser.close_popups(popups, current_too=self.popup_storm() is not None)
                )
            previous = browser.download_filter
            browser.download_filter = self.download_filter
            undo.callback(setattr, browser, "download_filter", previous)
            if self.hidden_values is not None:
                undo.enter_context(browser.hiding(self.hidden_values))
            if self.domain_rule is not None:
                await browser.set_domain_rule(self.domain_rule)
                undo.push_async_callback(_quietly, lambda: browser.set_domain_rule(None))
            if self.effect_judge is not None:
                await browser.set_effect_judge(self.effect_judge)
                undo.push_async_callback(_quietly, lambda: browser.set_effect_judge(None))
            if self.live_secrets is not None:
                source = self.live_secrets
                await browser.hold_secrets(source)
                undo.callback(browser.keep_secrets, source)  # kept live when the run ends, not let go
        except BaseException:
            await self._undo.aclose()
            raise
        return browser

    def popup_storm(self) -> str | None:
        """The sentence a run ends with when its pages opened more tabs than a run may hold (a popup storm: the
        extras were closed as they came, and the rest close when the run ends), else None."""
        browser = self.browser
        if browser is None or browser.popup_storms <= self._storms:
            return None
        refused = browser.popups_refused - self._refused
        return (
            f"The page opened more tabs than a run may hold ({browser.popup_cap} at once; {refused} more were "
            "closed as they came), so the run stopped there; the tabs it opened are closed."
        )

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._undo.aclose()

    async def open(self, url: str, signal: AbortSignal) -> None:
        """Open the start URL like ``go_to_url`` does: through the tab-recovery path (a closed tab or browser is
        replaced first), waiting for the document rather than every subresource (one hanging tracker pixel
        must not cost 30 s), bounded by the navigation timeout, and stopped by Stop."""
        assert self.browser is not None
        try:  # a {column} is a map's to fill, one row at a time: never opened as %7Bcolumn%7D
            refuse_fields(url)
        except URLError as exc:
            raise StartUrlError(f"The start URL {exc}") from None
        if self.domain_rule is not None:
            from ...browser.urls import navigation_target

            refusal = self.domain_rule(navigation_target(url))
            if refusal:
                raise StartUrlError(f"The start URL is not allowed: {refusal}")
        try:
            await signal.race(self.browser.open(url))
        except URLError as exc:
            raise StartUrlError(str(exc)) from None  # already a sentence naming the URL
