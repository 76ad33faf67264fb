"""The built-in browser actions, one :class:`~notebook_agent.core.tools.Tool` each.

Names and parameters follow page-agent's design note (``done``, ``wait``, ``ask_user``,
``click_element_by_index``, ``input_text``, ``select_dropdown_option``, ``scroll``, ``scroll_horizontally``,
``execute_javascript``) plus ``send_keys``, ``go_to_url``, ``go_back``, ``switch_tab``, ``hover`` and
``extract_table`` (reads a table or repeated list exactly and hands it on as data, see extract.py).

Where page-agent is weak these do better while keeping the names: input is real Playwright input (trusted
clicks, ``fill``, key presses) with a synthetic JavaScript path only as a fallback; ``input_text`` reports
the field's resulting live value; ``select_dropdown_option`` matches exact, then case-insensitive, then
substring, lists the options on a miss and also drives ARIA listbox/combobox dropdowns; results say when an
action navigated, opened a tab or triggered a dialog.

Each action declares what the rest of the agent needs to know about it on its class: its ``risk`` (how the
approval gate judges it) and its ``facts`` (:class:`~notebook_agent.core.action_facts.ActionFacts`: replay,
export, its place and words in the prompt, whether it may repeat). :data:`BUILTINS` lists the classes; a new
built-in action is its class and one line there.

The actions are grouped by what they act on: ``pointer`` (click, hover), ``forms`` (type, choose, press keys),
``page`` (finish, wait, ask, scroll, JavaScript, open a URL, go back, switch tab) and ``extract`` (read a table);
``base`` is what they share (``ActionHost``, ``BrowserTool``), ``params`` their parameter models (the schema each
offers) and ``scripts`` the page-side JavaScript they evaluate.

Every result is text for the model. Failures start with "Error: " and set ``is_error``; an unknown or stale
index is such a result, never an exception. Actions see the session only through :class:`ActionHost`.

May import ``browser.page`` (the snapshot, the page script, what an action caused) and ``browser.extract``,
besides the browser layer's base modules (``errors``, ``urls``); never the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.abort import AbortSignal
from ...core.action_facts import ActionFacts, facts_of
from ...core.tools import OnUpdate, Tool, ToolArgumentError, ToolCallContext, ToolResult
from .base import ActionHost, AskUser, BrowserTool, match_option
from .extract import ExtractTableTool
from .forms import InputTextTool, SelectDropdownOptionTool, SendKeysTool, key_sequence, key_target
from .page import (
    AskUserTool,
    DoneTool,
    ExecuteJavascriptTool,
    GoBackTool,
    GoToUrlTool,
    ScrollHorizontallyTool,
    ScrollTool,
    SwitchTabTool,
    WaitTool,
)
from .pointer import ClickTool, HoverTool

BUILTINS: tuple[type[Tool], ...] = (
    DoneTool,
    WaitTool,
    AskUserTool,
    ClickTool,
    InputTextTool,
    SelectDropdownOptionTool,
    ScrollTool,
    ScrollHorizontallyTool,
    ExecuteJavascriptTool,
    SendKeysTool,
    GoToUrlTool,
    GoBackTool,
    SwitchTabTool,
    HoverTool,
    ExtractTableTool,
)
"""The built-in actions: page-agent's (``done`` … ``execute_javascript``) and the extra ones. Their order in the
prompt is each one's ``facts.order``."""


def _builtin(name: str) -> type[Tool] | None:
    """The built-in action class called ``name`` (read from :data:`BUILTINS` each time), or None."""
    return next((cls for cls in BUILTINS if cls.name == name), None)


def builtin_actions() -> list[type[Tool]]:
    """The built-in action classes (:data:`BUILTINS`, read each time), in the order the prompt lists them."""
    return sorted(BUILTINS, key=lambda cls: cls.facts.order)


def builtin_names() -> list[str]:
    """The built-in actions' names, in the order the prompt lists them."""
    return [cls.name for cls in builtin_actions()]


def action_facts(name: str, tools: Mapping[str, Tool | None] | None = None) -> ActionFacts:
    """The facts of the action called ``name``: those of ``tools[name]`` (a run's tools, an agent's custom
    tools) when it is there, else the built-in's of that name, else the facts of an action that declares none.
    A recorded step names its action; this is how a replay, a recipe and an export learn what it is."""
    tool = (tools or {}).get(name)
    if tool is not None:
        return facts_of(tool)
    cls = _builtin(name)
    return cls.facts if cls is not None else facts_of(None)


