"""Approval policies: which actions may run on their own, which wait for a person, which never run.

A policy sees the real action (name, validated arguments), the element it targets (from the latest snapshot)
and the page URL, and answers ``allow``, ``ask`` or ``deny``. ``ask`` hands the request to an approver (the
notebook's Approve/Deny buttons, a terminal prompt); nothing executes before it answers, and no answer within
the timeout is a denial. The model sees the reason for every denial.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..browser.urls import navigation_target, scheme, site
from ..core.abort import AbortSignal

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
    custom_risk: str | None = None
    """For a custom tool: why it is risky as it declared (``risk=``), or None when it declared itself safe."""
    custom: bool = False
    downloads: str | None = None
    """What the call would download, when that is known: a link marked ``download``, or an action that
    started a download the last time it was done on this page."""


@dataclass
class ApprovalAnswer:
    approved: bool
    reason: str | None = None
    by: Literal["user", "policy", "timeout"] = "user"


PolicyFunction: TypeAlias = Callable[[ApprovalRequest], Decision]
Approver: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
PolicyName: TypeAlias = Literal["ask-risky", "ask-all", "auto", "deny-risky"]
POLICY_NAMES: tuple[str, ...] = ("ask-risky", "ask-all", "auto", "deny-risky")

# Actions that only look, wait, scroll or finish never need a person.
HARMLESS = frozenset({"done", "wait", "ask_user", "scroll", "scroll_horizontally", "hover", "switch_tab", "go_back"})


def _element_text(element: dict[str, Any] | None) -> str:
    if not element:
        return ""
    parts = [str(element.get("text") or "")]
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


def _keys_risk(request: ApprovalRequest) -> str | None:
    """``send_keys`` acts on whatever has focus: judge Enter/Space by the element (and the form Enter submits),
    and refuse to guess where Tab moves focus to before a key that activates."""
    keys = [k.lower() for k in str(request.args.get("keys", "")).split()]
    activates = [i for i, k in enumerate(keys) if k.split("+")[-1] in ("enter", "space", " ")]
    if not activates:
        return None
    if any(k.split("+")[-1] == "tab" for k in keys[: activates[-1]]):
        return "moves focus with Tab and then presses Enter/Space: what that activates is not known in advance"
    target = request.keys_target or request.element
    text = _element_text(target)
    if request.keys_target and request.keys_target.get("enter_submits") and any(k.endswith("enter") for k in keys):
        text += " " + " ".join(request.keys_target.get("submits") or [])
    match = DESTRUCTIVE.search(text)
    if match:
        label = " ".join(text.split())[:60]
        return f'presses keys on "{label}", which looks destructive or final ({match.group(0).lower()})'
    return None


def risk_reason(request: ApprovalRequest) -> str | None:
    """Why this call is risky, or None. Deliberately simple and visible: people can read and replace it."""
    name, args = request.action, request.args
    if request.custom:
        return request.custom_risk
    if name == "execute_javascript":
        return "runs arbitrary JavaScript in the page"
    if request.downloads:
        return f"downloads {request.downloads}"
    if name == "go_to_url":
        target = request.target_url or navigation_target(str(args.get("url", "")))
        return navigation_risk(request.url, target, request.target_allowed)
    if name == "click_element_by_index" and request.target_url:
        reason = navigation_risk(request.url, request.target_url, request.target_allowed)
        if reason:
            return reason
    if name == "send_keys":
        return _keys_risk(request)
    if name in ("click_element_by_index", "select_dropdown_option"):
        text = _element_text(request.element)
        if name == "select_dropdown_option":
            text += " " + str(args.get("text", ""))
        match = DESTRUCTIVE.search(text)
        if match:
            shown = str((request.element or {}).get("text") or "") or text
            label = " ".join(shown.split())[:60]
            return f'acts on "{label}", which looks destructive or final ({match.group(0).lower()})'
    return None


def decide(policy: PolicyName | PolicyFunction, request: ApprovalRequest) -> Decision:
    """Apply a named policy or a callable; fills ``request.reason`` when the call is flagged."""
    if callable(policy):
        return policy(request)
    if request.action in HARMLESS and not request.custom and policy != "ask-all":
        return "allow"
    if policy == "auto":
        return "allow"
    reason = risk_reason(request)
    if policy == "ask-all":
        request.reason = reason or "every action asks (policy ask-all)"
        return "ask"
    if reason is None:
        return "allow"
    request.reason = reason
    return "deny" if policy == "deny-risky" else "ask"


def check_policy(policy: object) -> PolicyName | PolicyFunction:
    """Validate a policy given by a user (a name or a callable) with a message that lists the choices."""
    if callable(policy):
        return policy  # type: ignore[return-value]
    if isinstance(policy, str) and policy in POLICY_NAMES:
        return policy  # type: ignore[return-value]
    raise ValueError(f"Unknown approval policy {policy!r}. Use one of {', '.join(POLICY_NAMES)} or a function.")


async def gate(
    policy: PolicyName | PolicyFunction,
    request: ApprovalRequest,
    *,
    approver: Approver | None,
    timeout: float,
    signal: AbortSignal,
    on_ask: Callable[[], None] = lambda: None,
) -> ApprovalAnswer | None:
    """Decide one call: None when it may run without asking, else the answer (a denial by the policy, or the
    approver's answer). ``on_ask`` runs just before a person is asked (views show the request then). No
    approver, or no answer within ``timeout`` seconds, is a denial; a stop (``signal``) ends the wait."""
    decision = decide(policy, request)
    if decision == "allow":
        return None
    if decision == "deny":
        return ApprovalAnswer(False, f"Blocked by the approval policy: {request.reason}", by="policy")
    on_ask()
    if approver is None:
        return ApprovalAnswer(False, f"Denied: no one was there to approve it ({request.reason}).", by="policy")
    try:
        return await signal.race(asyncio.wait_for(approver(request), timeout))
    except TimeoutError:
        return ApprovalAnswer(False, f"Denied: no answer within {timeout:g} seconds.", by="timeout")


def denial_text(answer: ApprovalAnswer) -> str:
    """What the model reads when a call was denied."""
    reason = answer.reason or "The user denied this action."
    if not reason.lower().startswith(("denied", "blocked", "the user")):
        reason = f"The user denied this action: {reason}"
    return reason
