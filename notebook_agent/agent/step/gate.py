"""The approval lines of one run: what a call would really do, what the policy says, asking, and the record.

Two lines, one policy. The first judges a call before it runs, by what it looks like (its element, its href,
its keys). The second judges what it really does, where every effect passes: the browser holds each request
that would navigate or open a tab on another site, or send data to another site, and asks
:meth:`RunGate.judge_effect` (see ``browser/door/route.py``). A page decides what a click does; the second line is
what makes the policy hold.

For each call the model chose, :class:`RunGate` builds the
:class:`~notebook_agent.agent.safety.approval.ApprovalRequest` the policy sees (the element the call targets, from the
latest snapshot; what it would open, press or download, from :mod:`~notebook_agent.agent.safety.effects` and
:mod:`~notebook_agent.agent.safety.downloads`), passes it through :func:`~notebook_agent.agent.safety.approval.gate`,
announces a question as an ``ApprovalRequested`` event (with a crop of the target when a person will look), records the
decision on the step and emits ``ApprovalAnswered``. A denial becomes a blocked call (or an aborted request) whose
reason the model reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ...browser.door.egress import as_http
from ...browser.door.route import Effect
from ...browser.session.browser_session import BrowserSession
from ...browser.session.page_reads import target_crop
from ...browser.urls import navigation_target, site
from ...core.abort import AbortedError, AbortSignal
from ...core.loop import BeforeToolCall, BlockToolCall
from ...core.tools import Tool
from ..runs.events import ApprovalAnswered, ApprovalRequested, PageEvent
from ..runs.result import PageStep
from ..safety.approval import (
    Approval,
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    PolicyFunction,
    PolicyName,
    denial_text,
    gate,
)
from ..safety.domains import DomainPattern, matches_any
from ..safety.downloads import DownloadPolicy, action_key
from ..safety.effects import describe_effects


class GateSpec(Protocol):
    """What the gate reads from the agent's settings."""

    approval: PolicyName | PolicyFunction
    approver: Approver | None
    approval_timeout: float
    allowed_domains: tuple[DomainPattern, ...]
    custom_tools: dict[str, Tool | None]