def builtin_risk(name: str) -> str:
    """How the built-in action ``name`` is judged by the approval gate (its ``risk``), or "" for no built-in."""
    cls = _builtin(name)
    return cls.risk if cls is not None and isinstance(cls.risk, str) else ""


def builtin_tools(
    browser: ActionHost,
    on_ask_user: AskUser | None = None,
    *,
    include_javascript: bool = True,
) -> dict[str, Tool]:
    """All built-in actions bound to ``browser``, in the prompt's order.

    ``ask_user`` reports itself unavailable (``unavailable_reason``) without ``on_ask_user``; leave out
    ``execute_javascript`` with ``include_javascript=False``.
    """
    asker = on_ask_user if on_ask_user is not None else getattr(browser, "on_ask_user", None)
    tools: list[Tool] = []
    for cls in builtin_actions():
        if cls is ExecuteJavascriptTool and not include_javascript:
            continue
        if cls is AskUserTool:
            tools.append(AskUserTool(browser, asker))
        elif issubclass(cls, BrowserTool):
            tools.append(cls(browser))
        else:
            tools.append(cls())
    return {t.name: t for t in tools}


async def run_action(
    tools: Mapping[str, Tool],
    action: Mapping[str, Any] | str,
    args: Mapping[str, Any] | None = None,
    *,
    signal: AbortSignal | None = None,
    on_update: OnUpdate | None = None,
    context: ToolCallContext | None = None,
) -> ToolResult:
    """Run one action by name, the way the model names it: ``{"click_element_by_index": {"index": 3}}`` or
    ``("scroll", {"down": True})``; a bare value goes on the action's first field (``{"wait": 3}``).
    Arguments are validated by the tool; problems come back as error results, never as exceptions.

    The tool gets ``context`` when one is given (a custom tool calling a built-in passes its own), else a
    plain :class:`ToolCallContext` with ``signal`` (default: one that never fires) and ``on_update``."""
    if isinstance(action, str):
        name, raw = action, dict(args or {})
    else:
        if len(action) != 1:
            return ToolResult.text(
                f"Error: give exactly one action, got {len(action)}: {', '.join(action) or 'none'}.", is_error=True
            )
        name, raw = next(iter(action.items()))
    tool = tools.get(name)
    if tool is None:
        return ToolResult.text(f"Error: unknown action '{name}'. Available: {', '.join(tools)}.", is_error=True)
    reason = tool.unavailable_reason()
    if reason:
        return ToolResult.text(f"Error: action '{name}' is not available: {reason}.", is_error=True)
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raw = _coerce_primitive(tool, raw)
    try:
        parsed = tool.validate(tool.prepare_arguments(dict(raw)))
    except ToolArgumentError as exc:
        return ToolResult.text(f"Error: {exc}", is_error=True)

    if context is None:

        async def no_update(_: object) -> None:
            return None

        context = ToolCallContext(f"act-{name}", signal or AbortSignal(), on_update or no_update)
    result = await tool.execute(parsed, context)
    return ToolResult.text(result) if isinstance(result, str) else result


def _coerce_primitive(tool: Tool, value: object) -> dict[str, Any]:
    """``{"wait": 3}`` → ``{"seconds": 3}``: put a bare value on the tool's first required field (or first)."""
    schema = tool.json_schema()
    props = list(schema.get("properties", {}))
    required = [p for p in schema.get("required", []) if p in props]
    key = (required or props or ["value"])[0]
    return {key: value}


__all__ = [
    "BUILTINS",
    "ActionHost",
    "AskUser",
    "AskUserTool",
    "BrowserTool",
    "ClickTool",
    "DoneTool",
    "ExecuteJavascriptTool",
    "ExtractTableTool",
    "GoBackTool",
    "GoToUrlTool",
    "HoverTool",
    "InputTextTool",
    "ScrollHorizontallyTool",
    "ScrollTool",
    "SelectDropdownOptionTool",
    "SendKeysTool",
    "SwitchTabTool",
    "WaitTool",
    "action_facts",
    "builtin_actions",
    "builtin_names",
    "builtin_risk",
    "builtin_tools",
    "key_sequence",
    "key_target",
    "match_option",
    "run_action",
]
