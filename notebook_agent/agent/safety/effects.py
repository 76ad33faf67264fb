"""What a call will really do, told to the approval policy before it runs.

A policy that sees only an action's name and arguments can be walked around: ``send_keys Enter`` presses a
button no index named, a scheme-less URL has no host to compare, a link's href leaves the site. This module
fills in the facts: the normalised URL a call opens (typed, or a clicked link's href), what keys would act on
(the focused element and the form Enter submits), and a custom tool's declared risk. Where navigation may go
at all (the allowed and blocked domains) is :mod:`.domains`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urljoin

from ...browser.actions import builtin_risk, key_target
from ...browser.session.browser_session import BrowserSession
from ...browser.urls import navigation_target
from ...core.tools import Tool
from .approval import ApprovalRequest
from .domains import DomainPattern, matches_any


async def describe_effects(
    request: ApprovalRequest,
    raw: Mapping[str, Any],
    parsed: Any,
    *,
    browser: BrowserSession | None,
    tools: Mapping[str, Tool],
    agent_domains: Sequence[DomainPattern],
    custom: bool,
) -> None:
    """Tell the policy what the call will really act on, by how its action says it is judged (its ``risk``): the
    normalised URL it opens (typed, or a link's href), what keys would press, or a custom tool's own judgement."""
    name = request.action
    tool = tools.get(name)
    risk = getattr(tool, "risk", None) if tool is not None else builtin_risk(name) or None
    request.custom = custom
    request.risk = risk if isinstance(risk, str) else ""
    if risk == "ask":
        request.custom_risk = f"the custom action '{name}' asks before it runs"
    elif callable(risk):
        try:
            request.custom_risk = risk(parsed)
        except Exception as exc:
            request.custom_risk = f"the custom action '{name}' could not judge its risk ({exc})"
    elif risk is None:
        request.custom_risk = f"the custom action '{name}' did not declare its risk (risk='safe' or 'ask')"
    target: str | None = None
    if request.risk == "url":
        target = navigation_target(str(raw.get("url", "")))
    elif request.risk == "element" and request.element and request.element.get("tag") == "a":
        href = str((request.element.get("attributes") or {}).get("href") or "")
        if href and not href.startswith(("#", "javascript:")):
            target = urljoin(request.url, href)
    if target is not None:
        request.target_url = target
        request.target_allowed = bool(agent_domains) and matches_any(target, agent_domains)
    if request.risk == "keys" and browser is not None:
        index = raw.get("index")
        # the element handle key_target reads lives where the browser does
        request.keys_target = await browser.call(key_target, browser, int(index) if index is not None else None)
