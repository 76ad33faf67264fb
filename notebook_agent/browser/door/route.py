"""The door every effect passes: a route on the browser context that judges requests before they leave.

A page decides what a click does: a handler sets ``location``, a button posts its form elsewhere, a script
calls ``fetch`` or ``window.open``. Judging actions by how they look cannot hold, so the session judges what
they do, here, where every request of every tab, popup and frame passes:

- the domain rule (``rule(url)``, the run's allowed and blocked domains) refuses a top-level
  navigation or a popup to a domain it may not open, before it loads;
- the effect judge (``judge(effect)``, the run's approval policy) is asked about every :class:`Effect`: a
  top-level navigation or popup to another site, and any request that carries data (a body) to another site.
  The request is held while it decides (a person may be asked); None lets it continue, a sentence aborts it.

Refusals and approvals become notices, so the action's result tells the model what happened. The route is
subtle: the browser follows redirects without asking the route again. Under a domain rule each top-level hop is
fetched here and judged before it is let through; every other redirect (a same-site link whose server sends the
tab elsewhere, a 307 that carries a POST body on) is paused where the browser follows it (redirects.py) and put
to the same judge. Tabs of other sessions sharing the context are left to their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urljoin, urlsplit

from playwright.async_api import BrowserContext, Frame, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from ..errors import Notices
from ..page.frozen_tabs import confirmed, later
from ..page.tabs import Tabs
from ..urls import site
from .egress import Outgoing, as_http, carries_data, describe_leak, leak
from .live import LiveSecrets, Source
from .redirects import Hop, RedirectWatch
from .sockets import SocketDoor
from .tab_door import TabDoor

DomainRule = Callable[[str], "str | None"]
"""``rule(url)`` returns why a top-level navigation to ``url`` is refused, or None to let it through."""

EffectKind = Literal["navigation", "popup", "data", "websocket"]


@dataclass(frozen=True)
class Effect:
    """A request that would reach another site: what a person is asked about, in words."""

    kind: EffectKind
    url: str
    method: str
    origin: str
    """The URL of the document (or the opener) that made it; "" when unknown."""
    fields: tuple[str, ...] = ()
    """The form fields its body carries, when it is a form (names only, never values)."""
    body_size: int = 0
    via: str = ""
    """The URL whose server redirected here, when the request is a redirect hop; "" otherwise."""
    live: str = ""
    """The secrets live in the session that may not go there, in words ("the secret 'pw' (its sites:
    a.example)"), when that is why it is asked (live.py); "" otherwise."""

    @property
    def target(self) -> str:
        """``host[:port]/path`` of where it goes, short."""
        return _short(self.url)

    def describe(self) -> str:
        """``POST 3 form fields (email, name, card) to b.example/collect``, ``open b.example/x in a new tab``."""
        what = self._what()
        if self.via:
            what = f"{what}, following a redirect from {_short(self.via)}"
        return f"{what}, while {self.live} is live in this session" if self.live else what

    def _what(self) -> str:
        if self.kind == "websocket":
            return f"open a WebSocket to {self.target}"
        if self.kind == "popup":
            return f"open {self.target} in a new tab"
        if self.kind == "navigation" and self.method in ("GET", "HEAD"):
            return f"navigate to {self.target}"
        if self.fields:
            shown = ", ".join(self.fields[:6]) + (", …" if len(self.fields) > 6 else "")
            n = len(self.fields)
            return f"{self.method} {n} form field{'' if n == 1 else 's'} ({shown}) to {self.target}"
        size = f" ({self.body_size} bytes)" if self.body_size else " (in its URL)"
        if not self.body_size and self.live and not urlsplit(self.url).query:
            size = " (in its path)"
        return f"send a {self.method} request with data{size} to {self.target}"


def _short(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path if parts.path not in ('', '/') else ''}"


EffectJudge = Callable[[Effect], Coroutine[Any, Any, "str | None"]]
"""``await judge(effect)`` returns why the effect is refused, or None to let it through (it may ask a person)."""


