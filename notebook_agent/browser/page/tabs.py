"""The tabs of one browser context: stable tab ids, the current tab, tabs the site opens, crashed tabs, and
dialogs answered by a policy.

A site that opens a tab makes it current (an action that caused it hears so through its watch, otherwise a
notice says so); ``switch`` goes back. A dialog never blocks a page: the policy answers it at once and a
notice tells the model what it said and how it was answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from playwright.async_api import Dialog, Download, Frame, Page
from playwright.async_api import Error as PlaywrightError

from ...core.aio import wait_for
from ...core.text import clean_text
from ..errors import ActionError, Notices, first_line, log, short
from .action_watch import ActionWatch
from .frozen_tabs import confirmed, unanswering
from .snapshot import TabInfo


@dataclass
class DialogInfo:
    """What a dialog policy callable receives."""

    type: str  # "alert" | "confirm" | "prompt" | "beforeunload"
    message: str
    default_value: str
    url: str


DialogDecision: TypeAlias = bool | str | None
DialogPolicy: TypeAlias = (
    Literal["accept", "dismiss"] | Callable[[DialogInfo], DialogDecision | Awaitable[DialogDecision]]
)


class Tabs:
    """Tab bookkeeping for one owner of tabs in a context (the session, or one tab session of it). ``current``
    is the tab actions and snapshots use."""

    #: Tabs a site may open before further ones are closed at once (a popup storm).
    POPUP_MAX = 10
    #: Seconds without a new tab after which a storm is over.
    STORM_QUIET = 5.0

    def __init__(
        self,
        notices: Notices,
        dialog_policy: DialogPolicy,
        on_frame_detached: Callable[[Frame], None],
        downloads_dir: str | Path = "agent_downloads",
        next_id: Callable[[], int] | None = None,
    ) -> None:
        self.notices = notices
        self.dialog_policy: DialogPolicy = dialog_policy
        self.current: Page | None = None
        self.crashed: set[Page] = set()
        self.watchers: list[ActionWatch] = []
        self.creating_page = False
        self._ids: dict[Page, int] = {}
        self._titles: weakref.WeakKeyDictionary[Page, str] = weakref.WeakKeyDictionary()  # the last read of each
        self._next = 0
        self.next_id = next_id
        """Where tab ids come from when several owners share a context (see :class:`TabRouter`)."""
        self._on_frame_detached = on_frame_detached
        self.downloads_dir = Path(downloads_dir)
        self.site_opened: list[Page] = []
        """Tabs the site opened (popups, target=_blank), oldest first."""
        self.downloads: list[Path] = []
        self.download_filter: Callable[[str, str], str | None] | None = None
        """Given (file name, URL) of a download that started, a reason to cancel it, or None to keep it (the
        run's approval policy decides: a page may start downloads no approved action asked for)."""
        self._closing: set[asyncio.Task[None]] = set()
        self.downloads_started = 0
        """How many downloads the tabs started so far (an action compares it before and after)."""
        self._saving: set[asyncio.Future[object]] = set()
        self._began: set[asyncio.Future[object]] = set()
        self.storms = 0
        """How many popup storms the site made: more than :data:`POPUP_MAX` tabs open at once. A run that sees it
        grow ends, saying so (agent/step/run_browser.py ``RunBrowser.popup_storm``)."""
        self.popups_refused = 0
        """How many tabs the site opened that were closed at once, storms' stragglers included."""
        self._doomed: weakref.WeakSet[Page] = weakref.WeakSet()
        """Tabs closed at once (a storm's), never listed again even while their close is still under way."""
        self._settling = False
        """A run is waiting its storm out (:meth:`close_since`): every tab the site opens meanwhile is closed."""
        self._storm_until = 0.0
        """Until when (the event loop's clock) a storm is going on: a tab the site opens before then is closed at
        once, never made current, and extends it by :data:`STORM_QUIET`, whether or not a run is going on
        (Chromium announces a storm's tabs one by one, long after the page asked for them)."""

    def clear(self) -> None:
        """Forget every tab (the browser went away); ids keep counting up so old ids are never reused."""
        self._ids.clear()
        self.crashed.clear()
        self.current = None

    def tab_id(self, page: Page) -> int:
        return self._ids.get(page, -1)

    def tab_of(self, page: Page) -> tuple[int, bool]:
        return self.tab_id(page), page is self.current

    def open_pages(self) -> list[Page]:
        return [p for p in self._ids if not p.is_closed() and p not in self._doomed]

    async def close_page(self, page: Page, timeout: float = 5.0) -> None:
        """Close ``page`` and never list it again, whatever it does. A page reloading itself forever, or one
        whose close Chromium never confirms, gets its target closed through DevTools instead; if even that
        fails it is dropped from the tabs, so no later tab list or clean-up keeps meeting it."""
        try:
            await wait_for(page.close(run_before_unload=False), timeout)
            return
        except Exception as e:
            log.warning(
                "tab %s (%s) did not close in %.0f s (%s); closing its target",
                self.tab_id(page),
                page.url,
                timeout,
                first_line(e) or type(e).__name__,
            )
        self._ids.pop(page, None)
        self.crashed.discard(page)
        if self.current is page:
            self.current = None
        with contextlib.suppress(Exception):
            cdp = await wait_for(page.context.new_cdp_session(page), 2)
            target = (await wait_for(cdp.send("Target.getTargetInfo"), 2))["targetInfo"]["targetId"]
            await wait_for(cdp.send("Target.closeTarget", {"targetId": target}), 2)

    def register(self, page: Page) -> None:
        if page in self._ids:
            return
        if self.next_id is not None:
            self._ids[page] = self.next_id()
        else:
            self._ids[page] = self._next
            self._next += 1
        page.on("dialog", self._on_dialog)
        page.on("crash", self._on_crash)
        page.on("close", self._on_close)
        page.on("framedetached", self._on_frame_detached)
        page.on("download", self._on_download)

    def _on_crash(self, page: Page) -> None:
        self.crashed.add(page)

    def _on_close(self, page: Page) -> None:
        # The replacement (and its notice) happens lazily in the session's ensure_page(), which can tell a
        # closed tab from a browser that went away as a whole.
        self.crashed.discard(page)

    def on_context_page(self, page: Page) -> None:
        """A tab appeared in the context: ours (being created) or the site's, which becomes current."""
        if page in self._ids:
            return
        self.register(page)
        if self.creating_page:
            return
        now = asyncio.get_running_loop().time()
        self.site_opened = [p for p in self.site_opened if not p.is_closed()]  # a storm never grows the list
        storming = self._settling or now < self._storm_until
        if storming or len(self.site_opened) >= self.POPUP_MAX:
            self.storms += not storming
            self._storm_until = now + self.STORM_QUIET
            self.popups_refused += 1
            self._doomed.add(page)
            task = asyncio.ensure_future(self.close_page(page))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
            self.notices.add(
                f"The page opened another tab ({page.url or 'about:blank'}); it was closed at once, since the site "
                f"opened more than {self.POPUP_MAX} tabs (a popup storm)."
            )
            return
        self.site_opened.append(page)
        self.current = page
        if self.watchers:
            for w in self.watchers:
                w.on_new_page(page)
        else:
            self.notices.add(f"A new tab was opened (tab {self.tab_id(page)}); it is now the current tab.")

    async def infos(self, current_title: str | None = None) -> list[TabInfo]:
        """Open tabs in opening order; ``current_title`` spares a round trip when the caller knows it."""
        pages = self.open_pages()

        async def title(p: Page) -> str:
            # a tab that does not answer (a script that never ends) keeps the title it had, and costs its 2 s
            # bound once, not at every snapshot: the read goes on and clears the mark when the tab answers
            if p is self.current and current_title is not None:
                return current_title
            if not unanswering(p):
                read = asyncio.ensure_future(p.title())
                if await confirmed(p, read, 2) and not read.cancelled() and read.exception() is None:
                    self._titles[p] = clean_text(read.result())
            return self._titles.get(p, "")

        titles = await asyncio.gather(*(title(p) for p in pages))
        return [TabInfo(self.tab_id(p), p.url, t, p is self.current) for p, t in zip(pages, titles, strict=True)]

    async def switch(self, tab_id: int) -> Page:
        """Make tab ``tab_id`` current; raises :class:`ActionError` naming the open tabs if there is none."""
        for p in self.open_pages():
            if self.tab_id(p) == tab_id:
                self.current = p
                with contextlib.suppress(PlaywrightError):
                    await p.bring_to_front()
                return p
        tabs = ", ".join(f"{self.tab_id(p)} ({p.url})" for p in self.open_pages())
        raise ActionError(f"there is no tab {tab_id}. Open tabs: {tabs}.")

    async def close_since(self, mark: frozenset[Page], *, current_too: bool = False) -> int:
        """Close every tab opened since ``mark`` (the tabs open then) except the current one, or that one too
        (``current_too``: the newest tab of ``mark`` becomes current again); how many."""
        keep = None if current_too else self.current
        self._settling = current_too
        try:
            closed = 0
            for _ in range(3 if current_too else 1):  # after a storm: again once it is over (its last tabs)
                pages = [p for p in self.open_pages() if p not in mark and p is not keep and not p.is_closed()]
                if current_too and self.current in pages:
                    self.current = next((p for p in reversed(self.open_pages()) if p in mark), None)
                # only this owner's tabs, never another session's; closed side by side (a storm leaves many)
                await asyncio.gather(*(self.close_page(p) for p in pages))
                closed += len(pages)
                if current_too:
                    await storm_over(self)
            return closed
        finally:
            self._settling = False

    async def downloads_settled(self, started: int, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) until a download began after ``downloads_started`` was ``started``
        and every download being saved or cancelled is done, so its notice is there to report."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if self.downloads_started == started:  # the page's download event comes a moment after the failure
            began: asyncio.Future[object] = loop.create_future()
            self._began.add(began)
            try:
                await asyncio.wait({began}, timeout=min(timeout, 2.0))
            finally:
                self._began.discard(began)
        pending = {f for f in self._saving if not f.done()}
        if pending:
            await asyncio.wait(pending, timeout=max(0.0, deadline - loop.time()))

    async def _on_download(self, download: Download) -> None:
        """Keep every download where the user can find it, and tell the model (a page may download silently)."""
        self.downloads_started += 1
        for waiter in self._began:
            if not waiter.done():
                waiter.set_result(None)
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._saving.add(done)
        try:
            await self._keep_or_cancel(download)
        finally:
            done.set_result(None)
            self._saving.discard(done)

    async def _keep_or_cancel(self, download: Download) -> None:
        name = Path(download.suggested_filename or "download").name or "download"
        refusal = self.download_filter(name, download.url) if self.download_filter is not None else None
        if refusal is not None:
            with contextlib.suppress(PlaywrightError):
                await download.cancel()
            self.notices.add(f"The page started a download of {name}; it was cancelled: {refusal}")
            return
        try:
            self.downloads_dir.mkdir(parents=True, exist_ok=True)
            target = self.downloads_dir / name
            stem, suffix, n = target.stem, target.suffix, 1
            while target.exists():
                n += 1
                target = self.downloads_dir / f"{stem} ({n}){suffix}"
            await download.save_as(target)
            self.downloads.append(target)
            size = target.stat().st_size
            self.notices.add(f"A file was downloaded: {name} ({size:,} bytes), saved to {target}.")
        except (PlaywrightError, OSError) as exc:
            self.notices.add(f"A download of {name} started but could not be saved ({exc}).")

    async def _on_dialog(self, dialog: Dialog) -> None:
        info = DialogInfo(dialog.type, dialog.message, dialog.default_value, dialog.page.url if dialog.page else "")
        decision: DialogDecision = True
        policy = self.dialog_policy
        try:
            if policy == "dismiss":
                decision = False
            elif callable(policy):
                result = policy(info)
                if inspect.isawaitable(result):
                    result = await result
                decision = True if result is None else result
        except Exception as exc:  # a broken policy must not leave the page blocked
            log.warning("dialog policy failed: %s", exc)
            decision = False
        try:
            if isinstance(decision, str) and not isinstance(decision, bool):
                await dialog.accept(decision)
                outcome = f"it was answered with '{short(decision)}'"
            elif decision:
                await dialog.accept()
                outcome = "it was accepted"
            else:
                await dialog.dismiss()
                outcome = "it was dismissed"
        except PlaywrightError as exc:
            outcome = f"it could not be answered ({first_line(exc)})"
        article = "An" if info.type[:1] in "aeiou" else "A"
        self.notices.add(f"{article} {info.type} dialog said '{short(info.message, 200)}'; {outcome}.")


class TabRouter:
    """Hands every tab that appears in a shared context to exactly one owner (a :class:`Tabs`).

    A tab an owner creates is that owner's; a tab a page opens (a popup, ``target=_blank``) belongs to the
    owner of the page that opened it; any other tab (opened from outside, e.g. by the user through
    ``context.new_page()``) goes to the first owner, the session's own tabs. Tab ids are unique across owners,
    so a listing of every tab in the browser is unambiguous.
    """

    def __init__(self, root: Tabs) -> None:
        self.owners: list[Tabs] = [root]
        self._owner_of: dict[Page, Tabs] = {}
        self._creator: Tabs | None = None
        self._create_lock = asyncio.Lock()
        self._next = 0

    def next_id(self) -> int:
        self._next += 1
        return self._next - 1

    def add(self, owner: Tabs) -> None:
        self.owners.append(owner)

    def remove(self, owner: Tabs) -> None:
        with contextlib.suppress(ValueError):
            self.owners.remove(owner)
        for page in [p for p, o in self._owner_of.items() if o is owner]:
            del self._owner_of[page]

    def owner(self, page: Page) -> Tabs | None:
        return self._owner_of.get(page)

    @contextlib.asynccontextmanager
    async def creating(self, owner: Tabs) -> AsyncIterator[None]:
        """Around ``context.new_page()``: the page that appears meanwhile is ``owner``'s (one at a time)."""
        async with self._create_lock:
            self._creator = owner
            owner.creating_page = True
            try:
                yield
            finally:
                owner.creating_page = False
                self._creator = None

    def reset(self) -> None:
        """The context went away: only the first owner remains, and no tab is known."""
        self.owners = self.owners[:1]
        self._owner_of.clear()

    def _claim(self, page: Page, owner: Tabs) -> bool:
        if page in self._owner_of:
            return False
        self._owner_of[page] = owner
        page.on("popup", lambda popup: self._on_popup(popup, owner))
        return True

    def adopt(self, page: Page, owner: Tabs) -> None:
        """Record ``page`` as ``owner``'s without announcing it (a tab the owner made or already had)."""
        if self._claim(page, owner):
            owner.register(page)

    def assign(self, page: Page, owner: Tabs) -> None:
        """Give a tab that appeared to ``owner``, which makes it current and tells its watch or notices."""
        if self._claim(page, owner):
            owner.on_context_page(page)

    def _on_popup(self, popup: Page, opener_owner: Tabs) -> None:
        if opener_owner in self.owners:
            self.assign(popup, opener_owner)

    def on_context_page(self, page: Page) -> None:
        """The context's "page" event. Playwright emits the opener's "popup" right after it (same call), which
        claims a popup for its opener's owner; whatever is still unclaimed one loop turn later is the
        creator's (which also assigns it explicitly once ``new_page()`` returns), else the first owner's."""
        asyncio.get_running_loop().call_soon(self._unclaimed, page)

    def _unclaimed(self, page: Page) -> None:
        if page not in self._owner_of and not page.is_closed():
            self.assign(page, self._creator or self.owners[0])


async def storm_over(tabs: Tabs, limit: float = 60.0) -> None:
    """Wait (at most ``limit`` seconds) until a popup storm of ``tabs`` is over: Chromium announces its tabs one
    by one long after the page asked for them, each closed as it comes; a run that ends before the last would
    leave them to slow down the next one. Then the tabs still closing have closed."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while loop.time() < end and (  # noqa: ASYNC110 - Chromium is polled: no event says a tab is pending
        loop.time() < tabs._storm_until or await unannounced(tabs.open_pages())
    ):
        await asyncio.sleep(0.25)
    if tabs._closing:
        await asyncio.wait(set(tabs._closing), timeout=max(0.1, end - loop.time()))


async def unannounced(pages: list[Page]) -> bool:
    """Whether Chromium holds tabs of the context of ``pages`` that Playwright has not announced yet (a popup
    storm's tail), asked through DevTools of one of them; False when it cannot tell."""
    page = next(iter(pages), None)
    if page is None:
        return False
    try:
        cdp = await wait_for(page.context.new_cdp_session(page), 2)
    except Exception:
        return False
    try:
        mine = (await wait_for(cdp.send("Target.getTargetInfo"), 2))["targetInfo"].get("browserContextId")
        infos = (await wait_for(cdp.send("Target.getTargets"), 2))["targetInfos"]
        held = [i for i in infos if i.get("type") == "page" and i.get("browserContextId") == mine]
        return len(held) > len([p for p in page.context.pages if not p.is_closed()])
    except Exception:
        return False
    finally:
        with contextlib.suppress(Exception):
            await cdp.detach()