def target_element(browser: BrowserSession | None, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The element an action names by index, as the approval policy (and the redactor) sees it."""
    if args.get("index") is None or browser is None:
        return None
    info = browser.element(int(args["index"]))
    if info is None:
        return None
    return {
        "tag": info.tag,
        "text": info.text,
        "attributes": dict(info.attributes),
        "box": info.box,
        "line": info.line,
        "sensitive": info.sensitive,
        "control": info.control,
        "twin": info.twin,
    }


class RunGate:
    """Judges each call of one run before it executes (see the module docstring)."""

    def __init__(
        self,
        agent: GateSpec,
        downloads: DownloadPolicy,
        put: Callable[[PageEvent], None],
        *,
        interactive: bool,
        signal: AbortSignal,
        step: Callable[[], PageStep | None],
        browser: Callable[[], BrowserSession | None],
    ) -> None:
        self.agent = agent
        self.downloads = downloads
        self.put = put
        self.interactive = interactive
        self.signal = signal
        self.step = step
        self.browser = browser
        self.trusted: set[tuple[str, int]] = set()
        """Sites a navigation may reach without a question: the start URL's, and targets a person approved."""
        self.open: set[Approval] = set()
        """Questions not answered yet."""
        self.closed = False

    def close(self) -> None:
        """The run is over: a question still open is answered (denied), and any later effect is refused, so
        no request stays held for a run that will never answer it."""
        self.closed = True
        for approval in list(self.open):
            approval.resolve(ApprovalAnswer(False, "The run ended before anyone answered.", by="policy"))

    def trust(self, url: str | None) -> None:
        """Navigations to ``url``'s site need no question from now on (the start URL, an approved target)."""
        there = site(url or "")
        if there is not None:
            self.trusted.add(there)

    async def admit(self, url: str, current: str) -> str | None:
        """Why a start URL nobody chose (a replay's, read from its recording) may not be opened, or None. It is
        judged as the model's ``go_to_url`` from the page the browser is on would be: ``allowed_domains``, then
        the policy (under ``deny-risky`` another site is refused; under ``ask-risky`` the approver is asked)."""
        target = navigation_target(url)
        domains = self.agent.allowed_domains
        allowed = bool(domains) and matches_any(target, domains)
        if domains and not allowed:
            return f"{target} is outside the allowed domains ({', '.join(d.text for d in domains)})"
        request = ApprovalRequest("go_to_url", {"url": url}, current, None, target_url=target, target_allowed=allowed)
        answer = await gate(
            self.agent.approval,
            request,
            approver=self.agent.approver,
            timeout=self.agent.approval_timeout,
            signal=self.signal,
        )
        return None if answer is None or answer.approved else denial_text(answer)

    @property
    def judges_effects(self) -> bool:
        """Whether effects need judging at all (under ``auto`` every effect is let through)."""
        return self.agent.approval != "auto"

    async def judge_effect(self, effect: Effect) -> str | None:
        """The network line: an effect the browser holds at its door (a navigation or popup to another site,
        data sent to another site), judged by the same policy, asked like any action, recorded on the step.
        None lets it through; a sentence aborts it and the action's result tells the model why."""
        if self.closed:
            return "the run that would have to approve it has ended"
        if effect.kind != "data" and site(as_http(effect.url)) in self.trusted:
            return None
        if self.agent.allowed_domains and matches_any(as_http(effect.url), self.agent.allowed_domains):
            return None
        step = self.step()
        if effect.via and step is None:
            return None  # the start URL's own redirects (before the first step): part of the URL the user chose
        browser = self.browser()
        action = step.action if step is not None else None
        args = dict(step.args) if step is not None and action else {}
        element = target_element(browser, args) if action else None
        label = " ".join(str((element or {}).get("text") or "").split())[:60]
        doer = f'{action} on "{label}"' if action and label else (action or "the page")
        request = ApprovalRequest(
            action or "page",
            args,
            step.url if step is not None else effect.origin,
            element,
            step=step.index if step is not None else 0,
            target_url=effect.url,
            effect=f"{doer} is about to {effect.describe()}",
        )
        try:
            answer = await gate(
                self.agent.approval,
                request,
                approver=self.agent.approver,
                timeout=self.agent.approval_timeout,
                signal=self.signal,
                announce=(lambda approval: self._announce(step, browser, approval)) if step and browser else None,
                answered_elsewhere=self.interactive,
            )
        except AbortedError:
            return "the run was stopped"
        if answer is None:
            return None
        if step is not None:
            self._record(step, request, answer)
        if answer.approved:
            if effect.kind != "data":
                self.trust(as_http(effect.url))
            return None
        return denial_text(answer)

    async def check(
        self,
        step: PageStep,
        browser: BrowserSession,
        tools: dict[str, Tool],
        ctx: BeforeToolCall,
        raw: dict[str, Any],
        args: dict[str, Any],
        signal: AbortSignal,
    ) -> BlockToolCall | None:
        """None lets the call run; a block carries the reason the model reads. ``raw``: the validated arguments
        as a dict; ``args``: the same as they may be shown (secrets as placeholders)."""
        request = ApprovalRequest(ctx.tool_call.name, args, step.url, target_element(browser, raw), step=step.index)
        await describe_effects(
            request,
            raw,
            ctx.args,
            browser=browser,
            tools=tools,
            agent_domains=self.agent.allowed_domains,
            custom=self.agent.custom_tools.get(request.action) is not None,
        )
        request.downloads = self.downloads.expected(request)
        answer: ApprovalAnswer | None = await gate(
            self.agent.approval,
            request,
            approver=self.agent.approver,
            timeout=self.agent.approval_timeout,
            signal=signal,
            announce=lambda approval: self._announce(step, browser, approval),
            answered_elsewhere=self.interactive,
        )
        self.downloads.acting = action_key(request)
        if answer is None:
            return None
        if answer.approved and request.target_url:
            self.trust(request.target_url)  # the navigation a person approved is not asked about again
        if answer.approved and request.downloads:
            self.downloads.approved()
        self._record(step, request, answer)
        return None if answer.approved else BlockToolCall(denial_text(answer))

    def _record(self, step: PageStep, request: ApprovalRequest, answer: ApprovalAnswer) -> None:
        """The decision on the step (kept in the run file) and the ``ApprovalAnswered`` event."""
        step.approval = {
            "decision": "approved" if answer.approved else "denied",
            "reason": answer.reason,
            "by": answer.by,
            "risk": request.reason,
        }
        self.put(ApprovalAnswered(step, request, answer))

    async def _announce(self, step: PageStep, browser: BrowserSession, approval: Approval) -> None:
        """Show the question: with a crop of the target element when a person will look at it."""
        self.open.add(approval)
        approval.when_answered(lambda: self.open.discard(approval))
        index = approval.request.args.get("index")
        if self.interactive and index is not None:
            try:
                approval.crop = await target_crop(browser, int(index))
            except Exception:  # a missing crop must not block the question
                approval.crop = None
        self.put(ApprovalRequested(step, approval))