def _form_fields(request: Request) -> tuple[str, ...]:
    content_type = (request.headers.get("content-type") or "").lower()
    body = request.post_data
    if not body:
        return ()
    if "application/x-www-form-urlencoded" in content_type:
        return tuple(dict.fromkeys(k for k, _ in parse_qsl(body, keep_blank_values=True)))
    if "multipart/form-data" in content_type:
        names = [part.split('"', 2)[1] for part in body.split('name="')[1:] if '"' in part]
        return tuple(dict.fromkeys(n for n in names if n))
    return ()


def classify(
    request: Request, origin: str, *, top: bool, popup: bool, live: LiveSecrets | None = None
) -> Effect | None:
    """The effect ``request`` would have, made from a tab whose top document is at ``origin``: None when it
    stays on that site, or is a plain read (no body, no query string, not a top-level navigation)."""
    outgoing = Outgoing("request", request.url, request.method, {}, request.post_data_buffer or b"")
    fields = _form_fields(request) if outgoing.body else ()
    top = top and request.is_navigation_request()
    return classify_outgoing(outgoing, origin, top=top, popup=popup, fields=fields, live=live)


def classify_outgoing(
    outgoing: Outgoing,
    origin: str,
    *,
    top: bool = False,
    popup: bool = False,
    fields: tuple[str, ...] = (),
    live: LiveSecrets | None = None,
) -> Effect | None:
    """The one rule for where something goes (egress.py has the one for what it carries): another site than
    the tab's (``origin``) and more than a plain read, or a top-level navigation or popup there. While a
    secret is live in the session (``live``, live.py) and the destination is not one of its own sites, a read
    of a path the session had not fetched before is data too, and the effect names the secret."""
    there, here = site(as_http(outgoing.url)), site(origin)
    if there is None or there == here:
        return None
    method, size = outgoing.method.upper(), len(outgoing.body)
    held = live.outside(outgoing.url) if live is not None else []
    said = live.describe(held) if live is not None and held else ""
    data = carries_data(outgoing) or (bool(held) and live is not None and live.new_path(outgoing.url))
    if popup:
        return Effect("popup", outgoing.url, method, origin, fields, size, live=said if data else "")
    if top:
        return Effect("navigation", outgoing.url, method, origin, fields, size, live=said if data else "")
    if outgoing.kind == "websocket":
        return Effect("websocket", outgoing.url, "GET", origin, live=said)
    if data:
        return Effect("data", outgoing.url, method, origin, fields, size, live=said)
    return None


def _document_url(frame: Frame) -> str:
    """The URL whose site a request of ``frame`` is judged from: the tab's top document, whichever frame sends
    it (a form of another site's iframe that Enter submits reaches a site the run never chose)."""
    while frame.parent_frame is not None:
        frame = frame.parent_frame
    return frame.url


#: Seconds to wait for the browser to confirm a route change (see :func:`_route_change`).
ROUTE_WAIT = 5.0
#: Seconds each tab then gets to confirm it on its own: the ones that answer do so at once.
TAB_WAIT = 1.0
#: Contexts whose last route change a tab has not confirmed yet (see :func:`_route_change`).
_held: weakref.WeakSet[BrowserContext] = weakref.WeakSet()


async def _route_change(context: BrowserContext, change: Awaitable[object]) -> None:
    """Add or remove a route of ``context``, and make sure every tab that answers applies it.

    Playwright applies a context's routes to its tabs one after the other, and a tab whose script never yields
    (``while(true){}``, maybe another session's) never answers: every tab after it would be left without the
    route, and the session would wait forever. So the wait is bounded, and when it ends unconfirmed each tab is
    asked on its own (a route of the tab itself, added and removed, applies the context's routes to that tab
    alone); the frozen one applies it when it answers again (until then its script cannot send anything).
    Until the held change goes through, later changes of the context are not waited for again: they go to the
    tabs on their own at once (a frozen tab costs the first gated run its bound, not every run twice)."""
    task = asyncio.ensure_future(change)
    if context not in _held:
        done, _ = await asyncio.wait({task}, timeout=ROUTE_WAIT)
        if task in done:
            try:
                task.result()
                return
            except PlaywrightError as exc:
                # a tab closed while Playwright applied the change tab by tab (another run's tab, ending): the
                # change is the context's already; each tab still open applies it on its own
                if "closed" not in str(exc):
                    raise
            await asyncio.gather(*(confirmed(page, _apply_routes(page), TAB_WAIT) for page in context.pages))
            return
        # a tab holds the context's changes: the next ones go to the tabs on their own at once, until it answers
        _held.add(context)
        task.add_done_callback(lambda _: _held.discard(context))
    later(task)
    await asyncio.gather(*(confirmed(page, _apply_routes(page), TAB_WAIT) for page in context.pages))


