"""``ToolContext``: what a tool gets in a page-agent run, besides its arguments.

Every tool's ``execute(args, ctx)`` receives one context object. In a page-agent run that is a
:class:`ToolContext`: the core's :class:`~notebook_agent.core.tools.ToolCallContext` (call id, abort signal,
progress) plus the run's browser session, the id of the tab the call acts on, the agent's secrets and its
settings. So a custom tool reads the page the agent is on without being handed the browser when it is
built::

    @tool(parameters=Args, risk="safe")
    async def page_title(args, ctx):
        title = await ctx.browser.call(lambda: ctx.browser.page.title())
        return f"Tab {ctx.tab}: {title}"

The run builds one per call through :func:`tool_context_factory` (``LoopConfig.tool_context``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...browser.session.browser_session import BrowserSession
from ...core.abort import AbortSignal
from ...core.messages import ToolCall
from ...core.tools import Deps, OnUpdate, ToolCallContext
from ..safety.secrets import SecretVault


@dataclass
class ToolContext(ToolCallContext[Deps]):
    """A :class:`ToolCallContext` for a page-agent run.

    ``browser``: the run's :class:`BrowserSession` (its own tab session when the agent has ``own_tab``). In
    threaded mode, drive its Playwright objects through ``await ctx.browser.call(fn)``.
    ``tab``: the id of the tab the call acts on (the current tab when the call started; -1 if unknown), as
    the browser state lists tabs.
    ``secrets``: the agent's :class:`SecretVault` (``ctx.secrets.names``; values stay out of what the model
    sees: redact anything you return with ``ctx.secrets.redact(text)``).
    ``settings``: the agent's settings (``PageAgent.settings()``), a copy per call."""

    browser: BrowserSession = field(kw_only=True)
    tab: int = field(kw_only=True, default=-1)
    secrets: SecretVault = field(kw_only=True, default_factory=lambda: SecretVault({}))
    settings: dict[str, Any] = field(kw_only=True, default_factory=dict)


def current_tab(browser: BrowserSession) -> int:
    """The id of the session's current tab, or -1 when it has none (not started, or its tab is gone)."""
    try:
        return browser.tab_id(browser.page)
    except RuntimeError:
        return -1


def tool_context_factory(
    browser: BrowserSession, secrets: SecretVault, settings: Mapping[str, Any], deps: Any = None
) -> Callable[[ToolCall, AbortSignal, OnUpdate], ToolContext[Any]]:
    """The ``LoopConfig.tool_context`` of a page-agent run: each call gets a :class:`ToolContext` with the
    run's browser, the tab current when the call starts, the secrets and a copy of the settings."""

    def make(call: ToolCall, signal: AbortSignal, on_update: OnUpdate) -> ToolContext[Any]:
        return ToolContext(
            call.id,
            signal,
            on_update,
            browser=browser,
            tab=current_tab(browser),
            secrets=secrets,
            settings=copy.deepcopy(dict(settings)),
            deps=deps,
        )

    return make
