"""The approval line of one run: what a call would really do, what the policy says, asking, and the record.

For each call the model chose, :class:`RunGate` builds the :class:`~.approval.ApprovalRequest` the policy
sees (the element the call targets, from the latest snapshot; what it would open, press or download, from
:mod:`.effects` and :mod:`.downloads`), passes it through :func:`~.approval.gate`, announces a question as an
``ApprovalRequested`` event (with a crop of the target when a person will look), records the decision on the
step and emits ``ApprovalAnswered``. A denial becomes a blocked call whose reason the model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..browser.crop import target_crop
from ..browser.session import BrowserSession
from ..core.abort import AbortSignal
from ..core.loop import BeforeToolCall, BlockToolCall
from ..core.tools import Tool
from .approval import Approval, ApprovalAnswer, ApprovalRequest, Approver, PolicyFunction, PolicyName, denial_text, gate
from .domains import DomainPattern
from .downloads import DownloadPolicy, action_key
from .effects import describe_effects
from .events import ApprovalAnswered, ApprovalRequested, PageEvent
from .results import PageStep


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
    }


class RunGate:
    """Judges each call of one run before it executes (see the module docstring)."""

    def __init__(
        self, agent: GateSpec, downloads: DownloadPolicy, put: Callable[[PageEvent], None], *, interactive: bool
    ) -> None:
        self.agent = agent
        self.downloads = downloads
        self.put = put
        self.interactive = interactive

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
        if answer.approved and request.downloads:
            self.downloads.approved()
        step.approval = {
            "decision": "approved" if answer.approved else "denied",
            "reason": answer.reason,
            "by": answer.by,
            "risk": request.reason,
        }
        self.put(ApprovalAnswered(step, request, answer))
        return None if answer.approved else BlockToolCall(denial_text(answer))

    async def _announce(self, step: PageStep, browser: BrowserSession, approval: Approval) -> None:
        """Show the question: with a crop of the target element when a person will look at it."""
        index = approval.request.args.get("index")
        if self.interactive and index is not None:
            try:
                approval.crop = await target_crop(browser, int(index))
            except Exception:  # a missing crop must not block the question
                approval.crop = None
        self.put(ApprovalRequested(step, approval))