def _never(url: str) -> bool:
    return False


async def _let_by(route: Route) -> None:
    await route.fallback()


async def _apply_routes(page: Page) -> None:
    """Make ``page`` apply its context's current routes (the caller bounds the wait: it may be the frozen one)."""
    with contextlib.suppress(PlaywrightError):
        await page.route(_never, _let_by)
        await page.unroute(_never, _let_by)


class Door:
    """One session's door: its domain rule, its judge and its secrets, and the route that applies them to the
    session's own tabs (see the module doc)."""

    def __init__(self, tabs: Tabs, notices: Notices) -> None:
        self.tabs = tabs
        self.notices = notices
        self.rule: DomainRule | None = None
        self.judge: EffectJudge | None = None
        self.live = LiveSecrets()
        """The secrets the session holds, from the first run that holds one until the session closes
        (live.py): what may not go where, under every policy and between runs."""
        self.judge_loop: asyncio.AbstractEventLoop | None = None
        """The loop the judge runs on (the caller's; the route may run on the browser thread's)."""
        self.routed: BrowserContext | None = None
        """The context the route is on (it stays there when the rule is removed, and lets everything by)."""
        self.asked = 0
        self.redirects = RedirectWatch(self._hop)
        self.tab_door = TabDoor(self._held_by_tab)
        self.sockets = SocketDoor(self)
        """How many effects were put to the judge so far (an action compares it before and after)."""
        self._asking = 0
        self._idle: asyncio.Event | None = None

    def refusal(self, url: str) -> str | None:
        """Why the domain rule refuses a navigation to ``url`` (a sentence), or None."""
        return self.rule(url) if self.rule is not None else None

    async def set(self, rule: DomainRule | None, context: BrowserContext | None) -> None:
        """Use ``rule`` from now on; route ``context`` (the session's current one) if it is not yet."""
        self.rule = rule
        if context is None or self.routed is context:
            return
        await self._door(context)

    async def set_judge(
        self, judge: EffectJudge | None, context: BrowserContext | None, loop: asyncio.AbstractEventLoop | None
    ) -> None:
        """Put every effect to ``judge`` (run on ``loop``) from now on (None: let them by); route ``context`` if
        it is not yet."""
        self.judge = judge
        self.judge_loop = loop
        if context is None or self.routed is context or judge is None:
            return
        await self._door(context)

    async def hold(self, source: Source, context: BrowserContext | None) -> None:
        """A run's secrets are live from now until the session closes (live.py): every request, WebSocket and
        frame carrying one to a site not its own is refused whatever the policy, and data to such a site is
        judged; route ``context`` if it is not yet."""
        self.live.hold(source)
        if context is not None and self.routed is not context:
            await self._door(context)

    def keep(self, source: Source) -> None:
        """The run that held ``source`` has ended: its secrets stay live as they are now (the door stays)."""
        self.live.keep(source)

    def secrets(self, url: str) -> list[tuple[str, str]]:
        """(name, value) of each live secret that may not go to ``url`` (egress.py ``SecretSites``)."""
        return self.live.kept_from(url)

    @property
    def active(self) -> bool:
        return self.rule is not None or self.judge is not None or self.live.live

    async def adopt(self, context: BrowserContext) -> None:
        """A new context of the session (a relaunched browser) keeps the rule, the judge and the secrets."""
        if self.active:
            await self._door(context)

    async def close(self) -> None:
        """The session is done: its route and its redirect watch leave the context, which other sessions may
        share (a run in its own tab; every request of the context would pass one more handler otherwise)."""
        self.rule = self.judge = None
        self.live.clear()
        context, self.routed = self.routed, None
        if context is not None:
            with contextlib.suppress(PlaywrightError):
                await _route_change(context, context.unroute("**/*", self.route))
            await self.sockets.close(context)
        await asyncio.gather(self.redirects.close(), self.tab_door.close())

    async def _door(self, context: BrowserContext) -> None:
        """Route ``context`` and watch its redirects."""
        self.routed = context
        await asyncio.gather(
            _route_change(context, context.route("**/*", self.route)),
            self.redirects.watch(context),
            self.tab_door.watch(context),
            self.sockets.watch(context),
        )

    async def settled(self) -> None:
        """Wait until no effect is waiting for the judge (a person may be answering)."""
        while self._asking:
            if self._idle is None:
                self._idle = asyncio.Event()
            await self._idle.wait()

    async def egress(self, outgoing: Outgoing, origin: str, **where: Any) -> str | None:
        """The one rule, for the route, the tab's own interception and the WebSocket route alike: a secret
        going to a site not its own never leaves; anything else that reaches another site than the tab's
        (``origin``) is put to the judge (:func:`classify_outgoing`). Why it may not leave, or None; a refusal
        is a notice the model reads."""
        name = leak(outgoing, self.secrets)
        if name is not None:
            leaked = describe_leak(name, outgoing)
            self.notices.add(f"Blocked: {leaked}.")
            return leaked
        effect = classify_outgoing(outgoing, origin, live=self.live, **where)
        if effect is None:
            return None
        reason = await self._judged(effect)
        if reason is not None:
            self.notices.add(f"Blocked: {effect.describe()} ({reason})")
        return reason

    async def _held_by_tab(self, page: Page, outgoing: Outgoing) -> str | None:
        """A request the tab's own interception holds (tab_door.py), judged from the tab's top document."""
        if self.tabs.tab_id(page) < 0:
            opener = await page.opener()
            if opener is None or self.tabs.tab_id(opener) < 0:
                return None  # another session's tab
        self.live.seen(outgoing.url)
        return await self.egress(outgoing, page.url)

    async def _judged(self, effect: Effect) -> str | None:
        """The judge's answer, on the judge's loop; a judge that fails refuses (the effect is not let by). With
        no judge, an effect is let by (a run under ``auto``), unless a live secret is why it was asked and no run
        is there: then nobody can approve it, and it is refused (after a run, a page's timer or the notebook's
        own ``page.goto`` must not carry the secret out)."""
        judge = self.judge
        if judge is None:
            return "no run is there to approve it" if effect.live and not self.live.running else None
        self.asked += 1
        self._asking += 1
        if self._idle is not None:
            self._idle.clear()
        try:
            loop = asyncio.get_running_loop()
            if self.judge_loop is None or self.judge_loop is loop:
                reason = await judge(effect)
            else:
                reason = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(judge(effect), self.judge_loop))
            plain = effect.method in ("GET", "HEAD") and not effect.body_size and not urlsplit(effect.url).query
            if reason is None and effect.live and effect.kind != "websocket" and plain:
                self.live.reads_approved(effect.url)  # data only in its path, approved: asked once per site
            return reason
        except Exception as exc:
            return f"it could not be judged ({type(exc).__name__}: {exc})"
        finally:
            self._asking -= 1
            if not self._asking and self._idle is not None:
                self._idle.set()

    async def _hop(self, hop: Hop) -> str | None:
        """Why the browser may not follow a redirect (redirects.py), or None: judged as the request it becomes."""
        rule, judge = self.rule, self.judge
        if (rule is None and judge is None and not self.live.live) or (hop.document and rule is not None):
            return None  # nothing to apply; or a navigation the route fetched hop by hop and judged already
        page = hop.page
        opener = None
        if self.tabs.tab_id(page) < 0:
            opener = await page.opener()
            if opener is None or self.tabs.tab_id(opener) < 0:
                return None  # another session's tab
        first = page.url in ("", "about:blank")
        origin = (opener.url if opener is not None and first else page.url) or hop.came_from
        there = site(hop.url)
        here = site(hop.came_from)
        if there is None or there in (here, site(origin)) or (here and here[1] == 80 and there == (here[0], 443)):
            return None  # the same site, or its upgrade from http to https
        carries = hop.has_body and hop.status in (307, 308) and hop.method not in ("GET", "HEAD")
        held = self.live.outside(hop.url)
        live = self.live.describe(held) if held else ""
        if hop.top:
            kind: EffectKind = "popup" if opener is not None and first else "navigation"
            effect = Effect(kind, hop.url, hop.method if carries else "GET", origin, via=hop.came_from, live=live)
        elif carries or live:  # while a secret is live, a redirect's path and query are data to another site
            effect = Effect("data", hop.url, hop.method if carries else "GET", origin, via=hop.came_from, live=live)
        else:
            return None  # a frame's or a script's plain read
        reason = await self._judged(effect)
        if reason is not None:
            self.notices.add(f"Blocked: {effect.describe()} ({reason})")
        return reason

    async def route(self, route: Route) -> None:
        request = route.request
        try:
            await self._route(route, request)
        except PlaywrightError:
            pass  # the page or request went away meanwhile

    async def _route(self, route: Route, request: Request) -> None:
        rule = self.rule
        self.live.seen(request.url)
        if not self.active:
            await route.fallback()
            return
        navigation = request.is_navigation_request()
        try:
            frame = request.frame
        except PlaywrightError:  # a popup's first request comes before its frame exists
            frame = None
        popup = navigation and frame is None
        opener = None
        if frame is not None and self.tabs.tab_id(frame.page) < 0:
            opener = await frame.page.opener()
            if opener is None or self.tabs.tab_id(opener) < 0:
                await route.fallback()  # another session's tab (a run in its own tab): its own route decides
                return
            popup = navigation and frame.parent_frame is None  # a tab this session's page opened, on its way in
        top = popup or (navigation and frame is not None and frame.parent_frame is None)
        if top and opener is None and frame is not None and frame.url in ("", "about:blank"):
            opener = await frame.page.opener()  # a new tab's first navigation: judged from the page that opened it
            popup = opener is not None
        if popup and frame is not None:
            await self.tab_door.ready(frame.page)  # its first document runs only once its own session holds it
        if (request.headers.get("sec-purpose") or "").startswith("prefetch"):
            await route.abort("aborted")  # the browser's own guess at a next page: nothing a run needs
            return
        origin = opener.url if opener is not None else (_document_url(frame) if frame is not None and not popup else "")
        origin = origin or request.headers.get("referer") or ""
        url = request.url
        body = request.post_data_buffer or b""
        if not navigation and self.tab_door.judged(request.method, url, body):
            await route.fallback()  # the tab's own interception held it first and judged it (tab_door.py)
            return
        reason = rule(url) if navigation and rule is not None else None  # frames and popups included
        if reason is None and self.secrets is not None:
            outgoing = Outgoing("request", url, request.method, await request.all_headers(), body)
            name = leak(outgoing, self.secrets)
            if name is not None:
                reason = describe_leak(name, outgoing)
        effect = classify(request, origin, top=top, popup=popup, live=self.live) if reason is None else None
        if reason is None and effect is not None:
            reason = await self._judged(effect)
        if reason is None and navigation and rule is not None:
            # Redirects are followed by the browser without asking the route again: fetch this hop ourselves
            # and judge where it redirects before the browser goes there. (Only under a domain rule: a document
            # fulfilled this way has no network address, so Chromium's local-network checks then treat it as
            # public; without one, redirects.py pauses the hop where the browser follows it.)
            response = await route.fetch(max_redirects=0)
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                url = urljoin(request.url, location)
                reason = rule(url) if rule is not None else None
                if reason is None and top and site(url) != site(request.url) and site(url) != site(origin):
                    hop = Effect("popup" if popup else "navigation", url, "GET", request.url)
                    reason = await self._judged(hop)
            if reason is None:
                await route.fulfill(response=response)
                return
        if reason is None:
            await route.fallback()
            return
        if effect is not None and url == request.url:
            self.notices.add(f"Blocked: {effect.describe()} ({reason})")
        elif effect is None and url == request.url and "carried the secret" in reason:
            self.notices.add(f"Blocked: {reason}.")
        else:
            self.notices.add(f"A navigation to {url} was blocked: {reason}")
        await route.abort("aborted")  # "aborted" cancels: no error page, the tab stays where it was
