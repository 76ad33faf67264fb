"""Approval policies: which actions may run on their own, which wait for a person, which never run.

A policy sees the real action (name, validated arguments), the element it targets (from the latest snapshot)
and the page URL, and answers ``allow``, ``ask`` or ``deny``. ``ask`` hands the request to an approver (the
notebook's Approve/Deny buttons, a terminal prompt); nothing executes before it answers, and no answer within
the timeout is a denial. The model sees the reason for every denial.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ...browser.actions import builtin_risk
from ...browser.urls import navigation_target, scheme, site
from ...core.abort import AbortSignal
from ...core.aio import wait_for
from ...core.errors import error_message

Decision: TypeAlias = Literal["allow", "ask", "deny"]

DESTRUCTIVE = re.compile(
    r"\b(delete|remove|erase|destroy|drop|deactivate|close account|cancel (?:subscription|order|account)|"
    r"unsubscribe|pay|payment|purchase|buy|checkout|check out|place order|submit order|confirm order|"
    r"send|transfer|wire|withdraw|sign out everywhere|reset)\b",
    re.IGNORECASE,
)


@dataclass
class ApprovalRequest:
    """One call waiting for a decision."""

    action: str
    args: dict[str, Any]
    url: str
    element: dict[str, Any] | None = None
    """The target element from the latest snapshot (tag, text, attributes, bbox), when the action has one."""
    reason: str = ""
    """Why the policy flagged it (shown to the person)."""
    step: int = 0
    target_url: str | None = None
    """Where the call would navigate (normalised): a typed URL, or the href of a link it clicks."""
    target_allowed: bool = False
    """``target_url`` is on one of the user's allowed domains."""
    keys_target: dict[str, Any] | None = None
    """For ``send_keys``: what the keys act on (the focused element, its form's submit buttons)."""
    risk: str = ""
    """How the action says it is judged (its ``risk``: ``safe``, ``url``, ``element``, ``keys``, ``typing``,
    ``script``, ``ask``; see ``notebook_agent.core.tools.RiskKind``), or "" when it judges itself (a custom tool's
    function, in :attr:`custom_risk`) or declared nothing."""
    custom_risk: str | None = None
    """For a custom tool that judges itself or declared nothing: why it is risky, or None when it is not."""
    custom: bool = False
    downloads: str | None = None
    """What the call would download, when that is known: a link marked ``download``, or an action that
    started a download the last time it was done on this page."""
    effect: str | None = None
    """Set when the question is about a request the call made, held at the network door: what it is about to
    do, in words ("is about to POST 3 form fields (email, name, card) to b.example/collect")."""

    def __post_init__(self) -> None:
        if not self.risk and not self.custom:  # a request about a built-in action, made by name
            self.risk = builtin_risk(self.action)


@dataclass
class ApprovalAnswer:
    approved: bool
    reason: str | None = None
    by: Literal["user", "policy", "timeout"] = "user"


PolicyFunction: TypeAlias = Callable[[ApprovalRequest], Decision]
Approver: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
PolicyName: TypeAlias = Literal["ask-risky", "ask-all", "auto", "deny-risky"]
POLICY_NAMES: tuple[str, ...] = ("ask-risky", "ask-all", "auto", "deny-risky")


def _element_text(element: dict[str, Any] | None) -> str:
    if not element:
        return ""
    parts = [str(element.get("text") or ""), str(element.get("control") or "")]  # a label is judged as its control
    attrs = element.get("attributes") or {}
    for key in ("value", "aria-label", "title", "name", "id", "href"):
        if attrs.get(key):
            parts.append(str(attrs[key]))
    return " ".join(parts)


def navigation_risk(current: str, target: str, allowed: bool = False) -> str | None:
    """Why navigating from ``current`` to ``target`` (both normalised) needs a person, or None."""
    kind = scheme(target)
    if kind == "file":
        return "opens a local file (file:)"
    if kind not in ("http", "https", "about"):
        return f"opens a {kind}: URL"
    if allowed or kind == "about":
        return None
    there, here = site(target), site(current)
    if there is None:
        return None
    host = there[0] if there[1] in (80, 443) else f"{there[0]}:{there[1]}"
    if here is None:
        return f"opens a site ({host}) from a page that has none ({scheme(current) or 'blank'}:)"
    if there != here:
        return f"navigates to another site ({host})"
    return None


