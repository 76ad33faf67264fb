"""A recipe map's rows by request, checked: :class:`RequestWay`, what the map engine asks how each row goes.

``recipe.map(rows, agent, mode=...)``: ``page`` drives the page for every row, as a recipe always did. ``request``
asks the learned call (template.py) for every row. ``auto`` (the default) asks it once the first ``checks`` rows
(3) went both ways and agreed exactly, field by field; a disagreement sends the whole map back to the page, saying
which row and field. Then each row is one request (two with an id looked up first, one more for a per-visit
token) through the browser context's own request client (the session's cookies apply), judged at the door
(browser/door/direct.py): the recorded origin only, the run's allowed domains, no secret to another site.

A row whose answer is an error, has another shape or lacks a field falls back to the page recipe for that row
(``way`` = ``fallback``, and ``way_note`` says why); ``429`` and ``503`` are asked again after a pause (``Retry-After``,
else doubling) a few times first. After ``patience`` fallbacks in a row (5), or a refusal at the door, the map
goes back to the page for the rows left and says why (``RequestWay.why``). Without a learned call, or with one
whose effect the person did not approve when the recipe was made, ``auto`` drives the page and says why; ``request``
refuses before any row runs.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from ....browser.door.direct import DirectAnswer, DirectFailed, DirectRefused, DirectRequest, send_direct
from ....browser.session.browser_session import BrowserSession
from ....core.abort import AbortedError, AbortSignal
from ....core.messages import Usage
from ...batch.map_table import MapInputError, MapRow
from ...runs.result import PageAgentResult
from ...runs.run_data import differences
from ...safety.domains import navigation_refusal
from ...step.pilot import Runner
from ..answer import answer_from
from ..recipe_pilot import Recipe, row_values
from .template import CallMiss, pick, plain, url_origin

Mode = Literal["auto", "request", "page"]
MODES: tuple[str, ...] = ("auto", "request", "page")
#: Statuses asked again after a pause, and how often.
BUSY = (429, 503)
RETRIES = 3
BACKOFF_S = 0.25
BACKOFF_CAP_S = 5.0


def check_mode(mode: object) -> Mode:
    """``mode`` as a :data:`Mode`, or a clear error naming the three."""
    if mode == "auto" or mode == "request" or mode == "page":
        return mode
    raise ValueError(f"mode must be 'auto', 'request' or 'page', not {mode!r}")


class RequestWay:
    """How each row of one recipe map goes (see the module docstring); ``ways[row]`` = ``(way, note)``."""

    def __init__(
        self, recipe: Recipe, mode: Mode, *, checks: int = 3, patience: int = 5, executor: bool = False,
        agent: Runner | None = None,
    ) -> None:  # fmt: skip
        self.recipe = recipe
        self.call = recipe.call
        self.checks = max(0, checks)
        self.patience = max(1, patience)
        self.ways: dict[int, tuple[str, str]] = {}
        self.way, self.why = self._first_way(check_mode(mode), executor, agent)
        self.checking = self.agreed = self.unchecked = 0
        self.streak = 0
        self._ready: asyncio.Event | None = None
        self._visits: asyncio.Lock | None = None

    def _first_way(self, mode: Mode, executor: bool, agent: Runner | None) -> tuple[str, str]:
        call = self.call
        if mode == "page":
            return "page", "mode='page'"
        why = ""
        if call is None:
            why = f"the recipe learned no call: {self.recipe.call_note or 'it was made before recipes learned calls'}"
        elif call.effect and not call.approved:
            why = (
                f"its call has an effect the recording approved ({call.effect}); approve the recipe's effects when you "
                "make it (Recipe.from_run(..., approve_effects=True)) to send it in a map"
            )
        elif call.effect and getattr(agent, "approval", None) == "deny-risky":
            why = f"its call has an effect ({call.effect}) and the agent's policy denies risky actions"
        elif executor:
            why = "rows on an executor go by the page (requests go from this process's browser)"
        if why and mode == "request":
            raise MapInputError(f"This recipe cannot go by request: {why}. Use mode='page' (or 'auto').")
        if why:
            return "page", why
        if mode == "request":
            return "request", "mode='request'"
        if self.checks == 0:
            return "request", "its learned call (no rows checked: checks=0)"
        return "check", f"its learned call, once {self.checks} rows agree both ways"

    # -- each row ----------------------------------------------------------------------------------------------
    async def __call__(
        self,
        row: MapRow,
        by_page: Callable[[], Awaitable[PageAgentResult | None]],
        browser: BrowserSession,
        agent: Runner,
        signal: AbortSignal,
    ) -> PageAgentResult | None:
        """Row ``row`` by request or by ``by_page`` (its page recipe), noting which way it went and why. A stop
        while a request is out ends the row ``stopped``, saying so."""
        try:
            return await self._row(row, by_page, browser, agent, signal)
        except AbortedError as exc:
            self.ways.setdefault(row.index, ("request", "stopped"))
            return PageAgentResult(
                task=row.task, status="stopped", success=False, text="", steps=[], usage=Usage(), model="request",
                duration_s=0.0, prompt_version="", error=f"Stopped before the row's request finished: {exc.reason}",
            )  # fmt: skip

    async def _row(
        self,
        row: MapRow,
        by_page: Callable[[], Awaitable[PageAgentResult | None]],
        browser: BrowserSession,
        agent: Runner,
        signal: AbortSignal,
    ) -> PageAgentResult | None:
        if self.way == "page":
            return await self._page(row, by_page, "page", "")
        if row.start_url and self.call is not None and url_origin(row.start_url) != self.call.origin:
            return await self._page(
                row, by_page, "page", f"the row starts on {url_origin(row.start_url) or row.start_url}"
            )
        if self.way == "check" and self.checking < self.checks:
            self.checking += 1
            return await self._check(row, by_page, browser, agent, signal)
        if self.way == "check":
            await signal.race(self.ready().wait())
        if self.way == "page":
            return await self._page(row, by_page, "page", "")
        try:
            result = await self.by_request(row, browser, agent, signal)
        except DirectRefused as refused:
            self.to_page(str(refused))
            return await self._page(row, by_page, "fallback", str(refused))
        except CallMiss as miss:
            self.streak += 1
            if self.streak >= self.patience:
                self.to_page(f"{self.streak} rows in a row could not go by request, the last because {miss}")
            return await self._page(row, by_page, "fallback", str(miss))
        self.streak = 0
        self.ways[row.index] = ("request", "")
        return result

    async def _page(
        self, row: MapRow, by_page: Callable[[], Awaitable[PageAgentResult | None]], way: str, note: str
    ) -> PageAgentResult | None:
        self.ways[row.index] = (way, note)
        return await by_page()

    async def _check(
        self,
        row: MapRow,
        by_page: Callable[[], Awaitable[PageAgentResult | None]],
        browser: BrowserSession,
        agent: Runner,
        signal: AbortSignal,
    ) -> PageAgentResult | None:
        """Both ways: the page's answer is the row's; the request's must equal it, field by field."""
        asked: PageAgentResult | None = None
        missed = ""
        try:
            asked = await self.by_request(row, browser, agent, signal)
        except (CallMiss, DirectRefused) as exc:
            missed = str(exc)
        page = await by_page()
        if page is None or not page.success:
            self.checking -= 1  # the page could not say: another row checks instead, a few times at most
            self.unchecked += 1
            if self.unchecked >= self.checks and self.way == "check":
                self.to_page(f"the page recipe failed on {self.unchecked} rows, so the call could not be checked")
            self.ways[row.index] = ("page", "the page recipe failed, so this row checked nothing")
            return page
        if asked is None:
            self.to_page(f"row {row.index} by request did not give the answer ({missed})")
            self.ways[row.index] = ("both", f"the request did not give the answer: {missed}")
            return page
        diffs = differences(asked.output, page.output, "output") + differences(asked.text, page.text, "answer")
        if diffs:
            where, x, y = diffs[0]
            said = f"{where} was {x} by request and {y} by the page"
            self.to_page(f"row {row.index} differed: {said}")
            self.ways[row.index] = ("both", f"differed: {said}")
            return page
        self.agreed += 1
        self.ways[row.index] = ("both", "agreed")
        if self.agreed >= self.checks and self.way == "check":
            self.way, self.why = "request", f"its learned call: {self.agreed} rows agreed both ways"
            self.ready().set()
        return page

    async def _ask(self, send: _Sender, got: dict[str, Any], token: str | None) -> Any:
        """Each request of the call in turn (an earlier answer's values filled into the later ones): the last answer."""
        call = self.call
        assert call is not None
        data: Any = None
        for step in call.steps:
            try:
                request = call.request(step, got, token)
            except (ValueError, UnicodeError) as exc:
                raise CallMiss(f"the row's values do not fit the request ({exc})") from None
            data = await send.json(request)
            for name, path in step.binds.items():
                got[name] = plain(pick(data, path, got))
        return data

    def visits(self) -> asyncio.Lock:
        if self._visits is None:
            self._visits = asyncio.Lock()
        return self._visits

    def ready(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready

    def to_page(self, why: str) -> None:
        """The rest of the map goes by the page, for ``why``."""
        if self.way != "page":
            self.way, self.why = "page", why
        self.ready().set()

    # -- one row's request -------------------------------------------------------------------------------------
    async def by_request(
        self, row: MapRow, browser: BrowserSession, agent: Runner, signal: AbortSignal
    ) -> PageAgentResult:
        """The row's answer from the learned call, as the page recipe would give it, or a :class:`CallMiss`."""
        call = self.call
        assert call is not None
        started = time.perf_counter()
        values = row_values(self.recipe, row.values)
        got: dict[str, Any] = dict(values)
        send = _Sender(browser, call.origin, agent, signal)
        if call.token is not None:  # one visit's token at a time: a site may keep only its session's latest
            async with self.visits():
                token = await send.token(call.token.page, call.token.name, values)
                data = await self._ask(send, got, token)
        else:
            data = await self._ask(send, got, None)
        text, answer = read_answer(self.recipe, data, got)
        output = answer
        spec = agent.output_spec
        if spec is not None and answer is not None:
            try:
                output = spec.validate(answer)
            except ValueError as exc:
                raise CallMiss(f"the answer does not fit the output type: {str(exc).splitlines()[0]}") from None
        last = self.recipe.steps[-1].args if self.recipe.steps else {}
        success = bool(last.get("success", True))
        return PageAgentResult(
            task=row.task, status="completed", success=success, text=text, steps=[], usage=Usage(), model="request",
            duration_s=time.perf_counter() - started, prompt_version="", output=output,
            output_type=self.recipe.output_type, settings={"way": "request"},
        )  # fmt: skip


def read_answer(recipe: Recipe, data: object, values: Mapping[str, Any]) -> tuple[str, Any]:
    """``(text, typed data)`` of a row from its call's last answer ``data`` (``values``: the row's and the earlier
    answers'), built as the page recipe builds it; a :class:`CallMiss` when a field is missing or of another type."""
    call = recipe.call
    assert call is not None
    reads = {name: field.read(data, values) for name, field in call.fields.items()}
    text, answer, problem = answer_from(recipe.answer, reads, {n: values[n] for n in recipe.names})
    if problem is not None:
        raise CallMiss(problem)
    return text, answer


class _Sender:
    """One row's requests through the door, asked again after a pause while the site says it is busy."""

    def __init__(self, browser: BrowserSession, origin: str, agent: Runner, signal: AbortSignal) -> None:
        self.browser = browser
        self.origin = origin
        self.signal = signal
        allowed, blocked = getattr(agent, "allowed_domains", ()), getattr(agent, "blocked_domains", ())
        self.rule = (lambda url: navigation_refusal(url, allowed, blocked)) if allowed or blocked else None
        secrets = getattr(agent, "secrets", None)
        self.secrets = secrets.kept_from if secrets else None

    async def send(self, request: DirectRequest) -> DirectAnswer:
        browser = self.browser
        for attempt in range(RETRIES + 1):
            try:
                answer = await self.signal.race(
                    browser.call(
                        send_direct, browser.context, request, self.origin, rule=self.rule, secrets=self.secrets
                    )
                )
            except DirectFailed as exc:
                raise CallMiss(str(exc)) from None
            if answer.status not in BUSY or attempt == RETRIES:
                break
            pause = answer.retry_after if answer.retry_after is not None else BACKOFF_S * 2**attempt
            await self.signal.race(asyncio.sleep(min(pause, BACKOFF_CAP_S)))
        if not 200 <= answer.status < 300:
            tries = f" after {RETRIES + 1} tries" if answer.status in BUSY else ""
            raise CallMiss(f"the site answered {answer.status} to {request.method} {_path(request.url)}{tries}")
        return answer

    async def json(self, request: DirectRequest) -> Any:
        answer = await self.send(request)
        if "json" not in answer.content_type:
            raise CallMiss(f"the site answered {answer.content_type or 'no content type'}, not JSON")
        try:
            return json.loads(answer.body)
        except (ValueError, RecursionError):
            raise CallMiss("the site's answer says it is JSON but is not") from None

    async def token(self, page: str, name: str, values: Mapping[str, Any]) -> str:
        from ..slots import fill

        answer = await self.send(DirectRequest("GET", self.origin + fill(page, values), {"accept": "text/html"}))
        found = find_token(answer.body.decode("utf-8", "replace"), name)
        if found is None:
            raise CallMiss(f"the page {fill(page, values)[:80]} has no per-visit token for {name}")
        return found


def _path(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[-1][:80]


_TAG = re.compile(r"<(?:meta|input)\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def find_token(html: str, name: str) -> str | None:
    """The per-visit token ``name`` names in a page: a ``<meta>`` or ``<input>`` named like it (its ``content`` or
    ``value``), or a script's ``name: "..."``; None when the page holds none."""
    bare = re.sub(r"^x-", "", name.lower())
    names = {name.lower(), bare, bare.replace("-", "_"), bare.replace("_", "-"), "csrf-token", "csrf_token", "_token"}
    for tag in _TAG.findall(html):
        attrs = {k.lower(): a or b for k, a, b in _ATTR.findall(tag)}
        if (attrs.get("name") or attrs.get("id") or "").lower() in names:
            value = attrs.get("content") or attrs.get("value")
            if value:
                return value
    for candidate in sorted(names, key=len, reverse=True):
        m = re.search(rf"""["']?{re.escape(candidate)}["']?\s*[:=]\s*["']([^"'<>\s]{{8,}})["']""", html, re.I)
        if m:
            return m.group(1)
    return None


__all__ = ["MODES", "Mode", "RequestWay", "check_mode", "find_token", "read_answer"]
