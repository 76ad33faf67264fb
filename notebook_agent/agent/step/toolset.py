"""The actions a run offers, in one place: the browser's built-ins in a stable order, then custom tools (added,
renamed or removed), narrowed by the profile, the agent's switches, and secret-aware typing.

The order is stable on purpose: the tool list is part of the prompt the provider caches, so the same agent
offers the same list every step of every run."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping

from ...browser.actions import builtin_tools
from ...browser.session.browser_session import BrowserSession
from ...core.abort import AbortSignal
from ...core.tools import Tool
from ..prompt.profiles import Profile
from ..safety.secrets import SecretInputText, SecretVault

BUILTIN_ORDER = (
    "done",
    "wait",
    "ask_user",
    "click_element_by_index",
    "input_text",
    "select_dropdown_option",
    "scroll",
    "scroll_horizontally",
    "execute_javascript",
    "send_keys",
    "go_to_url",
    "go_back",
    "switch_tab",
    "hover",
)


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
    actions only when it asks for them). ``data``: whether the run calls for ``extract_table`` (agent/offers.py);
    None: not known, so the profile decides (with ``structured_output`` keeping it). ``page``: the actions the
    start page calls for (offers.py)."""
    registry: dict[str, Tool] = dict(builtin_tools(browser, on_ask_user=on_ask_user))
    ordered = {n: registry[n] for n in BUILTIN_ORDER if n in registry}
    ordered.update({n: t for n, t in registry.items() if n not in ordered})
    for name, t in custom_tools.items():
        if t is None:
            ordered.pop(name, None)
            continue
        if t.name != name:
            t = copy.copy(t)
            t.name = name
        ordered[name] = t
    wanted = structured_output if data is None else data
    keep = {*custom_tools, *(["extract_table"] if wanted else [])}
    if data is False and "extract_table" not in custom_tools:
        ordered.pop("extract_table", None)
    ordered = profile.offer(ordered, keep=keep, task=task, custom=set(custom_tools), page=page)
    off = {"execute_javascript": not enable_javascript, "ask_user": on_ask_user is None}
    ordered = {n: t for n, t in ordered.items() if not off.get(n)}
    if secrets and "input_text" in ordered:
        ordered["input_text"] = SecretInputText(ordered["input_text"], secrets, browser)
    return ordered