def _activates(key: str) -> bool:
    """A key that can press a button or submit a form: any Enter (NumpadEnter, Ctrl/Cmd+Enter, …) or Space."""
    name = key.split("+")[-1]
    return "enter" in name or name in ("space", " ", "return")


def _keys_risk(request: ApprovalRequest) -> str | None:
    """``send_keys`` acts on whatever has focus: judge Enter/Space by the element (and the form Enter submits),
    and refuse to guess where Tab moves focus to before a key that activates."""
    keys = [k.lower() for k in str(request.args.get("keys", "")).split()]
    activates = [i for i, k in enumerate(keys) if _activates(k)]
    if not activates:
        return None
    if any(k.split("+")[-1] == "tab" for k in keys[: activates[-1]]):
        return "moves focus with Tab and then presses Enter/Space: what that activates is not known in advance"
    target = request.keys_target or request.element
    text = _element_text(target)
    if request.keys_target and request.keys_target.get("enter_submits") and any("enter" in k for k in keys):
        text += " " + " ".join(request.keys_target.get("submits") or [])
    match = DESTRUCTIVE.search(text)
    if match:
        label = " ".join(text.split())[:60]
        return f'presses keys on "{label}", which looks destructive or final ({match.group(0).lower()})'
    return None


def risk_reason(request: ApprovalRequest) -> str | None:
    """Why this call is risky, or None, by how its action says it is judged (:attr:`ApprovalRequest.risk`).
    Deliberately simple and visible: people can read and replace it."""
    kind, args = request.risk, request.args
    if not kind:
        return request.custom_risk
    if kind == "ask":
        return request.custom_risk or f"the custom action '{request.action}' asks before it runs"
    if kind == "script":
        return "runs arbitrary JavaScript in the page"
    if request.downloads:
        return f"downloads {request.downloads}"
    if kind == "url":
        target = request.target_url or navigation_target(str(args.get("url", "")))
        return navigation_risk(request.url, target, request.target_allowed)
    if kind == "keys":
        return _keys_risk(request)
    if kind != "element":
        return None
    if request.target_url:
        reason = navigation_risk(request.url, request.target_url, request.target_allowed)
        if reason:
            return reason
    text = _element_text(request.element)
    if isinstance(args.get("text"), str):  # the option it chooses
        text += " " + args["text"]
    match = DESTRUCTIVE.search(text)
    if match:
        element = request.element or {}
        shown = str(element.get("text") or "") or text
        label = " ".join(shown.split())[:60]
        control = " ".join(str(element.get("control") or "").split())[:60]
        via = f" (a label: the click goes to {control})" if control else ""
        return f'acts on "{label}"{via}, which looks destructive or final ({match.group(0).lower()})'
    return None


def judge(policy: PolicyName | PolicyFunction, request: ApprovalRequest) -> tuple[Decision, str | None]:
    """What ``policy`` decides about ``request``, and why (the sentence shown to the person); no side effects."""
    if callable(policy):
        return policy(request), request.reason or request.effect or None
    if request.effect is not None:  # what the call really does, seen where it leaves: judged whatever the call
        return ("allow" if policy == "auto" else "deny" if policy == "deny-risky" else "ask"), request.effect
    if request.risk == "safe" and policy != "ask-all":
        return "allow", None
    if policy == "auto":
        return "allow", None
    reason = risk_reason(request)
    if policy == "ask-all":
        return "ask", reason or "every action asks (policy ask-all)"
    if reason is None:
        return "allow", None
    return ("deny" if policy == "deny-risky" else "ask"), reason


def decide(policy: PolicyName | PolicyFunction, request: ApprovalRequest) -> Decision:
    """:func:`judge`, recording the reason on ``request`` when the call is flagged (for code that inspects a
    request after deciding it, as the gate does)."""
    decision, reason = judge(policy, request)
    if reason:
        request.reason = reason
    return decision


def check_policy(policy: object) -> PolicyName | PolicyFunction:
    """Validate a policy given by a user (a name or a callable) with a message that lists the choices."""
    if callable(policy):
        return policy
    if isinstance(policy, str) and policy in POLICY_NAMES:
        return policy  # type: ignore[return-value]
    raise ValueError(f"Unknown approval policy {policy!r}. Use one of {', '.join(POLICY_NAMES)} or a function.")


