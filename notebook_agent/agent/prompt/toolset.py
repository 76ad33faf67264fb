"""The actions a run offers, in one place: the browser's built-ins in the prompt's order (each action's
``facts.order``), then custom tools (added, renamed or removed), narrowed by the profile, the agent's switches,
and secret-aware typing.

The order is stable on purpose: the tool list is part of the prompt the provider caches, so the same agent
offers the same list every step of every run."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping

from ...browser.actions import builtin_tools
from ...browser.session.browser_session import BrowserSession
from ...core.abort import AbortSignal
from ...core.action_facts import facts_of
from ...core.tools import Tool
from ..safety.secrets import SecretInputText, SecretVault
from .profiles import Profile


def offered_tools(
    browser: BrowserSession,
    *,
    profile: Profile,
    custom_tools: Mapping[str, Tool | None],
    on_ask_user: Callable[[str, AbortSignal], Awaitable[str]] | None,
    enable_javascript: bool,
    structured_output: bool,
    secrets: SecretVault | None,
    task: str | None = None,
    data: bool | None = None,
    page: frozenset[str] = frozenset(),
) -> dict[str, Tool]:
    """``{name: tool}`` for one run on ``browser``. ``custom_tools``: ``{name: tool}`` adds or overrides an action,
    ``{name: None}`` removes one. ``task``: the request of a run that starts on a page (a profile may offer some
    actions only when it asks for them). ``data``: whether the run calls for the actions that read data
    (``facts.data``: ``extract_table``; agent/prompt/offers.py); None: not known, so the profile decides (with
    ``structured_output`` keeping them). ``page``: the actions the start page calls for (offers.py)."""
    ordered: dict[str, Tool] = dict(builtin_tools(browser, on_ask_user=on_ask_user))
    for name, t in custom_tools.items():
        if t is None:
            ordered.pop(name, None)
            continue
        if t.name != name:
            t = copy.copy(t)
            t.name = name
        ordered[name] = t
    reads = {n for n, t in ordered.items() if facts_of(t).data}
    wanted = structured_output if data is None else data
    keep = {*custom_tools, *(reads if wanted else ())}
    if data is False:
        ordered = {n: t for n, t in ordered.items() if n not in reads or n in custom_tools}
    ordered = profile.offer(ordered, keep=keep, task=task, custom=set(custom_tools), page=page)
    off = {"execute_javascript": not enable_javascript, "ask_user": on_ask_user is None}
    ordered = {n: t for n, t in ordered.items() if not off.get(n)}
    if secrets and "input_text" in ordered:
        ordered["input_text"] = SecretInputText(ordered["input_text"], secrets, browser)
    return ordered