class Approval:
    """One question to a person about one call, with one life: asked, then answered exactly once.

    The run creates it when its policy says ``ask`` and announces it (``ApprovalRequested`` carries it); any
    consumer may answer it — the notebook's buttons, the run handle's ``approve()``, a terminal prompt, an
    ``approver`` function — and the first answer wins. The gate waits on it; a timeout or a stop answers it
    too, so nothing stays open after the run has moved on. ``approve``/``deny`` are safe from any thread.
    """

    def __init__(self, request: ApprovalRequest, crop: bytes | None = None) -> None:
        self.request = request
        self.crop = crop
        """A PNG of the target element outlined on the page, when a person will look (may be None)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._future: asyncio.Future[ApprovalAnswer] = self._loop.create_future()

    @property
    def answered(self) -> bool:
        return self._future.done()

    @property
    def answer(self) -> ApprovalAnswer | None:
        return self._future.result() if self._future.done() else None

    def approve(self) -> None:
        """Let the call run (same as clicking Approve)."""
        self.resolve(ApprovalAnswer(True, None))

    def deny(self, reason: str | None = None) -> None:
        """Refuse the call; the model reads ``reason`` on its next step."""
        self.resolve(ApprovalAnswer(False, (reason or "").strip() or None))

    def resolve(self, answer: ApprovalAnswer) -> None:
        """Answer it; later answers are ignored. From another thread the answer is handed to the run's loop."""
        if threading.get_ident() == self._thread:
            self._set(answer)
        else:
            self._loop.call_soon_threadsafe(self._set, answer)

    def _set(self, answer: ApprovalAnswer) -> None:
        if not self._future.done():
            self._future.set_result(answer)

    async def wait(self) -> ApprovalAnswer:
        return await asyncio.shield(self._future)

    def when_answered(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the run's loop) once it is answered."""
        self._future.add_done_callback(lambda _f: callback())


async def _ask_approver(approver: Approver, approval: Approval) -> None:
    try:
        answer = await approver(approval.request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # an approver that fails must not run the call, nor end the run
        answer = ApprovalAnswer(False, f"Denied: the approver failed ({error_message(exc)}).", by="policy")
    approval.resolve(answer)


async def gate(
    policy: PolicyName | PolicyFunction,
    request: ApprovalRequest,
    *,
    approver: Approver | None,
    timeout: float,
    signal: AbortSignal,
    announce: Callable[[Approval], Awaitable[None]] | None = None,
    answered_elsewhere: bool = False,
) -> ApprovalAnswer | None:
    """Decide one call: None when it may run without asking, else the answer (a denial by the policy, or a
    person's answer). When the policy asks, an :class:`Approval` is made and ``announce``d (views show it),
    then answered by ``approver`` or, with ``answered_elsewhere``, by whoever consumes the announcement. No one
    to answer, or no answer within ``timeout`` seconds, is a denial; a stop (``signal``) ends the wait."""
    decision, reason = judge(policy, request)
    if reason:
        request.reason = reason
    if decision == "allow":
        return None
    if decision == "deny":
        return ApprovalAnswer(False, f"Blocked by the approval policy: {request.reason}", by="policy")
    approval = Approval(request)
    if announce is not None:
        await announce(approval)
    if approver is None and not answered_elsewhere:
        approval.resolve(
            ApprovalAnswer(False, f"Denied: no one was there to approve it ({request.reason}).", by="policy")
        )
        return approval.answer
    helper = asyncio.ensure_future(_ask_approver(approver, approval)) if approver is not None else None
    try:
        return await signal.race(wait_for(approval.wait(), timeout), during=WAITED)
    except TimeoutError:
        approval.resolve(ApprovalAnswer(False, f"Denied: no answer within {timeout:g} seconds.", by="timeout"))
        answer = approval.answer
        assert answer is not None
        return answer
    finally:
        if helper is not None:
            helper.cancel()
        if not approval.answered:
            approval.resolve(ApprovalAnswer(False, "The run stopped before anyone answered.", by="policy"))


WAITED = "while the action waited for approval; it did not run"
"""What a stop during an approval wait is recorded as (after who stopped the run)."""


def denial_text(answer: ApprovalAnswer) -> str:
    """What the model reads when a call was denied."""
    reason = answer.reason or "The user denied this action."
    if not reason.lower().startswith(("denied", "blocked", "the user")):
        reason = f"The user denied this action: {reason}"
    return reason


def format_args(args: Mapping[str, Any]) -> str:
    """A call's arguments as the history and an approval show them (compact JSON, non-ASCII kept readable)."""
    return json.dumps(args, ensure_ascii=False, separators=(", ", ": "))
